//! The WebAssembly surface: the only file with `#[wasm_bindgen]`.
//!
//! It converts and delegates, nothing more. Every export returns `Result`; a [`CoreError`]
//! becomes a JS `Error` whose `code` property is the stable code, at this one point
//! ([`to_js_error`]). Large inputs cross as byte buffers, plans leave as one JSON string.

use serde::Serialize;
use tsify_next::Tsify;
use wasm_bindgen::prelude::*;

use crate::codes::{EntryRefusal, GuardCode, ProblemCode};
use crate::error::{CoreError, PathRefusal};
use crate::model::paths::{
    find_collisions, is_internal, partition_key, Namespace, PathModel, INDEX_FILE,
};
use crate::runs::pull::plan::PullOutcome;
use crate::runs::push::plan::{PushInput, Uploaded};
use crate::runs::repair::plan::DoctorFacts;
use crate::runs::session::{BaseLoad, Session, ShardFormat};
use crate::safety::conflicts::{self, Keep, KeptAside};
use crate::safety::object_condition::{self, ExpectedVersion, ObjectFacts, OurBytes};
use crate::safety::{
    self, DeletePolicy, RunFacts, DEFAULT_MAX_DELETES, DEFAULT_MAX_DELETE_PERCENT,
};
use crate::state::lock;
use crate::state::sync_state::SyncState;
use crate::wire::listing::decode_local;

// The declarations `#[derive(Tsify)]` writes into `pkg/s3sync_core.d.ts` name the stable code
// types; the shim spells those once, in `js/core/codes.ts` (checked against `codeLists` by
// `tests/unit/codes_test.ts`), so the declarations import them from there.
#[wasm_bindgen(typescript_custom_section)]
const CODE_TYPES: &str = r#"import type { GuardCode, ProblemCode, RefusalCode, SyncErrorCode } from "../js/core/codes.ts";"#;

/// Turns a core error into a JS `Error` with a `code` property.
fn to_js_error(error: CoreError) -> JsValue {
    let js_error = js_sys::Error::new(&error.to_string());
    // Setting a property on a fresh Error object cannot fail; if it somehow did, the message
    // still carries the meaning.
    let _ = js_sys::Reflect::set(&js_error, &"code".into(), &error.code().into());
    js_error.into()
}

/// Serializes a small result into a plain JS object.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| to_js_error(CoreError::input(e.to_string())))
}

/// Serializes a large result (a plan) as one JSON string, which `JSON.parse` reads faster than
/// thousands of objects built one by one across the boundary.
fn to_json<T: Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| to_js_error(CoreError::input(e.to_string())))
}

fn options<T: Default + serde::de::DeserializeOwned>(value: JsValue) -> Result<T, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    from_js(value, "options")
}

/// A value from JS in the shape `T` declares; a wrong shape is `invalid-input` naming `what`.
fn from_js<T: serde::de::DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| to_js_error(CoreError::input(format!("{what}: {e}"))))
}

/// A planning session bound to a namespace and prefix (see `session.rs`).
#[wasm_bindgen]
pub struct Planner {
    inner: Session,
}

#[wasm_bindgen]
impl Planner {
    /// Creates a session; `namespace` empty or absent means solo mode.
    #[wasm_bindgen(constructor)]
    pub fn new(namespace: Option<String>, prefix: Option<String>) -> Result<Planner, JsValue> {
        let inner = Session::new(namespace.as_deref(), prefix.as_deref().unwrap_or(""))
            .map_err(to_js_error)?;
        Ok(Planner { inner })
    }

    /// Parses a v1 index from its raw bytes; returns `{entries, internalEntries}`. The bytes are
    /// taken as an owned copy so the core can free them before it builds the index map.
    #[wasm_bindgen(js_name = loadIndex, unchecked_return_type = "IndexLoaded")]
    pub fn load_index(&mut self, bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        to_js(&self.inner.load_index_owned(bytes).map_err(to_js_error)?)
    }

    /// Loads a v2 shard-first index: the meta bytes, and the shards as one `blob` cut by
    /// `lengths`, named by `partitions`. Returns the meta's `commitSeq`.
    #[wasm_bindgen(js_name = loadShards)]
    pub fn load_shards(
        &mut self,
        meta: &[u8],
        partitions: Vec<String>,
        blob: &[u8],
        lengths: Vec<u32>,
    ) -> Result<f64, JsValue> {
        let shards = cut_shards(partitions, blob, &lengths)?;
        Ok(self.inner.load_shards(meta, &shards).map_err(to_js_error)? as f64)
    }

    /// The v2 commit of this push: `{shards: [{partition, json}], meta}` (`json` null: delete
    /// that shard).
    #[wasm_bindgen(js_name = shardCommit)]
    pub fn shard_commit(&self) -> Result<String, JsValue> {
        let (shards, meta) = self.inner.shard_commit().map_err(to_js_error)?;
        /// One shard a v2 commit changes.
        #[derive(Serialize, Tsify)]
        #[tsify(missing_as_null, hashmap_as_object)]
        struct ShardChange {
            /// The shard's partition.
            partition: String,
            /// The shard's new JSON, or null: delete the shard.
            json: Option<String>,
        }
        /// The v2 commit of a push: the changed shards and the next meta.
        #[derive(Serialize, Tsify)]
        #[tsify(missing_as_null, hashmap_as_object)]
        struct ShardCommit {
            /// The changed shards.
            shards: Vec<ShardChange>,
            /// The next `_index/_meta.json`.
            meta: String,
        }
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap_or_default();
        to_json(&ShardCommit {
            shards: shards
                .into_iter()
                .map(|(partition, json)| ShardChange {
                    partition,
                    json: json.map(text),
                })
                .collect(),
            meta: text(meta),
        })
    }

    /// The loaded index cut into shards: `{shards: [{partition, json}], meta, unpartitioned}`.
    /// `commitSeq` absent: the v1 mirror kept beside the monolith; present: a v2 shard-first
    /// layout at that sequence (refused when a rel has no partition).
    /// With `onlyTouched`, only shards the recorded push changed.
    #[wasm_bindgen(js_name = shardLayout)]
    pub fn shard_layout(
        &self,
        commit_seq: Option<f64>,
        only_touched: bool,
    ) -> Result<String, JsValue> {
        let format = match commit_seq {
            None => ShardFormat::V1Mirror,
            Some(seq)
                if seq >= 0.0
                    && seq.fract() == 0.0
                    && seq <= crate::index::MAX_SAFE_INTEGER as f64 =>
            {
                ShardFormat::V2 {
                    commit_seq: seq as u64,
                }
            }
            Some(seq) => {
                return Err(to_js_error(CoreError::input(format!(
                    "commitSeq must be a non-negative integer, got {seq}"
                ))))
            }
        };
        let layout = self
            .inner
            .shard_layout(format, only_touched)
            .map_err(to_js_error)?;
        /// One shard of an index cut into shards.
        #[derive(Serialize, Tsify)]
        #[tsify(missing_as_null, hashmap_as_object)]
        struct ShardFile {
            /// The shard's partition.
            partition: String,
            /// The shard's compact JSON.
            json: String,
        }
        /// The loaded index cut into shards.
        #[derive(Serialize, Tsify)]
        #[tsify(missing_as_null, hashmap_as_object)]
        struct ShardLayout {
            /// The shards, by partition.
            shards: Vec<ShardFile>,
            /// The `_index/_meta.json` listing them.
            meta: String,
            /// Rels with no partition (kept in the monolith by a v1 mirror).
            unpartitioned: Vec<String>,
        }
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap_or_default();
        to_json(&ShardLayout {
            shards: layout
                .shards
                .into_iter()
                .map(|(partition, json)| ShardFile {
                    partition,
                    json: text(json),
                })
                .collect(),
            meta: text(layout.meta),
            unpartitioned: layout.unpartitioned,
        })
    }

