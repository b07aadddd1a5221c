//! The three-name path model: one datastore file, three names.
//!
//! A file has a relative path `rel` (the index key). With an optional namespace it maps to a
//! remote key (relative to the bucket prefix, which the object-store client applies) and a
//! cache-relative path. Solo: both are `rel`. Namespaced: both are `{ns}/{rel}`. Every direction
//! (pull, push, delete, hydrate, walk, rebuild) goes through [`PathModel`], so the seed bug of
//! reading `{ns}/{rel}` remotely while writing `{cache}/{rel}` locally cannot recur.

use std::collections::HashMap;
use tsify_next::Tsify;

use unicode_normalization::UnicodeNormalization;

use crate::bytes::swar;
use crate::error::{CoreError, CoreResult, PathRefusal};

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

/// Checks every rule of a relative path; shared by [`RelPath`] and [`Namespace`].
///
/// The rules are checked in a fixed order (whole-path rules first, then each segment in turn),
/// so a path breaking several always reports the same one. This runs for every index key and
/// every walked file of a plan (10^6 of each), so the common case is one quick pass that steps
/// eight bytes at a time ([`swar`]) to the next byte [`BYTE_CLASS`] does not call plain: `/` (a
/// segment ends: its rules are checked) or suspect (a backslash, a control character, or the
/// `0xC2` that may start a C1 control). A suspect byte or a segment fault sends the path to the
/// full check, which reports the rule the fixed order names first; most paths never go there.
fn check_relative(path: &str) -> Result<(), PathRefusal> {
    if path.is_empty() {
        return Err(PathRefusal::Empty);
    }
    if path.len() > MAX_KEY_BYTES {
        return Err(PathRefusal::TooLong);
    }
    let bytes = path.as_bytes();
    if bytes[0] == b'/' {
        return Err(PathRefusal::Absolute);
    }
    let mut start = 0;
    while let Some(found) = swar::position(&bytes[start..], marks_slash_or_suspect, |b| {
        BYTE_CLASS[usize::from(b)] != PLAIN
    }) {
        let end = start + found;
        if bytes[end] != b'/' || check_segment(&path[start..end]).is_err() {
            return check_relative_in_full(path);
        }
        start = end + 1;
    }
    if start == bytes.len() {
        return Err(PathRefusal::TrailingSlash);
    }
    check_segment(&path[start..])
}

/// Marks the bytes of a word [`BYTE_CLASS`] does not call plain: the quick pass steps eight bytes
/// at a time to the next separator or suspect byte.
fn marks_slash_or_suspect(word: u64) -> u64 {
    swar::below(word, 0x20)
        | swar::equal_to(word, b'/')
        | swar::equal_to(word, b'\\')
        | swar::equal_to(word, 0x7f)
        | swar::equal_to(word, 0xc2)
}

/// [`BYTE_CLASS`]: a byte no whole-path rule is about.
const PLAIN: u8 = 0;
/// [`BYTE_CLASS`]: the separator.
const SLASH: u8 = 1;
/// [`BYTE_CLASS`]: a backslash, a C0 control or DEL, or `0xC2` (which starts every C1 control,
/// and other characters too: the full check tells them apart).
const SUSPECT: u8 = 2;

/// Each byte's class for [`check_relative`]'s quick pass.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [PLAIN; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = SUSPECT;
        b += 1;
    }
    table[0x7f] = SUSPECT;
    table[b'\\' as usize] = SUSPECT;
    table[0xc2] = SUSPECT;
    table[b'/' as usize] = SLASH;
    table
};

/// [`check_relative`] for a path that may break a whole-path character rule (its first checks
/// already passed).
fn check_relative_in_full(path: &str) -> Result<(), PathRefusal> {
    let bytes = path.as_bytes();
    let mut backslash = false;
    let mut control = false;
    let mut segment_fault = None;
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'/' {
            if segment_fault.is_none() {
                segment_fault = check_segment(&path[start..i]).err();
            }
            start = i + 1;
        } else if b < 0x20 || b == 0x7f {
            control = true;
        } else if b == b'\\' {
            backslash = true;
        } else if b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            // `U+0080`–`U+009F` (C1), which `char::is_control` also counts; in valid UTF-8
            // `0xC2` only ever starts a character, so the pair is exactly one of them.
            control = true;
        }
    }
    if backslash {
        return Err(PathRefusal::Backslash);
    }
    if control {
        return Err(PathRefusal::ControlCharacter);
    }
    if bytes[bytes.len() - 1] == b'/' {
        return Err(PathRefusal::TrailingSlash);
    }
    if let Some(fault) = segment_fault {
        return Err(fault);
    }
    check_segment(&path[start..])
}

