//! The pull diff: what to download so the bound tree of the cache matches the index.
//!
//! Pull compares each file with the base (the local index: what this cache last synced): what
//! changed remotely since is fetched, what changed here is kept, and a file changed on both
//! sides is a conflict whose local version is set aside before the bucket's comes down. Without
//! a base entry it falls back to the extension's size rule. Every transfer's remote key and cache path come from the
//! same [`PathModel`] call, so a namespaced pull can only write under `<cache>/<ns>/`.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::{Deserialize, Serialize};

use crate::codes::RefusalCode;
use crate::index::{same_version, stat_matches, Index, IndexEntry};
use crate::model::file_class::is_derived;
use crate::model::layout::{LayoutFindings, PayloadFile, Survey};
use crate::model::paths::{is_lazy_skippable, is_never_synced, PathModel};
use crate::model::time::{format_iso_millis, parse_iso_millis};

pub use super::apply::{apply_pull, PullApplied, PullOutcome, KEPT_POINTER_MTIME_MS};
use super::rules::{
    collided_rels, deleted_here, in_folder, in_the_way, merge_pointer_later, merges_by_value,
    note_deleted_remotely, push_download, set_aside, take_derived, KeyKind,
};

/// Options of a pull plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PullOptions {
    /// Scoped pull: only rels under one of these folder prefixes (e.g. `data/aws/ec2/vpc/m-1`)
    /// are considered; empty means everything.
    pub scope: Vec<String>,
    /// Lazy hydration: skip the bytes of `data/**/raw` files, creating their folders instead.
    pub metadata_only: bool,
    /// The cache lives on a case-insensitive file system (macOS, Windows): entries that differ
    /// only in case are refused instead of overwriting each other.
    pub case_insensitive: bool,
    /// Download only what is absent: a local file whose size differs is kept (the repair's
    /// hydration must never overwrite local work).
    pub keep_existing: bool,
    /// Cache-relative tombstones (`markDirty` paths, normalised): a file deleted here and not
    /// yet pushed is a local change, never brought back by a pull.
    pub tombstones: Vec<String>,
}

/// One object to copy, with all three of its names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Transfer {
    /// The index key.
    pub rel: String,
    /// The key relative to the bucket prefix.
    pub remote_key: String,
    /// The path relative to the cache folder.
    pub cache_path: String,
    /// Size in bytes (from the index for downloads, from the walk for uploads).
    pub size: u64,
}

/// An index entry the planner will not act on, with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct RefusedEntry {
    /// The index key as found.
    pub rel: String,
    /// Why: a path refusal code, `case-collision` or `path-conflict`.
    pub code: RefusalCode,
}

/// A local file that matches its entry by size but whose recorded `localMtime` is stale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MtimeUpdate {
    /// The index key.
    pub rel: String,
    /// The local mtime to record, ISO-8601.
    pub local_mtime: String,
}

/// Counts of a pull plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct PullSummary {
    /// Files to download.
    pub download: u64,
    /// Bytes to download.
    pub download_bytes: u64,
    /// Files already current.
    pub up_to_date: u64,
    /// Files left remote by lazy hydration.
    pub lazy: u64,
    /// Entries refused (unsafe paths, collisions).
    pub refused: u64,
    /// Internal entries to drop from the index.
    pub pruned: u64,
    /// Local files that differ but were kept (`keep_existing`).
    pub kept_local: u64,
}

