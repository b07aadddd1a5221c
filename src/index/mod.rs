//! The datastore index: the v1 monolith (`.datastore-index.json`) and the v2 shard layout
//! (`_index/_meta.json` plus `_index/{partition}.json`).
//!
//! Parsing takes raw bytes (the shim never `JSON.parse`s an index) and is strict where a wrong
//! reading could lose data: wrong types, a negative or inexact size, an entry whose `key`
//! disagrees with its map key, or a key that appears twice are all `index-corrupt`, naming the
//! entry. It is lenient where old writers differ: unknown fields are kept and written back,
//! optional fields may be absent.

use serde_json::{Map, Value};

use crate::bytes::text::ShortText;
use crate::error::{CoreError, CoreResult};
use crate::model::paths::is_internal;

mod entries;
mod scan;

pub use entries::{
    Entries, IntoIter as EntriesIntoIter, Iter as EntriesIter, IterMut as EntriesIterMut,
};

mod parse;
mod shards;
mod write;

// `RawDocument` is also what the fast scan (`scan.rs`) fills in.
use parse::{
    document_of_owned, entries_by_rel, expect_version, optional_string, parse_document,
    parse_document_fully, RawDocument, MONOLITH_FILE,
};
pub use shards::{
    assemble_shards, group_by_partition, group_by_partition_keeping, parse_shard,
    parse_shard_document, shard_json, shard_json_with, Partitioned, ShardDocument, ShardMeta,
};
use write::MonolithView;

/// The most entries a session loads from one index unless told otherwise
/// ([`crate::runs::session::Session::set_entry_limit`]): the largest index this project measures
/// and tests (10^6 entries, ~190 MB of JSON, ~390 MiB of WASM memory while it loads). A longer
/// one is `index-too-large`, refused as it is read.
pub const DEFAULT_MAX_ENTRIES: usize = 1_000_000;

/// The largest integer a JavaScript number holds exactly; sizes above it are refused so the
/// shim and the core can never disagree about a size.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// One file's record in the index. The rel is the map key and is not repeated here.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IndexEntry {
    /// Size in bytes of the remote object.
    pub size: u64,
    /// When the remote object was last modified (ISO-8601), as recorded by the writer.
    pub last_modified: Option<ShortText>,
    /// The local file's mtime (ISO-8601) when it was last known to match the remote object.
    pub local_mtime: Option<ShortText>,
    /// Hex SHA-256 of the content, when the writer computed one.
    pub sha256: Option<String>,
    /// Fields this core does not know, kept verbatim so a round trip loses nothing.
    pub extra: Option<Box<Map<String, Value>>>,
}

/// The v1 monolithic index, or the assembled content of a v2 shard set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Index {
    /// When the writer last pulled (ISO-8601), if recorded.
    pub last_pulled: Option<String>,
    /// Entries by rel, sorted so output is deterministic.
    pub entries: Entries,
    /// Unknown top-level fields, kept verbatim.
    pub extra: Map<String, Value>,
}

impl Index {
    /// Parses a v1 monolith from raw bytes.
    pub fn parse(bytes: &[u8]) -> CoreResult<Index> {
        Index::parse_limited(bytes, usize::MAX)
    }

    /// [`Index::parse`] of at most `limit` entries: a longer index is `index-too-large`, refused
    /// before the entries past the limit take memory.
    pub fn parse_limited(bytes: &[u8], limit: usize) -> CoreResult<Index> {
        Index::from_document(parse_document(bytes, MONOLITH_FILE, limit)?)
    }

    /// [`Index::parse`] with serde's general reader only: what `parse` falls back to when its
    /// fast reader (`index/scan.rs`) steps aside. Both give the same answer for any bytes; this
    /// one exists so tests and fuzzing can hold them to that.
    pub fn parse_fully(bytes: &[u8]) -> CoreResult<Index> {
        Index::from_document(parse_document_fully(bytes, MONOLITH_FILE, usize::MAX)?)
    }

    /// [`Index::parse`] of bytes it owns, dropped as soon as they are read: the entries are
    /// sorted and built into the map after that, so the bytes (190 MB for 10^6 entries) and
    /// the sort's lists are never held at once.
    pub fn parse_owned(bytes: Vec<u8>) -> CoreResult<Index> {
        Index::parse_owned_limited(bytes, usize::MAX)
    }

    /// [`Index::parse_owned`] of at most `limit` entries (see [`Index::parse_limited`]).
    pub fn parse_owned_limited(bytes: Vec<u8>, limit: usize) -> CoreResult<Index> {
        Index::from_document(document_of_owned(bytes, limit)?)
    }

