//! The machines of the rarer runs: rebuild, contamination, resolve, migrate and repair.

use wasm_bindgen::prelude::*;

use crate::error::CoreError;

use super::convert::*;
use super::planner::Planner;

/// A rebuild of the remote index from a listing as a state machine (see
/// `runs/rebuild/machine.rs`): a sync's rebuild of a missing index, or `rebuild-index`'s.
#[wasm_bindgen]
pub struct RebuildRun {
    pub(super) inner: crate::runs::rebuild::machine::RebuildRun,
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
    pub(super) inner: crate::runs::contamination::machine::ContaminationRun,
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

    /// How many objects went, and the keys whose conditional delete found another version.
    #[wasm_bindgen(js_name = onDeleted)]
    pub fn on_deleted(&mut self, deleted: f64, changed: Vec<String>) -> Result<(), JsValue> {
        let deleted = count(deleted, "deleted")?;
        self.inner
            .on_deleted(deleted, &changed)
            .map_err(to_js_error)
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
    pub(super) inner: crate::runs::resolve::machine::ResolveRun,
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
    pub(super) inner: crate::runs::migrate::machine::MigrateRun,
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
    pub(super) inner: crate::runs::repair::machine::RepairRun,
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
