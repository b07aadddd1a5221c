//! The changes a push makes to the index (what it uploaded and deleted) and applying them to an
//! index read again after a lost race, with what other writers changed meanwhile.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Deserialize;

use crate::index::{same_version, Index, IndexEntry};
use crate::model::time::format_iso_millis;
use crate::safety::deletions;

use super::plan::PushPlan;

/// One uploaded file, as the shim reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Uploaded {
    /// Index key.
    pub rel: String,
    /// Bytes uploaded.
    pub size: u64,
    /// Local mtime (epoch ms) read after the upload; absent when unknown.
    #[tsify(optional)]
    pub mtime_ms: Option<i64>,
    /// SHA-256 of the bytes uploaded.
    pub sha256: String,
    /// The ETag the server answered the write with, when it sent one: recorded in the entry
    /// ([`crate::safety::object_condition::ETAG_FIELD`]) so the next replacement can go `If-Match` it
    /// without a HEAD first.
    #[serde(default)]
    #[tsify(optional)]
    pub etag: Option<String>,
}

/// A push's changes to the index, kept so they can be re-applied over a newer index when a
/// conditional publish loses a race.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushChanges {
    /// New or replaced entries.
    pub upserts: BTreeMap<String, IndexEntry>,
    /// Deleted rels, with the entry they deleted (a delete is re-applied only over that same
    /// entry, so a peer's newer upload of the same rel is never dropped).
    pub deletes: BTreeMap<String, IndexEntry>,
    /// `localMtime` updates of unchanged files.
    pub mtimes: BTreeMap<String, String>,
    /// Internal entries to drop.
    pub prune: BTreeSet<String>,
    /// The entry each upsert and mtime update was decided against (`None`: the index read had
    /// none): a re-merge applies one only over that same version.
    pub read: BTreeMap<String, Option<IndexEntry>>,
    /// When the push ran (ISO-8601): the time its deletion records carry (see
    /// [`crate::safety::deletions`]).
    pub at: Option<String>,
}

impl PushChanges {
    /// True when the remote index must be written.
    pub fn touches_remote(&self) -> bool {
        !self.upserts.is_empty() || !self.deletes.is_empty() || !self.prune.is_empty()
    }
}

/// Collects the changes a push made: uploads done, deletes decided (published before the
/// objects are removed), mtimes learned, internal entries pruned.
pub fn push_changes(
    index: &Index,
    plan: &PushPlan,
    uploaded: &[Uploaded],
    now_iso: &str,
) -> PushChanges {
    let mut changes = PushChanges {
        at: Some(now_iso.to_string()),
        ..PushChanges::default()
    };
    for up in uploaded {
        let read = index.entries.get(&up.rel);
        changes.read.insert(up.rel.clone(), read.cloned());
        let mut entry = IndexEntry {
            size: up.size,
            last_modified: Some(now_iso.into()),
            local_mtime: up.mtime_ms.map(|ms| format_iso_millis(ms).into()),
            sha256: Some(up.sha256.clone()),
            extra: read.and_then(|e| e.extra.clone()),
        };
        // The old version's ETag must never describe the new one.
        crate::safety::object_condition::record_etag(&mut entry, up.etag.as_deref());
        changes.upserts.insert(up.rel.clone(), entry);
    }
    for delete in &plan.deletes {
        if let Some(entry) = index.entries.get(&delete.rel) {
            changes.deletes.insert(delete.rel.clone(), entry.clone());
        }
    }
    for update in &plan.mtime_updates {
        changes
            .mtimes
            .insert(update.rel.clone(), update.local_mtime.clone());
        changes
            .read
            .insert(update.rel.clone(), index.entries.get(&update.rel).cloned());
    }
    changes.prune = plan.prune.iter().cloned().collect();
    changes
}

/// Applies `changes` to `index` (the one read, or a newer one after a lost race) and returns
/// the upserts it refused: rels another writer added or replaced since this push read them.
/// Such an upload is a conflict, never re-inserted over the other writer's version. An upload
/// whose entry another writer removed goes back in: an edit outlives a delete of the version it
/// edits (its object was written create-only once the old one was gone, see
/// `object_condition`). Over the index read nothing is refused.
///
/// An mtime update goes only onto the version it was verified against: on another writer's
/// version it would tell the next run that this cache holds bytes it never saw.
pub fn apply_changes(index: &mut Index, changes: &PushChanges) -> BTreeSet<String> {
    let unchanged_since_read = |index: &Index, rel: &String| {
        let read = changes.read.get(rel).and_then(Option::as_ref);
        match (index.entries.get(rel), read) {
            (None, None) => true,
            (Some(now), Some(read)) => same_version(now, read),
            _ => false,
        }
    };
    let mut refused = BTreeSet::new();
    for (rel, entry) in &changes.upserts {
        if unchanged_since_read(index, rel) || !index.entries.contains_key(rel) {
            index.entries.insert(rel.clone(), entry.clone());
            deletions::forget_deletion(index, rel);
        } else {
            refused.insert(rel.clone());
        }
    }
    for (rel, deleted) in &changes.deletes {
        let same = index.entries.get(rel).is_some_and(|current| {
            current.size == deleted.size && current.last_modified == deleted.last_modified
        });
        if same {
            index.entries.remove(rel);
            if let Some(at) = &changes.at {
                deletions::record_deletion(index, rel, deleted, at);
            }
        }
    }
    if let Some(at) = &changes.at {
        deletions::prune_deletions(index, at);
    }
    for (rel, mtime) in &changes.mtimes {
        if !unchanged_since_read(index, rel) {
            continue;
        }
        if let Some(entry) = index.entries.get_mut(rel) {
            entry.local_mtime = Some(mtime.as_str().into());
        }
    }
    for rel in &changes.prune {
        index.entries.remove(rel);
    }
    refused
}

/// The rels whose version differs between `before` and `after` (added, removed, or not
/// [`same_version`]), except those in `ours`: what another writer changed between two reads.
pub fn changed_by_others(before: &Index, after: &Index, ours: &BTreeSet<&str>) -> BTreeSet<String> {
    let mut changed = BTreeSet::new();
    for (rel, entry) in after.entries.iter() {
        if ours.contains(rel.as_str()) {
            continue;
        }
        if !before
            .entries
            .get(rel)
            .is_some_and(|old| same_version(old, entry))
        {
            changed.insert(rel.clone());
        }
    }
    for rel in before.entries.keys() {
        if !ours.contains(rel.as_str()) && !after.entries.contains_key(rel) {
            changed.insert(rel.clone());
        }
    }
    changed
}
