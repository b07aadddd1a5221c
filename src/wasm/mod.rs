//! The WebAssembly surface: the only module with `#[wasm_bindgen]`.
//!
//! It converts and delegates, nothing more. Every export returns `Result`; a
//! [`CoreError`](crate::error::CoreError) becomes a JS `Error` whose `code` property is the
//! stable code, at this one point (`convert::to_js_error`). Large inputs cross as byte buffers,
//! plans leave as one JSON string. Split as automerge-wasm splits its crate: `convert` (the
//! boundary's conversions), `planner` (the session), one file per run class (`pull_run`,
//! `push_run`, `small_runs` for the rarer ones), and the free functions by what they concern
//! (`model`, `state`, `judgements`).

use wasm_bindgen::prelude::*;

// The declarations `#[derive(Tsify)]` writes into `pkg/s3sync_core.d.ts` name the stable code
// types; the shim spells those once, in `js/core/codes.ts` (checked against `codeLists` by
// `tests/unit/codes_test.ts`), so the declarations import them from there.
#[wasm_bindgen(typescript_custom_section)]
const CODE_TYPES: &str = r#"import type { GuardCode, ProblemCode, RefusalCode, SyncErrorCode } from "../js/core/codes.ts";"#;

mod convert;
mod judgements;
mod model;
mod planner;
mod pull_run;
mod push_run;
mod run_class;
mod small_runs;
mod state;