fn check_segment(segment: &str) -> Result<(), PathRefusal> {
    if segment.is_empty() {
        return Err(PathRefusal::EmptySegment);
    }
    if segment == "." || segment == ".." {
        return Err(PathRefusal::DotSegment);
    }
    if segment.len() > MAX_SEGMENT_BYTES {
        return Err(PathRefusal::SegmentTooLong);
    }
    let bytes = segment.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(PathRefusal::DriveLetter);
    }
    if is_windows_device_name(segment) {
        return Err(PathRefusal::ReservedName);
    }
    Ok(())
}

/// Windows refuses these names with or without an extension (`CON`, `con.txt`, `LPT1.log`).
fn is_windows_device_name(segment: &str) -> bool {
    // Every device name starts with one of these letters; most segments stop here.
    if !segment
        .as_bytes()
        .first()
        .is_some_and(|b| matches!(b.to_ascii_uppercase(), b'C' | b'P' | b'A' | b'N' | b'L'))
    {
        return false;
    }
    let stem = match segment.as_bytes().iter().position(|&b| b == b'.') {
        Some(dot) => &segment[..dot],
        None => segment,
    }
    .trim_end_matches(' ');
    let b = stem.as_bytes();
    // Compared in place: this runs for every segment of every path of a plan.
    match b.len() {
        3 => ["CON", "PRN", "AUX", "NUL"]
            .iter()
            .any(|name| stem.eq_ignore_ascii_case(name)),
        4 => {
            (b[..3].eq_ignore_ascii_case(b"COM") || b[..3].eq_ignore_ascii_case(b"LPT"))
                && (b'1'..=b'9').contains(&b[3])
        }
        _ => false,
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

/// Where a cache-relative path sits, relative to the bound layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CachePlace {
    /// Payload inside the bound tree (the namespace folder, or the cache root solo).
    Payload(RelPath),
    /// Bookkeeping inside the bound tree or at the cache root (never travels).
    Internal(String),
    /// Namespaced mode only: a data tree at the cache root (the seed bug's layout). Carries the
    /// rel the file would have inside the namespace folder.
    RootLayout(RelPath),
    /// Inside the folder of another namespace (one holding a `.namespace.json`).
    ForeignNamespace(String),
    /// Never synced (secrets, bundles, stray files outside the bound tree).
    Other,
    /// Not a safe relative path at all.
    Unsafe(PathRefusal),
}

/// The set of top-level folder names that belong to other namespaces.
pub type ForeignNamespaces = std::collections::BTreeSet<String>;

/// The mapping between the three names, bound to an optional namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathModel {
    namespace: Option<Namespace>,
    prefix_bytes: usize,
}

impl PathModel {
    /// A model for solo mode (no namespace).
    pub fn solo() -> PathModel {
        PathModel {
            namespace: None,
            prefix_bytes: 0,
        }
    }

    /// A model bound to `namespace`.
    pub fn namespaced(namespace: Namespace) -> PathModel {
        PathModel {
            namespace: Some(namespace),
            prefix_bytes: 0,
        }
    }

    /// A model from an optional namespace string (empty or absent means solo) and the bucket
    /// prefix (used only to enforce the key length limit on the full key).
    pub fn new(namespace: Option<&str>, prefix: &str) -> CoreResult<PathModel> {
        let namespace = match namespace {
            None | Some("") => None,
            Some(ns) => Some(Namespace::parse(ns)?),
        };
        let trimmed = prefix.trim_matches('/');
        let prefix_bytes = if trimmed.is_empty() {
            0
        } else {
            trimmed.len() + 1
        };
        Ok(PathModel {
            namespace,
            prefix_bytes,
        })
    }

    /// The bound namespace, if any.
    pub fn namespace(&self) -> Option<&Namespace> {
        self.namespace.as_ref()
    }

    /// Validates `path` as a rel of this model: the rel rules, plus the full remote key
    /// (prefix, namespace and rel) fitting S3's key limit.
    pub fn rel(&self, path: &str) -> CoreResult<RelPath> {
        self.check_rel(path)?;
        Ok(RelPath(path.to_string()))
    }

