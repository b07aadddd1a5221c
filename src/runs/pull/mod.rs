//! A pull: what to download so the bound tree matches the index ([`plan`]), the run's
//! sequence ([`machine`]), and how it ends ([`run`]).

pub mod machine;
pub mod plan;
pub mod run;
