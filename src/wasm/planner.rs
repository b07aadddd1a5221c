//! `Planner`: a planning session (see `runs/session/`) as one JS class.

use wasm_bindgen::prelude::*;

use crate::model::paths::INDEX_FILE;
use crate::runs::pull::plan::PullOutcome;
use crate::runs::push::plan::PushInput;
use crate::runs::session::{BaseLoad, Session};
use crate::safety::conflicts::{self, Keep, KeptAside};
use crate::safety::{
    self, DeletePolicy, RunFacts, DEFAULT_MAX_DELETES, DEFAULT_MAX_DELETE_PERCENT,
};
use crate::wire::listing::decode_local;

use super::convert::*;

/// A planning session bound to a namespace and prefix (see `runs/session/`).
#[wasm_bindgen]
pub struct Planner {
    pub(super) inner: Session,
}

#[wasm_bindgen]
impl Planner {
    /// Creates a session; `namespace` empty or absent means solo mode, `prefix` (the bucket
    /// prefix) only bounds key lengths. `maxIndexEntries`: the most entries an index it loads
    /// may name (absent: the default, 10^6).
    #[wasm_bindgen(constructor)]
    pub fn new(
        namespace: Option<String>,
        prefix: Option<String>,
        max_index_entries: Option<f64>,
    ) -> Result<Planner, JsValue> {
        let namespace = namespace.filter(|n| !n.is_empty());
        let mut inner = Session::new(namespace.as_deref(), prefix.as_deref().unwrap_or(""))
            .map_err(to_js_error)?;
        if let Some(limit) = max_index_entries {
            let limit = count(limit, "maxIndexEntries")?;
            inner.set_entry_limit(limit).map_err(to_js_error)?;
        }
        Ok(Planner { inner })
    }

    /// Parses a v1 index from its raw bytes; returns `{entries, internalEntries}`. The bytes are
    /// taken as an owned copy so the core can free them before it builds the index map.
    #[wasm_bindgen(js_name = loadIndex, unchecked_return_type = "IndexLoaded")]
    pub fn load_index(&mut self, bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        to_js(&self.inner.load_index_owned(bytes).map_err(to_js_error)?)
    }

    /// Loads a v2 shard-first index: `_index/_meta.json` and every shard it lists, by
    /// partition. Returns the meta's `commitSeq`.
    #[wasm_bindgen(js_name = loadShards)]
    pub fn load_shards(
        &mut self,
        meta: &[u8],
        #[wasm_bindgen(unchecked_param_type = "Map<string, Uint8Array>")] shards: JsValue,
    ) -> Result<f64, JsValue> {
        let shards = bytes_map(&shards, "shards")?;
        Ok(self.inner.load_shards(meta, &shards).map_err(to_js_error)? as f64)
    }

    /// Re-applies this push's changes over a newer v2 shard set (after a lost race).
    #[wasm_bindgen(js_name = rebasePushShards)]
    pub fn rebase_push_shards(
        &mut self,
        meta: &[u8],
        #[wasm_bindgen(unchecked_param_type = "Map<string, Uint8Array>")] shards: JsValue,
    ) -> Result<(), JsValue> {
        let shards = bytes_map(&shards, "shards")?;
        self.inner
            .rebase_push_shards(meta, &shards)
            .map_err(to_js_error)
    }

    /// Loads the base: the local index (what this cache last synced). Returns `loaded`,
    /// `unreadable` or `other-index` (then there is no base).
    #[wasm_bindgen(js_name = loadBase, unchecked_return_type = "BaseLoad")]
    pub fn load_base(&mut self, bytes: Vec<u8>) -> String {
        match self.inner.load_base(bytes) {
            BaseLoad::Loaded => "loaded",
            BaseLoad::Unreadable => "unreadable",
            BaseLoad::OtherIndex => "other-index",
        }
        .to_string()
    }

    /// Starts an index rebuild from a listing; `now` dates entries listed without a date.
    #[wasm_bindgen(js_name = beginRebuild)]
    pub fn begin_rebuild(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Date")] now: JsValue,
    ) -> Result<(), JsValue> {
        self.inner.begin_rebuild(&date_iso(&now, "now")?);
        Ok(())
    }

