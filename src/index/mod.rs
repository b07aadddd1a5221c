//! The datastore index: the v1 monolith (`.datastore-index.json`) and the v2 shard layout
//! (`_index/_meta.json` plus `_index/{partition}.json`).
//!
//! Parsing takes raw bytes (the shim never `JSON.parse`s an index) and is strict where a wrong
//! reading could lose data: wrong types, a negative or inexact size, an entry whose `key`
//! disagrees with its map key, or a key that appears twice are all `index-corrupt`, naming the
//! entry. It is lenient where old writers differ: unknown fields are kept and written back,
//! optional fields may be absent.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::bytes::key_sort::{sorted_positions, TooMany};
use crate::bytes::text::ShortText;
use crate::error::{CoreError, CoreResult};
use crate::model::paths::{check_partition_name, is_internal, partition_key};

mod entries;
mod scan;

pub use entries::{
    Entries, IntoIter as EntriesIntoIter, Iter as EntriesIter, IterMut as EntriesIterMut,
};

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
        Index::from_document(parse_document(bytes, MONOLITH_FILE)?)
    }

    /// [`Index::parse`] with serde's general reader only: what `parse` falls back to when its
    /// fast reader (`index/scan.rs`) steps aside. Both give the same answer for any bytes; this
    /// one exists so tests and fuzzing can hold them to that.
    pub fn parse_fully(bytes: &[u8]) -> CoreResult<Index> {
        Index::from_document(parse_document_fully(bytes, MONOLITH_FILE)?)
    }

    /// [`Index::parse`] of bytes it owns, dropped as soon as they are read: the entries are
    /// sorted and built into the map after that, so the bytes (190 MB for 10^6 entries) and
    /// the sort's lists are never held at once.
    pub fn parse_owned(bytes: Vec<u8>) -> CoreResult<Index> {
        Index::from_document(document_of_owned(bytes)?)
    }

    /// [`Index::parse`], also counting the entries whose rel is internal ([`is_internal`]).
    pub fn parse_counting_internal(bytes: &[u8]) -> CoreResult<(Index, u64)> {
        Index::counted(parse_document(bytes, MONOLITH_FILE)?)
    }

    /// [`Index::parse_owned`], also counting the entries whose rel is internal ([`is_internal`]).
    pub fn parse_owned_counting_internal(bytes: Vec<u8>) -> CoreResult<(Index, u64)> {
        Index::counted(document_of_owned(bytes)?)
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

/// `_index/_meta.json` of the shard-first layout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShardMeta {
    /// 1 or 2. With 2 the shards are the source of truth.
    pub version: u64,
    /// Partition keys that have a shard.
    pub partitions: Vec<String>,
    /// Grows by one per commit (v2 only).
    pub commit_seq: Option<u64>,
    /// When the shards were last compacted (v2 only).
    pub last_compacted: Option<String>,
    /// Unknown fields, kept verbatim.
    pub extra: Map<String, Value>,
}