    /// [`Index::parse_limited`], also counting the entries whose rel is internal
    /// ([`is_internal`]).
    pub fn parse_counting_internal(bytes: &[u8], limit: usize) -> CoreResult<(Index, u64)> {
        Index::counted(parse_document(bytes, MONOLITH_FILE, limit)?)
    }

    /// [`Index::parse_owned_limited`], also counting the entries whose rel is internal
    /// ([`is_internal`]).
    pub fn parse_owned_counting_internal(bytes: Vec<u8>, limit: usize) -> CoreResult<(Index, u64)> {
        Index::counted(document_of_owned(bytes, limit)?)
    }

    /// The index of `raw` and how many of its entries are internal. They are counted as read, in
    /// document order, where each key's bytes follow the last one's in memory: counted over the
    /// finished map (key order, the keys' bytes scattered) the count was ~4 % of a 10^6-entry
    /// load through WASM. A document that yields no index (a key twice, no `entries`) is refused
    /// by [`Index::from_document`] whatever was counted, so the count is always the map's.
    fn counted(raw: RawDocument) -> CoreResult<(Index, u64)> {
        let internal = raw.entries.as_ref().map_or(0, |entries| {
            entries.iter().filter(|(rel, _)| is_internal(rel)).count() as u64
        });
        Ok((Index::from_document(raw)?, internal))
    }

    fn from_document(raw: RawDocument) -> CoreResult<Index> {
        let entries = raw
            .entries
            .map(|entries| entries_by_rel(entries, MONOLITH_FILE))
            .transpose()?;
        expect_version(&raw.version, MONOLITH_FILE, &[1])?;
        let entries = entries.ok_or_else(|| CoreError::corrupt("missing field \"entries\""))?;
        let last_pulled = optional_string(raw.last_pulled, "lastPulled")?;
        Ok(Index {
            last_pulled,
            entries,
            extra: raw.extra,
        })
    }

    /// The compact JSON the remote copy uses.
    pub fn to_compact_json(&self) -> Vec<u8> {
        // Serializing owned, well-formed values into a Vec cannot fail.
        serde_json::to_vec(&MonolithView(self)).unwrap_or_default()
    }

    /// The pretty JSON (two-space indent) the local copy uses.
    pub fn to_pretty_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(&MonolithView(self)).unwrap_or_default()
    }

    /// Removes entries whose rel is an internal file (which should never have been indexed),
    /// returning their keys.
    pub fn scrub_internal(&mut self) -> Vec<String> {
        let internal: Vec<String> = self
            .entries
            .keys()
            .filter(|rel| is_internal(rel))
            .cloned()
            .collect();
        for rel in &internal {
            self.entries.remove(rel);
        }
        internal
    }
}

/// Gives each entry of `index` the `localMtime` of its entry in `base` when both describe the
/// same version ([`same_version`]); other entries are left as they are.
///
/// Both maps are in key order, so this is one pass over each, not a look-up per entry (which
/// cost 17 string compares per entry at 10^5 entries, on every push).
pub fn carry_local_mtimes(index: &mut Index, base: &Index) {
    let mut base_entries = base.entries.iter().peekable();
    for (rel, entry) in index.entries.iter_mut() {
        while base_entries.next_if(|(b, _)| *b < rel).is_some() {}
        if let Some((_, b)) = base_entries.next_if(|(b, _)| *b == rel) {
            if same_version(b, entry) {
                entry.local_mtime.clone_from(&b.local_mtime);
            }
        }
    }
}

/// Whether two entries describe the same version of a file: the same size and, where both
/// record one, the same SHA-256. Without a hash on both sides the upload time decides, so a
/// re-upload of unknown content counts as a new version (downloading it again is the cheap
/// mistake; missing a same-size change is the costly one).
pub fn same_version(a: &IndexEntry, b: &IndexEntry) -> bool {
    if a.size != b.size {
        return false;
    }
    match (&a.sha256, &b.sha256) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        _ => a.last_modified == b.last_modified,
    }
}

/// Whether a local file's size and mtime are what an entry recorded for it (`localMtime`).
pub fn stat_matches(entry: &IndexEntry, size: u64, mtime: Option<i64>) -> bool {
    let recorded = entry
        .local_mtime
        .as_deref()
        .and_then(crate::model::time::parse_iso_millis);
    entry.size == size && recorded.is_some() && recorded == mtime
}
