//! Spec-style conditions fixtures: every JSON file under `tests/specs/conditions/` is one
//! decision of how a push's writes and deletes are made conditional (or what `doctor
//! --probe-server` reports), `runs::conditions::machine::ConditionsRun`, against a simulated
//! server (`tests/common/conditions_sim.rs`).
//!
//! A spec holds `description`, optionally `namespace`, the `request`, `nowMs`, the `server` (what
//! it honours: `createOnly`, `ifMatchPut`, `ifMatchDelete`), the `sidecar` (JSON, absent: none)
//! `failingTrials` and `failingDeleteProbe`; and `expected`: any of `actions` (by name, in order), `requests` (how
//! many), `support`, `knownWrites`, `knownDeletes`, `remembered` (the verdicts kept, in order)
//! and `error` (the code that stopped it). Whatever a spec says: a push that is told writes are
//! conditional was never refused and never met a server that ignores them; a verdict kept says
//! writes are honoured; every probe object is removed; a refused run answers no decision after.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::runs::conditions::machine::{ConditionsPurpose, ConditionsRequest};
use s3sync_core::runs::session::Session;

use crate::conditions_sim::{decide_conditions, ConditionsWorld, Honours};
use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Spec {
    description: String,
    #[serde(default)]
    namespace: Option<String>,
    request: ConditionsRequest,
    now_ms: i64,
    server: Honours,
    #[serde(default)]
    sidecar: Option<Value>,
    #[serde(default)]
    failing_trials: u32,
    #[serde(default)]
    failing_delete_probe: bool,
    expected: serde_json::Map<String, Value>,
}

/// Runs one spec file; `Err` says every way the run disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &[
            "actions",
            "requests",
            "support",
            "knownWrites",
            "knownDeletes",
            "remembered",
            "error",
        ],
    )?;
    let mut session = Session::new(spec.namespace.as_deref(), "").map_err(|e| e.to_string())?;
    let sidecar = spec
        .sidecar
        .as_ref()
        .map(|v| serde_json::to_vec(v).map_err(|e| e.to_string()))
        .transpose()?;
    let mut world = ConditionsWorld::new(spec.server, sidecar);
    world.failing_trials = spec.failing_trials;
    world.failing_delete_probe = spec.failing_delete_probe;
    let pushing = spec.request.purpose == ConditionsPurpose::Push;
    let driven = decide_conditions(&mut session, &mut world, spec.request, spec.now_ms);
    let mut actual = json!({
        "actions": driven.actions,
        "requests": world.requests.len(),
        "remembered": serde_json::to_value(&world.remembered).map_err(|e| e.to_string())?,
        "knownWrites": driven.known.and_then(|k| k.writes),
        "knownDeletes": driven.known.and_then(|k| k.deletes),
    });
    let mut broken = Vec::new();
    if !world.objects.is_empty() {
        broken.push(format!(
            "invariant: probe objects left behind: {:?}",
            world.objects.keys()
        ));
    }
    if world.remembered.iter().any(|v| !v.writes) {
        broken.push("invariant: a verdict kept that says writes are not honoured".into());
    }
    let honoured = spec.server.create_only && spec.server.if_match_put;
    match &driven.outcome {
        Ok(result) => {
            let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
            actual["support"] = value["support"].clone();
            let told_conditional = value["support"]["writes"] == json!(true);
            if pushing && told_conditional && !honoured && world.remembered.is_empty() {
                broken.push(
                    "invariant: a push told writes are conditional on a server that ignores them"
                        .into(),
                );
            }
        }
        Err((code, message)) => {
            actual["error"] = json!(code);
            if message.trim().is_empty() {
                broken.push("invariant: the error says nothing".into());
            }
            let refused = code == "conditional-writes-unsupported";
            if refused && matches!(&driven.result_after_error, Some(Ok(_))) {
                broken.push("invariant: a refused run answers a decision afterwards".into());
            }
            if refused && driven.known.is_some_and(|k| k.writes != Some(false)) {
                broken.push("invariant: a refusal's facts do not say writes are ignored".into());
            }
        }
    }
    judge(
        &spec.description,
        "conditions",
        &spec.expected,
        &actual,
        |out| out.extend(broken),
    )
}