impl ShardMeta {
    /// Parses `_index/_meta.json`.
    pub fn parse(bytes: &[u8]) -> CoreResult<ShardMeta> {
        let mut value: Map<String, Value> = serde_json::from_slice(bytes)
            .map_err(|e| CoreError::corrupt(format!("_index/_meta.json: {e}")))?;
        let version = match value.remove("version") {
            Some(Value::Number(n)) => n.as_u64(),
            _ => None,
        }
        .ok_or_else(|| CoreError::corrupt("_index/_meta.json: \"version\" must be an integer"))?;
        if version != 1 && version != 2 {
            return Err(CoreError::IndexVersionUnsupported {
                file: "_index/_meta.json".into(),
                version,
            });
        }
        let partitions = match value.remove("partitions") {
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s),
                    _ => Err(CoreError::corrupt(
                        "_index/_meta.json: \"partitions\" must hold strings",
                    )),
                })
                .collect::<CoreResult<Vec<_>>>()?,
            _ => {
                return Err(CoreError::corrupt(
                    "_index/_meta.json: \"partitions\" must be an array",
                ))
            }
        };
        let commit_seq = match value.remove("commitSeq") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
            Some(_) => {
                return Err(CoreError::corrupt(
                    "_index/_meta.json: \"commitSeq\" must be a non-negative integer",
                ))
            }
        };
        let last_compacted = optional_string(value.remove("lastCompacted"), "lastCompacted")?;
        Ok(ShardMeta {
            version,
            partitions,
            commit_seq,
            last_compacted,
            extra: value,
        })
    }

    /// Reads `_index/_meta.json` as far as the layout decision needs: `None` when it does not
    /// say version 2 (a v1 meta only mirrors the monolith, which stays the index), the parsed
    /// meta when it does. Partition names are not judged here (see
    /// [`ShardMeta::check_partitions`]), so a rebuild can still learn the `commitSeq` of a meta
    /// it is about to replace.
    pub fn shard_first(bytes: &[u8]) -> CoreResult<Option<ShardMeta>> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| CoreError::corrupt(format!("_index/_meta.json: {e}")))?;
        let says_v2 = value
            .as_object()
            .and_then(|o| o.get("version"))
            .and_then(Value::as_u64)
            == Some(2);
        if !says_v2 {
            return Ok(None);
        }
        ShardMeta::parse(bytes).map(Some)
    }

    /// Refuses the meta when any partition it lists is not a safe single segment
    /// (`partition-name-unsafe`, naming the first and counting the rest). Checked before any
    /// shard is read: one bad name makes the whole shard set unreadable, since reading the
    /// others and dropping it would publish a meta that forgets its entries.
    pub fn check_partitions(&self) -> CoreResult<()> {
        let mut refused = self
            .partitions
            .iter()
            .filter_map(|p| check_partition_name(p).err());
        let Some(first) = refused.next() else {
            return Ok(());
        };
        let more = refused.count();
        Err(match first {
            CoreError::UnsafePartition { partition, detail } if more > 0 => {
                CoreError::UnsafePartition {
                    partition,
                    detail: format!("{detail} ({more} more unsafe partition names)"),
                }
            }
            other => other,
        })
    }

    /// The compact JSON of this meta file.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Map::new();
        out.insert("version".into(), Value::from(self.version));
        out.insert(
            "partitions".into(),
            Value::from(
                self.partitions
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ),
        );
        if let Some(seq) = self.commit_seq {
            out.insert("commitSeq".into(), Value::from(seq));
        }
        if let Some(when) = &self.last_compacted {
            out.insert("lastCompacted".into(), Value::from(when.as_str()));
        }
        for (k, v) in &self.extra {
            out.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&out).unwrap_or_default()
    }
}

/// Parses one shard (`_index/{partition}.json`, `{"version":1,"entries":{...}}`).
pub fn parse_shard(bytes: &[u8], partition: &str) -> CoreResult<Entries> {
    Ok(parse_shard_document(bytes, partition)?.entries)
}

/// A shard as read: its entries, and the top-level fields beside them (kept so a field of ours,
/// such as the deletion records, survives a round trip through the shards).
#[derive(Debug, Clone, Default)]
pub struct ShardDocument {
    /// The entries, by rel.
    pub entries: Entries,
    /// Every other top-level field but `version`.
    pub extra: Map<String, Value>,
}

/// [`parse_shard`], keeping the shard's other top-level fields.
pub fn parse_shard_document(bytes: &[u8], partition: &str) -> CoreResult<ShardDocument> {
    let file = format!("_index/{partition}.json");
    let raw = parse_document(bytes, &file)?;
    let entries = raw
        .entries
        .map(|entries| entries_by_rel(entries, &file))
        .transpose()?;
    expect_version(&raw.version, &file, &[1])?;
    let entries =
        entries.ok_or_else(|| CoreError::corrupt(format!("{file}: missing field \"entries\"")))?;
    Ok(ShardDocument {
        entries,
        extra: raw.extra,
    })
}

/// The compact JSON of one shard holding `rels` of `index`.
pub fn shard_json(index: &Index, rels: &[String]) -> Vec<u8> {
    shard_json_with(index, rels, &Map::new())
}

