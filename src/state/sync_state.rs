//! The local sync-state sidecar, `.datastore-sync-state.json` at the cache root.
//!
//! Shared with the extension (v1 and v2 shapes), so a cache can move between the two services.
//! This core adds one field the extension ignores, `s3syncTombstones`: the uncapped record of
//! `markDirty(relPath)` calls, which is the evidence a remote delete needs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The sidecar's content. Unknown fields are kept and written back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncState {
    /// 1 or 2 (this core writes 2).
    pub version: u64,
    /// The unquoted ETag of the remote index the cache was last verified against.
    // The extension spells it `remoteIndexETag`; `rename_all = "camelCase"` alone gives
    // `remoteIndexEtag`, which made every extension sidecar unreadable here (so its
    // `lazyPullActive` and `dirtyPaths` were silently dropped) and ours unreadable there. The
    // alias still reads sidecars written under the old spelling.
    #[serde(rename = "remoteIndexETag", alias = "remoteIndexEtag")]
    pub remote_index_etag: String,
    /// When that verification happened (ISO-8601).
    pub last_verified_at: String,
    /// Something changed locally since the last verified sync.
    pub local_dirty: bool,
    /// Cache-relative paths marked dirty (the extension caps these at 200).
    #[serde(default)]
    pub dirty_paths: Vec<String>,
    /// A `markDirty()` without a path: walk everything next push.
    #[serde(default)]
    pub bulk_invalidated: bool,
    /// A metadata-only pull left files remote: absent files prove nothing.
    #[serde(default)]
    pub lazy_pull_active: bool,
    /// The extension's dirty-path cap overflowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_paths_overflowed: Option<bool>,
    /// The v2 shard commit the cache matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_seq: Option<u64>,
    /// Hash of the last exported catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_catalog_hash: Option<String>,
    /// The namespaced data-key migration has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_key_migrated: Option<bool>,
    /// This core's evidence of local deletions: cache-relative paths given to `markDirty`,
    /// never capped, cleared only once the push that acted on them has published.
    #[serde(
        default,
        rename = "s3syncTombstones",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tombstones: Vec<String>,
    /// The stat seal of the last verified push (see [`crate::state::seal`]): a push that finds the
    /// cache as sealed, with nothing marked, sends nothing.
    #[serde(
        default,
        rename = "s3syncSeal",
        skip_serializing_if = "Option::is_none"
    )]
    pub seal: Option<crate::state::seal::StatSeal>,
    /// Fields this core does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SyncState {
    /// A sidecar for a cache that had none: version 2, nothing verified.
    // `Default` gives version 0, which neither this core nor the extension reads back, so a
    // push that could not verify the cache wrote a sidecar both sides then ignored.
    pub fn fresh() -> SyncState {
        SyncState {
            version: 2,
            ..SyncState::default()
        }
    }

    /// The state to update and write back: the sidecar as read; a fresh one when there was none;
    /// and when it could not be read, a fresh one that still withholds deletes
    /// (`lazyPullActive`) until a full pull. An unreadable sidecar may have hidden a lazy
    /// hydration, and the first write would otherwise replace that doubt with a clean state
    /// that the next push (or the extension) trusts.
    pub fn for_update(sidecar: Option<&[u8]>) -> SyncState {
        match sidecar {
            None => SyncState::fresh(),
            Some(bytes) => SyncState::parse(bytes).unwrap_or_else(|| SyncState {
                lazy_pull_active: true,
                ..SyncState::fresh()
            }),
        }
    }

    /// Reads a sidecar. Like the extension, an unreadable sidecar counts as absent (`None`):
    /// the next sync then does a full, verified walk, which is always safe.
    pub fn parse(bytes: &[u8]) -> Option<SyncState> {
        let state: SyncState = serde_json::from_slice(bytes).ok()?;
        (state.version == 1 || state.version == 2).then_some(state)
    }

    /// The pretty JSON the extension writes (two-space indent, no trailing newline).
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }

    /// Appends [`SyncState::to_json`]'s bytes to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Writing into a `Vec` cannot fail, and every field serialises (strings, numbers from
        // parsed JSON, booleans); on the impossible error `out` keeps what was written.
        let _ = serde_json::to_writer_pretty(out, self);
    }

    /// Records a verified, clean sync against the remote index `etag` at `now_iso`. A multipart
    /// or empty ETag is not a content identity, so it is not recorded (the fast path stays off).
    pub fn mark_synced(&mut self, etag: Option<&str>, now_iso: &str) {
        self.version = 2;
        self.remote_index_etag = etag
            .map(unquote_etag)
            .filter(|e| is_trusted_etag(e))
            .unwrap_or_default()
            .to_string();
        self.last_verified_at = now_iso.to_string();
        self.local_dirty = false;
        self.dirty_paths.clear();
        self.bulk_invalidated = false;
        self.dirty_paths_overflowed = None;
    }

    /// True when a pull may skip everything: the remote index is the one the cache was last
    /// verified against, the local index exists, and no lazy hydration is pending (unless this
    /// pull is itself metadata-only).
    pub fn pull_is_noop(
        &self,
        head_etag: Option<&str>,
        local_index: bool,
        metadata_only: bool,
    ) -> bool {
        if self.lazy_pull_active && !metadata_only {
            return false;
        }
        let Some(head) = head_etag.map(unquote_etag) else {
            return false;
        };
        local_index
            && is_trusted_etag(head)
            && !self.remote_index_etag.is_empty()
            && self.remote_index_etag == head
    }
}

