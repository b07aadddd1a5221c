//! Spec-style catalog export fixtures: every JSON file under `tests/specs/catalog_export/` is
//! one upload of a namespace's catalog export (`runs::catalog_export::machine::CatalogExportRun`)
//! in a simulated bucket (`tests/common/catalog_export_sim.rs`).
//!
//! A spec holds `description`, the `request` and the `world` (the export in the bucket, the
//! sidecar's last hash, a writer racing our write, a lost answer); and `expected`: any of
//! `actions` (by name, in order), `put` (the write's condition), `requests`, `object` (the
//! export's hash in the bucket after), `sidecarHash`, `result` and `error`. Whatever a spec
//! says: another writer's export is never replaced by a failed condition, a write that is not
//! conditional comes only from a client without `If-Match`, and a held-back or conflicting
//! export writes nothing.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::runs::catalog_export::machine::CatalogExportRequest;

use crate::catalog_export_sim::{export_catalog, ExportWorld};
use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    request: CatalogExportRequest,
    #[serde(default)]
    world: ExportWorld,
    expected: serde_json::Map<String, Value>,
}

/// Runs one spec file; `Err` says every way the export disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &[
            "actions",
            "put",
            "requests",
            "object",
            "sidecarHash",
            "result",
            "error",
        ],
    )?;
    let mut world = spec.world.clone();
    let theirs = world.racing_writer.clone().or(world.object.clone());
    let conditional_client = spec.request.conditional_client;
    let ours = spec.request.sha256.clone();
    let driven = export_catalog(&mut world, spec.request);
    let names: Vec<Value> = driven.actions.iter().map(|a| a["action"].clone()).collect();
    let put = driven
        .actions
        .iter()
        .find(|a| a["action"] == "put")
        .map_or(Value::Null, |a| a["condition"].clone());
    let mut actual = json!({
        "actions": names,
        "put": put,
        "requests": world.requests,
        "object": world.object.as_ref().map(|o| o.sha256.clone()),
        "sidecarHash": world.sidecar_hash,
    });
    let mut broken = Vec::new();
    if put["kind"] == "any" && conditional_client {
        broken.push("invariant: an unconditional write from a client with If-Match".into());
    }
    match &driven.outcome {
        Ok(result) => {
            actual["result"] = serde_json::to_value(result).map_err(|e| e.to_string())?;
        }
        Err((code, message)) => {
            actual["error"] = json!(code);
            if message.trim().is_empty() {
                broken.push("invariant: the error says nothing".into());
            }
            let now = world.object.as_ref().map(|o| &o.sha256);
            if now == Some(&ours) {
                broken.push("invariant: a stopped export left our bytes in the bucket".into());
            }
            if now != theirs.as_ref().map(|o| &o.sha256) {
                broken.push("invariant: a stopped export changed the bucket".into());
            }
        }
    }
    judge(
        &spec.description,
        "export",
        &spec.expected,
        &actual,
        |out| out.extend(broken),
    )
}