    /// Re-applies this push's changes over a newer v2 shard set (after a lost race).
    #[wasm_bindgen(js_name = rebasePushShards)]
    pub fn rebase_push_shards(
        &mut self,
        meta: &[u8],
        partitions: Vec<String>,
        blob: &[u8],
        lengths: Vec<u32>,
    ) -> Result<(), JsValue> {
        let shards = cut_shards(partitions, blob, &lengths)?;
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

    /// Marks the loaded monolith as superseded by shards (so its rewrite changes its ETag).
    #[wasm_bindgen(js_name = markMovedToShards)]
    pub fn mark_moved_to_shards(&mut self, now_iso: String) -> Result<(), JsValue> {
        self.inner
            .mark_moved_to_shards(&now_iso)
            .map_err(to_js_error)
    }

    /// Starts from an empty index (the bucket has none yet).
    #[wasm_bindgen(js_name = loadEmptyIndex)]
    pub fn load_empty_index(&mut self) {
        self.inner.load_empty_index();
    }

    /// Adds the entries of `other` (raw index bytes) for `rels` that the loaded index lacks.
    #[wasm_bindgen(js_name = adoptEntries)]
    pub fn adopt_entries(&mut self, other: &[u8], rels: Vec<String>) -> Result<f64, JsValue> {
        Ok(self
            .inner
            .adopt_entries(other, &rels)
            .map_err(to_js_error)? as f64)
    }

    /// Migrate: indexes the verified, unindexed copies found in `listing` (a whole-bucket
    /// listing buffer), from `soloIndex` where it matches, else from the listing; returns how
    /// many entries were added.
    #[wasm_bindgen(js_name = indexMigratedCopies)]
    pub fn index_migrated_copies(
        &mut self,
        listing: &[u8],
        solo_index: Option<Vec<u8>>,
        now_iso: String,
    ) -> Result<f64, JsValue> {
        Ok(self
            .inner
            .index_migrated_copies(listing, solo_index.as_deref(), &now_iso)
            .map_err(to_js_error)? as f64)
    }

    /// Removes `rels` from the loaded index; returns how many were there.
    #[wasm_bindgen(js_name = removeEntries)]
    pub fn remove_entries(&mut self, rels: Vec<String>) -> Result<f64, JsValue> {
        Ok(self.inner.remove_entries(&rels).map_err(to_js_error)? as f64)
    }

    /// Starts an index rebuild from a listing.
    #[wasm_bindgen(js_name = beginRebuild)]
    pub fn begin_rebuild(&mut self, now_iso: String) {
        self.inner.begin_rebuild(&now_iso);
    }

    /// Adds one listing page (`key\0size\0etag\0lastModified\0` records); keys holding a NUL
    /// come separately in `unencodable` and are refused.
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

    /// Finishes the rebuild; returns its report.
    #[wasm_bindgen(js_name = finishRebuild, unchecked_return_type = "RebuildReport")]
    pub fn finish_rebuild(&mut self, last_pulled: Option<String>) -> Result<JsValue, JsValue> {
        to_js(
            &self
                .inner
                .finish_rebuild(last_pulled.as_deref())
                .map_err(to_js_error)?,
        )
    }

    /// Plans a pull against a local listing buffer (`encodeLocalListing`); returns the plan
    /// as JSON.
    #[wasm_bindgen(js_name = planPull)]
    pub fn plan_pull(&mut self, listing: &[u8], opts: JsValue) -> Result<String, JsValue> {
        let opts: PullOptions = options(opts)?;
        let opts = crate::runs::pull::plan::PullOptions {
            metadata_only: opts.metadata_only.unwrap_or(false),
            case_insensitive: opts.case_insensitive.unwrap_or(false),
            keep_existing: opts.keep_existing.unwrap_or(false),
            scope: opts.scope.unwrap_or_default(),
            tombstones: opts.tombstones.unwrap_or_default(),
        };
        to_json(self.inner.plan_pull(listing, &opts).map_err(to_js_error)?)
    }

    /// Records the outcome of the last pull plan: `downloaded` as a local listing buffer,
    /// `notFound` as rels.
    #[wasm_bindgen(js_name = applyPull, unchecked_return_type = "PullApplied")]
    pub fn apply_pull(
        &mut self,
        downloaded: &[u8],
        not_found: Vec<String>,
        aside_rels: Vec<String>,
        aside_copies: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let outcome = pull_outcome(downloaded, not_found, aside_rels, aside_copies)?;
        to_js(&self.inner.apply_pull(&outcome).map_err(to_js_error)?)
    }

    /// Plans a push against a local listing. `tombstones` are cache-relative (see
    /// `normalizeTombstone`); `hashPaths`/`hashValues` carry the SHA-256 of files an earlier call
    /// listed in `needsHash`. Returns the plan as JSON.
    #[wasm_bindgen(js_name = planPush)]
    pub fn plan_push(
        &mut self,
        listing: &[u8],
        tombstones: Vec<String>,
        hash_paths: Vec<String>,
        hash_values: Vec<String>,
        opts: JsValue,
    ) -> Result<String, JsValue> {
        if hash_paths.len() != hash_values.len() {
            return Err(to_js_error(CoreError::input(
                "hashPaths and hashValues differ in length",
            )));
        }
        let opts: PushOptions = options(opts)?;
        let input = PushInput {
            tombstones: tombstones.into_iter().collect(),
            hashes: hash_paths.into_iter().zip(hash_values).collect(),
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
        to_json(self.inner.plan_push(listing, &input).map_err(to_js_error)?)
    }

    /// Records the last push plan's uploads (`[{rel, size, mtimeMs, sha256}]`) and, when
    /// `deletesConfirmed`, its deletes in the index; returns true when the remote index must be
    /// written.
    #[wasm_bindgen(js_name = recordPush)]
    pub fn record_push(
        &mut self,
        uploaded: JsValue,
        now_iso: String,
        deletes_confirmed: bool,
    ) -> Result<bool, JsValue> {
        let uploaded: Vec<Uploaded> = from_js(uploaded, "uploaded")?;
        self.inner
            .record_push(&uploaded, &now_iso, deletes_confirmed)
            .map_err(to_js_error)
    }

    /// Re-applies this push's changes over a newer remote index (after a lost race).
    #[wasm_bindgen(js_name = rebasePush)]
    pub fn rebase_push(&mut self, newer: &[u8]) -> Result<(), JsValue> {
        self.inner.rebase_push(newer).map_err(to_js_error)
    }

    /// The rels of this push's deletes whose entries the current index no longer holds (after a
    /// rebase, a rel another writer re-uploaded is left out: its object must stay).
    #[wasm_bindgen(js_name = deletesStillApplying)]
    pub fn deletes_still_applying(&self) -> Result<Vec<String>, JsValue> {
        self.inner.deletes_still_applying().map_err(to_js_error)
    }

    /// A `markDirty` path as a cache-relative tombstone inside the bound tree, or `undefined`
    /// when it cannot be evidence (outside the tree, internal, unsafe).
    #[wasm_bindgen(js_name = normalizeTombstone)]
    pub fn normalize_tombstone(&self, path: &str) -> Option<String> {
        safety::normalize_tombstone(self.inner.model(), path)
    }

    /// Diagnoses the cache in `listing` against the loaded index (if any), given the raw
    /// sync-state sidecar (or its absence) and the folders the walk found to be symlinks;
    /// returns `[{code, message}]`.
    #[wasm_bindgen(unchecked_return_type = "Problem[]")]
    pub fn diagnose(
        &self,
        listing: &[u8],
        sidecar: Option<Vec<u8>>,
        symlinked_folders: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let facts = DoctorFacts {
            symlinked_folders,
            ..DoctorFacts::from_sidecar(sidecar.as_deref())
        };
        to_js(&self.inner.diagnose(listing, facts).map_err(to_js_error)?)
    }

    /// Plans a layout repair; returns the plan as JSON.
    #[wasm_bindgen(js_name = planRepair)]
    pub fn plan_repair(
        &self,
        listing: &[u8],
        hash_paths: Vec<String>,
        hash_values: Vec<String>,
    ) -> Result<String, JsValue> {
        if hash_paths.len() != hash_values.len() {
            return Err(to_js_error(CoreError::input(
                "hashPaths and hashValues differ in length",
            )));
        }
        let hashes = hash_paths.into_iter().zip(hash_values).collect();
        to_json(
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
        hash_paths: Vec<String>,
        hash_values: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let files = crate::wire::listing::decode_local(listing).map_err(to_js_error)?;
        let hashes = hash_paths.into_iter().zip(hash_values).collect();
        let (needs_hash, redundant) =
            crate::runs::repair::plan::plan_backup_dedupe(self.inner.model(), &files, &hashes);
        /// Backups proven byte-identical to the namespace copy.
        #[derive(Serialize, Tsify)]
        #[serde(rename_all = "camelCase")]
        #[tsify(missing_as_null, hashmap_as_object)]
        struct BackupDedupe {
            /// When non-empty, hash these cache paths and plan again.
            needs_hash: Vec<String>,
            /// Backups that may be removed, with the copy that stays.
            redundant: Vec<crate::runs::repair::plan::Redundant>,
        }
        to_js(&BackupDedupe {
            needs_hash,
            redundant,
        })
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

    /// Sets the index's `lastPulled`.
    #[wasm_bindgen(js_name = setLastPulled)]
    pub fn set_last_pulled(&mut self, when_iso: String) -> Result<(), JsValue> {
        self.inner.set_last_pulled(&when_iso).map_err(to_js_error)
    }

    /// The remote key of this session's monolithic index (relative to the prefix).
    #[wasm_bindgen(js_name = remoteIndexKey)]
    pub fn remote_index_key(&self) -> String {
        self.inner.model().under_binding(INDEX_FILE)
    }

    /// The key of the global lock swamp core takes for this layout (relative to the prefix).
    #[wasm_bindgen(js_name = lockKey)]
    pub fn lock_key(&self) -> String {
        self.inner.model().lock_key()
    }

    /// The remote folder (relative to the prefix, with a trailing `/`, or empty solo) that a
    /// rebuild lists.
    #[wasm_bindgen(js_name = listingPrefix)]
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

    /// What a person must know about the last push plan, as JSON `Verdict[]`: a mixed layout,
    /// files missing but not deleted, refused entries (the guards that withheld something are
    /// in the plan's `blocked`).
    #[wasm_bindgen(js_name = pushWarnings)]
    pub fn push_warnings(&self) -> Result<String, JsValue> {
        to_json(&self.inner.push_warnings().map_err(to_js_error)?)
    }

    /// What a person must know about the pull just applied, as JSON `Verdict[]`: conflicts set
    /// aside, what needs a person, entries pruned.
    #[wasm_bindgen(js_name = pullWarnings)]
    pub fn pull_warnings(&self) -> Result<String, JsValue> {
        to_json(&self.inner.pull_warnings().map_err(to_js_error)?)
    }

    /// Entries in the loaded index.
    #[wasm_bindgen(js_name = indexLength)]
    pub fn index_length(&self) -> Result<usize, JsValue> {
        self.inner.index_len().map_err(to_js_error)
    }

    /// The index as JSON bytes: pretty (local copy) or compact (remote copy).
    #[wasm_bindgen(js_name = indexJson)]
    pub fn index_json(&self, pretty: bool) -> Result<Vec<u8>, JsValue> {
        self.inner.index_json(pretty).map_err(to_js_error)
    }
}

/// The sidecar with the tombstone journal folded in (see [`crate::state::sync_state::fold_journal`]);
/// undefined when there was no sidecar and no line of the journal counts.
#[wasm_bindgen(js_name = sidecarFoldJournal)]
pub fn sidecar_fold_journal(sidecar: Option<Vec<u8>>, journal: Vec<u8>) -> Option<Vec<u8>> {
    crate::state::sync_state::fold_journal(sidecar.as_deref(), &journal)
}

/// Records `markDirty` calls into the sidecar, reusing the state behind the bytes it wrote last
/// (see [`crate::state::sync_state::DirtyRecorder`]); one per service, so a run of calls parses once.
#[wasm_bindgen]
pub struct DirtyRecorder {
    inner: crate::state::sync_state::DirtyRecorder,
}

#[wasm_bindgen]
impl DirtyRecorder {
    /// An empty recorder.
    #[wasm_bindgen(constructor)]
    pub fn new() -> DirtyRecorder {
        DirtyRecorder {
            inner: crate::state::sync_state::DirtyRecorder::new(),
        }
    }

    /// The sidecar (its current bytes, undefined when absent) after a `markDirty` of
    /// `tombstone` (already normalised; undefined asks for a walk of everything).
    pub fn record(
        &mut self,
        sidecar: Option<js_sys::Uint8Array>,
        tombstone: Option<String>,
    ) -> js_sys::Uint8Array {
        // Copied across once each way: the recorder keeps its own bytes to compare the next
        // call's with, so neither side needs an owned copy of the other's.
        let current = sidecar.map(|bytes| bytes.to_vec());
        js_sys::Uint8Array::from(self.inner.record(current.as_deref(), tombstone.as_deref()))
    }

    /// True when the sidecar last returned asks the extension to walk everything, so later
    /// tombstones may go to the journal (see [`crate::state::sync_state::SyncState::asks_walk_of_everything`]).
    #[wasm_bindgen(getter, js_name = walksEverything)]
    pub fn walks_everything(&self) -> bool {
        self.inner.walks_everything()
    }
}

impl Default for DirtyRecorder {
    fn default() -> Self {
        DirtyRecorder::new()
    }
}

/// The journal line `markDirty` appends for `tombstone` (already normalised).
#[wasm_bindgen(js_name = journalLine)]
pub fn journal_line(tombstone: &str) -> Vec<u8> {
    crate::state::sync_state::journal_line(tombstone)
}

/// The hash of the last catalog export recorded in a sidecar, if any.
#[wasm_bindgen(js_name = sidecarCatalogHash)]
pub fn sidecar_catalog_hash(sidecar: Option<Vec<u8>>) -> Option<String> {
    sidecar
        .as_deref()
        .and_then(SyncState::parse)
        .and_then(|state| state.last_catalog_hash)
}

/// The sidecar with `hash` recorded as the last catalog export's (everything else kept).
#[wasm_bindgen(js_name = sidecarWithCatalogHash)]
pub fn sidecar_with_catalog_hash(sidecar: Option<Vec<u8>>, hash: String) -> Vec<u8> {
    let mut state = SyncState::for_update(sidecar.as_deref());
    state.last_catalog_hash = Some(hash);
    state.to_json()
}

/// Every stable code the core uses, by kind: `{guard, problem, refusal, error}` (sorted). The
/// shim's own lists are checked against these, so the two sides cannot drift.
#[wasm_bindgen(js_name = codeLists, unchecked_return_type = "CodeLists")]
pub fn code_lists() -> Result<JsValue, JsValue> {
    /// Every stable code the core uses, by kind (sorted).
    #[derive(Serialize, Tsify)]
    #[tsify(missing_as_null, hashmap_as_object)]
    struct CodeLists {
        /// Guard (verdict) codes.
        guard: Vec<&'static str>,
        /// Doctor problem codes.
        problem: Vec<&'static str>,
        /// Refusal codes (path rules and entry-level reasons).
        refusal: Vec<&'static str>,
        /// Core error codes.
        error: Vec<&'static str>,
    }
    let sorted = |mut list: Vec<&'static str>| {
        list.sort_unstable();
        list
    };
    to_js(&CodeLists {
        guard: sorted(GuardCode::ALL.iter().map(|c| c.as_str()).collect()),
        problem: sorted(ProblemCode::ALL.iter().map(|c| c.as_str()).collect()),
        refusal: sorted(
            PathRefusal::ALL
                .iter()
                .map(|r| r.code())
                .chain(EntryRefusal::ALL.iter().map(|r| r.as_str()))
                .collect(),
        ),
        error: sorted(
            CoreError::CODES
                .iter()
                .copied()
                .chain(PathRefusal::ALL.iter().map(|r| r.code()))
                .collect(),
        ),
    })
}

/// Plans the remote side of a solo → namespaced migrate from one listing of the whole bucket
/// (`key\0size\0etag\0lastModified\0` records), the solo index and the namespace's index (raw
/// bytes, when they exist); returns the plan as JSON. An index that does not parse is
/// `index-corrupt`, never read as empty.
#[wasm_bindgen(js_name = planMigrate)]
pub fn plan_migrate(
    namespace: String,
    prefix: Option<String>,
    listing: &[u8],
    solo_index: Option<Vec<u8>>,
    ns_index: Option<Vec<u8>>,
    now_iso: String,
) -> Result<String, JsValue> {
    let model =
        PathModel::new(Some(&namespace), prefix.as_deref().unwrap_or("")).map_err(to_js_error)?;
    if model.namespace().is_none() {
        return Err(to_js_error(CoreError::input("migrate needs a namespace")));
    }
    let listed = crate::wire::listing::decode_remote(listing).map_err(to_js_error)?;
    let parse = |bytes: Option<Vec<u8>>| {
        bytes
            .as_deref()
            .map(crate::index::Index::parse)
            .transpose()
            .map_err(to_js_error)
    };
    let solo = parse(solo_index)?;
    let ns = parse(ns_index)?;
    to_json(&crate::runs::migrate::plan::plan_migrate(
        &model,
        crate::runs::migrate::plan::MigrateInputs {
            listing: &listed,
            solo_index: solo.as_ref(),
            ns_index: ns.as_ref(),
            now_iso: &now_iso,
        },
    ))
}

/// True when the sidecar records a pending lazy (metadata-only) hydration.
#[wasm_bindgen(js_name = sidecarLazyPullActive)]
pub fn sidecar_lazy_pull_active(sidecar: Option<Vec<u8>>) -> bool {
    sidecar
        .as_deref()
        .and_then(SyncState::parse)
        .is_some_and(|s| s.lazy_pull_active)
}

/// True when a sidecar file exists but cannot be read (not JSON, wrong shape, unknown version):
/// the push then withholds deletes (`sidecar-unreadable`) rather than read it as absent.
#[wasm_bindgen(js_name = sidecarUnreadable)]
pub fn sidecar_unreadable(sidecar: Option<Vec<u8>>) -> bool {
    sidecar
        .as_deref()
        .is_some_and(|bytes| SyncState::parse(bytes).is_none())
}

/// Cuts one buffer into named shards.
fn cut_shards(
    partitions: Vec<String>,
    blob: &[u8],
    lengths: &[u32],
) -> Result<Vec<(String, Vec<u8>)>, JsValue> {
    if partitions.len() != lengths.len() {
        return Err(to_js_error(CoreError::input(
            "partitions and lengths differ in length",
        )));
    }
    let mut at = 0usize;
    let mut out = Vec::with_capacity(partitions.len());
    for (partition, length) in partitions.into_iter().zip(lengths) {
        let end = at
            .checked_add(*length as usize)
            .filter(|end| *end <= blob.len())
            .ok_or_else(|| to_js_error(CoreError::input("shard lengths overrun the buffer")))?;
        out.push((partition, blob[at..end].to_vec()));
        at = end;
    }
    Ok(out)
}

/// Epoch milliseconds from JS (a number) as an integer; NaN and infinities are refused.
fn millis(value: f64, what: &str) -> Result<i64, JsValue> {
    if value.is_finite() && value.abs() < 9.0e15 {
        Ok(value.trunc() as i64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what} is not a time in epoch milliseconds"
        ))))
    }
}