/// Where a push left the cache, as [`SyncState::record_push`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushStanding {
    /// The cache holds exactly what the bucket's index names: nothing failed or was withheld,
    /// nothing is missing here, behind the bucket or not yet pulled.
    InLine,
    /// Everything this cache changed is in the bucket, but the bucket holds versions this cache
    /// has not pulled (files another cache added or changed): nothing to push, a pull to do.
    SentAll,
    /// Something local was not sent (a failure, a guard, a missing file, a lazy pull pending).
    Unsent,
}

/// An ETag without its surrounding double quotes.
pub fn unquote_etag(etag: &str) -> &str {
    etag.trim_start_matches("W/").trim_matches('"')
}

/// True for an ETag that identifies content: non-empty and not a multipart ETag (`…-N`).
pub fn is_trusted_etag(etag: &str) -> bool {
    let etag = unquote_etag(etag);
    if etag.is_empty() {
        return false;
    }
    match etag.rsplit_once('-') {
        // `…-3` is a multipart ETag: a hash of part hashes, not of the content.
        Some((_, parts)) => parts.is_empty() || !parts.bytes().all(|b| b.is_ascii_digit()),
        None => true,
    }
}

/// The extension's cap on `dirtyPaths`; past it the extension walks everything.
pub const DIRTY_PATHS_CAP: usize = 200;

impl SyncState {
    /// Records a `markDirty`. With a path (normalised to the bound tree by the caller), the
    /// path becomes a tombstone (uncapped) and, for the extension, a dirty path; past the
    /// extension's cap its dirty paths collapse to a bulk walk. This core never sets
    /// `dirtyPathsOverflowed`: in the extension that flag turns every absent file into a delete.
    /// Without a path it is a modification signal only: walk everything, delete nothing.
    pub fn record_dirty(&mut self, tombstone: Option<&str>) {
        self.version = 2;
        self.local_dirty = true;
        match tombstone {
            Some(path) => {
                if !self.tombstones.iter().any(|t| t == path) {
                    self.tombstones.push(path.to_string());
                }
                if !self.bulk_invalidated && !self.dirty_paths.iter().any(|p| p == path) {
                    if self.dirty_paths.len() >= DIRTY_PATHS_CAP {
                        self.dirty_paths.clear();
                        self.bulk_invalidated = true;
                    } else {
                        self.dirty_paths.push(path.to_string());
                    }
                }
            }
            None => self.bulk_invalidated = true,
        }
    }

