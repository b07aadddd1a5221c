//! A planning session: the state one sync run keeps between its steps.
//!
//! The shim loads the index once (as bytes), asks for a plan, executes it, and reports the
//! outcome back; the session keeps the parsed index and the last plan so nothing crosses the
//! boundary twice. It is plain Rust, so native tests drive exactly what the WASM handle wraps.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Serialize;

use crate::codes::{GuardCode, ProblemCode};
use crate::error::{CoreError, CoreResult};
use crate::index::{
    assemble_shards, carry_local_mtimes, group_by_partition_keeping, parse_shard_document,
    same_version, shard_json_with, Index, Partitioned, ShardMeta,
};
use crate::model::layout::survey;
use crate::model::paths::{check_partition_name, partition_key};
use crate::model::paths::{PathModel, INDEX_FILE};
use crate::runs::migrate::plan::{plan_migrate, MigrateInputs};
use crate::runs::pull::plan::{
    apply_pull, plan_pull, PullApplied, PullOptions, PullOutcome, PullPlan,
};
use crate::runs::pull::run::{self as pull_run, PullEnd};
use crate::runs::push::plan::{
    apply_changes, changed_by_others, conflict_verdict, plan_push, push_changes, PushChanges,
    PushInput, PushPlan, Uploaded,
};
use crate::runs::push::run::{self as push_run, PushEnd};
use crate::runs::rebuild::plan::{RebuildBuilder, RebuildReport};
use crate::runs::repair::plan::{diagnose, plan_repair, DoctorFacts, Problem, RepairPlan};
use crate::safety::conflicts::{files_in_conflict, CONFLICTS_DIR};
use crate::safety::deletions::{
    adopt_shard_records, recorded_rels, shard_records, DELETIONS_FIELD,
};
use crate::safety::Verdict;
use crate::wire::listing::{decode_local, decode_remote};

/// The field of a monolith superseded by shards, with when it was (see
/// [`Session::mark_moved_to_shards`]).
pub const MOVED_TO_SHARDS_FIELD: &str = "s3syncMovedToShards";

/// The field of a local index naming the remote index it mirrors.
pub const BASE_OF_FIELD: &str = "s3syncBaseOf";

/// What [`Session::load_base`] made of the local index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
#[tsify(missing_as_null, hashmap_as_object)]
pub enum BaseLoad {
    /// It is the base of this binding.
    Loaded,
    /// It does not parse as an index: no base.
    Unreadable,
    /// It mirrors another remote index (another namespace or layout): no base.
    OtherIndex,
}

/// Which shard layout [`Session::shard_layout`] cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardFormat {
    /// The v1 per-partition mirror of the monolith.
    V1Mirror,
    /// The v2 shard-first layout at this commit sequence.
    V2 {
        /// The `commitSeq` the meta records.
        commit_seq: u64,
    },
}

/// An index cut into shards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardLayout {
    /// `(partition, compact shard JSON)`, by partition.
    pub shards: Vec<(String, Vec<u8>)>,
    /// The `_index/_meta.json` bytes listing them.
    pub meta: Vec<u8>,
    /// Rels with no partition (kept in the monolith by a v1 mirror).
    pub unpartitioned: Vec<String>,
}

/// What loading an index found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct IndexLoaded {
    /// Entries in the index.
    pub entries: u64,
    /// Internal entries found in it (dropped by the next pull or push).
    pub internal_entries: u64,
}

/// State of one sync run.
#[derive(Debug)]
pub struct Session {
    model: PathModel,
    index: Option<Index>,
    /// The local index (what this cache last synced), when one was loaded.
    base: Option<Index>,
    /// Rels whose base entries the local index keeps after the last pull.
    kept_after_pull: Vec<String>,
    /// Rels the last pull did not fetch: the local index keeps their base entries, or none.
    untouched_after_pull: Vec<String>,
    /// SHA-256 of what the last pull wrote, by rel (see [`PullOutcome::hashes`]).
    pulled_hashes: BTreeMap<String, String>,
    rebuild: Option<RebuildBuilder>,
    /// The report of the rebuild this session ran, if any (a pull reports its unsafe keys).
    rebuilt: Option<RebuildReport>,
    pull: Option<PullPlan>,
    /// What the last pull applied, and whether it left files remote (for how it ends).
    pulled: Option<(PullApplied, bool)>,
    push: Option<PushPlan>,
    /// The tombstones the last push plan was made with (consumed when the push ends).
    push_tombstones: Vec<String>,
    changes: Option<PushChanges>,
    /// The `_meta.json` of a v2 index, when that is what was loaded.
    meta: Option<ShardMeta>,
    /// For a v2 index: the shard each entry was read from. An entry stays in that shard when a
    /// commit rewrites it, whatever its key's partition would be: an entry with no partition
    /// (an unsafe key such as `../x`, which the planners skip and report) or one filed under
    /// another partition would otherwise make the commit fail, or vanish from a rewritten
    /// shard while the meta listed a shard never written.
    homes: BTreeMap<String, String>,
    /// For a v2 index: the rels whose deletion record was read from a shard (the one `homes`
    /// names); the others' were read from `_meta.json`.
    records_in_shards: BTreeSet<String>,
}

