//! The delete guard: evidence for each delete, and the verdicts that withhold them.
//!
//! **Absence is not deletion.** A remote object is deleted only when there is evidence that the
//! application deleted the local file (a tombstone from `markDirty(relPath)` on a path that is now
//! absent inside the bound tree), or when the user asked for absent files to be deleted — and
//! then only if no guard below fires. Every guard is decided here, from values, before the shim
//! sends a single request.

pub mod conflicts;
pub mod delete_version;
pub mod deletions;
pub mod object_condition;

use std::collections::BTreeSet;
use tsify_next::Tsify;

use serde::{Deserialize, Serialize};

use crate::codes::GuardCode;
use crate::model::paths::{is_internal, CachePlace, ForeignNamespaces, PathModel, SYNC_STATE_FILE};

/// Default cap on deletes in one push.
pub const DEFAULT_MAX_DELETES: u64 = 500;
/// Default cap on deletes as a percentage of the index.
pub const DEFAULT_MAX_DELETE_PERCENT: f64 = 25.0;
/// The percentage cap applies only above this many deletes, so small repos can delete a few
/// files without an override.
pub const PERCENT_CAP_FLOOR: u64 = 10;
/// The catalog export name (not internal, so it travels like payload).
pub const CATALOG_EXPORT: &str = ".catalog-export.json";

/// Why a delete is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Evidence {
    /// `markDirty` recorded this path (or a folder above it), and it is now absent.
    Tombstone {
        /// The tombstone (cache-relative).
        path: String,
    },
    /// The user asked for absent files to be deleted (`--delete-missing`).
    DeleteMissing,
}

/// A guard that withheld something, with a stable code and a message that says what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Stable code (a [`GuardCode`]): `mixed-layout`, `delete-cap`, `conflict`, … Every verdict
    /// comes from the core, including `confirmation-required`.
    #[tsify(type = "GuardCode")]
    pub code: GuardCode,
    /// Lowercase, specific message naming the next step.
    pub message: String,
}

impl Verdict {
    fn new(code: GuardCode, message: String) -> Verdict {
        Verdict { code, message }
    }
}

/// The user's delete settings.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeletePolicy {
    /// Delete index entries that are absent locally even without a tombstone.
    pub delete_missing: bool,
    /// Most deletes one push may make.
    pub max_deletes: u64,
    /// Most deletes one push may make, as a percentage of the index (above the floor).
    pub max_delete_percent: f64,
    /// The catalog export may shrink (the user confirmed an intended mass removal).
    pub allow_catalog_shrink: bool,
}

impl Default for DeletePolicy {
    fn default() -> Self {
        DeletePolicy {
            delete_missing: false,
            max_deletes: DEFAULT_MAX_DELETES,
            max_delete_percent: DEFAULT_MAX_DELETE_PERCENT,
            allow_catalog_shrink: false,
        }
    }
}

/// Facts about the run that the guards need, gathered by the shim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunFacts {
    /// Errors met while walking the cache.
    pub walk_errors: u64,
    /// Errors met while listing the bucket.
    pub listing_errors: u64,
    /// A metadata-only pull left files remote.
    pub lazy_pull_active: bool,
    /// The sync-state sidecar exists but cannot be read, so whether a metadata-only pull left
    /// files remote (and which paths were marked deleted) is unknown.
    pub sidecar_unreadable: bool,
    /// Folders in the cache that are symlinks: never walked, so files beneath them look absent.
    pub symlinked_folders: u64,
}

/// The tombstones a sidecar file records (with the extension's `dirtyPaths`) that lie in the
/// bound tree; the rest are dropped (see [`stored_tombstone`]).
pub fn tombstones_in_sidecar(model: &PathModel, sidecar: &[u8]) -> Vec<String> {
    crate::state::sync_state::SyncState::tombstones_of(sidecar)
        .iter()
        .filter_map(|t| stored_tombstone(model, t))
        .collect()
}

