//! `PullRun`: the pull machine (`runs/pull/machine.rs`) as one JS class.

use wasm_bindgen::prelude::*;

use crate::error::CoreError;
use crate::runs::pull::plan::PullOutcome;
use crate::safety::conflicts::KeptAside;
use crate::wire::listing::decode_local;

use super::convert::*;
use super::planner::Planner;

/// A pull as a state machine (see `runs/pull/machine.rs`): `poll` says what to do next, the `on*`
/// methods take back what happened. Each takes the run's planner, which holds the index.
#[wasm_bindgen]
pub struct PullRun {
    pub(super) inner: crate::runs::pull::machine::PullRun,
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
pub(super) fn pull_outcome(
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