impl Session {
    /// A session bound to an optional namespace (empty means solo) under a bucket prefix.
    pub fn new(namespace: Option<&str>, prefix: &str) -> CoreResult<Session> {
        Ok(Session {
            model: PathModel::new(namespace, prefix)?,
            index: None,
            base: None,
            kept_after_pull: Vec::new(),
            untouched_after_pull: Vec::new(),
            pulled_hashes: BTreeMap::new(),
            rebuild: None,
            rebuilt: None,
            pull: None,
            pulled: None,
            push: None,
            push_tombstones: Vec::new(),
            changes: None,
            meta: None,
            homes: BTreeMap::new(),
            records_in_shards: BTreeSet::new(),
        })
    }

    /// The path model of this session.
    pub fn model(&self) -> &PathModel {
        &self.model
    }

    /// Parses and keeps a v1 index from raw bytes.
    pub fn load_index(&mut self, bytes: &[u8]) -> CoreResult<IndexLoaded> {
        let (index, internal_entries) = Index::parse_counting_internal(bytes)?;
        Ok(self.keep_index(index, internal_entries))
    }

    /// [`Session::load_index`] of bytes it owns, dropped once read (see
    /// [`Index::parse_owned`]): the WASM surface hands over its copy.
    pub fn load_index_owned(&mut self, bytes: Vec<u8>) -> CoreResult<IndexLoaded> {
        let (index, internal_entries) = Index::parse_owned_counting_internal(bytes)?;
        Ok(self.keep_index(index, internal_entries))
    }

    /// Keeps a loaded index; `internal_entries` is how many of its entries are internal
    /// (counted by the parse, see [`Index::parse_counting_internal`]).
    fn keep_index(&mut self, index: Index, internal_entries: u64) -> IndexLoaded {
        let loaded = IndexLoaded {
            entries: index.entries.len() as u64,
            internal_entries,
        };
        self.index = Some(index);
        self.pull = None;
        self.meta = None;
        self.homes.clear();
        self.records_in_shards.clear();
        loaded
    }

    /// Loads the base: the local index, what this cache last synced. Push plans then upload
    /// only what changed locally since it. An unreadable local index is no base (every file
    /// is then judged against the remote index alone), never an error: the local copy is a
    /// cache, the remote index the record.
    ///
    /// A local index this core wrote names the remote index it mirrors (`s3syncBaseOf`); one
    /// that names another (the cache moved from solo to a namespace, say) is no base for this
    /// binding: its entries say nothing about what this index's files were.
    ///
    /// The bytes are taken and freed once read, before the entries are sorted (see
    /// [`Index::parse_owned`]): a base is as large as the remote index it mirrors.
    pub fn load_base(&mut self, bytes: Vec<u8>) -> BaseLoad {
        self.base = None;
        let Ok(base) = Index::parse_owned(bytes) else {
            return BaseLoad::Unreadable;
        };
        let key = self.model.under_binding(INDEX_FILE);
        match base.extra.get(BASE_OF_FIELD) {
            Some(serde_json::Value::String(of)) if *of != key => BaseLoad::OtherIndex,
            _ => {
                self.base = Some(base);
                BaseLoad::Loaded
            }
        }
    }

    /// True when the base (the local index) records `rel` at `size` bytes with SHA-256 `sha256`:
    /// a file holding those bytes is as this cache last synced it. False without a base, an
    /// entry or a recorded hash.
    pub fn base_holds(&self, rel: &str, size: u64, sha256: &str) -> bool {
        self.base
            .as_ref()
            .and_then(|base| base.entries.get(rel))
            .is_some_and(|entry| {
                entry.size == size && entry.sha256.as_deref().is_some_and(|h| h == sha256)
            })
    }

