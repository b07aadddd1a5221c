//! `PushRun`: the push machine (`runs/push/machine/`) as one JS class.

use wasm_bindgen::prelude::*;

use super::convert::*;
use super::run_class::export_run;

// Which push event answers what (`PushReply` in `runs/push/events.rs`; the others answer
// nothing). `CoreRun` types `handle` by it.
#[wasm_bindgen(typescript_custom_section)]
const PUSH_REPLIES: &str = r#"/** What each push event answers (the others answer nothing). */
export type PushReplies = {
  base: BaseLoad | null;
  walkFirst: string | null;
  sealHashes: string | null;
  walk: string;
  hashes: string;
  confirmed: string;
  uploaded: string;
  published: string;
  deleted: string;
};"#;

export_run! {
    /// A push as a state machine (see `runs/push/machine/`). `poll` reads only the run; the
    /// planner is passed for the events that read or change the session.
    PushRun wraps crate::runs::push::machine::PushRun,
    context: session,
    types: ("PushAction", "PushEvent", "PushReplies[keyof PushReplies] | null", "PushEnded")
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

    /// The sidecar bytes a `refreshSeal` writes, decided from the sidecar as it is now (the
    /// journal folded in); undefined: write nothing.
    #[wasm_bindgen(js_name = sealRefresh)]
    pub fn seal_refresh(&self, sidecar_now: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, JsValue> {
        self.inner
            .seal_refresh(sidecar_now.as_deref())
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