/// A duration in ms from JS as an integer.
/// A count from JS (a whole number of things, not negative).
fn count(value: f64, what: &str) -> Result<u64, JsValue> {
    if value.is_finite() && (0.0..9.0e15).contains(&value) && value.fract() == 0.0 {
        Ok(value as u64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what}: {value} is not a count"
        ))))
    }
}

fn duration(value: f64, what: &str) -> Result<u64, JsValue> {
    if value.is_finite() && (0.0..9.0e15).contains(&value) {
        Ok(value.trunc() as u64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what} is not a duration in milliseconds"
        ))))
    }
}

/// Whether a lock object's body reads as a lock (`false`: only `lock release --force unreadable`
/// removes it, since no nonce can be named).
#[wasm_bindgen(js_name = lockReadable)]
pub fn lock_readable(body: &[u8]) -> bool {
    lock::LockBody::parse(body).is_some()
}

/// Classifies the lock object (see `lock::assess`): `{state: "free" | "ours" | "held" | "stale",
/// ...}`.
#[wasm_bindgen(js_name = lockAssess, unchecked_return_type = "LockState")]
pub fn lock_assess(
    body: Option<Vec<u8>>,
    last_modified_ms: Option<f64>,
    our_nonce: &str,
    now_ms: f64,
) -> Result<JsValue, JsValue> {
    let last = last_modified_ms
        .map(|m| millis(m, "lastModified"))
        .transpose()?;
    to_js(&lock::assess(
        body.as_deref(),
        last,
        our_nonce,
        millis(now_ms, "now")?,
    ))
}

/// The namespace a run given none acts on, from the cache's top level (`[{name, marker}]`):
/// null for solo, the one namespace a service's cache proves, or a `namespace-required` error
/// (see `binding::bind_unnamed`).
#[wasm_bindgen(js_name = bindUnnamed)]
pub fn bind_unnamed(entries: JsValue, caller: JsValue) -> Result<Option<String>, JsValue> {
    let entries: Vec<crate::model::binding::TopLevelEntry> = from_js(entries, "entries")?;
    let caller: crate::model::binding::UnnamedCaller = from_js(caller, "caller")?;
    crate::model::binding::bind_unnamed(&entries, caller).map_err(to_js_error)
}

