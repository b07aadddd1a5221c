//! The three-name path model: one datastore file, three names.
//!
//! A file has a relative path `rel` (the index key). With an optional namespace it maps to a
//! remote key (relative to the bucket prefix, which the object-store client applies) and a
//! cache-relative path. Solo: both are `rel`. Namespaced: both are `{ns}/{rel}`. Every direction
//! (pull, push, delete, hydrate, walk, rebuild) goes through [`PathModel`], so the seed bug of
//! reading `{ns}/{rel}` remotely while writing `{cache}/{rel}` locally cannot recur.

use crate::error::{CoreError, CoreResult, PathRefusal};

mod check;
mod collisions;
mod model;

use check::check_relative;
pub use collisions::{
    find_collisions, find_file_folder_conflicts, find_file_folder_conflicts_sorted, fold_key,
    Collision, CollisionKind, PathHash,
};
pub use model::{foreign_namespaces_in, CachePlace, FileNames, ForeignNamespaces, PathModel};

/// S3's limit on the length of an object key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Top-level data trees of a datastore (inside the namespace folder, or at the cache root solo).
pub const DATA_TREES: &[&str] = &[
    "data",
    "outputs",
    "definitions-evaluated",
    "workflow-runs",
    "workflows-evaluated",
    "auto-definitions",
    "audit",
    "telemetry",
    "logs",
    "files",
];

/// The data trees that hold a model's files (`{tree}/{modelType}/{modelId}`): what a scoped
/// sync of that model covers.
pub const MODEL_TREES: &[&str] = &["data", "outputs", "definitions-evaluated"];

/// The folders a scoped sync of `models` (`(modelType, modelId)` pairs) covers, in order.
pub fn model_scope<'a>(models: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    models
        .into_iter()
        .flat_map(|(model_type, model_id)| {
            MODEL_TREES
                .iter()
                .map(move |tree| format!("{tree}/{model_type}/{model_id}"))
        })
        .collect()
}

/// Names among `candidates` that look like a typo of `wanted`: equal but for case, or within
/// two single-character edits (a namespace `Prod` for `prod`, `prdo` for `prod`), nearest
/// first; `wanted` itself is never suggested.
pub fn near_names<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let folded = wanted.to_lowercase();
    let mut near: Vec<(usize, String)> = candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .filter_map(|c| {
            let distance = if c.to_lowercase() == folded {
                0
            } else {
                edit_distance(&folded, &c.to_lowercase())
            };
            (distance <= 2).then(|| (distance, c.to_string()))
        })
        .collect();
    near.sort();
    near.dedup();
    near.into_iter().map(|(_, name)| name).collect()
}