/// A tombstone as the sidecar stores it, read strictly: a cache-relative path, evidence only
/// when it lies in the bound tree. Unlike [`normalize_tombstone`], which reads what a caller of
/// this binding passes, a bare rel is never taken as inside the namespace here: stored paths are
/// cache-relative (the extension derives them from the cache root; ours are normalised before
/// they are written), so a namespaced run reads `data/x` as the cache root's `data/x`, which a
/// solo-bound `mark-deleted` recorded. Read the lenient way, that root-level tombstone deleted
/// the namespace's `data/x`.
pub fn stored_tombstone(model: &PathModel, path: &str) -> Option<String> {
    let path = path.trim_end_matches('/');
    match model.classify_cache_path(path, &ForeignNamespaces::new()) {
        CachePlace::Payload(rel) => Some(model.cache_path(&rel)),
        _ => None,
    }
}

/// Normalises a `markDirty` path to a cache-relative path inside the bound tree, or `None` when
/// it does not point into it (such a path can never be evidence). Namespaced callers pass
/// `<ns>/<rel>`; a bare rel is read as inside the namespace, as the extension does.
pub fn normalize_tombstone(model: &PathModel, path: &str) -> Option<String> {
    let path = path.trim_end_matches('/');
    let foreign = ForeignNamespaces::new();
    match model.classify_cache_path(path, &foreign) {
        CachePlace::Payload(rel) => Some(model.cache_path(&rel)),
        // Bookkeeping is never evidence. Without this arm, namespaced, `<ns>/_index/x` fell
        // through to the bare-rel reading below and became the tombstone `<ns>/<ns>/_index/x`,
        // which covers the index entry `<ns>/_index/x` that the seed bug leaves behind.
        CachePlace::Internal(_) => None,
        // A folder named by its bare name, or a bare rel in namespaced mode (never an internal
        // one, such as another namespace's `other/.namespace.json`).
        _ => match model.namespace() {
            Some(ns) if path == ns.as_str() => None,
            Some(_) => model
                .rel(path)
                .ok()
                .filter(|rel| !is_internal(rel.as_str()))
                .map(|rel| model.cache_path(&rel)),
            None => None,
        },
    }
}

/// Finds the tombstone that covers `cache_path`: the path itself or a folder above it.
pub fn covering_tombstone<'a>(
    tombstones: &'a BTreeSet<String>,
    cache_path: &str,
) -> Option<&'a String> {
    // Most plans have no tombstones; skip the walk up the folders of each of 10^6 paths.
    if tombstones.is_empty() {
        return None;
    }
    if let Some(t) = tombstones.get(cache_path) {
        return Some(t);
    }
    let mut prefix = cache_path;
    while let Some(cut) = prefix.rfind('/') {
        prefix = &prefix[..cut];
        if let Some(t) = tombstones.get(prefix) {
            return Some(t);
        }
    }
    None
}

/// Inputs of the delete guards.
pub struct GuardInput<'a> {
    /// The binding.
    pub model: &'a PathModel,
    /// Entries in the remote index.
    pub index_entries: u64,
    /// Payload files found in the bound tree.
    pub payload_files: u64,
    /// Root-level data trees found in namespaced mode.
    pub root_layout_trees: &'a [String],
    /// Files in them.
    pub root_layout_files: u64,
    /// Deletes the evidence supports.
    pub deletes: u64,
    /// The run's facts.
    pub facts: RunFacts,
    /// The user's policy.
    pub policy: DeletePolicy,
}