/// Judges a replacement by `ours` (`{sha256, size}`; `undefined`: a delete) of an object
/// expected to hold `expected`, from a HEAD's answer (see `object_condition::judge_existing`):
/// `{verdict: "proceed", ifMatch}`, `"create"`, `"conflict"`, `"settled"` or `"readContent"`.
#[wasm_bindgen(js_name = judgeExisting, unchecked_return_type = "ObjectVerdict")]
pub fn judge_existing(expected: JsValue, ours: JsValue, head: JsValue) -> Result<JsValue, JsValue> {
    let expected: ExpectedVersion = from_js(expected, "expected")?;
    let ours: Option<OurBytes> = if ours.is_undefined() || ours.is_null() {
        None
    } else {
        Some(from_js(ours, "ours")?)
    };
    let head: ObjectFacts = from_js(head, "head")?;
    to_js(&object_condition::judge_existing(
        &expected,
        ours.as_ref(),
        &head,
    ))
}

/// Judges a write whose precondition failed, from a HEAD taken right after (see
/// `object_condition::judge_lost_condition`): settled over our own bytes, else a conflict.
#[wasm_bindgen(js_name = judgeLostCondition, unchecked_return_type = "ObjectVerdict")]
pub fn judge_lost_condition(
    ours_sha256: &str,
    ours_size: f64,
    head: JsValue,
) -> Result<JsValue, JsValue> {
    let head: ObjectFacts = from_js(head, "head")?;
    let size = count(ours_size, "size")?;
    to_js(&object_condition::judge_lost_condition(
        ours_sha256,
        size,
        &head,
    ))
}

/// Whether to keep waiting for a held lock: `{action: "retry", delayMs}` or `{action: "giveUp"}`.
#[wasm_bindgen(js_name = lockWaitDecision, unchecked_return_type = "WaitDecision")]
pub fn lock_wait_decision(
    started_ms: f64,
    now_ms: f64,
    max_wait_ms: f64,
    retry_ms: f64,
) -> Result<JsValue, JsValue> {
    to_js(&lock::wait_decision(
        millis(started_ms, "started")?,
        millis(now_ms, "now")?,
        duration(max_wait_ms, "maxWaitMs")?,
        duration(retry_ms, "retryMs")?,
    ))
}

/// How often a holder refreshes a lease of `ttl_ms`.
#[wasm_bindgen(js_name = lockHeartbeatMs)]
pub fn lock_heartbeat_ms(ttl_ms: f64) -> Result<f64, JsValue> {
    Ok(lock::heartbeat_interval_ms(duration(ttl_ms, "ttlMs")?) as f64)
}

/// The lock body the extension writes, as pretty JSON bytes.
#[wasm_bindgen(js_name = lockBody)]
pub fn lock_body(
    holder: String,
    hostname: String,
    pid: f64,
    acquired_at_iso: String,
    ttl_ms: f64,
    nonce: String,
) -> Result<Vec<u8>, JsValue> {
    Ok(lock::LockBody {
        holder,
        hostname,
        pid: duration(pid, "pid")?,
        acquired_at: acquired_at_iso,
        ttl_ms: lock::check_ttl(duration(ttl_ms, "ttlMs")?).map_err(to_js_error)?,
        nonce,
    }
    .to_json())
}

/// Options of a push plan: the user's delete policy and the run's facts (flat for JS).
#[derive(Default, serde::Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
// Every field is an Option: JS callers pass `{flag: undefined}`, which serde-wasm-bindgen reads
// as a present unit value, not as a missing field.
struct PushOptions {
    /// Delete entries absent locally even without a tombstone (still through every guard).
    delete_missing: Option<bool>,
    /// Cap on deletes (default 500).
    max_deletes: Option<u64>,
    /// Cap on deletes as a percentage of the index, above 10 deletes (default 25).
    max_delete_percent: Option<f64>,
    /// Let the catalog export shrink.
    allow_catalog_shrink: Option<bool>,
    /// Errors met walking the cache.
    walk_errors: Option<u64>,
    /// Errors met listing the bucket.
    listing_errors: Option<u64>,
    /// A metadata-only pull left files remote.
    lazy_pull_active: Option<bool>,
    /// The sidecar exists but cannot be read (deletes are then withheld).
    sidecar_unreadable: Option<bool>,
    /// Folders of the cache that are symlinks, never walked (deletes are then withheld).
    symlinked_folders: Option<u64>,
}

/// Options of a pull plan, flat for JS (see `PushOptions` on why every field is optional).
#[derive(Default, serde::Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
struct PullOptions {
    /// Lazy hydration: skip the bytes of `raw` files of the data trees, create their folders.
    // (No `**/` here: this comment becomes a TypeScript doc comment, which `*/` would close.)
    metadata_only: Option<bool>,
    /// The cache is on a case-insensitive file system.
    case_insensitive: Option<bool>,
    /// Download only absent files; keep local files that differ.
    keep_existing: Option<bool>,
    /// Scoped pull: only rels under these folders (empty: everything).
    scope: Option<Vec<String>>,
    /// Normalised tombstones: files deleted here and not yet pushed are not brought back.
    tombstones: Option<Vec<String>>,
}

/// The three names of a rel: `{rel, indexKey, remoteKey, cachePath}`.
#[wasm_bindgen(js_name = mapRel, unchecked_return_type = "FileNames")]
pub fn map_rel(
    namespace: Option<String>,
    prefix: Option<String>,
    rel: &str,
) -> Result<JsValue, JsValue> {
    let model = PathModel::new(namespace.as_deref(), prefix.as_deref().unwrap_or(""))
        .map_err(to_js_error)?;
    let rel = model.rel(rel).map_err(to_js_error)?;
    names_of(&model, &rel)
}

/// The three names of a file a caller (swamp core) names by its cache path (`<ns>/<rel>`) or
/// its bare rel: `{rel, indexKey, remoteKey, cachePath}`.
#[wasm_bindgen(js_name = mapCallerPath, unchecked_return_type = "FileNames")]
pub fn map_caller_path(
    namespace: Option<String>,
    prefix: Option<String>,
    path: &str,
) -> Result<JsValue, JsValue> {
    let model = PathModel::new(namespace.as_deref(), prefix.as_deref().unwrap_or(""))
        .map_err(to_js_error)?;
    let rel = model.rel_from_caller_path(path).map_err(to_js_error)?;
    names_of(&model, &rel)
}

fn names_of(model: &PathModel, rel: &crate::model::paths::RelPath) -> Result<JsValue, JsValue> {
    /// The three names of one datastore file.
    #[derive(Serialize, Tsify)]
    #[serde(rename_all = "camelCase")]
    #[tsify(missing_as_null, hashmap_as_object)]
    struct FileNames<'a> {
        /// Relative path, the index key.
        rel: &'a str,
        /// Index key (always the bare rel).
        index_key: &'a str,
        /// Remote key, relative to the bucket prefix.
        remote_key: String,
        /// Path relative to the cache folder.
        cache_path: String,
    }
    to_js(&FileNames {
        rel: rel.as_str(),
        index_key: model.index_key(rel),
        remote_key: model.remote_key(rel),
        cache_path: model.cache_path(rel),
    })
}

/// The folders a scoped sync of `models` (`[{modelType, modelId}]`) covers.
#[wasm_bindgen(js_name = scopeForModels)]
pub fn scope_for_models(models: JsValue) -> Result<Vec<String>, JsValue> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Model {
        model_type: String,
        model_id: String,
    }
    let models: Vec<Model> = from_js(models, "models")?;
    Ok(crate::model::paths::model_scope(
        models
            .iter()
            .map(|m| (m.model_type.as_str(), m.model_id.as_str())),
    ))
}

/// The rel of a remote key (relative to the prefix); throws `key-outside-namespace` or a path
/// code.
#[wasm_bindgen(js_name = relFromRemoteKey)]
pub fn rel_from_remote_key(namespace: Option<String>, key: &str) -> Result<String, JsValue> {
    let model = PathModel::new(namespace.as_deref(), "").map_err(to_js_error)?;
    Ok(model
        .rel_from_remote_key(key)
        .map_err(to_js_error)?
        .into_string())
}