    /// [`PathModel::rel`] without allocating: the same checks and the same error, the rel
    /// borrowed from `path`.
    pub fn rel_ref<'a>(&self, path: &'a str) -> CoreResult<RelRef<'a>> {
        self.check_rel(path)?;
        Ok(RelRef(path))
    }

    /// Checks `path` as [`PathModel::rel`] does, with the same error, without allocating: the
    /// planner checks every index key of a plan and keeps only the few it transfers.
    pub fn check_rel(&self, path: &str) -> CoreResult<()> {
        check_relative(path).map_err(|reason| CoreError::UnsafePath {
            path: path.to_string(),
            reason,
        })?;
        if !self.fits_key_limit(path) {
            return Err(CoreError::UnsafePath {
                path: path.to_string(),
                reason: PathRefusal::TooLong,
            });
        }
        Ok(())
    }

    /// Whether the full remote key of `rel` (prefix, namespace and rel) fits S3's key limit.
    fn fits_key_limit(&self, rel: &str) -> bool {
        let ns_bytes = self.namespace.as_ref().map_or(0, |ns| ns.0.len() + 1);
        self.prefix_bytes + ns_bytes + rel.len() <= MAX_KEY_BYTES
    }

    /// The index key of a rel (always the bare rel).
    pub fn index_key<'a>(&self, rel: &'a RelPath) -> &'a str {
        rel.as_str()
    }

    /// The remote key of a rel, relative to the bucket prefix.
    pub fn remote_key(&self, rel: &RelPath) -> String {
        self.under_binding(rel.as_str())
    }

    /// The cache-relative path of a rel. Always the same string as [`PathModel::remote_key`]:
    /// the two sides of a transfer can never disagree.
    pub fn cache_path(&self, rel: &RelPath) -> String {
        self.under_binding(rel.as_str())
    }

    /// The key of the datastore's global lock, relative to the prefix: the key swamp core
    /// takes for this layout (`.datastore.lock` solo, `.locks/{ns}.lock` namespaced). A writer
    /// with no caller (the CLI) must take exactly this key, or it would not exclude core's own
    /// writers on the same repo.
    pub fn lock_key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}{}", LOCKS_DIR, ns.0, LOCK_SUFFIX),
            None => SOLO_LOCK_KEY.to_string(),
        }
    }

    /// The key of the v2 layout's `_index/_meta.json` under the bound tree.
    pub fn meta_key(&self) -> String {
        self.under_binding(&format!("{INDEX_DIR}/{META_PARTITION}.json"))
    }

    /// The key of the v2 shard `partition` under the bound tree, once the partition name is
    /// proven one safe segment (see [`check_partition_name`]).
    pub fn shard_key(&self, partition: &str) -> CoreResult<String> {
        check_partition_name(partition)?;
        Ok(self.under_binding(&format!("{INDEX_DIR}/{partition}.json")))
    }

    /// The folder of small control-plane records under the bound tree (with a trailing `/`).
    pub fn control_folder(&self) -> String {
        self.under_binding(&format!("{CONTROL_DIR}/"))
    }

    /// The rel of a path a caller (swamp core) names a file by: cache-relative (`{ns}/{rel}`) or
    /// a bare rel, both accepted as the extension accepts them; checked by the path rules.
    pub fn rel_from_caller_path(&self, path: &str) -> CoreResult<RelPath> {
        let bare = match &self.namespace {
            Some(ns) => path
                .strip_prefix(ns.0.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(path),
            None => path,
        };
        self.rel(bare)
    }

    /// A name (rel or `_index/...`) under the bound tree: `{ns}/{name}` or `{name}`.
    pub fn under_binding(&self, name: &str) -> String {
        match &self.namespace {
            // Joined by hand: a plan builds two of these per transfer, and `format!`'s
            // machinery was ~1.5 % of a 10^5-entry WASM push.
            Some(ns) => {
                let mut path = String::with_capacity(ns.0.len() + 1 + name.len());
                path.push_str(&ns.0);
                path.push('/');
                path.push_str(name);
                path
            }
            None => name.to_string(),
        }
    }

    /// The remote folder a rebuild lists, relative to the prefix: `{ns}/`, or empty solo (the
    /// whole bucket).
    pub fn listing_prefix(&self) -> String {
        self.under_binding("")
    }

    /// The rel of a remote key (relative to the prefix). Refuses keys outside the bound
    /// namespace and unsafe keys, saying which.
    pub fn rel_from_remote_key(&self, key: &str) -> CoreResult<RelPath> {
        match &self.namespace {
            None => self.rel(key),
            Some(ns) => match strip_first_segment(key, &ns.0) {
                Some(rest) => self.rel(rest),
                None => Err(CoreError::KeyOutsideNamespace {
                    key: key.to_string(),
                    namespace: ns.0.clone(),
                }),
            },
        }
    }

    /// Classifies a cache-relative path. `foreign` names top-level folders that hold another
    /// namespace's marker (see [`foreign_namespaces_in`]).
    pub fn classify_cache_path(&self, path: &str, foreign: &ForeignNamespaces) -> CachePlace {
        match self.place_of(path, foreign) {
            PlaceRef::Payload(rel) => CachePlace::Payload(rel.to_rel_path()),
            PlaceRef::Internal(rel) => CachePlace::Internal(rel.to_string()),
            PlaceRef::RootLayout(rel) => CachePlace::RootLayout(RelPath(rel.to_string())),
            PlaceRef::ForeignNamespace(ns) => CachePlace::ForeignNamespace(ns.to_string()),
            PlaceRef::Other => CachePlace::Other,
            PlaceRef::Unsafe(reason) => CachePlace::Unsafe(reason),
        }
    }

    /// [`PathModel::classify_cache_path`] borrowing from `path`: the survey classifies every
    /// walked file and keeps only slices of the listing buffer. The path rules are checked once,
    /// on the whole path: a rel cut from a path that passed them (its segments after the
    /// namespace folder) passes them too, so only the key length is left to check.
    pub(crate) fn place_of<'a>(&self, path: &'a str, foreign: &ForeignNamespaces) -> PlaceRef<'a> {
        if let Err(reason) = check_relative(path) {
            return PlaceRef::Unsafe(reason);
        }
        if INTERNAL_EXACT.contains(&path) {
            return PlaceRef::Internal(path);
        }
        let first = first_segment_of(path);
        let nested = first.len() < path.len();
        match &self.namespace {
            Some(ns) => {
                if let Some(rest) = strip_first_segment(path, &ns.0) {
                    return self.place_in_bound_tree(rest);
                }
                if path == ns.0 {
                    return PlaceRef::Other;
                }
                if foreign.contains(first) {
                    return PlaceRef::ForeignNamespace(first);
                }
                if DATA_TREES.contains(&first) && nested {
                    return if !self.fits_key_limit(path) {
                        PlaceRef::Unsafe(PathRefusal::TooLong)
                    } else if is_internal(path) {
                        PlaceRef::Internal(path)
                    } else {
                        PlaceRef::RootLayout(path)
                    };
                }
                PlaceRef::Other
            }
            None => {
                if foreign.contains(first) && nested {
                    return PlaceRef::ForeignNamespace(first);
                }
                self.place_in_bound_tree(path)
            }
        }
    }

    /// Places a rel of the bound tree whose path rules were already checked.
    fn place_in_bound_tree<'a>(&self, rel: &'a str) -> PlaceRef<'a> {
        if is_internal(rel) {
            return PlaceRef::Internal(rel);
        }
        if is_never_synced(rel) {
            return PlaceRef::Other;
        }
        if self.fits_key_limit(rel) {
            // Every rule of `check_rel` holds: the path rules were checked on the whole path
            // (a rel inside it breaks none that the whole does not), the key limit just now.
            PlaceRef::Payload(RelRef(rel))
        } else {
            PlaceRef::Unsafe(PathRefusal::TooLong)
        }
    }
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

