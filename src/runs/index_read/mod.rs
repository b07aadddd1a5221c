//! Reading the bound tree's index: which copy is the index (the v2 shard set, the monolith, or
//! none, then a rebuild), and what a sync, a push's re-merge and a move to shards make of it,
//! are decided in [`machine`]; the shim does the reads ([`events`]).

pub mod events;
pub mod machine;