/// Classifies a cache-relative path: `{place, rel?, detail?}` with `place` one of `payload`,
/// `internal`, `root-layout`, `foreign-namespace`, `other`, `unsafe`.
#[wasm_bindgen(js_name = classifyCachePath, unchecked_return_type = "CachePlace")]
pub fn classify_cache_path(
    namespace: Option<String>,
    path: &str,
    foreign: Vec<String>,
) -> Result<JsValue, JsValue> {
    let model = PathModel::new(namespace.as_deref(), "").map_err(to_js_error)?;
    let foreign = foreign.into_iter().collect();
    use crate::model::paths::CachePlace as Found;
    /// Which part of the layout a path belongs to.
    #[derive(Serialize, Tsify)]
    #[serde(rename_all = "kebab-case")]
    #[tsify(missing_as_null, hashmap_as_object)]
    enum Place {
        /// A file of the bound tree.
        Payload,
        /// Bookkeeping that never syncs.
        Internal,
        /// A data tree at the cache root in namespaced mode.
        RootLayout,
        /// A folder of another namespace.
        ForeignNamespace,
        /// Anything else.
        Other,
        /// A path that breaks the path rules.
        Unsafe,
    }
    /// Where a cache-relative path sits relative to the bound layout.
    #[derive(Serialize, Tsify)]
    #[tsify(missing_as_null, hashmap_as_object)]
    struct CachePlace {
        /// The part of the layout.
        place: Place,
        /// The rel, for payload, internal and root-layout paths.
        #[serde(skip_serializing_if = "Option::is_none")]
        rel: Option<String>,
        /// The foreign namespace, or the refusal code of an unsafe path.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    }
    let at = |place, rel, detail| CachePlace { place, rel, detail };
    let place = match model.classify_cache_path(path, &foreign) {
        Found::Payload(rel) => at(Place::Payload, Some(rel.into_string()), None),
        Found::Internal(rel) => at(Place::Internal, Some(rel), None),
        Found::RootLayout(rel) => at(Place::RootLayout, Some(rel.into_string()), None),
        Found::ForeignNamespace(ns) => at(Place::ForeignNamespace, None, Some(ns)),
        Found::Other => at(Place::Other, None, None),
        Found::Unsafe(reason) => at(Place::Unsafe, None, Some(reason.code().to_string())),
    };
    to_js(&place)
}

/// Scans a listing of the whole bucket (the `encodeRemotePage` buffer) for objects of other
/// namespaces under `namespace`, with a verdict per object (only `redundant` ones may go).
#[wasm_bindgen(js_name = findContamination, unchecked_return_type = "ContaminationReport")]
pub fn find_contamination_js(namespace: &str, listing: &[u8]) -> Result<JsValue, JsValue> {
    let own = Namespace::parse(namespace).map_err(to_js_error)?;
    let objects = crate::wire::listing::decode_remote(listing)
        .and_then(|records| {
            records
                .iter()
                .map(|r| r.checked())
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(to_js_error)?;
    to_js(&crate::runs::contamination::plan::find_contamination(
        &own, &objects,
    ))
}

/// True when uploading a catalog export of `localSize` bytes over a remote one of
/// `remoteSize` bytes looks like a truncation (the `catalog-shrink` guard).
#[wasm_bindgen(js_name = catalogShrinks)]
pub fn catalog_shrinks_js(local_size: f64, remote_size: f64) -> bool {
    // Sizes arrive as JS numbers; anything negative or fractional is clamped, never trusted up.
    let bytes = |n: f64| {
        if n.is_finite() && n > 0.0 {
            n as u64
        } else {
            0
        }
    };
    crate::safety::catalog_shrinks(bytes(local_size), bytes(remote_size))
}

/// True when a rel (namespace stripped) is an internal file that never syncs.
#[wasm_bindgen(js_name = isInternal)]
pub fn is_internal_rel(rel: &str) -> bool {
    is_internal(rel)
}

/// The v2 shard partition of a rel, or `undefined`.
#[wasm_bindgen(js_name = partitionKey)]
pub fn partition_key_of(rel: &str) -> Option<String> {
    partition_key(rel)
}

/// Groups of paths that cannot coexist in one cache: `[{kind, paths}]`.
#[wasm_bindgen(js_name = findCollisions, unchecked_return_type = "Collision[]")]
pub fn find_collisions_of(paths: Vec<String>) -> Result<JsValue, JsValue> {
    to_js(&find_collisions(paths.iter().map(String::as_str)))
}

/// What `_index/_meta.json` says about the layout: `undefined` when it does not say version 2
/// (the monolith is the index), else `{partitions, commitSeq}`. With `refuseUnsafe`, a meta
/// listing a partition that is not a safe single segment throws `partition-name-unsafe`, so
/// the shim reads no shard of it; without, it is returned as listed (a rebuild replacing it
/// needs only its `commitSeq`).
#[wasm_bindgen(js_name = shardMeta, unchecked_return_type = "ShardMeta | undefined")]
pub fn shard_meta(bytes: &[u8], refuse_unsafe: bool) -> Result<JsValue, JsValue> {
    let Some(meta) = crate::index::ShardMeta::shard_first(bytes).map_err(to_js_error)? else {
        return Ok(JsValue::UNDEFINED);
    };
    if refuse_unsafe {
        meta.check_partitions().map_err(to_js_error)?;
    }
    /// What a v2 `_index/_meta.json` lists.
    #[derive(Serialize, Tsify)]
    #[serde(rename_all = "camelCase")]
    #[tsify(missing_as_null, hashmap_as_object)]
    struct ShardMeta {
        /// The partitions (shards) it lists.
        partitions: Vec<String>,
        /// Its commit sequence.
        commit_seq: u64,
    }
    to_js(&ShardMeta {
        partitions: meta.partitions,
        commit_seq: meta.commit_seq.unwrap_or(0),
    })
}

/// The keys of the v2 index and of the control folder under the bound tree.
#[wasm_bindgen]
impl Planner {
    /// The key of `_index/_meta.json` under the bound tree.
    #[wasm_bindgen(js_name = metaKey)]
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
    #[wasm_bindgen(js_name = controlFolder)]
    pub fn control_folder(&self) -> String {
        self.inner.model().control_folder()
    }
}

/// The names of the bookkeeping files at the cache root and of the solo lock key:
/// `{localIndex, sidecar, journal, journalTaken, soloLockKey}`, so the shim copies none of them.
#[wasm_bindgen(js_name = bookkeepingNames)]
pub fn bookkeeping_names() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Names {
        local_index: &'static str,
        sidecar: &'static str,
        journal: &'static str,
        journal_taken: &'static str,
        solo_lock_key: &'static str,
    }
    to_js(&Names {
        local_index: INDEX_FILE,
        sidecar: crate::model::paths::SYNC_STATE_FILE,
        journal: crate::model::paths::TOMBSTONE_JOURNAL_FILE,
        journal_taken: crate::model::paths::TOMBSTONE_JOURNAL_TAKEN,
        solo_lock_key: crate::model::paths::SOLO_LOCK_KEY,
    })
}

/// Whether a temporary file of ours last written at `mtimeMs` (undefined: unknown) is left
/// over from a dead run at `nowMs` (see `paths::is_stale_temp`).
#[wasm_bindgen(js_name = isStaleTemp)]
pub fn is_stale_temp(mtime_ms: Option<f64>, now_ms: f64) -> Result<bool, JsValue> {
    let mtime = mtime_ms.map(|m| millis(m, "mtimeMs")).transpose()?;
    Ok(crate::model::paths::is_stale_temp(
        mtime,
        millis(now_ms, "nowMs")?,
    ))
}

/// The lock's defaults, `{ttlMs, retryMs, maxWaitMs}` (the extension's), so the shim copies
/// none of them.
#[wasm_bindgen(js_name = lockDefaults)]
pub fn lock_defaults() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Defaults {
        ttl_ms: u64,
        retry_ms: u64,
        max_wait_ms: u64,
    }
    to_js(&Defaults {
        ttl_ms: lock::DEFAULT_TTL_MS,
        retry_ms: lock::DEFAULT_RETRY_MS,
        max_wait_ms: lock::DEFAULT_MAX_WAIT_MS,
    })
}

/// True when `missingInARow` confirmed-missing objects stop a pull: past `limit` (the core's
/// default when undefined; 0 never stops).
#[wasm_bindgen(js_name = missingBreakerOpen)]
pub fn missing_breaker_open(missing_in_a_row: f64, limit: Option<f64>) -> Result<bool, JsValue> {
    let missing_in_a_row = count(missing_in_a_row, "missingInARow")?;
    let limit = limit.map(|l| count(l, "limit")).transpose()?;
    Ok(crate::runs::pull::run::missing_breaker_open(
        missing_in_a_row,
        limit,
    ))
}

/// A rebuild of the remote index from a listing as a state machine (see
/// `runs/rebuild/machine.rs`): a sync's rebuild of a missing index, or `rebuild-index`'s.
#[wasm_bindgen]
pub struct RebuildRun {
    inner: crate::runs::rebuild::machine::RebuildRun,
}

#[wasm_bindgen]
impl RebuildRun {
    /// A run for `request` (`{mode: "missing", publish, prefix}` or `{mode: "asked", apply,
    /// force, v2Existing, prefix}`); `nowIso` dates objects listed without a date.
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue, now_iso: String) -> Result<RebuildRun, JsValue> {
        let request: crate::runs::rebuild::machine::RebuildRequest =
            from_js(request, "rebuild request")?;
        iso_time(&now_iso, "nowIso")?;
        Ok(RebuildRun {
            inner: crate::runs::rebuild::machine::RebuildRun::new(request, &now_iso),
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "RebuildAction")]
    pub fn poll(&mut self, planner: &mut Planner) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll(&mut planner.inner).map_err(to_js_error)?)
    }

    /// The index object as read (absent: undefined), with its ETag.
    #[wasm_bindgen(js_name = onExisting)]
    pub fn on_existing(
        &mut self,
        bytes: Option<Vec<u8>>,
        etag: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_existing(bytes.as_deref(), etag)
            .map_err(to_js_error)
    }

    /// One listing page (`key\0size\0etag\0lastModified\0` records); keys holding a NUL come
    /// separately in `unencodable` and are refused.
    #[wasm_bindgen(js_name = onPage)]
    pub fn on_page(
        &mut self,
        planner: &mut Planner,
        page: &[u8],
        unencodable: Vec<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_page(&mut planner.inner, page, &unencodable)
            .map_err(to_js_error)
    }

    /// The listing is complete: the rebuilt index becomes the planner's.
    #[wasm_bindgen(js_name = onListed)]
    pub fn on_listed(&mut self, planner: &mut Planner) -> Result<(), JsValue> {
        self.inner
            .on_listed(&mut planner.inner)
            .map_err(to_js_error)
    }

    /// The first segments of one page of the bucket's top level.
    #[wasm_bindgen(js_name = onTopFolders)]
    pub fn on_top_folders(
        &mut self,
        planner: &Planner,
        folders: Vec<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_top_folders(&planner.inner, &folders)
            .map_err(to_js_error)
    }

    /// The publish: whether it landed (false: another writer's index got there first), and
    /// its new ETag.
    #[wasm_bindgen(js_name = onPublished)]
    pub fn on_published(&mut self, published: bool, etag: Option<String>) -> Result<(), JsValue> {
        self.inner
            .on_published(published, etag)
            .map_err(to_js_error)
    }

    /// Another writer's index, read at the key the publish lost on.
    #[wasm_bindgen(js_name = onPeerIndex)]
    pub fn on_peer_index(
        &mut self,
        planner: &mut Planner,
        bytes: &[u8],
        etag: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_peer_index(&mut planner.inner, bytes, etag)
            .map_err(to_js_error)
    }

    /// What became of the rebuild (an error before the run is done).
    #[wasm_bindgen(unchecked_return_type = "RebuildResult")]
    pub fn outcome(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.outcome().map_err(to_js_error)?)
    }
}

