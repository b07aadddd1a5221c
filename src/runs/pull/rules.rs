//! The pull diff's rules for one key, beside [`super::plan::plan_pull`]'s walk: local files in
//! the way of the bucket's shape, deletions another clone recorded, derived files and pointers,
//! files set aside, and keys that collide.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::codes::EntryRefusal;
use crate::index::{stat_matches, Index, IndexEntry};
use crate::model::file_class::{is_pointer, POINTER_MAX_BYTES};
use crate::model::layout::{PayloadCursor, Survey};
use crate::model::paths::{
    find_collisions, find_file_folder_conflicts_sorted, is_internal, CollisionKind, PathModel,
    RelRef,
};
use crate::safety::deletions::deletion_of;

use super::plan::{InTheWay, PullPlan, RefusedEntry, Removal, Transfer};

/// The local files in the way of `downloads` (see [`PullPlan::in_the_way`]): a walked file at a
/// folder above a download, and the walked files under a download's own path. Each file is
/// named once, in rel order; a cache with no such clash costs a look-up per folder level of each
/// download and one binary search each.
pub(super) fn in_the_way(survey: &Survey, downloads: &[Transfer]) -> Vec<InTheWay> {
    if downloads.is_empty() || survey.payload.is_empty() {
        return Vec::new();
    }
    let mut rels: Vec<(&str, &str)> = survey
        .payload
        .iter()
        .map(|(rel, file)| (rel, file.cache_path))
        .collect();
    if !survey.payload.in_rel_order() {
        rels.sort_unstable();
    }
    let mut found: BTreeMap<String, InTheWay> = BTreeMap::new();
    for download in downloads {
        let rel = download.rel.as_str();
        // A file where one of the download's folders must be.
        for (at, _) in rel.match_indices('/') {
            let folder = &rel[..at];
            if let Some(file) = survey.payload.get(folder) {
                let folder_path =
                    &download.cache_path[..download.cache_path.len() - rel.len() + at];
                found.entry(folder.to_string()).or_insert_with(|| InTheWay {
                    rel: folder.to_string(),
                    cache_path: file.cache_path.to_string(),
                    clears: folder_path.to_string(),
                });
            }
        }
        // Files where the download's file must be: everything walked under `rel/`.
        let under = format!("{rel}/");
        let start = rels.partition_point(|(r, _)| *r < under.as_str());
        for (inner, cache_path) in rels[start..]
            .iter()
            .take_while(|(r, _)| r.starts_with(&under))
        {
            found
                .entry((*inner).to_string())
                .or_insert_with(|| InTheWay {
                    rel: (*inner).to_string(),
                    cache_path: (*cache_path).to_string(),
                    clears: download.cache_path.clone(),
                });
        }
    }
    found.into_values().collect()
}

/// What the key of an index entry is, judged once per plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyKind<'a> {
    /// Bookkeeping: pruned, never written.
    Internal,
    /// Breaks the path rules: refused, never written.
    Unsafe,
    /// A rel the plan could write.
    Writable(RelRef<'a>),
}