    /// Adds one listing page, as `listingPage` encodes it (`key\0size\0etag\0lastModified\0`
    /// records); keys holding a NUL come separately in `unencodable` and are refused.
    #[wasm_bindgen(js_name = addListingPage)]
    pub fn add_listing_page(
        &mut self,
        page: &[u8],
        unencodable: Vec<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .add_listing_page(page, &unencodable)
            .map_err(to_js_error)
    }

    /// Finishes the rebuild, making the rebuilt index this session's; returns its report.
    /// `lastPulled`: when this cache last pulled, if known.
    #[wasm_bindgen(js_name = finishRebuild, unchecked_return_type = "RebuildReport")]
    pub fn finish_rebuild(
        &mut self,
        #[wasm_bindgen(unchecked_optional_param_type = "Date")] last_pulled: JsValue,
    ) -> Result<JsValue, JsValue> {
        let last_pulled = match last_pulled.is_undefined() || last_pulled.is_null() {
            true => None,
            false => Some(date_iso(&last_pulled, "lastPulled")?),
        };
        to_js(
            &self
                .inner
                .finish_rebuild(last_pulled.as_deref())
                .map_err(to_js_error)?,
        )
    }

    /// Plans a pull against a cache walk (encoded with `encodeLocalListing`).
    #[wasm_bindgen(js_name = planPull, unchecked_return_type = "PullPlan")]
    pub fn plan_pull(
        &mut self,
        listing: &[u8],
        #[wasm_bindgen(unchecked_optional_param_type = "PullOptions")] opts: JsValue,
    ) -> Result<JsValue, JsValue> {
        let opts: PullOptions = options(opts)?;
        let opts = crate::runs::pull::plan::PullOptions {
            metadata_only: opts.metadata_only.unwrap_or(false),
            case_insensitive: opts.case_insensitive.unwrap_or(false),
            keep_existing: opts.keep_existing.unwrap_or(false),
            scope: opts.scope.unwrap_or_default(),
            tombstones: opts.tombstones.unwrap_or_default(),
        };
        to_parsed_json(self.inner.plan_pull(listing, &opts).map_err(to_js_error)?)
    }