/// Top-level folders of a listing (cache-relative paths or remote keys) that hold a
/// `.namespace.json` marker, other than `own` (the bound namespace).
pub fn foreign_namespaces_in<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    own: Option<&Namespace>,
) -> ForeignNamespaces {
    paths
        .into_iter()
        .filter_map(|p| p.strip_suffix(NAMESPACE_MARKER)?.strip_suffix('/'))
        .filter(|folder| !folder.is_empty() && !folder.contains('/'))
        .filter(|folder| own.is_none_or(|ns| ns.as_str() != *folder))
        .map(str::to_string)
        .collect()
}

/// How two paths collide on a case-insensitive or normalising file system.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub enum CollisionKind {
    /// The paths differ only in case or Unicode normalisation (macOS, Windows).
    CaseFold,
    /// One path is a file where another needs a folder (`a` and `a/b`), on any file system.
    FileFolder,
}

/// A group of paths that cannot all exist in one cache.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Collision {
    /// The kind of clash.
    pub kind: CollisionKind,
    /// The clashing paths, sorted.
    pub paths: Vec<String>,
}

/// Finds files that sit where another path needs a folder (`a` and `a/b`), exactly as spelled:
/// the clashes every file system has. Borrowing only, so it stays cheap on 10^6 paths; use
/// [`find_collisions`] when the file system also folds case.
pub fn find_file_folder_conflicts<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<Collision> {
    let all: Vec<&'a str> = paths.into_iter().collect();
    let files: std::collections::HashSet<&str> = all.iter().copied().collect();
    let mut collisions = Vec::new();
    for path in &all {
        let mut prefix = *path;
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            if files.contains(prefix) {
                collisions.push(Collision {
                    kind: CollisionKind::FileFolder,
                    paths: vec![prefix.to_string(), path.to_string()],
                });
            }
        }
    }
    collisions.sort_by(|a, b| a.paths.cmp(&b.paths));
    collisions
}

