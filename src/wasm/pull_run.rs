//! `PullRun`: the pull machine (`runs/pull/machine.rs`) as one JS class.

use wasm_bindgen::prelude::*;

use super::convert::*;
use super::run_class::export_run;

// Which pull event answers what (`PullReply` in `runs/pull/events.rs`; the others answer
// nothing). `CoreRun` types `handle` by it.
#[wasm_bindgen(typescript_custom_section)]
const PULL_REPLIES: &str = r#"/** What each pull event answers (the others answer nothing). */
export type PullReplies = { base: BaseLoad | null; walk: string; transfers: PullApplied };"#;

export_run! {
    /// A pull as a state machine (see `runs/pull/machine.rs`). Each method takes the run's
    /// planner, which holds the index.
    PullRun wraps crate::runs::pull::machine::PullRun,
    context: session,
    types: ("PullAction", "PullEvent", "PullReplies[keyof PullReplies] | null", "PullEnded")
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

    /// The bytes a `writeSidecar` action writes.
    pub fn sidecar(&self) -> Result<Vec<u8>, JsValue> {
        self.inner
            .sidecar()
            .map(<[u8]>::to_vec)
            .map_err(to_js_error)
    }
}
