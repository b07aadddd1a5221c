//! Moving a v1 repo to the v2 shard-first layout: whether it is on v2 already, what the move
//! writes over, and what a move that lost to another one reports are decided in [`machine`];
//! the shim does the reads and the shard-set write ([`events`]), each itself a run of the core.

pub mod events;
pub mod machine;