/// Levenshtein distance over chars, stopping early past 2 (only near names matter).
fn edit_distance(a: &str, b: &str) -> usize {
    // Folder names are single segments (at most 255 bytes); anything longer is no typo of one,
    // and the quadratic table must stay small on hostile input.
    if a.len() > MAX_SEGMENT_BYTES || b.len() > MAX_SEGMENT_BYTES {
        return 3;
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// Top-level folders swamp keeps in the cache that never sync, in either direction.
///
/// The datastore reference names `secrets` and bundle folders; only `secrets` has a fixed name,
/// so it is the only one refused here (the extension itself excludes neither).
/// `.s3sync-repair` is where repair keeps backups and its journal, `.s3sync-conflicts` where a
/// pull keeps this cache's version of a file changed on both sides.
pub const NEVER_SYNCED_TREES: &[&str] = &["secrets", ".s3sync-repair", ".s3sync-conflicts"];

/// The longest file or folder name (in bytes) a cache can hold: `NAME_MAX` of ext4, APFS and
/// most others. A longer segment is a valid S3 key that every pull would fail to write.
pub const MAX_SEGMENT_BYTES: usize = 255;

/// Files at the root of a rel that are internal bookkeeping, never payload.
const INTERNAL_EXACT: &[&str] = &[
    ".datastore-index.json",
    ".push-queue.json",
    ".datastore.lock",
    ".datastore-sync-state.json",
    TOMBSTONE_JOURNAL_FILE,
    TOMBSTONE_JOURNAL_TAKEN,
];

/// Basename of the marker that claims a top-level folder for a namespace.
pub const NAMESPACE_MARKER: &str = ".namespace.json";

/// The global lock key in solo mode (relative to the prefix).
pub const SOLO_LOCK_KEY: &str = ".datastore.lock";

/// The folder of per-namespace global locks (`.locks/{ns}.lock`).
pub const LOCKS_DIR: &str = ".locks";

/// The suffix of a per-namespace global lock key.
pub const LOCK_SUFFIX: &str = ".lock";

/// Name of the monolithic index file.
pub const INDEX_FILE: &str = ".datastore-index.json";

/// How old a temporary file of ours (`.s3sync-tmp-*`, written then renamed over its final
/// name) must be before a later run removes it: a run killed between the write and the rename
/// leaves it behind. An hour is far beyond any live write, whose file's mtime moves with every
/// chunk it writes; a younger one may belong to a run still going, and is left alone.
pub const TEMP_STALE_MS: i64 = 3_600_000;

/// True when a temporary file of ours last written at `mtime_ms` is left over from a run that
/// died (see [`TEMP_STALE_MS`]); a file without an mtime is never judged stale.
pub fn is_stale_temp(mtime_ms: Option<i64>, now_ms: i64) -> bool {
    mtime_ms.is_some_and(|mtime| now_ms.saturating_sub(mtime) > TEMP_STALE_MS)
}

/// Name of the local sync-state sidecar.
pub const SYNC_STATE_FILE: &str = ".datastore-sync-state.json";

/// Name of the tombstone journal beside the sidecar: `markDirty` appends one line per tombstone
/// instead of rewriting the sidecar (see [`crate::state::sync_state::fold_journal`]).
pub const TOMBSTONE_JOURNAL_FILE: &str = ".datastore-sync-state.journal";

/// Name the journal is moved to while a push folds it into the sidecar.
pub const TOMBSTONE_JOURNAL_TAKEN: &str = ".datastore-sync-state.journal.taken";

/// The names of the bookkeeping files at the cache root and of the solo lock key, as one value
/// the shim reads once, so it copies none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BookkeepingNames {
    /// The local index.
    pub local_index: &'static str,
    /// The sync-state sidecar.
    pub sidecar: &'static str,
    /// The tombstone journal.
    pub journal: &'static str,
    /// The journal while a run folds it in.
    pub journal_taken: &'static str,
    /// The global lock of solo mode.
    pub solo_lock_key: &'static str,
}

/// The bookkeeping names (see [`BookkeepingNames`]).
pub const BOOKKEEPING_NAMES: BookkeepingNames = BookkeepingNames {
    local_index: INDEX_FILE,
    sidecar: SYNC_STATE_FILE,
    journal: TOMBSTONE_JOURNAL_FILE,
    journal_taken: TOMBSTONE_JOURNAL_TAKEN,
    solo_lock_key: SOLO_LOCK_KEY,
};

/// A validated relative path: the index key of a datastore file.
///
/// Guaranteed non-empty, `/`-separated, with no `.`/`..`/empty segments, no trailing slash,
/// no backslash, no control character, no Windows drive or device name, at most
/// [`MAX_KEY_BYTES`] bytes. Joining it under any folder therefore stays under that folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

impl RelPath {
    /// Validates `path` as a relative path.
    pub fn parse(path: &str) -> CoreResult<RelPath> {
        check_relative(path).map_err(|reason| CoreError::UnsafePath {
            path: path.to_string(),
            reason,
        })?;
        Ok(RelPath(path.to_string()))
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first segment (the data tree, for payload files).
    pub fn first_segment(&self) -> &str {
        self.0.split('/').next().unwrap_or("")
    }

    /// The last segment (the file name).
    pub fn basename(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }

    /// Consumes the path, returning its string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A [`RelPath`] borrowed from the text it was checked in (see [`PathModel::rel_ref`]): the
/// planner checks every index key of a plan, and builds owned names only for what it transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelRef<'a>(&'a str);

impl<'a> RelRef<'a> {
    /// The path as a string.
    pub fn as_str(&self) -> &'a str {
        self.0
    }

    /// The owned [`RelPath`] (already checked: nothing is checked again).
    pub fn to_rel_path(&self) -> RelPath {
        RelPath(self.0.to_string())
    }

    /// `text` as a checked rel when it is this rel's text: what was checked on one copy holds
    /// for an equal string (a plan meets index keys equal to the walked rels the survey
    /// checked, and need not check them again).
    pub fn for_equal<'b>(&self, text: &'b str) -> Option<RelRef<'b>> {
        (self.0 == text).then_some(RelRef(text))
    }
}