/// Repairing namespace contamination as a state machine (see `runs/contamination/machine.rs`):
/// `poll` says what to do next, the `on*` methods take back what happened.
#[wasm_bindgen]
pub struct ContaminationRun {
    inner: crate::runs::contamination::machine::ContaminationRun,
}

#[wasm_bindgen]
impl ContaminationRun {
    /// A run for the bound `namespace` (`prefix` only for the key length limit); a dry run
    /// only reports.
    #[wasm_bindgen(constructor)]
    pub fn new(
        namespace: String,
        prefix: Option<String>,
        dry_run: bool,
    ) -> Result<ContaminationRun, JsValue> {
        Ok(ContaminationRun {
            inner: crate::runs::contamination::machine::ContaminationRun::new(
                &namespace,
                prefix.as_deref().unwrap_or(""),
                dry_run,
            )
            .map_err(to_js_error)?,
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "ContaminationAction")]
    pub fn poll(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll())
    }

    /// The whole bucket, listed (`key\0size\0etag\0lastModified\0` records).
    #[wasm_bindgen(js_name = onListing)]
    pub fn on_listing(&mut self, listing: &[u8]) -> Result<(), JsValue> {
        self.inner.on_listing(listing).map_err(to_js_error)
    }

    /// What the HEADs found (`[{key, exists, size, etag}]`).
    #[wasm_bindgen(js_name = onHeads)]
    pub fn on_heads(&mut self, heads: JsValue) -> Result<(), JsValue> {
        let heads: Vec<crate::runs::migrate::machine::HeadFound> = from_js(heads, "heads")?;
        self.inner.on_heads(&heads).map_err(to_js_error)
    }

    /// The bound index as read (absent: undefined), with its ETag.
    #[wasm_bindgen(js_name = onIndex)]
    pub fn on_index(
        &mut self,
        bytes: Option<Vec<u8>>,
        etag: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_index(bytes.as_deref(), etag)
            .map_err(to_js_error)
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.body().map(<[u8]>::to_vec).map_err(to_js_error)
    }

    /// Whether the publish landed (false stops the run with `publish-conflict`).
    #[wasm_bindgen(js_name = onPublished)]
    pub fn on_published(&mut self, published: bool) -> Result<(), JsValue> {
        self.inner.on_published(published).map_err(to_js_error)
    }

    /// How many objects went.
    #[wasm_bindgen(js_name = onDeleted)]
    pub fn on_deleted(&mut self, deleted: f64) -> Result<(), JsValue> {
        let deleted = count(deleted, "deleted")?;
        self.inner.on_deleted(deleted).map_err(to_js_error)
    }

    /// What the repair found and did (an error before the run is done).
    #[wasm_bindgen(unchecked_return_type = "ContaminationSummary")]
    pub fn result(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.result().map_err(to_js_error)?)
    }
}

/// `resolve` as a state machine (see `runs/resolve/machine.rs`): `poll` says what to do next, the
/// `on*` methods take back what happened.
#[wasm_bindgen]
pub struct ResolveRun {
    inner: crate::runs::resolve::machine::ResolveRun,
}

#[wasm_bindgen]
impl ResolveRun {
    /// A run in the layout `planner` binds, for `request` (`{keep, rels}`).
    #[wasm_bindgen(constructor)]
    pub fn new(planner: &Planner, request: JsValue) -> Result<ResolveRun, JsValue> {
        let request: crate::runs::resolve::machine::ResolveRequest =
            from_js(request, "resolve request")?;
        Ok(ResolveRun {
            inner: crate::runs::resolve::machine::ResolveRun::new(
                planner.inner.model().clone(),
                request,
            )
            .map_err(to_js_error)?,
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "ResolveAction")]
    pub fn poll(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll())
    }

    /// The pull is over: the items that failed.
    #[wasm_bindgen(js_name = onPulled)]
    pub fn on_pulled(&mut self, failed: Vec<String>) -> Result<(), JsValue> {
        self.inner.on_pulled(&failed).map_err(to_js_error)
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`).
    #[wasm_bindgen(js_name = onWalk)]
    pub fn on_walk(&mut self, listing: &[u8]) -> Result<(), JsValue> {
        self.inner.on_walk(listing).map_err(to_js_error)
    }

    /// The rels whose copy was put back in place.
    #[wasm_bindgen(js_name = onRestored)]
    pub fn on_restored(&mut self, rels: Vec<String>) -> Result<(), JsValue> {
        self.inner.on_restored(&rels).map_err(to_js_error)
    }

    /// What the push did (`{conflicts, failed, published, uploaded}`).
    #[wasm_bindgen(js_name = onPushed)]
    pub fn on_pushed(&mut self, pushed: JsValue) -> Result<(), JsValue> {
        let pushed: crate::runs::resolve::machine::ResolvePushed = from_js(pushed, "pushed")?;
        self.inner.on_pushed(&pushed).map_err(to_js_error)
    }

    /// The copies removed.
    #[wasm_bindgen(js_name = onRemoved)]
    pub fn on_removed(&mut self, removed: Vec<String>) -> Result<(), JsValue> {
        self.inner.on_removed(removed).map_err(to_js_error)
    }

    /// What the resolve did (an error before the run is done).
    #[wasm_bindgen(unchecked_return_type = "ResolveResult")]
    pub fn result(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.result().map_err(to_js_error)?)
    }
}

/// The remote side of a solo → namespaced migrate as a state machine (see
/// `runs/migrate/machine.rs`): `poll` says what to do next, the `on*` methods take back what
/// happened. It holds its own index sessions.
#[wasm_bindgen]
pub struct MigrateRun {
    inner: crate::runs::migrate::machine::MigrateRun,
}

#[wasm_bindgen]
impl MigrateRun {
    /// A run migrating into `namespace` (`prefix` only for the key length limit) for
    /// `request` (`{apply, removeOriginals}`), at `nowIso`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        namespace: String,
        prefix: Option<String>,
        request: JsValue,
        now_iso: String,
    ) -> Result<MigrateRun, JsValue> {
        let request: crate::runs::migrate::machine::MigrateRequest = options(request)?;
        iso_time(&now_iso, "nowIso")?;
        Ok(MigrateRun {
            inner: crate::runs::migrate::machine::MigrateRun::new(
                &namespace,
                prefix.as_deref().unwrap_or(""),
                request,
                &now_iso,
            )
            .map_err(to_js_error)?,
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "MigrateAction")]
    pub fn poll(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll().map_err(to_js_error)?)
    }

    /// The namespace's `_index/_meta.json` as read (absent: undefined).
    #[wasm_bindgen(js_name = onMeta)]
    pub fn on_meta(&mut self, bytes: Option<Vec<u8>>) -> Result<(), JsValue> {
        self.inner.on_meta(bytes.as_deref()).map_err(to_js_error)
    }

    /// The two indexes as read (absent: undefined), with their ETags.
    #[wasm_bindgen(js_name = onIndexes)]
    pub fn on_indexes(
        &mut self,
        solo: Option<Vec<u8>>,
        solo_etag: Option<String>,
        namespace: Option<Vec<u8>>,
        namespace_etag: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_indexes(solo, solo_etag, namespace, namespace_etag)
            .map_err(to_js_error)
    }

    /// The whole bucket, listed (`key\0size\0etag\0lastModified\0` records).
    #[wasm_bindgen(js_name = onListing)]
    pub fn on_listing(&mut self, listing: &[u8]) -> Result<(), JsValue> {
        self.inner.on_listing(listing).map_err(to_js_error)
    }

    /// What the HEADs that answered found (`[{key, exists, size, etag}]`).
    #[wasm_bindgen(js_name = onHeads)]
    pub fn on_heads(&mut self, heads: JsValue) -> Result<(), JsValue> {
        let heads: Vec<crate::runs::migrate::machine::HeadFound> = from_js(heads, "heads")?;
        self.inner.on_heads(&heads).map_err(to_js_error)
    }

    /// How many copies landed.
    #[wasm_bindgen(js_name = onCopied)]
    pub fn on_copied(&mut self, copied: f64) -> Result<(), JsValue> {
        let copied = count(copied, "copied")?;
        self.inner.on_copied(copied).map_err(to_js_error)
    }

    /// The namespace's index as re-read after the copies (absent: undefined), with its ETag.
    #[wasm_bindgen(js_name = onNamespaceIndex)]
    pub fn on_namespace_index(
        &mut self,
        bytes: Option<Vec<u8>>,
        etag: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_namespace_index(bytes, etag)
            .map_err(to_js_error)
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.body().map(<[u8]>::to_vec).map_err(to_js_error)
    }

    /// The publish: whether it landed (false stops the run with `publish-conflict`).
    #[wasm_bindgen(js_name = onPublished)]
    pub fn on_published(&mut self, published: bool) -> Result<(), JsValue> {
        self.inner.on_published(published).map_err(to_js_error)
    }

    /// How many originals went.
    #[wasm_bindgen(js_name = onDeleted)]
    pub fn on_deleted(&mut self, removed: f64) -> Result<(), JsValue> {
        let removed = count(removed, "removed")?;
        self.inner.on_deleted(removed).map_err(to_js_error)
    }

    /// What the migrate did (an error before the run is done).
    #[wasm_bindgen(unchecked_return_type = "MigrateResult")]
    pub fn result(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.result().map_err(to_js_error)?)
    }
}

/// The layout repair as a state machine (see `runs/repair/machine.rs`): `poll` says what to do
/// next, the `on*` methods take back what happened.
#[wasm_bindgen]
pub struct RepairRun {
    inner: crate::runs::repair::machine::RepairRun,
}

#[wasm_bindgen]
impl RepairRun {
    /// A run for `request` (`{apply}`), started at `nowIso`.
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue, now_iso: String) -> Result<RepairRun, JsValue> {
        let request: crate::runs::repair::machine::RepairRequest = options(request)?;
        iso_time(&now_iso, "nowIso")?;
        Ok(RepairRun {
            inner: crate::runs::repair::machine::RepairRun::new(request, &now_iso),
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "RepairAction")]
    pub fn poll(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll())
    }

    /// The journal as read (absent: undefined), or why it could not be read.
    #[wasm_bindgen(js_name = onJournal)]
    pub fn on_journal(
        &mut self,
        bytes: Option<Vec<u8>>,
        refused: Option<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_journal(bytes.as_deref(), refused)
            .map_err(to_js_error)
    }

    /// The remote index is loaded into the planner.
    #[wasm_bindgen(js_name = onIndex)]
    pub fn on_index(&mut self) -> Result<(), JsValue> {
        self.inner.on_index().map_err(to_js_error)
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`) and the errors it met.
    #[wasm_bindgen(js_name = onWalk)]
    pub fn on_walk(
        &mut self,
        planner: &Planner,
        listing: &[u8],
        walk_errors: Vec<String>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_walk(&planner.inner, listing, &walk_errors)
            .map_err(to_js_error)
    }

