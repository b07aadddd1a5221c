//! What a pull did, as the shim reports it ([`PullOutcome`]), and the index that results
//! ([`apply_pull`]): the entries brought in line and the conflicts left for a person.

use std::collections::BTreeSet;
use tsify_next::Tsify;

use serde::Serialize;

use crate::error::CoreResult;
use crate::index::Index;
use crate::model::time::format_iso_millis;
use crate::safety::conflicts::{pull_conflict_verdict, KeptAside};
use crate::safety::Verdict;
use crate::wire::listing::decode_local;

use super::plan::PullPlan;

/// What happened to a pull plan's downloads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullOutcome {
    /// Downloaded rels with the local mtime (epoch ms) read after the write.
    pub downloaded: Vec<(String, i64)>,
    /// Rels whose object was gone (404): their entries are pruned, as the extension does.
    pub not_found: Vec<String>,
    /// Downloaded rels with the size of the bytes that arrived. Where it disagrees with the
    /// index, the object is the truth (a writer recorded a wrong size): the entry takes the real
    /// size and loses its now meaningless `sha256`.
    pub sizes: Vec<(String, u64)>,
    /// Conflicts whose local version was copied aside before the download replaced it.
    pub aside: Vec<KeptAside>,
    /// Rels of the plan's `removals` whose file was removed (a file whose stat changed since
    /// the plan was kept, and keeps its base entry).
    pub removed: Vec<String>,
    /// Downloaded rels with the SHA-256 of the bytes written (where the shim hashed them): the
    /// local index records it where the entry has none, so the base always knows the bytes this
    /// cache left, and a later same-size rewrite is told from a touch by hashing.
    pub hashes: Vec<(String, String)>,
    /// Rels of the plan's `pointers` whose local version won the merge (it names a higher
    /// version, see [`crate::model::file_class::merge_pointer`]): the file stays as it is, and the
    /// local index records the bucket's version as seen (with its hash in `hashes`) under a
    /// local mtime no file has, so the next push finds the file changed and uploads it.
    pub kept_pointers: Vec<String>,
}

impl PullOutcome {
    /// The downloads as the shim reports them: the files written, with the mtime read after
    /// each write (a local listing buffer), the rels whose object was gone, and the conflicts
    /// kept aside. Hashes, removals and kept pointers start empty.
    pub fn of_downloads(
        downloaded: &[u8],
        not_found: Vec<String>,
        aside: Vec<KeptAside>,
    ) -> CoreResult<PullOutcome> {
        let files = decode_local(downloaded)?;
        Ok(PullOutcome {
            aside,
            downloaded: files
                .iter()
                .filter_map(|f| Some((f.path.to_string(), f.mtime_ms?)))
                .collect(),
            sizes: files.iter().map(|f| (f.path.to_string(), f.size)).collect(),
            not_found,
            hashes: Vec::new(),
            removed: Vec::new(),
            kept_pointers: Vec::new(),
        })
    }
}

/// The `localMtime` recorded for a pointer kept over the bucket's version (see
/// [`PullOutcome::kept_pointers`]): epoch 0, a time no file swamp writes carries.
pub const KEPT_POINTER_MTIME_MS: i64 = 0;

/// What applying a pull changed in the index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct PullApplied {
    /// Entries removed (internal entries and 404s). When non-zero the remote index is stale.
    pub removed: u64,
    /// Entries whose `localMtime` was updated.
    pub mtimes_recorded: u64,
    /// Version pointers kept over the bucket's lower one (see [`PullOutcome::kept_pointers`]):
    /// the next push uploads them, so the sidecar's stat seal no longer vouches for the cache.
    pub kept_pointers: Vec<String>,
    /// Entries whose recorded size disagreed with the object downloaded; corrected in the
    /// index, so the remote index is stale too.
    pub sizes_corrected: Vec<String>,
    /// The `conflict` verdict, when files changed on both sides (see
    /// [`crate::safety::conflicts::pull_conflict_verdict`]).
    pub conflict: Option<Verdict>,
    /// Conflicts the pull left exactly as they were (deleted here while the bucket changed
    /// them, or their download failed): the cache does not match the index there.
    pub unsettled_conflicts: Vec<String>,
    /// What else the pull leaves for a person (a mixed layout, keys a rebuild could not index,
    /// entries it refused), see [`crate::runs::pull::run::pull_attention`].
    pub attention: Vec<Verdict>,
}

/// Records the outcome of a pull in `index`: local mtimes of downloaded and current files, and
/// removal of internal and vanished entries.
pub fn apply_pull(index: &mut Index, plan: &PullPlan, outcome: &PullOutcome) -> PullApplied {
    let mut applied = PullApplied::default();
    for update in &plan.mtime_updates {
        if let Some(entry) = index.entries.get_mut(&update.rel) {
            entry.local_mtime = Some(update.local_mtime.as_str().into());
            applied.mtimes_recorded += 1;
        }
    }
    for (rel, mtime) in &outcome.downloaded {
        if let Some(entry) = index.entries.get_mut(rel) {
            entry.local_mtime = Some(format_iso_millis(*mtime).into());
            applied.mtimes_recorded += 1;
        }
    }
    for rel in &outcome.kept_pointers {
        if let Some(entry) = index.entries.get_mut(rel) {
            entry.local_mtime = Some(format_iso_millis(KEPT_POINTER_MTIME_MS).into());
            applied.kept_pointers.push(rel.clone());
        }
    }
    for (rel, size) in &outcome.sizes {
        if let Some(entry) = index.entries.get_mut(rel) {
            if entry.size != *size {
                entry.size = *size;
                entry.sha256 = None;
                applied.sizes_corrected.push(rel.clone());
            }
        }
    }
    for rel in plan.prune.iter().chain(&outcome.not_found) {
        if index.entries.remove(rel).is_some() {
            applied.removed += 1;
        }
    }
    // A set-aside conflict that arrived with no copy held the bucket's bytes already: settled.
    let arrived: BTreeSet<&str> = outcome.downloaded.iter().map(|(r, _)| r.as_str()).collect();
    let unsettled: Vec<String> = plan
        .conflicts
        .iter()
        .filter(|rel| !arrived.contains(rel.as_str()))
        .cloned()
        .collect();
    applied.conflict = pull_conflict_verdict(&outcome.aside, &unsettled);
    applied.unsettled_conflicts = unsettled;
    applied
}