    /// Records the outcome of the last pull plan in the index: `downloaded` the files written
    /// (a walk encoded with `encodeLocalListing`, mtimes after the write), `notFound` the rels
    /// whose objects were gone, `aside` the conflicts whose local version was copied aside.
    /// Returns what changed, and the `conflict` verdict if any.
    #[wasm_bindgen(js_name = applyPull, unchecked_return_type = "PullApplied")]
    pub fn apply_pull(
        &mut self,
        downloaded: &[u8],
        not_found: Vec<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "KeptAside[]")] aside: JsValue,
    ) -> Result<JsValue, JsValue> {
        let aside: Vec<KeptAside> = options(aside)?;
        let outcome =
            PullOutcome::of_downloads(downloaded, not_found, aside).map_err(to_js_error)?;
        to_js(&self.inner.apply_pull(&outcome).map_err(to_js_error)?)
    }

    /// Plans a push against a cache walk (encoded with `encodeLocalListing`). `tombstones` are
    /// cache-relative (see `normalizeTombstone`); `hashes` the SHA-256 of the files an earlier
    /// call listed in `needsHash`, by cache path; `opts` the delete policy and the run's facts.
    #[wasm_bindgen(js_name = planPush, unchecked_return_type = "PushPlan")]
    pub fn plan_push(
        &mut self,
        listing: &[u8],
        tombstones: Vec<String>,
        #[wasm_bindgen(unchecked_param_type = "Map<string, string>")] hashes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "PushOptions")] opts: JsValue,
    ) -> Result<JsValue, JsValue> {
        let opts: PushOptions = options(opts)?;
        let input = PushInput {
            tombstones: tombstones.into_iter().collect(),
            hashes: string_map(&hashes, "hashes")?,
            policy: DeletePolicy {
                delete_missing: opts.delete_missing.unwrap_or(false),
                max_deletes: opts.max_deletes.unwrap_or(DEFAULT_MAX_DELETES),
                max_delete_percent: opts
                    .max_delete_percent
                    .unwrap_or(DEFAULT_MAX_DELETE_PERCENT),
                allow_catalog_shrink: opts.allow_catalog_shrink.unwrap_or(false),
            },
            facts: RunFacts {
                walk_errors: opts.walk_errors.unwrap_or(0),
                listing_errors: opts.listing_errors.unwrap_or(0),
                lazy_pull_active: opts.lazy_pull_active.unwrap_or(false),
                sidecar_unreadable: opts.sidecar_unreadable.unwrap_or(false),
                symlinked_folders: opts.symlinked_folders.unwrap_or(0),
            },
            ..PushInput::default()
        };
        to_parsed_json(self.inner.plan_push(listing, &input).map_err(to_js_error)?)
    }

    /// Re-applies this push's changes over a newer remote index (after a lost race).
    #[wasm_bindgen(js_name = rebasePush)]
    pub fn rebase_push(&mut self, newer: &[u8]) -> Result<(), JsValue> {
        self.inner.rebase_push(newer).map_err(to_js_error)
    }

    /// A `markDirty` path as a cache-relative tombstone inside the bound tree, or `undefined`
    /// when it cannot be evidence (outside the tree, internal, unsafe).
    #[wasm_bindgen(js_name = normalizeTombstone)]
    pub fn normalize_tombstone(&self, path: &str) -> Option<String> {
        safety::normalize_tombstone(self.inner.model(), path)
    }

    /// Plans a layout repair against the loaded index, from a cache walk and the SHA-256 of
    /// the files an earlier call listed in `needsHash`.
    #[wasm_bindgen(js_name = planRepair, unchecked_return_type = "RepairPlan")]
    pub fn plan_repair(
        &self,
        listing: &[u8],
        #[wasm_bindgen(unchecked_param_type = "Map<string, string>")] hashes: JsValue,
    ) -> Result<JsValue, JsValue> {
        let hashes = string_map(&hashes, "hashes")?;
        to_parsed_json(
            &self
                .inner
                .plan_repair(listing, &hashes)
                .map_err(to_js_error)?,
        )
    }

    /// After a repair's hydration: backups proven byte-identical to the namespace copy.
    /// Returns `{needsHash, redundant: [{path, sameAs}]}`.
    #[wasm_bindgen(js_name = planBackupDedupe, unchecked_return_type = "BackupDedupe")]
    pub fn plan_backup_dedupe(
        &self,
        listing: &[u8],
        #[wasm_bindgen(unchecked_param_type = "Map<string, string>")] hashes: JsValue,
    ) -> Result<JsValue, JsValue> {
        let files = crate::wire::listing::decode_local(listing).map_err(to_js_error)?;
        let hashes = string_map(&hashes, "hashes")?;
        to_js(&crate::runs::repair::plan::plan_backup_dedupe(
            self.inner.model(),
            &files,
            &hashes,
        ))
    }

    /// The cache path of the conflict copy of `cachePath` whose content hashes to `sha256`.
    #[wasm_bindgen(js_name = conflictCopyPath)]
    pub fn conflict_copy_path(&self, cache_path: &str, sha256: &str) -> Result<String, JsValue> {
        conflicts::conflict_copy_path(cache_path, sha256).map_err(to_js_error)
    }

    /// Merges a version pointer (`latest`) changed here (`local`) and in the bucket (`bucket`)
    /// to the higher version (see `file_class::merge_pointer_with_base`): `bucket`, `local`, or
    /// `conflict` when either is not a version number. `localIsBase`: the local bytes hash to
    /// the plan's `baseHashes` entry (this cache never changed it). Bytes over
    /// `POINTER_MAX_BYTES` are `conflict`.
    #[wasm_bindgen(js_name = mergePointer, unchecked_return_type = "PointerMerge")]
    pub fn merge_pointer(
        &self,
        local: &[u8],
        bucket: &[u8],
        local_is_base: bool,
    ) -> Result<JsValue, JsValue> {
        let max = crate::model::file_class::POINTER_MAX_BYTES as usize;
        let verdict = if local.len() > max || bucket.len() > max {
            crate::model::file_class::PointerMerge::Conflict
        } else {
            crate::model::file_class::merge_pointer_with_base(local, bucket, local_is_base)
        };
        to_js(&verdict)
    }

    /// Plans `resolve`: `keep` is `mine` or `theirs`, `rels` the files (every file with a copy
    /// when empty), `copies` a walk of the conflict folder (cache-relative paths). Returns
    /// `{files: [{rel, cachePath, restoreFrom, copies}], unknown}`.
    #[wasm_bindgen(js_name = planResolve, unchecked_return_type = "ResolvePlan")]
    pub fn plan_resolve(
        &self,
        keep: &str,
        rels: Vec<String>,
        copies: &[u8],
    ) -> Result<JsValue, JsValue> {
        let keep = Keep::parse(keep).map_err(to_js_error)?;
        let files = decode_local(copies).map_err(to_js_error)?;
        to_js(
            &conflicts::plan_resolve(self.inner.model(), keep, &rels, &files)
                .map_err(to_js_error)?,
        )
    }

    /// The remote key of this session's monolithic index (relative to the prefix).
    #[wasm_bindgen(getter = remoteIndexKey)]
    pub fn remote_index_key(&self) -> String {
        self.inner.model().under_binding(INDEX_FILE)
    }

    /// The key of the global lock swamp core takes for this layout (relative to the prefix).
    #[wasm_bindgen(getter = lockKey)]
    pub fn lock_key(&self) -> String {
        self.inner.model().lock_key()
    }

    /// The remote folder (relative to the prefix, with a trailing `/`, or empty solo) that a
    /// rebuild lists.
    #[wasm_bindgen(getter = listingPrefix)]
    pub fn listing_prefix(&self) -> String {
        self.inner.model().listing_prefix()
    }

    /// The local index to write after a pull (pretty JSON): the remote index with this cache's
    /// mtimes, with the base entries of files the pull left alone kept.
    #[wasm_bindgen(js_name = localIndexAfterPull)]
    pub fn local_index_after_pull(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.local_index_after_pull().map_err(to_js_error)
    }

    /// The local index to write after a push (pretty JSON): the published index, with the base
    /// entries of files that are behind the remote kept.
    #[wasm_bindgen(js_name = localIndexAfterPush)]
    pub fn local_index_after_push(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.local_index_after_push().map_err(to_js_error)
    }

    /// What a person must know about the last push plan: a mixed layout, files missing but
    /// not deleted, refused entries (the guards that withheld something are in the plan's
    /// `blocked`).
    #[wasm_bindgen(js_name = pushWarnings, unchecked_return_type = "Verdict[]")]
    pub fn push_warnings(&self) -> Result<JsValue, JsValue> {
        to_parsed_json(&self.inner.push_warnings().map_err(to_js_error)?)
    }

    /// What a person must know about the pull just applied: conflicts set aside, what needs a
    /// person, entries pruned.
    #[wasm_bindgen(js_name = pullWarnings, unchecked_return_type = "Verdict[]")]
    pub fn pull_warnings(&self) -> Result<JsValue, JsValue> {
        to_parsed_json(&self.inner.pull_warnings().map_err(to_js_error)?)
    }

    /// Entries in the loaded index.
    #[wasm_bindgen(getter = indexLength)]
    pub fn index_length(&self) -> Result<usize, JsValue> {
        self.inner.index_len().map_err(to_js_error)
    }

    /// The index as JSON bytes: pretty (local copy) or compact (remote copy).
    #[wasm_bindgen(js_name = indexJson)]
    pub fn index_json(&self, pretty: bool) -> Result<Vec<u8>, JsValue> {
        self.inner.index_json(pretty).map_err(to_js_error)
    }
}

/// The keys of the v2 index and of the control folder under the bound tree.
#[wasm_bindgen]
impl Planner {
    /// The key of `_index/_meta.json` under the bound tree.
    #[wasm_bindgen(getter = metaKey)]
    pub fn meta_key(&self) -> String {
        self.inner.model().meta_key()
    }

    /// The key of the shard `partition` under the bound tree; throws `partition-name-unsafe`
    /// for a name that is not one safe segment.
    #[wasm_bindgen(js_name = shardKey)]
    pub fn shard_key(&self, partition: &str) -> Result<String, JsValue> {
        self.inner.model().shard_key(partition).map_err(to_js_error)
    }

    /// The control-plane folder under the bound tree (`_control/` or `<ns>/_control/`).
    #[wasm_bindgen(getter = controlFolder)]
    pub fn control_folder(&self) -> String {
        self.inner.model().control_folder()
    }
}