    /// The SHA-256 of the paths asked for that still exist (`paths[i]` hashes to `values[i]`).
    #[wasm_bindgen(js_name = onHashes)]
    pub fn on_hashes(
        &mut self,
        planner: &Planner,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> Result<(), JsValue> {
        if paths.len() != values.len() {
            return Err(to_js_error(CoreError::input(
                "hash paths and values differ in length",
            )));
        }
        let hashes = paths.into_iter().zip(values).collect();
        self.inner
            .on_hashes(&planner.inner, &hashes)
            .map_err(to_js_error)
    }

    /// One result per step of the last `apply` action, in order.
    #[wasm_bindgen(js_name = onApplied)]
    pub fn on_applied(&mut self, results: JsValue) -> Result<(), JsValue> {
        let results: Vec<crate::runs::repair::machine::StepResult> =
            from_js(results, "step results")?;
        self.inner.on_applied(&results).map_err(to_js_error)
    }

    /// The hydration is over: how many downloads failed, at `nowIso`.
    #[wasm_bindgen(js_name = onHydrated)]
    pub fn on_hydrated(&mut self, failures: f64, now_iso: String) -> Result<(), JsValue> {
        let failures = count(failures, "failures")?;
        iso_time(&now_iso, "nowIso")?;
        self.inner
            .on_hydrated(failures, &now_iso)
            .map_err(to_js_error)
    }

    /// What the repair did (an error before the run is done).
    #[wasm_bindgen(unchecked_return_type = "RepairResult")]
    pub fn result(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.result().map_err(to_js_error)?)
    }
}

/// Refuses a time that is not an ISO-8601 instant, naming the argument.
fn iso_time(text: &str, what: &str) -> Result<(), JsValue> {
    crate::model::time::parse_iso_millis(text)
        .map(|_| ())
        .ok_or_else(|| to_js_error(CoreError::input(format!("{what}: {text:?} is not a time"))))
}

/// A pull as a state machine (see `runs/pull/machine.rs`): `poll` says what to do next, the `on*`
/// methods take back what happened. Each takes the run's planner, which holds the index.
#[wasm_bindgen]
pub struct PullRun {
    inner: crate::runs::pull::machine::PullRun,
}

