//! The session's v2 shards: reading `_meta.json` and its shards into one index, cutting the
//! index into shards again for a commit or the v1 mirror, and keeping each entry in the shard it
//! was read from.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{CoreError, CoreResult};
use crate::index::{
    assemble_shards, group_by_partition_keeping, parse_shard_document, shard_json_with, Index,
    Partitioned, ShardMeta,
};
use crate::model::paths::{check_partition_name, partition_key};
use crate::safety::deletions::{
    adopt_shard_records, recorded_rels, shard_records, DELETIONS_FIELD,
};

use super::{Session, ShardFormat, ShardLayout, MOVED_TO_SHARDS_FIELD};

impl Session {
    /// Marks the loaded monolith as superseded by shards at `now_iso` (a top-level field the
    /// index formats allow), so that rewriting it changes its ETag.
    pub fn mark_moved_to_shards(&mut self, now_iso: &str) -> CoreResult<()> {
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        index.extra.insert(
            MOVED_TO_SHARDS_FIELD.to_string(),
            serde_json::Value::String(now_iso.to_string()),
        );
        Ok(())
    }

    /// Loads a v2 shard-first index: `_index/_meta.json` and the shards it lists (each as
    /// `(partition, bytes)`). Returns the meta's `commitSeq`. A meta of version 1 is only a
    /// mirror of the monolith and is refused here (`invalid-input`): read the monolith instead.
    pub fn load_shards(&mut self, meta: &[u8], shards: &[(String, Vec<u8>)]) -> CoreResult<u64> {
        let meta = ShardMeta::parse(meta)?;
        if meta.version != 2 {
            return Err(CoreError::input(
                "a version 1 _index/_meta.json mirrors the monolith",
            ));
        }
        meta.check_partitions()?;
        let listed: BTreeSet<&str> = meta.partitions.iter().map(String::as_str).collect();
        let mut parsed = Vec::new();
        let mut extras = Vec::new();
        let mut total = 0usize;
        for (partition, bytes) in shards {
            if !listed.contains(partition.as_str()) {
                return Err(CoreError::input(format!(
                    "shard {partition:?} is not listed in _meta.json"
                )));
            }
            // The limit holds for the shards together: each may name what the others left.
            let remaining = self.entry_limit.saturating_sub(total);
            let document =
                parse_shard_document(bytes, partition, remaining).map_err(|error| match error {
                    CoreError::IndexTooLarge { .. } => CoreError::IndexTooLarge {
                        file: "_index/ (the v2 shards together)".to_string(),
                        limit: self.entry_limit as u64,
                    },
                    other => other,
                })?;
            total += document.entries.len();
            parsed.push((partition.clone(), document.entries));
            extras.push((partition.clone(), document.extra));
        }
        if parsed.len() != listed.len() {
            return Err(CoreError::corrupt(format!(
                "_index/_meta.json lists {} shards, {} were read",
                listed.len(),
                parsed.len()
            )));
        }
        let mut homes: BTreeMap<String, String> = parsed
            .iter()
            .flat_map(|(partition, entries)| {
                entries
                    .keys()
                    .map(move |rel| (rel.clone(), partition.clone()))
            })
            .collect();
        let mut index = assemble_shards(parsed)?;
        // A shard carries the deletion records of its partition while the partition has
        // entries, and `_meta.json` those of partitions left with none (so an emptied shard is
        // still deleted). A deleted rel's home is the shard that recorded it.
        let mut records_in_shards = BTreeSet::new();
        for (partition, extra) in &extras {
            for rel in adopt_shard_records(&mut index, extra) {
                homes
                    .entry(rel.clone())
                    .or_insert_with(|| partition.clone());
                records_in_shards.insert(rel);
            }
        }
        adopt_shard_records(&mut index, &meta.extra);
        self.index = Some(index);
        self.homes = homes;
        self.records_in_shards = records_in_shards;
        self.pull = None;
        let seq = meta.commit_seq.unwrap_or(0);
        self.meta = Some(meta);
        Ok(seq)
    }