    /// `index` as the local copy: pretty, naming the remote index it mirrors.
    fn local_json(&self, mut index: Index) -> Vec<u8> {
        index.extra.insert(
            BASE_OF_FIELD.to_string(),
            serde_json::Value::String(self.model.under_binding(INDEX_FILE)),
        );
        index.to_pretty_json()
    }

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
        for (partition, bytes) in shards {
            if !listed.contains(partition.as_str()) {
                return Err(CoreError::input(format!(
                    "shard {partition:?} is not listed in _meta.json"
                )));
            }
            let document = parse_shard_document(bytes, partition)?;
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
    /// has `None`: delete it), and the next `_meta.json` (`commitSeq` + 1, partitions sorted).
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

    /// Starts from an empty index (a bucket that has none yet).
    pub fn load_empty_index(&mut self) {
        self.index = Some(Index::default());
        self.pull = None;
        self.homes.clear();
        self.records_in_shards.clear();
    }

    /// Copies into the loaded index the entries of `other` (raw index bytes) for `rels` that it
    /// lacks; an entry already present is never replaced. Returns how many were added.
    pub fn adopt_entries(&mut self, other: &[u8], rels: &[String]) -> CoreResult<u64> {
        let other = Index::parse(other)?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        let mut added = 0;
        for rel in rels {
            if index.entries.contains_key(rel) {
                continue;
            }
            if let Some(entry) = other.entries.get(rel) {
                index.entries.insert(rel.clone(), entry.clone());
                added += 1;
            }
        }
        Ok(added)
    }

    /// Migrate: adds to the loaded index (the namespace's) an entry for every copy the migrate
    /// plan finds verified and unindexed in `listing` (a whole-bucket listing buffer), taken
    /// from `solo_index` (raw bytes) where it describes the same bytes, else built from the
    /// copy's listing as a rebuild does. Without this a bucket with no solo index left its
    /// copies in no index, invisible to every pull. Returns how many were added.
    pub fn index_migrated_copies(
        &mut self,
        listing: &[u8],
        solo_index: Option<&[u8]>,
        now_iso: &str,
    ) -> CoreResult<u64> {
        if self.model.namespace().is_none() {
            return Err(CoreError::input("migrate needs a namespace"));
        }
        let solo = solo_index.map(Index::parse).transpose()?;
        let listed = decode_remote(listing)?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        let plan = plan_migrate(
            &self.model,
            MigrateInputs {
                listing: &listed,
                solo_index: solo.as_ref(),
                ns_index: Some(index),
                now_iso,
            },
        );
        let mut added = 0;
        for item in plan.to_index {
            // The plan only lists rels the index lacks; an entry present is never replaced.
            if !index.entries.contains_key(&item.rel) {
                index.entries.insert(item.rel, item.entry);
                added += 1;
            }
        }
        Ok(added)
    }

    /// Removes `rels` from the loaded index; returns how many were there.
    pub fn remove_entries(&mut self, rels: &[String]) -> CoreResult<u64> {
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        Ok(rels
            .iter()
            .filter(|rel| index.entries.remove(rel).is_some())
            .count() as u64)
    }

    /// Starts rebuilding the index from a listing. `now_iso` dates objects listed without one.
    pub fn begin_rebuild(&mut self, now_iso: &str) {
        self.rebuild = Some(RebuildBuilder::new(self.model.clone(), now_iso.to_string()));
    }

    /// Feeds one listing page (see [`crate::wire::listing`] for the buffer format). Keys holding a
    /// NUL cannot travel in that buffer; the shim passes them in `unencodable`, to be counted
    /// and refused.
    pub fn add_listing_page(&mut self, page: &[u8], unencodable: &[String]) -> CoreResult<()> {
        let builder = self
            .rebuild
            .as_mut()
            .ok_or_else(|| CoreError::input("add_listing_page before begin_rebuild"))?;
        builder.add_page(&decode_remote(page)?);
        for key in unencodable {
            builder.add_unencodable(key);
        }
        Ok(())
    }

    /// Finishes the rebuild, keeping the rebuilt index as this session's index.
    pub fn finish_rebuild(&mut self, last_pulled: Option<&str>) -> CoreResult<RebuildReport> {
        let builder = self
            .rebuild
            .take()
            .ok_or_else(|| CoreError::input("finish_rebuild before begin_rebuild"))?;
        let (index, report) = builder.finish(last_pulled.map(str::to_string));
        crate::runs::rebuild::plan::nested_datastore(&index)?;
        self.rebuilt = Some(report.clone());
        self.index = Some(index);
        self.pull = None;
        self.homes.clear();
        self.records_in_shards.clear();
        Ok(report)
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

    fn index(&self) -> CoreResult<&Index> {
        self.index
            .as_ref()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))
    }