    /// Records the end of a push (the lazy flag kept: a push brings nothing down), and forgets
    /// the tombstones it acted on:
    ///
    /// - [`PushStanding::InLine`]: verified against `etag` at `now_iso`.
    /// - [`PushStanding::SentAll`]: nothing local is left to send, but the cache does not hold
    ///   everything the bucket does: clean (no dirty flag or path, so the next push may end on
    ///   its seal) and tied to no index ETag (so the next pull does its work).
    /// - [`PushStanding::Unsent`]: marked dirty, so no fast path skips the next push's or pull's
    ///   work.
    pub fn record_push(
        &mut self,
        standing: PushStanding,
        etag: Option<&str>,
        now_iso: &str,
        consumed: &[String],
    ) {
        match standing {
            PushStanding::InLine => {
                let lazy = self.lazy_pull_active;
                self.mark_synced(etag, now_iso);
                self.lazy_pull_active = lazy;
            }
            PushStanding::SentAll => {
                self.version = 2;
                self.remote_index_etag.clear();
                self.local_dirty = false;
                self.dirty_paths.clear();
                self.bulk_invalidated = false;
                self.dirty_paths_overflowed = None;
            }
            PushStanding::Unsent => self.local_dirty = true,
        }
        self.consume_tombstones(consumed);
    }

    /// The tombstones recorded in a sidecar file (empty when absent or unreadable), merged
    /// with the extension's `dirtyPaths`, which are the same kind of evidence.
    pub fn tombstones_of(sidecar: &[u8]) -> Vec<String> {
        let Some(state) = SyncState::parse(sidecar) else {
            return Vec::new();
        };
        let mut all = state.tombstones;
        for path in state.dirty_paths {
            if !all.contains(&path) {
                all.push(path);
            }
        }
        all
    }

    /// True when this state asks the extension to walk everything: dirty, `bulkInvalidated`.
    /// Further dirty paths then change nothing the extension reads, so this core's tombstones may
    /// go to the journal from then on; before that each one is rewritten into `dirtyPaths`, as
    /// the extension itself does up to its cap, so a cache handed back to it walks what it must.
    pub fn asks_walk_of_everything(&self) -> bool {
        self.local_dirty && self.bulk_invalidated
    }

    /// Forgets tombstones a completed push has acted on, in both places they are read from: an
    /// extension `dirtyPaths` entry is evidence too ([`SyncState::tombstones_of`]), and one left
    /// behind after an unverified push (which keeps `dirtyPaths`) would come back as used-up
    /// evidence.
    pub fn consume_tombstones(&mut self, consumed: &[String]) {
        self.tombstones.retain(|t| !consumed.contains(t));
        self.dirty_paths.retain(|p| !consumed.contains(p));
    }
}

/// Records `markDirty` calls into the sidecar, one rewrite per call, keeping what it last wrote.
///
/// Swamp core calls `markDirty` before every cache write, and each call parses the sidecar,
/// records the path and writes it back. Parsing it again costs as much as writing it (the
/// sidecar grows with every pending tombstone), so the recorder keeps the state behind the bytes
/// it returned last: when the caller hands back exactly those bytes (read from disk again, so a
/// rewrite by anyone else is seen), that state is reused instead of parsed. Any other bytes are
/// parsed as [`SyncState::for_update`] reads them, so a sequence of calls gives the same bytes
/// as [`SyncState::for_update`], [`SyncState::record_dirty`] and [`SyncState::to_json`] per call.
#[derive(Debug, Default)]
pub struct DirtyRecorder {
    /// The bytes last returned and the state they serialise.
    last: Option<(Vec<u8>, SyncState)>,
}

impl DirtyRecorder {
    /// An empty recorder (the first call parses).
    pub fn new() -> DirtyRecorder {
        DirtyRecorder::default()
    }