impl<'a> KeyKind<'a> {
    pub(super) fn of(model: &PathModel, key: &'a str) -> KeyKind<'a> {
        if is_internal(key) {
            return KeyKind::Internal;
        }
        match model.rel_ref(key) {
            Ok(rel) => KeyKind::Writable(rel),
            Err(_) => KeyKind::Unsafe,
        }
    }
}

/// A base entry the remote index no longer names (`key` is only in the base): deleted
/// remotely when this cache still holds the file as synced.
pub(super) fn note_deleted_remotely(
    plan: &mut PullPlan,
    model: &PathModel,
    index: &Index,
    local_files: &mut PayloadCursor,
    key: &str,
    base_entry: &IndexEntry,
) {
    if model.check_rel(key).is_err() {
        return;
    }
    let Some(local) = local_files
        .find(key)
        .filter(|local| stat_matches(base_entry, local.size, local.mtime_ms))
    else {
        return;
    };
    // Another clone deleted the version this cache holds, unchanged, or one written over it:
    // the delete reaches this cache too. Anything less (no record, an older version) keeps
    // the file.
    if deletion_of(index, key).is_some_and(|record| record.supersedes(base_entry)) {
        plan.removals.push(Removal {
            rel: key.to_string(),
            cache_path: local.cache_path.to_string(),
            size: local.size,
            mtime_ms: local.mtime_ms,
        });
    } else {
        plan.deleted_remotely.push(key.to_string());
    }
}

/// Adds a download of `rel` (index key `key`, `size` bytes) to the plan.
pub(super) fn push_download(
    plan: &mut PullPlan,
    model: &PathModel,
    key: &str,
    rel: RelRef<'_>,
    size: u64,
) {
    let rel = rel.to_rel_path();
    plan.summary.download_bytes += size;
    plan.downloads.push(Transfer {
        rel: key.to_string(),
        remote_key: model.remote_key(&rel),
        cache_path: model.cache_path(&rel),
        size,
    });
}

/// A derived file changed on both sides (see [`crate::model::file_class`]): the bucket's version comes
/// down in place of ours, with no copy and no conflict, since swamp regenerates it.
pub(super) fn take_derived(
    plan: &mut PullPlan,
    model: &PathModel,
    key: &str,
    rel: RelRef<'_>,
    size: u64,
) {
    plan.derived_taken.push(key.to_string());
    push_download(plan, model, key, rel, size);
}

/// True when `key`, changed on both sides, is a version pointer both sides hold small enough
/// to be one (see [`PullPlan::pointers`]).
pub(super) fn merges_by_value(key: &str, local_size: u64, remote_size: u64) -> bool {
    local_size <= POINTER_MAX_BYTES && remote_size <= POINTER_MAX_BYTES && is_pointer(key)
}

/// A version pointer changed on both sides: downloaded, and merged by value once both sides'
/// bytes are read (see [`PullPlan::pointers`]).
pub(super) fn merge_pointer_later(
    plan: &mut PullPlan,
    model: &PathModel,
    key: &str,
    rel: RelRef<'_>,
    size: u64,
) {
    plan.pointers.push(key.to_string());
    push_download(plan, model, key, rel, size);
}

/// A conflict with a local file: the bucket's version comes down, this cache's goes aside.
pub(super) fn set_aside(
    plan: &mut PullPlan,
    model: &PathModel,
    key: &str,
    rel: RelRef<'_>,
    size: u64,
) {
    plan.conflicts.push(key.to_string());
    plan.set_aside.push(key.to_string());
    push_download(plan, model, key, rel, size);
}

/// True when a tombstone covers `cache_path` (the path itself or a folder above it).
pub(super) fn deleted_here(tombstones: &BTreeSet<String>, cache_path: &str) -> bool {
    crate::safety::covering_tombstone(tombstones, cache_path).is_some()
}

/// True when `rel` is `folder` itself or lies under it.
pub(super) fn in_folder(rel: &str, folder: &str) -> bool {
    let folder = folder.trim_end_matches('/');
    rel == folder
        || rel
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Rels that clash with another rel in one cache folder, each recorded as refused once.
///
/// Only entries the plan could write take part: an internal entry (pruned) or an unsafe one
/// (refused with its path code) is never written, so it must not block a payload entry as a
/// `path-conflict` (`data/x` beside `data/x/.lock`), nor be refused a second time.
pub(super) fn collided_rels(
    index: &Index,
    kinds: &[KeyKind<'_>],
    case_insensitive: bool,
    refused: &mut Vec<RefusedEntry>,
) -> HashSet<String> {
    let mut blocked = HashSet::new();
    let writable = index
        .entries
        .keys()
        .zip(kinds)
        .filter(|(_, kind)| matches!(kind, KeyKind::Writable(_)))
        .map(|(key, _)| key.as_str());
    // Case folding costs an allocation per path: only where the file system folds case. The
    // keys come sorted and unique (a map's), so the exact search needs no hashing.
    let collisions = if case_insensitive {
        find_collisions(writable)
    } else {
        find_file_folder_conflicts_sorted(writable)
    };
    for collision in collisions {
        let code = match collision.kind {
            CollisionKind::CaseFold if !case_insensitive => continue,
            CollisionKind::CaseFold => EntryRefusal::CaseCollision,
            CollisionKind::FileFolder => EntryRefusal::PathConflict,
        };
        for path in collision.paths {
            if blocked.insert(path.clone()) {
                refused.push(RefusedEntry {
                    rel: path,
                    code: code.into(),
                });
            }
        }
    }
    blocked
}