/// The pull plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct PullPlan {
    /// Counts.
    pub summary: PullSummary,
    /// Objects to download, sorted by rel.
    pub downloads: Vec<Transfer>,
    /// `localMtime` values to record without downloading.
    pub mtime_updates: Vec<MtimeUpdate>,
    /// Cache-relative folders to create for lazily skipped files.
    pub lazy_folders: Vec<String>,
    /// Entries that will not be acted on, and why.
    pub refused: Vec<RefusedEntry>,
    /// Internal entries (which never belong in an index) to drop from it.
    pub prune: Vec<String>,
    /// What the cache walk showed about the layout (out-of-place trees, foreign folders).
    pub layout: LayoutFindings,
    /// Files changed here and remotely since the base (the local index), or never synced here
    /// while the bucket holds other bytes: the bucket's version is downloaded into place and
    /// this cache's version kept aside first (`set_aside`); one deleted here stays as it is.
    /// Either way nothing is lost and a person decides (`s3sync resolve`).
    pub conflicts: Vec<String>,
    /// Downloads (all of them `conflicts`) whose local file must be copied to its conflict copy
    /// (see [`crate::safety::conflicts`]) before the download replaces it; a download whose bytes turn
    /// out identical to the local file needs no copy and is no conflict.
    pub set_aside: Vec<String>,
    /// For `set_aside` rels whose base records a hash: a local file that still holds exactly
    /// those bytes is the version this cache last synced, unchanged (only its mtime moved, as
    /// when swamp rewrites a file with the same bytes): it needs no copy and is no conflict.
    pub base_hashes: BTreeMap<String, String>,
    /// Derived files (swamp regenerates them, see [`crate::model::file_class`]) changed here and in
    /// the bucket: the bucket's version is downloaded in place of ours, no copy kept, no
    /// conflict. Also in `downloads`.
    pub derived_taken: Vec<String>,
    /// Version pointers (`latest`, see [`crate::model::file_class`]) changed here and in the bucket,
    /// both small enough to be one: the shim reads both and the core's
    /// [`crate::model::file_class::merge_pointer_with_base`] picks the higher version (the bucket's
    /// when the local bytes are still the base's, `base_hashes`); only bytes that are not a
    /// version number become a conflict (kept aside like `set_aside`). Also in `downloads`.
    pub pointers: Vec<String>,
    /// Files changed here since the base while the remote kept the base version: kept (the
    /// push uploads them), never overwritten by the older remote copy.
    pub local_changes: Vec<String>,
    /// Files this cache synced (in the base, unchanged here) that the remote index no longer
    /// names: kept locally, and their base entries stay so a push does not bring them back.
    pub deleted_remotely: Vec<String>,
    /// Files another clone deleted on evidence (a deletion record naming exactly the version
    /// this cache last synced, see [`crate::safety::deletions`]) and unchanged here since: removed
    /// from the cache, each only if its stat is still the one planned.
    pub removals: Vec<Removal>,
    /// Entries this pull did not bring in line (outside its scope, refused, clashing): the local
    /// index keeps what the base said of them, never the remote's word for a file it did not
    /// fetch. Kept in the session only (a scoped pull leaves most of a big index here).
    #[serde(skip)]
    pub untouched: Vec<String>,
    /// Local files in the way of the bucket's shape: a file where a download needs a folder
    /// (another cache replaced the file with a folder), or the files of a folder where a
    /// download is a file (the other way round). The bucket's shape lands: each is moved to its
    /// conflict copy first (named by content, see [`crate::safety::conflicts`]), never deleted, and the
    /// pull reports it as a conflict. Without this every later pull failed on them.
    pub in_the_way: Vec<InTheWay>,
}

/// A local file a pull removes (see [`PullPlan::removals`]), with the stat it was planned on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Removal {
    /// Its rel.
    pub rel: String,
    /// Its cache path.
    pub cache_path: String,
    /// Its size when planned.
    pub size: u64,
    /// Its mtime (epoch ms) when planned.
    pub mtime_ms: Option<i64>,
}

/// A local file in the way of a download (see [`PullPlan::in_the_way`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct InTheWay {
    /// Its rel.
    pub rel: String,
    /// Its cache path.
    pub cache_path: String,
    /// The download's folder it stands in (a file where the folder must be) or the download's
    /// path (a folder where the file must be): emptied and removed once the files are moved.
    pub clears: String,
}

/// What a local file and its base say about a remote entry.
enum Against {
    /// No base entry to compare with: the extension's size rule decides.
    NoBase,
    /// Unchanged here since the base; `remote_moved` when the remote entry is another version.
    LocalUnchanged { remote_moved: bool },
    /// Changed here since the base; `remote_moved` as above.
    LocalChanged { remote_moved: bool },
}

