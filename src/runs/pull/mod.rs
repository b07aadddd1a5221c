//! A pull: what to download so the bound tree matches the index ([`plan`], with its rules for
//! one key in `rules` and the index it leaves in `apply`), the run's sequence ([`machine`]),
//! where a download looks after a 404 ([`lookup`]), what is kept aside before a download
//! replaces a local change ([`aside`]), and how it ends ([`run`]).

mod apply;
pub mod aside;
pub mod events;
pub mod lookup;
pub mod machine;
pub mod plan;
mod rules;
pub mod run;
