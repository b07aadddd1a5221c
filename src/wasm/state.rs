//! The local bookkeeping files (sidecar, journal, dirty recorder) and the datastore lock.

use wasm_bindgen::prelude::*;

use crate::state::lock;
use crate::state::sync_state::SyncState;

use crate::state::server_verdict;

use super::convert::*;

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
    calls: crate::state::dirty_calls::DirtyCalls,
}

#[wasm_bindgen]
impl DirtyRecorder {
    /// An empty recorder.
    #[wasm_bindgen(constructor)]
    pub fn new() -> DirtyRecorder {
        DirtyRecorder {
            inner: crate::state::sync_state::DirtyRecorder::new(),
            calls: crate::state::dirty_calls::DirtyCalls::new(),
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

    /// What a `markDirty` call for `path` (undefined: walk everything) does, given whether the
    /// sidecar's stat is the one this service's last rewrite left (see
    /// [`crate::state::dirty_calls`]).
    #[wasm_bindgen(unchecked_return_type = "DirtyStep")]
    pub fn step(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] path: JsValue,
        as_left: bool,
    ) -> Result<JsValue, JsValue> {
        let path = call_path(path)?;
        to_js(&self.calls.step(path.as_deref(), as_left))
    }

    /// The call for `path` was recorded: by a rewrite (`rewrote`) whose sidecar asks the
    /// extension to walk everything or not (`walksEverything`, as that write's own record
    /// said), or by a journal line.
    pub fn recorded(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] path: JsValue,
        rewrote: bool,
        walks_everything: bool,
    ) -> Result<(), JsValue> {
        let path = call_path(path)?;
        self.calls
            .recorded(path.as_deref(), rewrote, walks_everything);
        Ok(())
    }

    /// A sync acted on what was recorded: every later call records again.
    pub fn forget(&mut self) {
        self.calls.forget();
    }
}

/// A `markDirty` call's path: a string, or undefined (null) for a walk of everything; anything
/// else is `invalid-input`, never a throw without a code.
fn call_path(path: JsValue) -> Result<Option<String>, JsValue> {
    if path.is_undefined() || path.is_null() {
        return Ok(None);
    }
    path.as_string().map(Some).ok_or_else(|| {
        to_js_error(crate::error::CoreError::input(
            "a markDirty path is a string or undefined",
        ))
    })
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

/// The sidecar with `hash` recorded as the last catalog export's (everything else kept).
#[wasm_bindgen(js_name = sidecarWithCatalogHash)]
pub fn sidecar_with_catalog_hash(sidecar: Option<Vec<u8>>, hash: String) -> Vec<u8> {
    let mut state = SyncState::for_update(sidecar.as_deref());
    state.last_catalog_hash = Some(hash);
    state.to_json()
}

/// The sidecar with `verdict` (`{store, writes, deletes?, probedAtMs}`) remembered, or
/// `undefined` when there is no readable sidecar or nothing to remember.
#[wasm_bindgen(js_name = sidecarWithServerVerdict)]
pub fn sidecar_with_server_verdict(
    sidecar: Option<Vec<u8>>,
    #[wasm_bindgen(unchecked_param_type = "ServerVerdict")] verdict: JsValue,
) -> Result<Option<Vec<u8>>, JsValue> {
    let verdict: server_verdict::ServerVerdict = from_js(verdict, "verdict")?;
    Ok(server_verdict::remembered(sidecar.as_deref(), &verdict))
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

/// How often a holder refreshes a lease of `ttl_ms`.
#[wasm_bindgen(js_name = lockHeartbeatMs)]
pub fn lock_heartbeat_ms(ttl_ms: f64) -> Result<f64, JsValue> {
    Ok(lock::heartbeat_interval_ms(duration(ttl_ms, "ttlMs")?) as f64)
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
    to_js(&lock::DEFAULTS)
}
