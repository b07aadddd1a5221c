//! A planning session: the state one sync run keeps between its steps.
//!
//! The shim loads the index once (as bytes), asks for a plan, executes it, and reports the
//! outcome back; the session keeps the parsed index and the last plan so nothing crosses the
//! boundary twice. It is plain Rust, so native tests drive exactly what the WASM handle wraps.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Serialize;

use crate::error::{CoreError, CoreResult};
use crate::index::{Index, ShardMeta, DEFAULT_MAX_ENTRIES};
use crate::model::paths::{PathModel, INDEX_FILE};
use crate::runs::pull::plan::{PullApplied, PullPlan};
use crate::runs::push::plan::{PushChanges, PushPlan};
use crate::runs::rebuild::plan::{RebuildBuilder, RebuildReport};

mod pull;
mod push;
mod rebuild;
mod repair;
mod shards;

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
    /// The most entries an index this session loads may name ([`Session::set_entry_limit`]).
    entry_limit: usize,
}

impl Session {
    /// A session bound to an optional namespace (empty means solo) under a bucket prefix.
    pub fn new(namespace: Option<&str>, prefix: &str) -> CoreResult<Session> {
        Ok(Session::bound(PathModel::new(namespace, prefix)?))
    }

    /// A fresh session bound as this one is, with its entry limit: to judge an index without
    /// making it this session's (a rebuild's look at the v2 set it is about to replace).
    pub fn sibling(&self) -> Session {
        Session {
            entry_limit: self.entry_limit,
            ..Session::bound(self.model.clone())
        }
    }

    /// A session bound by `model`, with nothing loaded.
    fn bound(model: PathModel) -> Session {
        Session {
            model,
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
            entry_limit: DEFAULT_MAX_ENTRIES,
        }
    }

    /// The most entries an index this session loads may name (default
    /// [`DEFAULT_MAX_ENTRIES`]): the remote index (v1, or v2's shards together), the local
    /// base, another writer's index read to re-merge, and an index rebuilt from a listing. A
    /// longer one is `index-too-large`, refused as it is read. Zero is refused
    /// (`invalid-input`): no datastore is read with it.
    pub fn set_entry_limit(&mut self, limit: u64) -> CoreResult<()> {
        if limit == 0 {
            return Err(CoreError::input("the index entry limit must be at least 1"));
        }
        self.entry_limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(())
    }

    /// The most entries an index this session loads may name.
    pub fn entry_limit(&self) -> usize {
        self.entry_limit
    }

    /// The path model of this session.
    pub fn model(&self) -> &PathModel {
        &self.model
    }

    /// Parses and keeps a v1 index from raw bytes.
    pub fn load_index(&mut self, bytes: &[u8]) -> CoreResult<IndexLoaded> {
        let (index, internal_entries) = Index::parse_counting_internal(bytes, self.entry_limit)?;
        Ok(self.keep_index(index, internal_entries))
    }

    /// [`Session::load_index`] of bytes it owns, dropped once read (see
    /// [`Index::parse_owned`]): the WASM surface hands over its copy.
    pub fn load_index_owned(&mut self, bytes: Vec<u8>) -> CoreResult<IndexLoaded> {
        let (index, internal_entries) =
            Index::parse_owned_counting_internal(bytes, self.entry_limit)?;
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
        let Ok(base) = Index::parse_owned_limited(bytes, self.entry_limit) else {
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

    fn index(&self) -> CoreResult<&Index> {
        self.index
            .as_ref()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))
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

    /// Number of entries in the loaded index.
    pub fn index_len(&self) -> CoreResult<usize> {
        Ok(self.index()?.entries.len())
    }
}
