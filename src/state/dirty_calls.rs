//! [`DirtyCalls`]: what one service does with each `markDirty` call swamp core makes.
//!
//! Core calls `markDirty` before every cache write, not deduplicated. A call this service
//! already recorded, with the sidecar still as its last rewrite left it, changes nothing and is
//! skipped (one stat, no rewrite). Otherwise the path is recorded: the sidecar is rewritten until
//! it asks the extension to walk everything (each path lands in its `dirtyPaths` as the
//! extension writes them, so a cache handed back to it walks what it must); from then on, while
//! the sidecar is as that rewrite left it, a tombstone is one line appended to the journal beside
//! it (a rewrite costs O(n) with n tombstones pending; every sync folds the journal in). A
//! sidecar that changed since (a sync rewrote it, another process did) forgets what was recorded
//! and is rewritten.

use std::collections::HashSet;

use serde::Serialize;
use tsify_next::Tsify;

/// What a `markDirty` call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyStep {
    /// Recorded already, the sidecar as we left it: nothing to write.
    Skip,
    /// Append the tombstone to the journal, while the sidecar still has the stat seen (checked
    /// again in the cache's queue; a changed sidecar is rewritten instead).
    Journal,
    /// Rewrite the sidecar with the call recorded.
    Rewrite,
}

/// The calls one service recorded since the sidecar was last rewritten by it.
#[derive(Debug, Default, Clone)]
pub struct DirtyCalls {
    /// Paths recorded (none: a walk of everything), by the caller's spelling.
    recorded: HashSet<Option<String>>,
    /// The sidecar our last rewrite left asks the extension to walk everything.
    left_walking_everything: bool,
}

impl DirtyCalls {
    /// No call recorded yet.
    pub fn new() -> DirtyCalls {
        DirtyCalls::default()
    }

    /// What a call for `path` (none: walk everything) does, given whether the sidecar's stat is
    /// the one our last rewrite left (`as_left`).
    pub fn step(&mut self, path: Option<&str>, as_left: bool) -> DirtyStep {
        if !as_left {
            // Someone else rewrote it: what we recorded may be gone from it.
            self.recorded.clear();
            return DirtyStep::Rewrite;
        }
        if self.recorded.contains(&path.map(str::to_string)) {
            return DirtyStep::Skip;
        }
        match (path, self.left_walking_everything) {
            (Some(_), true) => DirtyStep::Journal,
            _ => DirtyStep::Rewrite,
        }
    }

    /// A call for `path` was recorded; `rewrote`: by a rewrite of the sidecar that now asks the
    /// extension to walk everything or not (`walks_everything`); a journal line leaves it as it
    /// was.
    pub fn recorded(&mut self, path: Option<&str>, rewrote: bool, walks_everything: bool) {
        if rewrote {
            self.left_walking_everything = walks_everything;
        }
        self.recorded.insert(path.map(str::to_string));
    }

    /// A sync acted on what was recorded: every later call records again.
    pub fn forget(&mut self) {
        self.recorded.clear();
    }
}