/// [`find_file_folder_conflicts`] for paths given in ascending byte order without repeats (the
/// keys of an index): the same collisions, found in one pass with no hashing.
///
/// In sorted order every path that starts with `a` follows `a` in one run, so a stack of the
/// paths that are string prefixes of the current one holds every file that may be its folder;
/// each has a different length, so a `/` cut of the current path finds its file, if any, by
/// length. The stack is popped as soon as a path no longer starts with its top.
pub fn find_file_folder_conflicts_sorted<'a>(
    paths: impl IntoIterator<Item = &'a str>,
) -> Vec<Collision> {
    let mut open: Vec<&'a str> = Vec::new();
    let mut collisions = Vec::new();
    for path in paths {
        while open.last().is_some_and(|top| !path.starts_with(top)) {
            open.pop();
        }
        if !open.is_empty() {
            for (cut, _) in path.match_indices('/') {
                if let Ok(found) = open.binary_search_by_key(&cut, |p| p.len()) {
                    collisions.push(Collision {
                        kind: CollisionKind::FileFolder,
                        paths: vec![open[found].to_string(), path.to_string()],
                    });
                }
            }
        }
        open.push(path);
    }
    collisions.sort_by(|a, b| a.paths.cmp(&b.paths));
    collisions
}

/// The hasher of the planner's per-plan maps of borrowed paths (10^5–10^6 entries): foldhash,
/// several times faster than std's SipHash on short keys, seeded per map so that crafted keys
/// cannot be made to collide.
pub type PathHash = foldhash::fast::RandomState;

/// The key two paths share when a case-insensitive, normalisation-insensitive file system
/// (APFS, NTFS) would store them as one.
pub fn fold_key(path: &str) -> String {
    // Most paths are ASCII, where NFD is the identity and ASCII lowering is the whole fold: skip
    // the Unicode machinery (it dominated large plans).
    if path.is_ascii() {
        path.to_ascii_lowercase()
    } else {
        path.nfd().collect::<String>().to_lowercase()
    }
}

/// Finds paths that cannot coexist in one cache folder: groups equal under [`fold_key`], and
/// files that sit where another path needs a folder (exact or folded).
///
/// Callers refuse such paths instead of letting one silently overwrite another.
pub fn find_collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<Collision> {
    let mut by_fold: HashMap<String, Vec<&'a str>> = HashMap::new();
    for path in paths {
        by_fold.entry(fold_key(path)).or_default().push(path);
    }
    let mut collisions = Vec::new();
    for group in by_fold.values() {
        if group.len() > 1 {
            let mut paths: Vec<String> = group.iter().map(|p| p.to_string()).collect();
            paths.sort();
            paths.dedup();
            if paths.len() > 1 {
                collisions.push(Collision {
                    kind: CollisionKind::CaseFold,
                    paths,
                });
            }
        }
    }
    // A folded file path that is also a folded folder prefix of another path.
    for (folded, group) in &by_fold {
        let mut prefix = folded.as_str();
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            if let Some(files) = by_fold.get(prefix) {
                let mut paths: Vec<String> = files.iter().map(|p| p.to_string()).collect();
                paths.extend(group.iter().map(|p| p.to_string()));
                paths.sort();
                paths.dedup();
                collisions.push(Collision {
                    kind: CollisionKind::FileFolder,
                    paths,
                });
            }
        }
    }
    // A hash map has no order: sort, so reports and plans are deterministic.
    collisions.sort_by(|a, b| {
        (a.kind == CollisionKind::FileFolder, &a.paths)
            .cmp(&(b.kind == CollisionKind::FileFolder, &b.paths))
    });
    collisions
}
