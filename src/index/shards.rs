//! The v2 shard layout: `_index/_meta.json` ([`ShardMeta`]), one shard per partition, reading
//! them into one index and cutting an index into them again.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{check_partition_name, partition_key};

use super::parse::{entries_by_rel, expect_version, optional_string, parse_document};
use super::write::ShardView;
use super::{Entries, Index};

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
    Ok(parse_shard_document(bytes, partition, usize::MAX)?.entries)
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

/// [`parse_shard`], keeping the shard's other top-level fields; more than `limit` entries is
/// `index-too-large`.
pub fn parse_shard_document(
    bytes: &[u8],
    partition: &str,
    limit: usize,
) -> CoreResult<ShardDocument> {
    let file = format!("_index/{partition}.json");
    let raw = parse_document(bytes, &file, limit)?;
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
