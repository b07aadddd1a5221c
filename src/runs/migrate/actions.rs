//! What a [`MigrateRun`](super::machine::MigrateRun) is asked ([`MigrateRequest`]), what it asks
//! the shim to do ([`MigrateAction`]) and what it reports ([`MigrateResult`]).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::runs::migrate::plan::{MigrateConflict, MigrateItem, MigratePlan};

/// What a migrate was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct MigrateRequest {
    /// Copy and index (otherwise only plan).
    pub apply: bool,
    /// Also remove the originals whose copies are verified and indexed.
    pub remove_originals: bool,
    /// The most entries either index may name (absent:
    /// [`DEFAULT_MAX_ENTRIES`](crate::index::DEFAULT_MAX_ENTRIES)); a longer one is
    /// `index-too-large`.
    #[tsify(optional)]
    pub max_index_entries: Option<u64>,
}

/// Which index a publish writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum MigrateIndex {
    /// The namespace's: under the namespace's lock.
    Namespace,
    /// The solo layout's: under the solo layout's lock.
    Solo,
}

/// The next thing the shim must do for a migrate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum MigrateAction {
    /// Read the object at `key`; answer with the `got` event. Asked for the namespace's
    /// `_index/_meta.json`, then the solo index and the namespace's, and the namespace's
    /// again after the copies.
    Get {
        /// The key.
        key: String,
    },
    /// List the whole bucket; answer with the `listing` event.
    ListAll,
    /// HEAD each of `keys`; answer with the `heads` event and what each HEAD that answered found (a
    /// failed HEAD is the shim's failure to report, never a proof).
    Head {
        /// The keys.
        keys: Vec<String>,
    },
    /// Copy each item server-side (`rel` to `to`); answer with the `copied` event and how many landed.
    Copy {
        /// The copies.
        items: Vec<MigrateItem>,
    },
    /// Publish `body()` at `key` over `ifMatch` (null: create-only), once, under the lock at
    /// `lockKey` (the one writers of that index's layout take); answer with the `published`
    /// event.
    Publish {
        /// Which index.
        index: MigrateIndex,
        /// The key.
        key: String,
        /// The lock to hold: the solo index's under the solo key, the namespace's under its own.
        lock_key: String,
        /// The ETag of the copy read; null when there was none.
        if_match: Option<String>,
    },
    /// Delete each original; answer with the `deleted` event and how many went.
    Delete {
        /// The originals.
        items: Vec<MigrateItem>,
    },
    /// The migrate is over; `result()` says what it did.
    Done,
}

/// What a migrate did (or, not applied, would do). Per-object failures are the shim's.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct MigrateResult {
    /// The plan before any copy.
    pub plan: MigratePlan,
    /// True when carried out.
    pub applied: bool,
    /// Copies made.
    pub copied: u64,
    /// Copies proven identical to their originals (after the run, when applied).
    pub verified: u64,
    /// Entries added to the namespace's index.
    pub indexed: u64,
    /// Originals removed (only with `removeOriginals`, only when verified and indexed).
    pub removed: u64,
    /// Namespaced keys holding something other than their original (after the run, when
    /// applied): never overwritten, their originals never removed; a person resolves them.
    pub conflicts: Vec<MigrateConflict>,
}
