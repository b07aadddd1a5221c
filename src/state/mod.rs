//! What lasts between runs: the cache's sync-state sidecar, the stat seal a verified push
//! leaves in it, what the server honours of conditional requests, the decisions of the
//! bucket's distributed lock, and what a service does with each `markDirty` call.

pub mod dirty_calls;
pub mod lock;
pub mod seal;
pub mod server_verdict;
pub mod sync_state;
