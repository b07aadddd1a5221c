//! Spec-style move-to-shards fixtures: every JSON file under `tests/specs/shard_move/` is one
//! move of a repo to the v2 layout (`runs::shard_move::machine::ShardMoveRun`) over a simulated
//! repo (`tests/common/shard_move_sim.rs`).
//!
//! A spec holds `description` and the `repo` (what the first read finds, the monolith, the
//! partitions written, whether the write publishes, what a second read finds); and `expected`:
//! any of `actions` (by name, in order), `write` (the `writeShards` action), `result` and
//! `error` (the code that stopped it). Whatever a spec says: a move writes at most once, a
//! result that says `moved` comes from a published write at `commitSeq` 1, and a repo on v2
//! already is never written.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::shard_move_sim::{move_to_shards, ShardRepo};
use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    repo: ShardRepo,
    expected: serde_json::Map<String, Value>,
}

/// Runs one spec file; `Err` says every way the move disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(path, &["actions", "write", "result", "error"])?;
    let driven = move_to_shards(&spec.repo);
    let names: Vec<Value> = driven.actions.iter().map(|a| a["action"].clone()).collect();
    let writes: Vec<&Value> = driven
        .actions
        .iter()
        .filter(|a| a["action"] == "writeShards")
        .collect();
    let mut actual = json!({
        "actions": names,
        "write": writes.first().map_or(Value::Null, |w| (*w).clone()),
    });
    let mut broken = Vec::new();
    if writes.len() > 1 {
        broken.push(format!("invariant: {} shard-set writes", writes.len()));
    }
    if spec.repo.v2.is_some() && !writes.is_empty() {
        broken.push("invariant: a repo on v2 already was written".into());
    }
    match &driven.outcome {
        Ok(result) => {
            actual["result"] = serde_json::to_value(result).map_err(|e| e.to_string())?;
            if result.moved && (!spec.repo.publishes || writes.is_empty() || result.commit_seq != 1)
            {
                broken.push("invariant: moved without a published first commit".into());
            }
        }
        Err((code, message)) => {
            actual["error"] = json!(code);
            if message.trim().is_empty() {
                broken.push("invariant: the error says nothing".into());
            }
        }
    }
    judge(&spec.description, "move", &spec.expected, &actual, |out| {
        out.extend(broken)
    })
}
