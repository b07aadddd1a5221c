//! Spec-style index read fixtures: every JSON file under `tests/specs/index_read/` is one read
//! (`runs::index_read::machine::IndexReadRun`) over a simulated bucket
//! (`tests/common/index_read_sim.rs`).
//!
//! A spec holds `description`, optionally `namespace`, the `request` (`{purpose,
//! publishRebuild?}`), the `bucket` (key → text) and the keys whose reads fail (`failing`); and
//! `expected`: any of `actions` (by name, in order), `reads` (keys, in order), `origin`, `etag`,
//! `commitSeq`, `partitions`, `entries` (the rels the session holds after the read, sorted) and
//! `error` (the code that stopped it). Whatever a spec says, a read that stops leaves the
//! session's index as it was, a read that ends in `shards` has read every shard it lists, a
//! corrupt set says why, and `find` never loads what it judges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::runs::index_read::machine::{IndexReadPurpose, IndexReadRequest};
use s3sync_core::runs::session::Session;

use crate::index_read_sim::{read_index, IndexBucket};
use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    #[serde(default)]
    namespace: Option<String>,
    request: IndexReadRequest,
    #[serde(default)]
    bucket: BTreeMap<String, String>,
    #[serde(default)]
    failing: Vec<String>,
    expected: serde_json::Map<String, Value>,
}

/// The rels the session's index holds, sorted (none loaded: an empty list).
fn entries(session: &Session) -> Vec<String> {
    let Ok(bytes) = session.index_json(false) else {
        return Vec::new();
    };
    let index: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let mut rels: Vec<String> = index["entries"]
        .as_object()
        .map(|e| e.keys().cloned().collect())
        .unwrap_or_default();
    rels.sort();
    rels
}

/// Runs one spec file; `Err` says every way the read disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &[
            "actions",
            "reads",
            "origin",
            "etag",
            "commitSeq",
            "partitions",
            "entries",
            "error",
        ],
    )?;
    let mut session = Session::new(spec.namespace.as_deref(), "").map_err(|e| e.to_string())?;
    let mut bucket = IndexBucket::default();
    for (key, text) in &spec.bucket {
        bucket.put(key, text);
    }
    bucket.failing = spec.failing.iter().cloned().collect();
    let driven = read_index(&mut session, &mut bucket, spec.request);
    let after = entries(&session);
    let mut actual = json!({
        "actions": driven.actions,
        "reads": bucket.reads,
        "entries": after,
    });
    let mut broken = Vec::new();
    match &driven.outcome {
        Ok(result) => {
            let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
            actual["origin"] = result["origin"].clone();
            actual["etag"] = result["etag"].clone();
            actual["commitSeq"] = result["shards"]["commitSeq"].clone();
            actual["partitions"] = result["shards"]["partitions"].clone();
            if result["origin"] == "corrupt-shards"
                && result["problem"]
                    .as_str()
                    .is_none_or(|p| p.trim().is_empty())
            {
                broken.push("invariant: a corrupt set without its problem".into());
            }
            if spec.request.purpose == IndexReadPurpose::Find && !after.is_empty() {
                broken.push("invariant: find loaded the set into the session".into());
            }
            if result["origin"] == "shards" {
                // Distinct partitions: one listed twice is one shard.
                let listed = result["shards"]["partitions"].as_array().map_or(0, |p| {
                    p.iter()
                        .map(Value::to_string)
                        .collect::<BTreeSet<_>>()
                        .len()
                });
                let etags = result["shards"]["shardEtags"]
                    .as_object()
                    .map_or(0, |m| m.len());
                if listed != etags {
                    broken.push(format!(
                        "invariant: {listed} partitions listed, {etags} shards read"
                    ));
                }
            }
        }
        Err((code, message)) => {
            actual["error"] = json!(code);
            if message.trim().is_empty() {
                broken.push("invariant: the error says nothing".into());
            }
            if !after.is_empty() {
                broken.push("invariant: a read that stopped left an index loaded".into());
            }
        }
    }
    judge(&spec.description, "read", &spec.expected, &actual, |out| {
        out.extend(broken)
    })
}
