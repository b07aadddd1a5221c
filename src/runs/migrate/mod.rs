//! The remote side of a solo → namespaced migrate: what to copy ([`plan`]), the run's
//! sequence ([`machine`]) in the vocabulary of [`actions`], and the facts it takes ([`events`]).

pub mod actions;
pub mod events;
pub mod machine;
pub mod plan;
