//! The remote side of a solo → namespaced migrate: what to copy ([`plan`]) and the run's
//! sequence ([`machine`]).

pub mod events;
pub mod machine;
pub mod plan;
