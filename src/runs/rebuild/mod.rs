//! Rebuilding the remote index from a bucket listing: the index it builds ([`plan`]) and
//! the run's sequence ([`machine`]).

pub mod events;
pub mod machine;
pub mod plan;