/// [`shard_json`] with top-level fields of ours beside the entries (the deletion records of the
/// shard's partition).
pub fn shard_json_with(index: &Index, rels: &[String], extra: &Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(&ShardView { index, rels, extra }).unwrap_or_default()
}

/// Assembles the shards of a v2 layout into one index. A rel present in two shards is
/// `index-corrupt`: the layout gives no rule for which copy wins.
pub fn assemble_shards(shards: impl IntoIterator<Item = (String, Entries)>) -> CoreResult<Index> {
    let mut index = Index::default();
    for (partition, entries) in shards {
        for (rel, entry) in entries {
            if index.entries.insert(rel.clone(), entry).is_some() {
                return Err(CoreError::corrupt(format!(
                    "entry {rel:?} appears in more than one shard (last seen in {partition:?})"
                )));
            }
        }
    }
    Ok(index)
}

/// Entries of an index grouped by shard partition.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Partitioned {
    /// Rels by partition key, each list sorted.
    pub shards: BTreeMap<String, Vec<String>>,
    /// Rels that have no partition under the layout's rules (reported, never dropped).
    pub unpartitioned: Vec<String>,
}

/// Groups the entries of `index` by [`partition_key`].
pub fn group_by_partition(index: &Index) -> Partitioned {
    group_by_partition_keeping(index, |_| true)
}