    /// Plans a pull against a local listing buffer and keeps the plan for [`Session::apply_pull`].
    pub fn plan_pull(&mut self, listing: &[u8], options: &PullOptions) -> CoreResult<&PullPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let plan = plan_pull(
            &self.model,
            self.index()?,
            self.base.as_ref(),
            &surveyed,
            options,
        );
        Ok(self.pull.insert(plan))
    }

    /// Records what happened to the last pull plan's downloads.
    pub fn apply_pull(&mut self, outcome: &PullOutcome) -> CoreResult<PullApplied> {
        let plan = self
            .pull
            .take()
            .ok_or_else(|| CoreError::input("apply_pull without a pull plan"))?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // A pointer kept over the bucket's version settled like a download: the local index
        // records the bucket's version as seen (see `PullOutcome::kept_pointers`).
        let downloaded: BTreeSet<&str> = outcome
            .downloaded
            .iter()
            .map(|(rel, _)| rel.as_str())
            .chain(outcome.kept_pointers.iter().map(String::as_str))
            .collect();
        // A conflict whose bucket version arrived (this cache's kept aside, or identical) is
        // synced to the remote entry; one left as it was keeps its base entry.
        self.kept_after_pull = plan
            .conflicts
            .iter()
            .filter(|rel| !downloaded.contains(rel.as_str()))
            .chain(&plan.local_changes)
            .chain(&plan.deleted_remotely)
            // A removal that did not happen (the file changed since the plan) keeps its base.
            .chain(
                plan.removals
                    .iter()
                    .map(|r| &r.rel)
                    .filter(|rel| !outcome.removed.contains(rel)),
            )
            .cloned()
            .collect();
        // A download that neither arrived nor was gone (it failed) leaves the file as it was.
        let arrived: BTreeSet<&str> = outcome
            .downloaded
            .iter()
            .map(|(rel, _)| rel.as_str())
            .chain(outcome.not_found.iter().map(String::as_str))
            .chain(outcome.kept_pointers.iter().map(String::as_str))
            .collect();
        self.untouched_after_pull = plan
            .untouched
            .iter()
            .chain(
                plan.downloads
                    .iter()
                    .map(|t| &t.rel)
                    .filter(|rel| !arrived.contains(rel.as_str())),
            )
            .cloned()
            .collect();
        self.pulled_hashes = outcome.hashes.iter().cloned().collect();
        let mut applied = apply_pull(index, &plan, outcome);
        applied.attention = pull_run::pull_attention(&plan, self.rebuilt.as_ref());
        self.pulled = Some((applied.clone(), plan.summary.lazy > 0));
        Ok(applied)
    }

    /// True when the last pull's changes to the index (pruned entries, corrected sizes) must be
    /// published over the index read (see [`pull_run::publishes_pruned_index`]).
    pub fn pull_publishes_pruned_index(&self, index_exists: bool) -> CoreResult<bool> {
        let (applied, _) = self.last_pull()?;
        Ok(pull_run::publishes_pruned_index(
            applied,
            index_exists,
            self.meta.is_some(),
        ))
    }

    /// The sidecar the last pull leaves, or `None` to leave it alone (see
    /// [`pull_run::sidecar_after_pull`]).
    pub fn sidecar_after_pull(
        &self,
        sidecar: Option<&[u8]>,
        end: &PullEnd,
    ) -> CoreResult<Option<Vec<u8>>> {
        let (applied, lazy_left) = self.last_pull()?;
        Ok(pull_run::sidecar_after_pull(
            sidecar,
            applied,
            *lazy_left,
            self.meta.is_some(),
            end,
        ))
    }

    /// What a person must know about the pull just applied (see
    /// [`pull_run::pull_warnings`]).
    pub fn pull_warnings(&self) -> CoreResult<Vec<Verdict>> {
        Ok(pull_run::pull_warnings(&self.last_pull()?.0))
    }

    /// What a person must know about the last push plan (see [`push_run::push_warnings`]).
    pub fn push_warnings(&self) -> CoreResult<Vec<Verdict>> {
        Ok(push_run::push_warnings(self.push_plan()?))
    }

    fn last_pull(&self) -> CoreResult<&(PullApplied, bool)> {
        self.pulled
            .as_ref()
            .ok_or_else(|| CoreError::input("a pull's end before apply_pull"))
    }

    /// The local index to write after a pull: the remote index with this cache's mtimes, except
    /// that files the pull left alone because they changed here (`local_changes`, `conflicts`),
    /// that the remote no longer names while this cache still holds them (`deleted_remotely`),
    /// or that it did not fetch (out of scope, refused, failed) keep their base entries, so the
    /// next push judges them against what this cache synced.
    pub fn local_index_after_pull(&self) -> CoreResult<Vec<u8>> {
        let mut local = self.index()?.clone();
        // What this pull wrote, where the index records no hash: this cache's own knowledge of
        // the bytes it left, kept in its base only (the remote entry is the writer's to make).
        // An entry that names a hash keeps it: a mismatch there is the index's to settle.
        for (rel, sha256) in &self.pulled_hashes {
            if let Some(entry) = local.entries.get_mut(rel) {
                if entry.sha256.is_none() {
                    entry.sha256 = Some(sha256.clone());
                }
            }
        }
        let base_entry = |rel: &String| self.base.as_ref().and_then(|b| b.entries.get(rel));
        // Left alone: what the base said, or nothing (a file this cache never synced must not
        // pass for the remote's version: the next push would upload it over that version).
        for rel in &self.kept_after_pull {
            match base_entry(rel) {
                Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                None => local.entries.remove(rel),
            };
        }
        // Not fetched: what the base said, or nothing (the remote's entry would claim this
        // cache holds a version it never downloaded).
        for rel in &self.untouched_after_pull {
            match base_entry(rel) {
                Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                None => local.entries.remove(rel),
            };
        }
        Ok(self.local_json(local))
    }

    /// Keeps `plan` as this session's push plan: a push that ended on its seal plans nothing.
    pub fn set_push_plan(&mut self, plan: PushPlan) {
        self.push = Some(plan);
    }

    /// Plans a push against a local listing buffer and keeps the plan for
    /// [`Session::record_push`].
    pub fn plan_push(&mut self, listing: &[u8], input: &PushInput) -> CoreResult<&PushPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let plan = plan_push(
            &self.model,
            self.index()?,
            self.base.as_ref(),
            &surveyed,
            input,
        );
        self.push_tombstones = input.tombstones.iter().cloned().collect();
        Ok(self.push.insert(plan))
    }

    /// The last push plan.
    pub fn push_plan(&self) -> CoreResult<&PushPlan> {
        self.push
            .as_ref()
            .ok_or_else(|| CoreError::input("no push plan in this session"))
    }

    /// Withholds the last push plan's deletes because nobody confirmed them (see
    /// [`push_run::withhold_unconfirmed_deletes`]); returns the plan as it now stands.
    pub fn withhold_unconfirmed_deletes(&mut self) -> CoreResult<&PushPlan> {
        let plan = self.push_plan_mut()?;
        push_run::withhold_unconfirmed_deletes(plan);
        Ok(plan)
    }

    /// Checks a saved plan against the last push plan (see [`push_run::check_saved_plan`]).
    pub fn check_saved_plan(
        &self,
        saved: &[u8],
        remote_index_etag: Option<&str>,
        listing_digest: &str,
    ) -> CoreResult<()> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("check_saved_plan without a push plan"))?;
        push_run::check_saved_plan(saved, plan, remote_index_etag, listing_digest)
    }

    /// The sidecar the last push leaves, or `None` to write nothing (see
    /// [`push_run::sidecar_after_push`]).
    pub fn sidecar_after_push(
        &self,
        sidecar: Option<&[u8]>,
        end: &PushEnd,
    ) -> CoreResult<Option<Vec<u8>>> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("sidecar_after_push without a push plan"))?;
        Ok(push_run::sidecar_after_push(
            sidecar,
            plan,
            &self.push_tombstones,
            end,
        ))
    }

    fn push_plan_mut(&mut self) -> CoreResult<&mut PushPlan> {
        self.push
            .as_mut()
            .ok_or_else(|| CoreError::input("no push plan in this session"))
    }

    /// Records the uploads of the last push plan (and, when confirmed, its deletes) in the index, and
    /// keeps the changes for [`Session::rebase_push`]. Returns true when the remote index must
    /// be written.
    pub fn record_push(
        &mut self,
        uploaded: &[Uploaded],
        now_iso: &str,
        deletes_confirmed: bool,
    ) -> CoreResult<bool> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("record_push without a push plan"))?;
        let mut changes = push_changes(self.index()?, plan, uploaded, now_iso);
        if !deletes_confirmed {
            changes.deletes.clear();
        }
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // Over the index the plan was made from, nothing is refused.
        apply_changes(index, &changes);
        let touches = changes.touches_remote();
        self.changes = Some(changes);
        Ok(touches)
    }

    /// After a conditional publish lost a race: takes the newer remote index and re-applies this
    /// push's changes to it.
    pub fn rebase_push(&mut self, newer: &[u8]) -> CoreResult<()> {
        if self.changes.is_none() {
            return Err(CoreError::input("rebase_push before record_push"));
        }
        let newer = Index::parse(newer)?;
        self.remerge(newer)
    }

    /// Re-applies this push's changes over `newer` (the index another writer published while
    /// this push ran) against what the push read, and folds what that writer changed into the
    /// plan, so the push reports it and the local records never claim it:
    ///
    /// - an upload whose entry the other writer changed since the read is a `conflict` (see
    ///   [`apply_changes`]): its entry is the other writer's, and this cache keeps its base entry;
    /// - any other entry the other writer changed is `behind`: this cache never saw that version,
    ///   so its local index keeps the base entry (or none), the sidecar does not vouch for the
    ///   cache, and the next pull brings it. Recording the published entry there instead made the
    ///   next push read this cache's old copy as an edit and upload it over the newer one.
    fn remerge(&mut self, mut newer: Index) -> CoreResult<()> {
        let changes = self
            .changes
            .as_ref()
            .ok_or_else(|| CoreError::input("rebase_push before record_push"))?;
        let ours: BTreeSet<&str> = changes
            .upserts
            .keys()
            .chain(changes.deletes.keys())
            .chain(&changes.prune)
            .map(String::as_str)
            .collect();
        let previous = self
            .index
            .as_ref()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // Verified mtimes are not ours to claim: a file whose version another writer changed
        // since the hash matched is behind like any other (`same_version` ignores the mtime).
        let foreign = changed_by_others(previous, &newer, &ours);
        let refused = apply_changes(&mut newer, changes);
        self.index = Some(newer);
        let plan = self.push_plan_mut()?;
        for rel in foreign {
            if !plan.behind.contains(&rel) {
                plan.behind.push(rel);
            }
        }
        plan.behind.sort();
        self.add_push_conflicts(refused)
    }

    /// Records files this push found changed in the bucket as it wrote: uploads and deletes
    /// whose condition failed (another writer's version is there), or uploads a re-merge
    /// refused. They join the plan's conflicts, with the one `conflict` verdict naming them all,
    /// so the push reports them and the local index keeps their base entries.
    pub fn add_push_conflicts(&mut self, rels: impl IntoIterator<Item = String>) -> CoreResult<()> {
        let plan = self.push_plan_mut()?;
        let before = plan.conflicts.len();
        for rel in rels {
            if crate::model::file_class::is_derived(&rel) {
                // Another writer's derived file is as good as ours: swamp regenerates it.
                plan.supersede(&rel);
                continue;
            }
            if !plan.conflicts.contains(&rel) {
                plan.conflicts.push(rel);
            }
        }
        if plan.conflicts.len() != before {
            plan.conflicts.sort();
            plan.blocked.retain(|v| v.code != GuardCode::Conflict);
            plan.blocked.push(conflict_verdict(&plan.conflicts));
        }
        Ok(())
    }

    /// Diagnoses the cache in `listing` (against the loaded index, if any).
    pub fn diagnose(&self, listing: &[u8], facts: DoctorFacts) -> CoreResult<Vec<Problem>> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let mut problems = diagnose(&self.model, &surveyed, self.index.as_ref(), facts);
        let conflicted = files_in_conflict(&self.model, &files);
        if !conflicted.is_empty() {
            problems.push(Problem {
                code: ProblemCode::ConflictCopies,
                message: format!(
                    "{} files changed here and in the bucket have your version kept in {CONFLICTS_DIR}/ (e.g. {}); settle each with `s3sync resolve --keep mine <path>` (puts yours back and pushes it) or `--keep theirs`",
                    conflicted.len(),
                    conflicted.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        Ok(problems)
    }

    /// Plans a layout repair of the cache in `listing` against the loaded index.
    pub fn plan_repair(
        &self,
        listing: &[u8],
        hashes: &BTreeMap<String, String>,
    ) -> CoreResult<RepairPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        Ok(plan_repair(
            &self.model,
            &surveyed,
            &files,
            self.index()?,
            hashes,
        ))
    }

    /// The deletes of this push that the current index still agrees with: those whose entry is
    /// gone from it. After a rebase, a rel another writer re-uploaded keeps its entry, and its
    /// object must then not be deleted.
    pub fn deletes_still_applying(&self) -> CoreResult<Vec<String>> {
        let index = self.index()?;
        Ok(self
            .changes
            .as_ref()
            .map(|c| {
                c.deletes
                    .keys()
                    .filter(|rel| !index.entries.contains_key(rel))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Sets the index's `lastPulled` time.
    pub fn set_last_pulled(&mut self, when_iso: &str) -> CoreResult<()> {
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        index.last_pulled = Some(when_iso.to_string());
        Ok(())
    }

    /// The index as JSON: pretty for the local copy, compact for the remote one.
    pub fn index_json(&self, pretty: bool) -> CoreResult<Vec<u8>> {
        let index = self.index()?;
        Ok(if pretty {
            index.to_pretty_json()
        } else {
            index.to_compact_json()
        })
    }

    /// The local index to write after a push: the published index, except that a file this
    /// cache still holds in its base version while the remote moved on (the plan's `behind`),
    /// changed on both sides (`conflicts`), or does not hold (`missing`, `withheld`) keeps its
    /// base entry, or none. Writing the remote's entry there would make the next push read the
    /// local copy as a change of that version and upload it over the newer one.
    pub fn local_index_after_push(&self) -> CoreResult<Vec<u8>> {
        let mut local = self.index()?.clone();
        if let Some(base) = &self.base {
            // The published entry of a file this push did not change carries the `localMtime`
            // of whichever cache uploaded it. This cache's stat of its own copy is in the base
            // entry of the same version: keep it, or the next run would read this cache's
            // untouched copy as an edit (a spurious conflict when the remote moves on).
            carry_local_mtimes(&mut local, base);
        }
        if let Some(changes) = &self.changes {
            // A file whose hash this push verified against the version it read (same bytes, a
            // new mtime) takes the mtime verified, not the base's older one the carry put back:
            // else every later run would see that stat as an edit, and a pull, once the remote
            // moved on, would call the untouched file a conflict.
            for (rel, mtime) in &changes.mtimes {
                let verified = changes.read.get(rel).and_then(Option::as_ref);
                if let (Some(entry), Some(read)) = (local.entries.get_mut(rel), verified) {
                    if same_version(entry, read) {
                        entry.local_mtime = Some(mtime.as_str().into());
                    }
                }
            }
        }
        if let Some(plan) = &self.push {
            // Not uploaded: what the base said, or nothing. A conflict this cache never synced
            // (made here while another cache pushed the same path) recorded with the remote's
            // entry would read as "changed here, remote unchanged" next time, and go up over it.
            // So would a file this cache does not hold (missing, not pulled, or its delete withheld) and
            // never synced: a file made at that path later would pass for an edit of a version
            // this cache never saw.
            for rel in plan
                .behind
                .iter()
                .chain(&plan.conflicts)
                .chain(&plan.missing)
                .chain(&plan.not_pulled)
                .chain(plan.withheld.iter().map(|d| &d.rel))
            {
                match self.base.as_ref().and_then(|b| b.entries.get(rel)) {
                    Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                    None => local.entries.remove(rel),
                };
            }
        }
        Ok(self.local_json(local))
    }

    /// Number of entries in the loaded index.
    pub fn index_len(&self) -> CoreResult<usize> {
        Ok(self.index()?.entries.len())
    }
}
