//! A push: what to upload and what may be deleted on what evidence ([`plan`]), the
//! run's sequence ([`machine`]), and how it ends ([`run`]).

pub mod machine;
pub mod plan;
pub mod run;
