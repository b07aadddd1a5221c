//! A push: what to upload and what may be deleted on what evidence ([`plan`], which walks the
//! index and the base in key order (`order`), compares each file (`compare`), applies the guards
//! beyond the delete guard (`guards`) and records what the push changed (`changes`)), the run's
//! sequence ([`machine`]), and how it ends ([`run`]).

mod changes;
mod compare;
pub mod events;
mod guards;
pub mod machine;
mod order;
pub mod plan;
pub mod race;
pub mod run;