    /// For a v2 index: the shards this push changed, as `(partition, bytes)` (an emptied shard
    /// has `None`: retire it, deleted only once the meta that no longer lists it is published),
    /// and the next `_meta.json` (`commitSeq` + 1, partitions sorted).
    /// Rels without a partition cannot live in shards: they are refused (`invalid-input`),
    /// never silently dropped.
    #[allow(clippy::type_complexity)]
    pub fn shard_commit(&self) -> CoreResult<(Vec<(String, Option<Vec<u8>>)>, Vec<u8>)> {
        let index = self.index()?;
        let meta = self
            .meta
            .as_ref()
            .ok_or_else(|| CoreError::input("shard_commit without a v2 index"))?;
        let changes = self
            .changes
            .as_ref()
            .ok_or_else(|| CoreError::input("shard_commit before record_push"))?;
        let grouped = self.group_by_home(index)?;
        if let Some(rel) = grouped.unpartitioned.first() {
            return Err(CoreError::input(format!(
                "{rel:?} has no shard partition under the v2 layout, so it cannot be indexed there"
            )));
        }
        // A partition the meta listed that has no entries now is deleted, though no change of
        // this push named it (an empty shard another writer left).
        let touched: BTreeSet<String> = changes
            .upserts
            .keys()
            .chain(changes.deletes.keys())
            .chain(changes.prune.iter())
            .filter_map(|rel| self.home_of(rel))
            .chain(
                meta.partitions
                    .iter()
                    .filter(|p| !grouped.shards.contains_key(*p))
                    .cloned(),
            )
            .collect();
        // Each deletion record goes into its home shard when this commit writes that shard
        // with entries; one read from a shard this commit leaves alone stays there; every other
        // goes into the meta, which every commit writes.
        let mut in_shards: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut in_meta = Vec::new();
        for rel in recorded_rels(index) {
            match self.home_of(&rel) {
                Some(home) if touched.contains(&home) && grouped.shards.contains_key(&home) => {
                    in_shards.entry(home).or_default().push(rel);
                }
                Some(home)
                    if !touched.contains(&home)
                        && grouped.shards.contains_key(&home)
                        && self.records_in_shards.contains(&rel) => {}
                _ => in_meta.push(rel),
            }
        }
        let no_rels = Vec::new();
        let shards = touched
            .iter()
            .map(|partition| {
                let bytes = grouped.shards.get(partition).map(|rels| {
                    let records = in_shards.get(partition).unwrap_or(&no_rels);
                    shard_json_with(index, rels, &shard_records(index, records))
                });
                (partition.clone(), bytes)
            })
            .collect();
        let mut extra = meta.extra.clone();
        extra.remove(DELETIONS_FIELD);
        extra.extend(shard_records(index, &in_meta));
        let next = ShardMeta {
            version: 2,
            partitions: grouped.shards.keys().cloned().collect(),
            commit_seq: Some(meta.commit_seq.unwrap_or(0) + 1),
            last_compacted: meta.last_compacted.clone(),
            extra,
        };
        Ok((shards, next.to_json()))
    }

    /// The shard `rel` lives in: the one it was read from, else its key's partition.
    fn home_of(&self, rel: &str) -> Option<String> {
        self.homes.get(rel).cloned().or_else(|| partition_key(rel))
    }

    /// The entries of `index` grouped by [`Session::home_of`]. A partition name that is not a
    /// safe single segment is refused (`partition-name-unsafe`), never written.
    fn group_by_home(&self, index: &Index) -> CoreResult<Partitioned> {
        let mut out = Partitioned::default();
        for rel in index.entries.keys() {
            match self.home_of(rel) {
                Some(home) => out.shards.entry(home).or_default().push(rel.clone()),
                None => out.unpartitioned.push(rel.clone()),
            }
        }
        for partition in out.shards.keys() {
            check_partition_name(partition)?;
        }
        Ok(out)
    }

    /// After a lost race on a v2 commit: takes the newer shard set and re-applies this push's
    /// changes to it.
    pub fn rebase_push_shards(
        &mut self,
        meta: &[u8],
        shards: &[(String, Vec<u8>)],
    ) -> CoreResult<()> {
        if self.changes.is_none() {
            return Err(CoreError::input("rebase_push_shards before record_push"));
        }
        let previous = self.index.take();
        let loaded = self.load_shards(meta, shards);
        let newer = std::mem::replace(&mut self.index, previous);
        loaded?;
        let newer = newer.ok_or_else(|| CoreError::input("the shard set loaded into no index"))?;
        self.remerge(newer)
    }