/// [`group_by_partition`], with the rels listed only for the partitions `keep_rels` names: every
/// other partition is present with an empty list (its name is still needed, for the meta that
/// lists them all). A push touches few shards of many, and copying every rel of the others cost
/// more than the rest of the layout.
pub fn group_by_partition_keeping(index: &Index, keep_rels: impl Fn(&str) -> bool) -> Partitioned {
    let mut out = Partitioned::default();
    // Runs of consecutive rels in one partition, folded into the map at the end: in key order,
    // files of one folder are mostly neighbours, and share a partition (it depends only on the
    // folders above a file and their count), so a rel in the folder of the one before it skips
    // computing its key and the map look-up.
    let mut runs: Vec<(String, bool, Vec<String>)> = Vec::new();
    let mut last_folder: Option<&str> = None;
    for rel in index.entries.keys() {
        let folder = rel.rfind('/').map(|cut| &rel[..cut]);
        let same_folder = folder.is_some() && folder == last_folder;
        last_folder = folder;
        if same_folder {
            if let Some((_, keep, rels)) = runs.last_mut() {
                if *keep {
                    rels.push(rel.clone());
                }
                continue;
            }
        }
        let Some(key) = partition_key(rel) else {
            out.unpartitioned.push(rel.clone());
            // The next rel of this folder has no partition either: no run to join.
            last_folder = None;
            continue;
        };
        match runs.last_mut() {
            Some((last, keep, rels)) if *last == key => {
                if *keep {
                    rels.push(rel.clone());
                }
            }
            _ => {
                let keep = keep_rels(&key);
                let rels = if keep { vec![rel.clone()] } else { Vec::new() };
                runs.push((key, keep, rels));
            }
        }
    }
    for (key, _, rels) in runs {
        out.shards.entry(key).or_default().extend(rels);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// The top level of an index or shard document, before version checks.
struct RawDocument {
    version: Option<Value>,
    last_pulled: Option<Value>,
    /// As read, in document order (see [`entries_by_rel`]).
    entries: Option<Vec<(String, IndexEntry)>>,
    extra: Map<String, Value>,
}

/// The file name a monolith's errors name.
const MONOLITH_FILE: &str = ".datastore-index.json";

/// The entries of a document by rel. They are sorted once into the list [`Entries`] keeps until
/// its shape changes. (Inserted one by one into a tree, as once, an index in insertion order (the
/// extension's) left the tree's nodes part-empty and scattered, and every plan's walk over it
/// paid for that; bulk-built into a tree, as later, they were moved once more than now, and a
/// plan's walk over the tree, and dropping it, cost more than over a list.) A key that appears twice shows as two neighbours
/// once sorted: `index-corrupt`, naming the first such key in key order. As the whole document
/// has been read by then, one with both a repeated key and a malformed entry reports the
/// malformed entry.
fn entries_by_rel(mut entries: Vec<(String, IndexEntry)>, file: &str) -> CoreResult<Entries> {
    // An index this core wrote is in order already: one pass over neighbours says so.
    if entries.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        return Ok(Entries::from_sorted_unique(entries));
    }
    // The order is found on positions (see `key_sort`: a comparison sort of the entries read
    // two keys' bytes at each of ~20 comparisons per entry, ~40 % of a 10^6-entry load) and the
    // entries are moved into a second list in it, which is kept. Both
    // lists live at once only after the document's bytes, which were larger, were dropped
    // (`parse_owned`): WASM memory at 10^6 entries stayed at its peak of 387 MiB.
    let order = sorted_positions(&entries, |(rel, _)| rel.as_bytes())
        .map_err(|TooMany| CoreError::corrupt(format!("{file}: 2^32 entries or more")))?;
    if order.has_equal {
        let twice = order.positions.windows(2).find_map(|pair| {
            let (a, b) = (&entries[pair[0] as usize].0, &entries[pair[1] as usize].0);
            (a == b).then_some(a)
        });
        if let Some(rel) = twice {
            return Err(CoreError::corrupt(format!(
                "{file}: entry {rel:?} appears twice"
            )));
        }
    }
    // Moved out in key order; what stays behind is empty and dropped with the list.
    Ok(Entries::from_sorted_unique(
        order
            .positions
            .into_iter()
            .map(|position| std::mem::take(&mut entries[position as usize]))
            .collect(),
    ))
}

/// Reads a monolith's document from bytes it owns, which are dropped as soon as they are read
/// (see [`Index::parse_owned`]).
fn document_of_owned(bytes: Vec<u8>) -> CoreResult<RawDocument> {
    let document = parse_document(&bytes, MONOLITH_FILE)?;
    drop(bytes);
    Ok(document)
}

/// Reads a document: the common shape by [`scan::scan_document`], anything else (and every error)
/// by serde. A document the scanner gives up on late (an unknown field in its last entry) is read
/// twice; one whose writer adds fields to every entry is given up on at the first.
fn parse_document(bytes: &[u8], file: &str) -> CoreResult<RawDocument> {
    match scan::scan_document(bytes) {
        Some(document) => Ok(document),
        None => parse_document_fully(bytes, file),
    }
}

/// Reads a document with serde: any valid JSON, every error located.
fn parse_document_fully(bytes: &[u8], file: &str) -> CoreResult<RawDocument> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let raw = deserializer
        .deserialize_map(DocumentVisitor)
        .and_then(|raw| deserializer.end().map(|()| raw))
        .map_err(|e| CoreError::corrupt(format!("{file}: {e}")))?;
    Ok(raw)
}

fn expect_version(version: &Option<Value>, file: &str, known: &[u64]) -> CoreResult<()> {
    let version = match version {
        // Writers before versioning omitted the field; their shape is v1's.
        None => 1,
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| CoreError::corrupt(format!("{file}: \"version\" must be an integer")))?,
        Some(_) => {
            return Err(CoreError::corrupt(format!(
                "{file}: \"version\" must be an integer"
            )))
        }
    };
    if known.contains(&version) {
        Ok(())
    } else {
        Err(CoreError::IndexVersionUnsupported {
            file: file.to_string(),
            version,
        })
    }
}

fn optional_string(value: Option<Value>, field: &str) -> CoreResult<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(CoreError::corrupt(format!("\"{field}\" must be a string"))),
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = RawDocument;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an index object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDocument, A::Error> {
        let mut raw = RawDocument {
            version: None,
            last_pulled: None,
            entries: None,
            extra: Map::new(),
        };
        while let Some(field) = map.next_key::<String>()? {
            let duplicate = match field.as_str() {
                "version" => raw.version.replace(map.next_value()?).is_some(),
                "lastPulled" => raw.last_pulled.replace(map.next_value()?).is_some(),
                "entries" => raw
                    .entries
                    .replace(map.next_value_seed(EntriesSeed)?)
                    .is_some(),
                _ => {
                    let value = map.next_value::<Value>()?;
                    raw.extra.insert(field.clone(), value).is_some()
                }
            };
            if duplicate {
                return Err(de::Error::custom(format_args!(
                    "field {field:?} appears twice"
                )));
            }
        }
        Ok(raw)
    }
}

