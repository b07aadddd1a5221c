//! What lasts between runs: the cache's sync-state sidecar, the stat seal a verified push
//! leaves in it, and the decisions of the bucket's distributed lock.

pub mod lock;
pub mod seal;
pub mod sync_state;