/// Every guard that withholds the deletes of this push. Empty means deletes may go.
pub fn delete_verdicts(input: &GuardInput<'_>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let namespaced = input.model.namespace().map(|ns| ns.as_str().to_string());
    // The layout guards, like lazy hydration below, only matter when there is a delete to
    // withhold: uploads from the bound tree go either way, and a verdict on a push with no
    // delete made every such `pushChanged` throw where the extension's push goes through.
    // `s3sync doctor` still reports the layout itself.
    let withholding = input.deletes > 0;
    if let Some(ns) = namespaced.as_ref().filter(|_| withholding) {
        if !input.root_layout_trees.is_empty() {
            verdicts.push(Verdict::new(
                GuardCode::MixedLayout,
                format!(
                    "{} files sit in root-level data trees ({}) beside the namespace folder {ns}/; \
                     deletes are withheld until `s3sync doctor` is clean (`s3sync repair --apply` fixes it)",
                    input.root_layout_files,
                    input.root_layout_trees.join(", ")
                ),
            ));
        }
    }
    if withholding && input.index_entries > 0 && input.payload_files == 0 {
        let place = match &namespaced {
            Some(ns) => format!("the namespace folder {ns}/ is absent or empty"),
            None => "the cache holds no datastore files".to_string(),
        };
        verdicts.push(Verdict::new(
            GuardCode::NamespaceTreeMissing,
            format!(
                "{place} while the index names {} files; deletes are withheld (run `s3sync pull` to hydrate, or `s3sync doctor`)",
                input.index_entries
            ),
        ));
    }
    // Lazy hydration is the extension's normal mode for large datastores, not a fault: it only
    // matters when there is a delete to withhold. Reporting it on every push made each
    // `pushChanged` after a metadata-only pull throw, although the extension's own push goes
    // through quietly (skipping deletes) in that state.
    if input.facts.lazy_pull_active && input.deletes > 0 {
        verdicts.push(Verdict::new(
            GuardCode::LazyHydration,
            "a metadata-only pull left files remote, so absent files prove nothing; deletes are withheld until a full `s3sync pull`".to_string(),
        ));
    }
    // Fails closed: the extension reads an unreadable sidecar as absent, which would also read a
    // lazily hydrated cache as complete and let `--delete-missing` delete what was never
    // downloaded.
    if input.facts.sidecar_unreadable && input.deletes > 0 {
        verdicts.push(Verdict::new(
            GuardCode::SidecarUnreadable,
            format!(
                "the sync-state file {SYNC_STATE_FILE} cannot be read, so whether files were left remote by a metadata-only pull is unknown; deletes are withheld until a full `s3sync pull` rewrites it"
            ),
        ));
    }
    // Reported on every push, like a walk error: the walk is incomplete, and what lies beneath a
    // link is neither uploaded nor proof of a delete. A person replaces the link.
    if input.facts.symlinked_folders > 0 {
        verdicts.push(Verdict::new(
            GuardCode::SymlinkInPath,
            format!(
                "{} folders in the cache are symlinks; they are never followed, so nothing beneath them is pushed and no deletes go: replace each with a real folder (`s3sync doctor` lists them), then push again",
                input.facts.symlinked_folders
            ),
        ));
    }
    if input.facts.walk_errors > 0 || input.facts.listing_errors > 0 {
        verdicts.push(Verdict::new(
            GuardCode::WalkError,
            format!(
                "{} errors walking the cache and {} listing the bucket; no deletes after an i/o error, fix them and push again",
                input.facts.walk_errors, input.facts.listing_errors
            ),
        ));
    }
    if input.deletes > 0 {
        let percent = if input.index_entries == 0 {
            100.0
        } else {
            input.deletes as f64 * 100.0 / input.index_entries as f64
        };
        let over_count = input.deletes > input.policy.max_deletes;
        // Fails closed: a cap that is not a number (NaN from a garbled option; JSON cannot
        // carry one, but a JS caller can) compares false with everything, so `percent > cap`
        // let every delete through. Caught by the push_plan fuzz target's cap check.
        let within_percent = percent <= input.policy.max_delete_percent;
        let over_percent = input.deletes > PERCENT_CAP_FLOOR && !within_percent;
        if over_count || over_percent {
            verdicts.push(Verdict::new(
                GuardCode::DeleteCap,
                format!(
                    "{} deletes ({percent:.1}% of {} indexed files) exceed the caps of {} files and {}%; \
                     check `s3sync plan`, then raise --max-deletes / --max-delete-percent to allow them",
                    input.deletes, input.index_entries, input.policy.max_deletes, input.policy.max_delete_percent
                ),
            ));
        }
    }
    verdicts
}

/// True when uploading a catalog export of `local_size` bytes over a remote one of
/// `remote_size` bytes looks like the truncation seen in the field (an emptied `[]\n` or a file
/// cut to a tenth), rather than an edit.
pub fn catalog_shrinks(local_size: u64, remote_size: u64) -> bool {
    let emptied = local_size <= 4 && remote_size > 4;
    let collapsed = remote_size >= 256 && local_size.saturating_mul(10) < remote_size;
    emptied || collapsed
}