struct EntriesSeed;

impl<'de> DeserializeSeed<'de> for EntriesSeed {
    type Value = Vec<(String, IndexEntry)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(EntriesVisitor)
    }
}

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Vec<(String, IndexEntry)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"entries\" as an object of entries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Kept in document order; `entries_by_rel` sorts them and refuses a repeated key.
        let mut entries = Vec::new();
        while let Some(rel) = map.next_key::<String>()? {
            let entry = map.next_value_seed(EntryFieldsSeed { rel: &rel })?;
            entries.push((rel, entry));
        }
        Ok(entries)
    }
}

/// Reads one entry object straight into an [`IndexEntry`]: known fields are typed as they
/// arrive (no intermediate map per entry: indexes reach 10^6 entries), unknown ones are kept.
struct EntryFieldsSeed<'a> {
    rel: &'a str,
}

impl<'de> DeserializeSeed<'de> for EntryFieldsSeed<'_> {
    type Value = IndexEntry;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// An entry's field name: the known ones without allocating.
enum Field {
    Key,
    Size,
    LastModified,
    LocalMtime,
    Sha256,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "key" => Field::Key,
                    "size" => Field::Size,
                    "lastModified" => Field::LastModified,
                    "localMtime" => Field::LocalMtime,
                    "sha256" => Field::Sha256,
                    other => Field::Other(other.to_string()),
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Visitor<'de> for EntryFieldsSeed<'_> {
    type Value = IndexEntry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "entry {:?} to be an object", self.rel)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let rel = self.rel;
        let fail = |what: &str| de::Error::custom(format_args!("entry {rel:?}: {what}"));
        let twice = |name: &str| {
            de::Error::custom(format_args!("entry {rel:?}: field {name:?} appears twice"))
        };
        let mut seen_key = false;
        let mut size: Option<u64> = None;
        let mut entry = IndexEntry::default();
        let (mut seen_last_modified, mut seen_local_mtime, mut seen_sha256) = (false, false, false);
        // Generic over the slot's type: the timestamps are kept as [`ShortText`] (built from
        // the borrowed input, no allocation), the hash as a `String`.
        // `seen` is apart from the slot: a field read as null leaves the slot empty, and a
        // second one must still be refused (it was not, when the slot alone was asked).
        fn text<T: for<'s> From<&'s str>, E: de::Error>(
            slot: &mut Option<T>,
            seen: &mut bool,
            name: &str,
            value: Scalar,
            twice: impl Fn(&str) -> E,
            fail: impl Fn(&str) -> E,
        ) -> Result<(), E> {
            if std::mem::replace(seen, true) {
                return Err(twice(name));
            }
            match value {
                Scalar::Null => Ok(()),
                Scalar::Str(s) => {
                    *slot = Some(T::from(s.as_ref()));
                    Ok(())
                }
                _ => Err(fail(&format!("{name:?} must be a string"))),
            }
        }
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Key => {
                    if std::mem::replace(&mut seen_key, true) {
                        return Err(twice("key"));
                    }
                    match map.next_value_seed(ScalarSeed)? {
                        Scalar::Str(key) if key == rel => {}
                        Scalar::Str(key) => {
                            return Err(fail(&format!("\"key\" is {key:?}, not its map key")))
                        }
                        _ => return Err(fail("\"key\" must be a string")),
                    }
                }
                Field::Size => {
                    if size.is_some() {
                        return Err(twice("size"));
                    }
                    size = Some(match map.next_value_seed(ScalarSeed)? {
                        Scalar::Unsigned(v) if v <= MAX_SAFE_INTEGER => v,
                        Scalar::Unsigned(_) => return Err(fail("\"size\" is larger than 2^53-1")),
                        Scalar::Negative => return Err(fail("\"size\" is negative")),
                        _ => return Err(fail("\"size\" must be a non-negative integer")),
                    });
                }
                Field::LastModified => text(
                    &mut entry.last_modified,
                    &mut seen_last_modified,
                    "lastModified",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::LocalMtime => text(
                    &mut entry.local_mtime,
                    &mut seen_local_mtime,
                    "localMtime",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::Sha256 => text(
                    &mut entry.sha256,
                    &mut seen_sha256,
                    "sha256",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::Other(name) => {
                    let value = map.next_value::<Value>()?;
                    let extra = entry.extra.get_or_insert_with(Default::default);
                    if extra.insert(name.clone(), value).is_some() {
                        return Err(twice(&name));
                    }
                }
            }
        }
        entry.size = size.ok_or_else(|| fail("missing \"size\""))?;
        Ok(entry)
    }
}