fn against_base(
    base: Option<&IndexEntry>,
    remote: &IndexEntry,
    size: u64,
    mtime: Option<i64>,
) -> Against {
    let Some(base) = base else {
        return Against::NoBase;
    };
    let remote_moved = !same_version(base, remote);
    if stat_matches(base, size, mtime) {
        Against::LocalUnchanged { remote_moved }
    } else {
        Against::LocalChanged { remote_moved }
    }
}

/// Plans a pull of `index` into the cache described by `survey`, with `base` (the local index:
/// what this cache last synced) telling local edits from remote ones.
///
/// With a base entry, a file unchanged here is downloaded exactly when the remote moved on
/// (whatever its size: a same-size remote change is a change); a file changed here is never
/// overwritten (a `local_change` when the remote kept the base version, a `conflict` when it
/// did not). Without one, the extension's rule: a different size downloads.
pub fn plan_pull(
    model: &PathModel,
    index: &Index,
    base: Option<&Index>,
    survey: &Survey,
    options: &PullOptions,
) -> PullPlan {
    let mut plan = PullPlan {
        layout: survey.findings.clone(),
        ..PullPlan::default()
    };
    // Each key is judged once here (the collision search and the diff both need it), and its
    // walked file found on the way: a key equal to a walked rel is that rel, which the survey
    // checked (it is no bookkeeping and passes the path rules and the key limit), so only the
    // other keys go through the rules.
    let mut walked = survey.payload.cursor();
    let (kinds, local_files): (Vec<KeyKind<'_>>, Vec<Option<&PayloadFile>>) = index
        .entries
        .keys()
        .map(|key| match walked.find(key) {
            Some(file) => match file.rel.for_equal(key) {
                Some(rel) => (KeyKind::Writable(rel), Some(file)),
                None => (KeyKind::of(model, key), Some(file)),
            },
            None => (KeyKind::of(model, key), None),
        })
        .unzip();
    let blocked = collided_rels(index, &kinds, options.case_insensitive, &mut plan.refused);
    let tombstones: BTreeSet<String> = options.tombstones.iter().cloned().collect();
    let mut lazy_folders = BTreeSet::new();
    // The base is walked beside the index (both are sorted): its entry for each key without a
    // look-up, and the keys only it holds on the way.
    let mut base_entries = base.map(|b| b.entries.iter().peekable());
    // The base keys met on the way come in ascending order too.
    let mut base_walked = survey.payload.cursor();
    for (((key, entry), kind), local) in index.entries.iter().zip(&kinds).zip(local_files) {
        let mut base_entry = None;
        if let Some(walk) = base_entries.as_mut() {
            while let Some((base_key, b)) = walk.next_if(|(base_key, _)| *base_key <= key) {
                if base_key == key {
                    base_entry = Some(b);
                } else {
                    note_deleted_remotely(&mut plan, model, index, &mut base_walked, base_key, b);
                }
            }
        }
        if *kind == KeyKind::Internal {
            plan.prune.push(key.clone());
            continue;
        }
        if is_never_synced(key) {
            // An old writer indexed it; it stays in the index but never comes down.
            continue;
        }
        if !options.scope.is_empty() && !options.scope.iter().any(|s| in_folder(key, s)) {
            plan.untouched.push(key.clone());
            continue;
        }
        let rel = match kind {
            KeyKind::Writable(rel) => *rel,
            _ => {
                // Judged unsafe above; checked again only to name the rule it breaks.
                let Err(error) = model.check_rel(key) else {
                    continue;
                };
                plan.refused.push(RefusedEntry {
                    rel: key.clone(),
                    code: RefusalCode::of_error(&error),
                });
                plan.untouched.push(key.clone());
                continue;
            }
        };
        if !blocked.is_empty() && blocked.contains(key.as_str()) {
            plan.untouched.push(key.clone());
            continue;
        }
        // Deleted here since the last sync, the delete not yet pushed: a local change
        // (downloading it again would undo the delete), or a conflict when the remote moved on
        // meanwhile. Only a file the base holds can have been deleted here: a file another
        // cache added under a tombstoned folder is downloaded (absent, it would read as
        // deleted here and its object would go with the next push).
        if let (None, Some(b)) = (local, base_entry) {
            if deleted_here(&tombstones, &model.cache_path(&rel.to_rel_path())) {
                if same_version(b, entry) {
                    plan.local_changes.push(key.clone());
                } else {
                    plan.conflicts.push(key.clone());
                }
                continue;
            }
        }
        if let (Some(local), false) = (local, options.keep_existing) {
            match against_base(base_entry, entry, local.size, local.mtime_ms) {
                // This cache has synced before, yet never this file: both may be somebody's
                // work (made here meanwhile). Only the bytes tell, even at the same size (the
                // extension's "up to date" would record ours as the remote version, and the
                // next pull would overwrite it): the bucket's comes down, and ours is kept
                // aside unless the bytes are the same. With no base at all (a first pull into
                // a filled folder) a different size is a conflict too, and the same size keeps
                // the extension's rule: checking every file's bytes on first contact would
                // download the whole cache again.
                Against::NoBase if base.is_some() || local.size != entry.size => {
                    if is_derived(key) {
                        take_derived(&mut plan, model, key, rel, entry.size);
                    } else if merges_by_value(key, local.size, entry.size) {
                        merge_pointer_later(&mut plan, model, key, rel, entry.size);
                    } else {
                        set_aside(&mut plan, model, key, rel, entry.size);
                    }
                    continue;
                }
                Against::NoBase => {}
                Against::LocalUnchanged { remote_moved: true } => {
                    push_download(&mut plan, model, key, rel, entry.size);
                    continue;
                }
                Against::LocalUnchanged {
                    remote_moved: false,
                } => {}
                Against::LocalChanged { remote_moved: true } if is_derived(key) => {
                    take_derived(&mut plan, model, key, rel, entry.size);
                    continue;
                }
                Against::LocalChanged { remote_moved: true } => {
                    if let Some(sha256) = base_entry.and_then(|b| b.sha256.clone()) {
                        plan.base_hashes.insert(key.clone(), sha256);
                    }
                    if merges_by_value(key, local.size, entry.size) {
                        merge_pointer_later(&mut plan, model, key, rel, entry.size);
                    } else {
                        set_aside(&mut plan, model, key, rel, entry.size);
                    }
                    continue;
                }
                Against::LocalChanged {
                    remote_moved: false,
                } => {
                    plan.local_changes.push(key.clone());
                    continue;
                }
            }
        }
        match local {
            Some(local) if local.size == entry.size => {
                plan.summary.up_to_date += 1;
                if let Some(mtime) = local.mtime_ms {
                    let recorded = entry.local_mtime.as_deref().and_then(parse_iso_millis);
                    if recorded != Some(mtime) {
                        plan.mtime_updates.push(MtimeUpdate {
                            rel: key.clone(),
                            local_mtime: format_iso_millis(mtime),
                        });
                    }
                }
            }
            Some(_) if options.keep_existing => plan.summary.kept_local += 1,
            None if options.metadata_only && is_lazy_skippable(key) => {
                plan.summary.lazy += 1;
                let cache_path = model.cache_path(&rel.to_rel_path());
                if let Some((folder, _)) = cache_path.rsplit_once('/') {
                    lazy_folders.insert(folder.to_string());
                }
            }
            _ => push_download(&mut plan, model, key, rel, entry.size),
        }
    }
    if let Some(walk) = base_entries {
        for (base_key, b) in walk {
            note_deleted_remotely(&mut plan, model, index, &mut base_walked, base_key, b);
        }
    }
    plan.in_the_way = in_the_way(survey, &plan.downloads);
    if !plan.in_the_way.is_empty() {
        // Moved aside, not kept in place: no longer deleted remotely or a local change here.
        let moved: BTreeSet<&str> = plan.in_the_way.iter().map(|w| w.rel.as_str()).collect();
        plan.deleted_remotely
            .retain(|rel| !moved.contains(rel.as_str()));
        plan.local_changes
            .retain(|rel| !moved.contains(rel.as_str()));
    }
    plan.lazy_folders = lazy_folders.into_iter().collect();
    plan.summary.download = plan.downloads.len() as u64;
    plan.summary.refused = plan.refused.len() as u64;
    plan.summary.pruned = plan.prune.len() as u64;
    plan
}
