//! `PushRun`: the push machine (`runs/push/machine.rs`) as one JS class.

use wasm_bindgen::prelude::*;

use crate::runs::push::plan::Uploaded;

use super::convert::*;
use super::planner::Planner;

/// A push as a state machine (see `runs/push/machine.rs`): `poll` says what to do next, the `on*`
/// methods take back what happened.
#[wasm_bindgen]
pub struct PushRun {
    pub(super) inner: crate::runs::push::machine::PushRun,
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