    /// The loaded index cut into shards, with the `_index/_meta.json` that lists them.
    ///
    /// - `ShardFormat::V1Mirror`: the per-partition files a v1 writer keeps beside the
    ///   monolith (the extension's scoped pulls read them first, so a v1 publish that skips
    ///   them leaves stale entries for its peers). Unpartitioned rels stay in the monolith.
    /// - `ShardFormat::V2 { commit_seq }`: a shard-first layout whose shards are the source of
    ///   truth. A rel with no partition would be lost there, so it is refused
    ///   (`index-unpartitioned`), never dropped.
    ///
    /// With `only_touched`, only the shards holding a rel the recorded push changed are cut
    /// (an emptied one as an empty shard; the meta lists every partition that has entries).
    pub fn shard_layout(&self, format: ShardFormat, only_touched: bool) -> CoreResult<ShardLayout> {
        let index = self.index()?;
        let touched: Option<BTreeSet<String>> = if only_touched {
            let changes = self.changes.as_ref().ok_or_else(|| {
                CoreError::input("shard_layout of touched shards before record_push")
            })?;
            Some(
                changes
                    .upserts
                    .keys()
                    .chain(changes.deletes.keys())
                    .chain(changes.prune.iter())
                    .filter_map(|rel| partition_key(rel))
                    .filter(|p| check_partition_name(p).is_ok())
                    .collect(),
            )
        } else {
            None
        };
        // Rels are listed for the shards written, and for unsafe names (moved out below); the
        // other partitions are only named, in the meta.
        let mut grouped = group_by_partition_keeping(index, |p| {
            touched.as_ref().is_none_or(|t| t.contains(p)) || check_partition_name(p).is_err()
        });
        // Only an unsafe key (`data/x\..\y/a/b`) has a partition name that is not a safe
        // segment. The v2 layout refuses it below like any rel it cannot hold; the v1 mirror
        // leaves it in the monolith, never naming such a shard.
        let unsafe_names: Vec<String> = grouped
            .shards
            .keys()
            .filter(|p| check_partition_name(p).is_err())
            .cloned()
            .collect();
        for partition in unsafe_names {
            if let Some(rels) = grouped.shards.remove(&partition) {
                grouped.unpartitioned.extend(rels);
            }
        }
        grouped.unpartitioned.sort();
        let commit_seq = match format {
            ShardFormat::V1Mirror => None,
            ShardFormat::V2 { commit_seq } => {
                if let Some(rel) = grouped.unpartitioned.first() {
                    return Err(CoreError::input(format!(
                        "{rel:?} has no shard partition under the v2 layout, so the index cannot move to shards without losing it"
                    )));
                }
                Some(commit_seq)
            }
        };
        // A v2 layout carries the deletion records: in its rel's partition's shard while that
        // partition has entries, else in the meta (the v1 mirror needs none: the monolith it
        // mirrors has them).
        let mut in_shards: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut in_meta = Vec::new();
        if commit_seq.is_some() {
            for rel in recorded_rels(index) {
                match partition_key(&rel).filter(|p| grouped.shards.contains_key(p)) {
                    Some(p) => in_shards.entry(p).or_default().push(rel),
                    None => in_meta.push(rel),
                }
            }
        }
        let no_rels = Vec::new();
        let shard_of = |partition: &str, rels: &[String]| {
            let records = in_shards.get(partition).unwrap_or(&no_rels);
            shard_json_with(index, rels, &shard_records(index, records))
        };
        let mut shards: Vec<(String, Vec<u8>)> = grouped
            .shards
            .iter()
            .filter(|(partition, _)| touched.as_ref().is_none_or(|t| t.contains(*partition)))
            .map(|(partition, rels)| (partition.clone(), shard_of(partition, rels)))
            .collect();
        // A touched partition the push emptied gets an empty shard: a reader that goes to a
        // shard by its partition key (the extension's scoped pull) must not see the old entries.
        for partition in touched.iter().flatten() {
            if !grouped.shards.contains_key(partition) {
                shards.push((partition.clone(), shard_of(partition, &[])));
            }
        }
        shards.sort_by(|a, b| a.0.cmp(&b.0));
        let meta = ShardMeta {
            version: if commit_seq.is_some() { 2 } else { 1 },
            partitions: grouped.shards.keys().cloned().collect(),
            commit_seq,
            last_compacted: None,
            extra: shard_records(index, &in_meta),
        };
        Ok(ShardLayout {
            shards,
            meta: meta.to_json(),
            unpartitioned: grouped.unpartitioned,
        })
    }
}