#[wasm_bindgen]
impl PullRun {
    /// A run for `request` (`{metadataOnly, caseInsensitive, keepExisting, verify, scope}`).
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue) -> Result<PullRun, JsValue> {
        let request: crate::runs::pull::machine::PullRequest = options(request)?;
        Ok(PullRun {
            inner: crate::runs::pull::machine::PullRun::new(request),
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "PullAction")]
    pub fn poll(&mut self, planner: &Planner) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll(&planner.inner))
    }

    /// The sidecar (absent: undefined) and whether the local index exists.
    #[wasm_bindgen(js_name = onLocalState)]
    pub fn on_local_state(
        &mut self,
        sidecar: Option<Vec<u8>>,
        local_index_exists: bool,
    ) -> Result<(), JsValue> {
        self.inner
            .on_local_state(sidecar, local_index_exists)
            .map_err(to_js_error)
    }

    /// What the HEAD of the remote index found.
    #[wasm_bindgen(js_name = onHead)]
    pub fn on_head(&mut self, exists: bool, etag: Option<String>) -> Result<(), JsValue> {
        self.inner.on_head(exists, etag).map_err(to_js_error)
    }

    /// The remote index is loaded into the planner: in the bucket or not, its ETag (v1) or
    /// `commitSeq` (v2).
    #[wasm_bindgen(js_name = onIndex)]
    pub fn on_index(
        &mut self,
        exists: bool,
        etag: Option<String>,
        commit_seq: Option<f64>,
    ) -> Result<(), JsValue> {
        let commit_seq = commit_seq.map(|s| duration(s, "commitSeq")).transpose()?;
        self.inner
            .on_index(exists, etag, commit_seq)
            .map_err(to_js_error)
    }

    /// The local index as read (absent: undefined); returns how it loaded as the base
    /// (undefined when there was none).
    #[wasm_bindgen(js_name = onBase, unchecked_return_type = "BaseLoad | undefined")]
    pub fn on_base(
        &mut self,
        planner: &mut Planner,
        bytes: Option<Vec<u8>>,
    ) -> Result<JsValue, JsValue> {
        base_load_js(
            self.inner
                .on_base(&mut planner.inner, bytes)
                .map_err(to_js_error)?,
        )
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`); returns the plan as JSON.
    #[wasm_bindgen(js_name = onWalk)]
    pub fn on_walk(&mut self, planner: &mut Planner, listing: &[u8]) -> Result<String, JsValue> {
        to_json(
            self.inner
                .on_walk(&mut planner.inner, listing)
                .map_err(to_js_error)?,
        )
    }

    /// What the transfers did: `downloaded` as a local listing buffer, `notFound`,
    /// the conflicts kept aside, the SHA-256 of what was written (`hashedRels` beside
    /// `hashedSha256`), the `removals` done (`removed`), the version pointers kept over the
    /// bucket's (`keptPointers`), and how many transfers failed, at `nowIso`.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = onTransfers, unchecked_return_type = "PullApplied")]
    pub fn on_transfers(
        &mut self,
        planner: &mut Planner,
        downloaded: &[u8],
        not_found: Vec<String>,
        aside_rels: Vec<String>,
        aside_copies: Vec<String>,
        hashed_rels: Vec<String>,
        hashed_sha256: Vec<String>,
        removed: Vec<String>,
        kept_pointers: Vec<String>,
        failures: f64,
        now_iso: String,
    ) -> Result<JsValue, JsValue> {
        let mut outcome = pull_outcome(downloaded, not_found, aside_rels, aside_copies)?;
        outcome.removed = removed;
        outcome.kept_pointers = kept_pointers;
        if hashed_rels.len() != hashed_sha256.len() {
            return Err(to_js_error(CoreError::input(
                "hashedRels and hashedSha256 differ in length",
            )));
        }
        outcome.hashes = hashed_rels.into_iter().zip(hashed_sha256).collect();
        let failures = duration(failures, "failures")?;
        to_js(
            &self
                .inner
                .on_transfers(&mut planner.inner, &outcome, failures, &now_iso)
                .map_err(to_js_error)?,
        )
    }

    /// The publish of the pruned index: whether it was written (false: the race was lost),
    /// and its new ETag.
    #[wasm_bindgen(js_name = onPublished)]
    pub fn on_published(&mut self, published: bool, etag: Option<String>) -> Result<(), JsValue> {
        self.inner
            .on_published(published, etag)
            .map_err(to_js_error)
    }

    /// The write asked for is done; after the local index, with the sidecar read again
    /// (undefined when absent; ignored after the sidecar).
    #[wasm_bindgen(js_name = onWritten)]
    pub fn on_written(
        &mut self,
        planner: &Planner,
        sidecar_now: Option<Vec<u8>>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_written(&planner.inner, sidecar_now.as_deref())
            .map_err(to_js_error)
    }

    /// The bytes a `writeSidecar` action writes.
    pub fn sidecar(&self) -> Result<Vec<u8>, JsValue> {
        self.inner
            .sidecar()
            .map(<[u8]>::to_vec)
            .map_err(to_js_error)
    }
}

/// A pull's outcome from the shim's buffers (see `Planner.applyPull`).
fn pull_outcome(
    downloaded: &[u8],
    not_found: Vec<String>,
    aside_rels: Vec<String>,
    aside_copies: Vec<String>,
) -> Result<PullOutcome, JsValue> {
    if aside_rels.len() != aside_copies.len() {
        return Err(to_js_error(CoreError::input(
            "asideRels and asideCopies differ in length",
        )));
    }
    let files = decode_local(downloaded).map_err(to_js_error)?;
    Ok(PullOutcome {
        aside: aside_rels
            .into_iter()
            .zip(aside_copies)
            .map(|(rel, copy)| KeptAside { rel, copy })
            .collect(),
        downloaded: files
            .iter()
            .filter_map(|f| Some((f.path.to_string(), f.mtime_ms?)))
            .collect(),
        sizes: files.iter().map(|f| (f.path.to_string(), f.size)).collect(),
        not_found,
        hashes: Vec::new(),
        removed: Vec::new(),
        kept_pointers: Vec::new(),
    })
}

/// A push as a state machine (see `runs/push/machine.rs`): `poll` says what to do next, the `on*`
/// methods take back what happened.
#[wasm_bindgen]
pub struct PushRun {
    inner: crate::runs::push::machine::PushRun,
}

#[wasm_bindgen]
impl PushRun {
    /// A run for `request` (`{deleteMissing, maxDeletes, maxDeletePercent, allowCatalogShrink,
    /// dryRun, askConfirmation, twoPhase, expect}`).
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue) -> Result<PushRun, JsValue> {
        let request: crate::runs::push::machine::PushRunRequest = options(request)?;
        Ok(PushRun {
            inner: crate::runs::push::machine::PushRun::new(request),
        })
    }

    /// The next action.
    #[wasm_bindgen(unchecked_return_type = "PushAction")]
    pub fn poll(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.poll())
    }

    /// The sidecar as read (absent: undefined).
    #[wasm_bindgen(js_name = onLocalState)]
    pub fn on_local_state(
        &mut self,
        planner: &Planner,
        sidecar: Option<Vec<u8>>,
    ) -> Result<(), JsValue> {
        self.inner
            .on_local_state(&planner.inner, sidecar)
            .map_err(to_js_error)
    }

    /// The remote index is loaded: its ETag (v1), or v2 with its `commitSeq`.
    #[wasm_bindgen(js_name = onIndex)]
    pub fn on_index(
        &mut self,
        etag: Option<String>,
        v2: bool,
        commit_seq: Option<f64>,
    ) -> Result<(), JsValue> {
        let commit_seq = commit_seq.map(|s| duration(s, "commitSeq")).transpose()?;
        self.inner
            .on_index(etag, v2, commit_seq)
            .map_err(to_js_error)
    }

    /// The local index as read; returns how it loaded as the base (undefined: none).
    #[wasm_bindgen(js_name = onBase, unchecked_return_type = "BaseLoad | undefined")]
    pub fn on_base(
        &mut self,
        planner: &mut Planner,
        bytes: Option<Vec<u8>>,
    ) -> Result<JsValue, JsValue> {
        base_load_js(
            self.inner
                .on_base(&mut planner.inner, bytes)
                .map_err(to_js_error)?,
        )
    }

    /// The walk asked for first (`walkFirst`): the listing, each file's change time and inode
    /// (`[ctime, ino, …]`, NaN where unknown), the walk's errors and symlinked folders, and
    /// when it began (epoch ms). Returns the (empty) plan as JSON when the sidecar's seal
    /// holds and the push is done, else undefined.
    #[wasm_bindgen(js_name = onWalkFirst)]
    pub fn on_walk_first(
        &mut self,
        planner: &mut Planner,
        listing: &[u8],
        changes: &[f64],
        walk_errors: f64,
        symlinked_folders: f64,
        walked_at_ms: f64,
    ) -> Result<Option<String>, JsValue> {
        let walk_errors = duration(walk_errors, "walkErrors")?;
        let symlinked_folders = duration(symlinked_folders, "symlinkedFolders")?;
        let walked_at_ms = millis(walked_at_ms, "walkedAtMs")?;
        let sealed = self
            .inner
            .on_walk_first(
                &mut planner.inner,
                listing,
                changes,
                walk_errors,
                symlinked_folders,
                walked_at_ms,
            )
            .map_err(to_js_error)?;
        if !sealed {
            return Ok(None);
        }
        to_json(planner.inner.push_plan().map_err(to_js_error)?).map(Some)
    }

    /// The hashes of the files the seal could not vouch for (`verifySeal`). Returns the (empty)
    /// plan as JSON when each holds the bytes last synced and the push is done, else undefined.
    #[wasm_bindgen(js_name = onSealHashes)]
    pub fn on_seal_hashes(
        &mut self,
        planner: &mut Planner,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> Result<Option<String>, JsValue> {
        let sealed = self
            .inner
            .on_seal_hashes(&mut planner.inner, paths, values)
            .map_err(to_js_error)?;
        if !sealed {
            return Ok(None);
        }
        to_json(planner.inner.push_plan().map_err(to_js_error)?).map(Some)
    }

    /// The sidecar bytes a `refreshSeal` writes, decided from the sidecar as it is now (the
    /// journal folded in); undefined: write nothing.
    #[wasm_bindgen(js_name = sealRefresh)]
    pub fn seal_refresh(&self, sidecar_now: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, JsValue> {
        self.inner
            .seal_refresh(sidecar_now.as_deref())
            .map_err(to_js_error)
    }

    /// The `refreshSeal` is over, whether it wrote, skipped or failed.
    #[wasm_bindgen(js_name = onSealRefreshed)]
    pub fn on_seal_refreshed(&mut self) -> Result<(), JsValue> {
        self.inner.on_seal_refreshed().map_err(to_js_error)
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`), its SHA-256, the walk's
    /// errors, the symlinked folders not followed, each file's change time and inode
    /// (`[ctime, ino, …]`, NaN where unknown) and when the walk began (epoch ms); returns the
    /// plan as JSON.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = onWalk)]
    pub fn on_walk(
        &mut self,
        planner: &mut Planner,
        listing: Vec<u8>,
        listing_digest: String,
        walk_errors: f64,
        symlinked_folders: f64,
        changes: &[f64],
        walked_at_ms: f64,
    ) -> Result<String, JsValue> {
        let walk_errors = duration(walk_errors, "walkErrors")?;
        let symlinked_folders = duration(symlinked_folders, "symlinkedFolders")?;
        let walked_at_ms = millis(walked_at_ms, "walkedAtMs")?;
        to_json(
            self.inner
                .on_walk(
                    &mut planner.inner,
                    listing,
                    listing_digest,
                    walk_errors,
                    symlinked_folders,
                    crate::runs::push::machine::WalkStats {
                        changes: changes.to_vec(),
                        walked_at_ms,
                    },
                )
                .map_err(to_js_error)?,
        )
    }

    /// The hashes asked for; returns the final plan as JSON.
    #[wasm_bindgen(js_name = onHashes)]
    pub fn on_hashes(
        &mut self,
        planner: &mut Planner,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> Result<String, JsValue> {
        to_json(
            self.inner
                .on_hashes(&mut planner.inner, paths, values)
                .map_err(to_js_error)?,
        )
    }

    /// Whether the deletes were confirmed; returns the plan as it now stands, as JSON.
    #[wasm_bindgen(js_name = onConfirmed)]
    pub fn on_confirmed(
        &mut self,
        planner: &mut Planner,
        confirmed: bool,
    ) -> Result<String, JsValue> {
        to_json(
            self.inner
                .on_confirmed(&mut planner.inner, confirmed)
                .map_err(to_js_error)?,
        )
    }

    /// The uploads that landed (`[{rel, size, mtimeMs, sha256}]`), how many failed, and the
    /// rels that found another writer's version in the bucket; returns the plan as it now
    /// stands, as JSON.
    #[wasm_bindgen(js_name = onUploaded)]
    pub fn on_uploaded(
        &mut self,
        planner: &mut Planner,
        uploaded: JsValue,
        failures: f64,
        lost: Vec<String>,
        now_iso: String,
    ) -> Result<String, JsValue> {
        let uploaded: Vec<Uploaded> = from_js(uploaded, "uploaded")?;
        let failures = duration(failures, "failures")?;
        self.inner
            .on_uploaded(&mut planner.inner, &uploaded, failures, &lost, &now_iso)
            .map_err(to_js_error)?;
        to_json(planner.inner.push_plan().map_err(to_js_error)?)
    }

    /// Continues a prepared (two-phase) push.
    pub fn commit(&mut self, planner: &Planner) -> Result<(), JsValue> {
        self.inner.commit(&planner.inner).map_err(to_js_error)
    }

    /// The index was re-read and the changes re-applied; the ETag the publish must match.
    #[wasm_bindgen(js_name = onRebased)]
    pub fn on_rebased(&mut self, etag: Option<String>) -> Result<(), JsValue> {
        self.inner.on_rebased(etag).map_err(to_js_error)
    }

    /// The publish landed: the new ETag, and the v2 `commitSeq`. Returns the plan as it now
    /// stands, as JSON: a re-merge over another writer's publish may have added conflicts and
    /// files behind.
    #[wasm_bindgen(js_name = onPublished)]
    pub fn on_published(
        &mut self,
        planner: &Planner,
        etag: Option<String>,
        commit_seq: Option<f64>,
    ) -> Result<String, JsValue> {
        let commit_seq = commit_seq.map(|s| duration(s, "commitSeq")).transpose()?;
        self.inner
            .on_published(&planner.inner, etag, commit_seq)
            .map_err(to_js_error)?;
        to_json(planner.inner.push_plan().map_err(to_js_error)?)
    }

    /// The deletes: how many went, how many failed, and the rels left because the bucket held
    /// another version; returns the plan as it now stands, as JSON.
    #[wasm_bindgen(js_name = onDeleted)]
    pub fn on_deleted(
        &mut self,
        planner: &mut Planner,
        deleted: f64,
        failures: f64,
        lost: Vec<String>,
    ) -> Result<String, JsValue> {
        let deleted = duration(deleted, "deleted")?;
        let failures = duration(failures, "failures")?;
        self.inner
            .on_deleted(&mut planner.inner, deleted, failures, &lost)
            .map_err(to_js_error)?;
        to_json(planner.inner.push_plan().map_err(to_js_error)?)
    }

    /// The write asked for is done; after the local index, with the sidecar as it is now.
    #[wasm_bindgen(js_name = onWritten)]
    pub fn on_written(
        &mut self,
        planner: &Planner,
        sidecar_now: Option<Vec<u8>>,
        now_iso: String,
    ) -> Result<(), JsValue> {
        self.inner
            .on_written(&planner.inner, sidecar_now, &now_iso)
            .map_err(to_js_error)
    }

    /// The bytes a `writeSidecar` action writes.
    pub fn sidecar(&self) -> Result<Vec<u8>, JsValue> {
        self.inner
            .sidecar()
            .map(<[u8]>::to_vec)
            .map_err(to_js_error)
    }
}

/// How a run's base loaded, or `undefined` when there was no local index to load.
fn base_load_js(loaded: Option<BaseLoad>) -> Result<JsValue, JsValue> {
    match loaded {
        Some(outcome) => to_js(&outcome),
        None => Ok(JsValue::UNDEFINED),
    }
}