/// A known field's value as far as the entry's checks need it, read without building a
/// [`Value`]: a string borrowed from the input where it has no escapes (the `key` is compared,
/// never kept), a number by its kind. Whatever else it is (an array, an object, a boolean) is
/// read to its end as a [`Value`] would be and reported as [`Scalar::Other`], so the same
/// documents are refused, with the same error at the same place, as when every value was
/// parsed whole first.
enum Scalar<'de> {
    Null,
    Str(Cow<'de, str>),
    /// A non-negative integer (what `Number::as_u64` gave).
    Unsigned(u64),
    /// A negative integer (what `Number::as_i64` alone gave).
    Negative,
    Other,
}

struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Unsigned(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        // As `Number::from(i64)` does: a non-negative one is an unsigned number.
        Ok(match u64::try_from(v) {
            Ok(v) => Scalar::Unsigned(v),
            Err(_) => Scalar::Negative,
        })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_string())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Read as a whole value would be (same checks, same depth limit).
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<String, Value>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

// ---------------------------------------------------------------------------------------------
// Serialization, in the field order the extension writes.

struct EntryView<'a>(&'a str, &'a IndexEntry);

impl Serialize for EntryView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let EntryView(rel, entry) = self;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("key", rel)?;
        map.serialize_entry("size", &entry.size)?;
        if let Some(v) = &entry.last_modified {
            map.serialize_entry("lastModified", v)?;
        }
        if let Some(v) = &entry.local_mtime {
            map.serialize_entry("localMtime", v)?;
        }
        if let Some(v) = &entry.sha256 {
            map.serialize_entry("sha256", v)?;
        }
        if let Some(extra) = &entry.extra {
            for (k, v) in extra.iter() {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// The `entries` object of a document: the given entries, in the order given.
// Takes the entries themselves, not rels to look up: the monolith serialised every entry through
// a map look-up of its own key (17 string compares per entry at 10^5), a third of what
// publishing an index cost.
struct EntriesView<I>(I);

impl<'a, I: Clone + Iterator<Item = (&'a String, &'a IndexEntry)>> Serialize for EntriesView<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (rel, entry) in self.0.clone() {
            map.serialize_entry(rel, &EntryView(rel, entry))?;
        }
        map.end()
    }
}

struct MonolithView<'a>(&'a Index);

impl Serialize for MonolithView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let index = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("version", &1)?;
        if let Some(v) = &index.last_pulled {
            map.serialize_entry("lastPulled", v)?;
        }
        map.serialize_entry("entries", &EntriesView(index.entries.iter()))?;
        for (k, v) in &index.extra {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

struct ShardView<'a> {
    index: &'a Index,
    rels: &'a [String],
    extra: &'a Map<String, Value>,
}

impl Serialize for ShardView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + self.extra.len()))?;
        map.serialize_entry("version", &1)?;
        let entries = self
            .rels
            .iter()
            .filter_map(|rel| self.index.entries.get_key_value(rel));
        map.serialize_entry("entries", &EntriesView(entries))?;
        for (name, value) in self.extra {
            if name != "version" && name != "entries" {
                map.serialize_entry(name, value)?;
            }
        }
        map.end()
    }
}