    /// The sidecar `sidecar` (its current bytes, `None` when absent) after a `markDirty` of
    /// `tombstone` (see [`SyncState::record_dirty`]).
    pub fn record(&mut self, sidecar: Option<&[u8]>, tombstone: Option<&str>) -> &[u8] {
        let (mut bytes, mut state) = match (self.last.take(), sidecar) {
            // Only our own bytes, unchanged, skip the parse: `parse(to_json(s)) == s` for every
            // state this recorder builds (tests/sync_state.rs checks the equivalence).
            (Some((bytes, state)), Some(current)) if same_bytes(&bytes, current) => (bytes, state),
            (last, _) => (
                last.map(|(bytes, _)| bytes).unwrap_or_default(),
                SyncState::for_update(sidecar),
            ),
        };
        state.record_dirty(tombstone);
        // Written into the last call's buffer: the sidecar only grows between syncs, so this
        // reuses the allocation instead of growing a new one from empty each call.
        bytes.clear();
        state.write_json(&mut bytes);
        &self.last.insert((bytes, state)).0
    }

    /// True when the sidecar last returned asks the extension to walk everything (see
    /// [`SyncState::asks_walk_of_everything`]); false before the first call.
    pub fn walks_everything(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|(_, state)| state.asks_walk_of_everything())
    }
}

/// Byte equality, eight bytes per step: WASM's `memcmp` compares one byte at a time, which made
/// comparing a sidecar cost as much as parsing it.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let tails_match = a_words.remainder() == b_words.remainder();
    tails_match
        && a_words.zip(b_words).all(|(x, y)| {
            // `chunks_exact(8)` yields exactly eight bytes, so both conversions succeed.
            u64::from_ne_bytes(x.try_into().unwrap_or_default())
                == u64::from_ne_bytes(y.try_into().unwrap_or_default())
        })
}

/// Folds the tombstone journal into a sidecar: the sidecar as it would read had each
/// journalled `markDirty` rewritten it, in order (`None` when the sidecar was absent and no line
/// counts).
///
/// `markDirty` appends one line per tombstone to [`crate::model::paths::TOMBSTONE_JOURNAL_FILE`]
/// ([`journal_line`]: one append, no rewrite: rewriting the whole sidecar per call cost O(n) per
/// call with n tombstones pending) and every reader of the sidecar folds the journal in first.
/// A line counts only when complete (its closing `\n` written: a crash mid-append leaves a torn
/// line, which is skipped) and when it is a JSON string naming a safe relative path; anything
/// else, empty lines included, is skipped: a skipped tombstone withholds a delete, never makes
/// one.
pub fn fold_journal(sidecar: Option<&[u8]>, journal: &[u8]) -> Option<Vec<u8>> {
    let tombstones = journal_tombstones(journal);
    if tombstones.is_empty() {
        return sidecar.map(<[u8]>::to_vec);
    }
    let mut state = SyncState::for_update(sidecar);
    for tombstone in &tombstones {
        state.record_dirty(Some(tombstone));
    }
    Some(state.to_json())
}

/// The tombstones of a journal's complete, well-formed lines, in order.
pub fn journal_tombstones(journal: &[u8]) -> Vec<String> {
    // A solo model checks the path rules alone (every tombstone is a cache-relative path, with
    // the namespace folder in front when namespaced); "" cannot fail to build one.
    let Ok(rules) = crate::model::paths::PathModel::new(None, "") else {
        return Vec::new();
    };
    let complete = match journal.iter().rposition(|&b| b == b'\n') {
        Some(end) => &journal[..end],
        None => return Vec::new(),
    };
    complete
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<String>(line).ok())
        .filter(|path| rules.check_rel(path).is_ok())
        .collect()
}

/// The journal line of one tombstone (already normalised by the core): the JSON string between
/// two newlines. The leading one ends a line a crash cut short before it, so the torn line is
/// skipped alone instead of swallowing this one.
pub fn journal_line(tombstone: &str) -> Vec<u8> {
    let mut line = vec![b'\n'];
    line.extend(serde_json::to_vec(tombstone).unwrap_or_default());
    line.push(b'\n');
    line
}
