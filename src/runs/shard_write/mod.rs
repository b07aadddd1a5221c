//! Writing an index cut into shards: the v1 mirror a v1 writer keeps beside the monolith, the
//! first v2 set of a migration, and a rebuild's v2 set. What each write is conditional on, the
//! order (every shard, then the monolith a migration marks, then `_meta.json` last) and where
//! the run stops are decided in [`machine`]; the shim does the requests ([`events`]).

pub mod events;
pub mod machine;