/// A validated namespace: one safe segment, not starting with `.` or `_`, and not the name of a
/// data tree (a namespace called `data` would be indistinguishable from the root layout).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Namespace(String);

impl Namespace {
    /// Validates `name` as a namespace.
    pub fn parse(name: &str) -> CoreResult<Namespace> {
        let refuse = |reason| CoreError::InvalidNamespace {
            namespace: name.to_string(),
            reason,
        };
        check_relative(name).map_err(refuse)?;
        if name.contains('/') {
            return Err(refuse(PathRefusal::NamespaceNotOneSegment));
        }
        if name.starts_with('.') || name.starts_with('_') {
            return Err(refuse(PathRefusal::NamespaceReservedPrefix));
        }
        // Case-insensitively: on macOS and Windows a namespace `Data` is the root `data` tree.
        let reserved = DATA_TREES
            .iter()
            .chain(NEVER_SYNCED_TREES)
            .any(|tree| tree.eq_ignore_ascii_case(name));
        if reserved {
            return Err(refuse(PathRefusal::NamespaceReservedName));
        }
        Ok(Namespace(name.to_string()))
    }

    /// The namespace as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True when a rel (namespace already stripped) names bookkeeping that never travels as payload.
pub fn is_internal(rel: &str) -> bool {
    // Every internal name (whole rel, first segment or last) starts with `.` or `_`: a rel
    // whose first and last segments start with neither is payload, decided without searching
    // the lists. This runs for every index key of a plan.
    let marked = |segment: &str| matches!(segment.as_bytes().first(), Some(b'.' | b'_'));
    if !marked(rel) && !marked(last_segment_of(rel)) {
        return false;
    }
    if INTERNAL_EXACT.contains(&rel) {
        return true;
    }
    let first = first_segment_of(rel);
    if first == INDEX_DIR || first == CONTROL_DIR {
        return true;
    }
    let base = last_segment_of(rel);
    base == ".lock"
        || base == NAMESPACE_MARKER
        || base == "_catalog.db"
        || base.starts_with("_catalog.db-")
}

/// True when a rel lies in a folder that never syncs in either direction (`secrets/...`). The
/// walk, the rebuild, the pull and the push all skip such rels, so they can neither be
/// downloaded, uploaded, nor counted as missing and deleted.
pub fn is_never_synced(rel: &str) -> bool {
    let first = first_segment_of(rel);
    first.len() < rel.len() && NEVER_SYNCED_TREES.contains(&first)
}

/// The part of `path` before its first `/` (all of it when it has none). A byte search: these
/// run for every path of a plan, where `str::split`'s searcher showed in the profile.
fn first_segment_of(path: &str) -> &str {
    match path.as_bytes().iter().position(|&b| b == b'/') {
        Some(cut) => &path[..cut],
        None => path,
    }
}

/// The part of `path` after its last `/` (all of it when it has none).
fn last_segment_of(path: &str) -> &str {
    match path.as_bytes().iter().rposition(|&b| b == b'/') {
        Some(cut) => &path[cut + 1..],
        None => path,
    }
}

/// True when a metadata-only (lazy) pull may skip the file's bytes: a `raw` payload under `data/`
/// with at least three segments. Its folder is still created so listings work.
pub fn is_lazy_skippable(rel: &str) -> bool {
    let mut segments = rel.split('/');
    let first = segments.next();
    let rest: Vec<&str> = segments.collect();
    first == Some("data") && rest.len() >= 2 && rest.last() == Some(&"raw")
}

/// The v2 shard partition of a rel, or `None` when the rel has no partition.
///
/// Rules from the datastore format: one segment → `_root`; `data`, `outputs`,
/// `definitions-evaluated` need ≥ 4 segments and take the first `n-3` (n ≥ 6) or `n-1`
/// segments joined with `--`; `workflow-runs` needs ≥ 3 and takes `workflow-runs--{seg 2}`;
/// the other data trees partition by their name.
pub fn partition_key(rel: &str) -> Option<String> {
    // An empty rel names no file, so it has no shard (not `_root`).
    if rel.is_empty() {
        return None;
    }
    let segments: Vec<&str> = rel.split('/').collect();
    let n = segments.len();
    if n == 1 {
        return Some("_root".to_string());
    }
    match segments[0] {
        "data" | "outputs" | "definitions-evaluated" => {
            if n < 4 {
                return None;
            }
            let take = if n >= 6 { n - 3 } else { n - 1 };
            Some(segments[..take].join("--"))
        }
        "workflow-runs" => {
            if n < 3 {
                return None;
            }
            Some(format!("workflow-runs--{}", segments[1]))
        }
        "workflows-evaluated" | "auto-definitions" | "audit" | "telemetry" | "logs" | "files" => {
            Some(segments[0].to_string())
        }
        _ => None,
    }
}

/// The folder of the v2 index (`_index/_meta.json` and one shard per partition).
pub const INDEX_DIR: &str = "_index";

/// The folder of control-plane records (and this core's conditional-write probes).
pub const CONTROL_DIR: &str = "_control";

/// The name `_index/_meta.json` itself would have as a partition: a shard of that name would
/// overwrite the meta.
pub const META_PARTITION: &str = "_meta";

/// Checks that a partition name from `_index/_meta.json` is a safe single segment: the path
/// rules of a rel (no `.`/`..`, backslash, control character, drive or device name, at most
/// 1,024 bytes), no `/`, and not `_meta`. Its shard key `_index/{partition}.json` then names an
/// object inside `_index/` and nothing else; `../../evil` would name one outside it once a URL
/// normalizer collapsed the dots.
pub fn check_partition_name(partition: &str) -> CoreResult<()> {
    let refuse = |detail: &str| CoreError::UnsafePartition {
        partition: partition.to_string(),
        detail: detail.to_string(),
    };
    check_relative(partition).map_err(|reason| refuse(reason.describe()))?;
    if partition.contains('/') {
        return Err(refuse("must be a single path segment"));
    }
    if partition == META_PARTITION {
        return Err(refuse("is the name of the meta file itself"));
    }
    Ok(())
}

/// [`CachePlace`] borrowing from the classified path (see [`PathModel::place_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceRef<'a> {
    /// Payload inside the bound tree: its rel, checked as [`PathModel::rel_ref`] checks.
    Payload(RelRef<'a>),
    /// Bookkeeping inside the bound tree or at the cache root.
    Internal(&'a str),
    /// A data tree at the cache root (namespaced): the rel it would have in the namespace.
    RootLayout(&'a str),
    /// Inside another namespace's folder: that folder.
    ForeignNamespace(&'a str),
    /// Never synced.
    Other,
    /// Not a safe relative path.
    Unsafe(PathRefusal),
}

/// `path` without its first segment when that segment is exactly `segment`.
pub(crate) fn strip_first_segment<'a>(path: &'a str, segment: &str) -> Option<&'a str> {
    path.strip_prefix(segment)?.strip_prefix('/')
}
