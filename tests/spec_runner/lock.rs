//! Spec-style lock fixtures: every JSON file under `tests/specs/lock/` is one lock run
//! (`runs::lock::machine::LockRun`) over a simulated lock object and clock
//! (`tests/common/lock_sim.rs`), driven the way the shim drives it.
//!
//! A spec holds `description`, `request` (the run's request as the shim sends it; `nowMs` of an
//! acquire is the clock at the start), optionally `lock` (the lock object there before:
//! `{body, ageMs}` with `body` a lock body as JSON or any text) and `peer` (another writer's
//! lock written just before the run's request number `beforeRequest`, 0-based: `{beforeRequest,
//! body}`), and `expected`: any of `requests` (see `lock_sim.rs`), `held`, `tookOverFrom`,
//! `lost`, `released`, `said` (how many lines the run asked to say), `error` (a code). Whatever
//! a spec says, every run is checked against the invariants: a release or a failed acquire
//! never removes a lock that is not the run's, and a lock the run holds carries its nonce.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::runs::lock::machine::{LockRequest, LockRun};

use crate::lock_sim::{step, LockWorld, Stepped};
use crate::spec_diff::{judge, read_spec};

/// The clock of every lock spec (epoch ms).
const NOW: i64 = 1_796_000_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Existing {
    body: Value,
    age_ms: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Peer {
    before_request: usize,
    body: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    request: LockRequest,
    #[serde(default)]
    lock: Option<Existing>,
    #[serde(default)]
    peer: Option<Peer>,
    expected: serde_json::Map<String, Value>,
}

/// A body given as JSON is written as its text; a string, as the string itself.
fn bytes_of(body: &Value) -> Vec<u8> {
    match body {
        Value::String(text) => text.as_bytes().to_vec(),
        other => serde_json::to_vec_pretty(other).unwrap(),
    }
}

/// The nonce the run compares with: its own, or the one a person named.
fn nonce_of(request: &LockRequest) -> String {
    match request {
        LockRequest::Acquire { holder, .. } | LockRequest::Refresh { holder, .. } => {
            holder.nonce.clone()
        }
        LockRequest::Release { nonce, .. } | LockRequest::ForceRelease { nonce, .. } => {
            nonce.clone()
        }
    }
}

/// Runs one spec file; `Err` says every way the run disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &[
            "requests",
            "held",
            "tookOverFrom",
            "lost",
            "released",
            "said",
            "error",
        ],
    )?;
    let mut world = match &spec.lock {
        Some(lock) => LockWorld::with_lock(bytes_of(&lock.body), NOW - lock.age_ms, NOW),
        None => LockWorld {
            now_ms: NOW,
            ..LockWorld::default()
        },
    };
    let before = world.object.clone();
    let mut run = LockRun::new(spec.request.clone()).map_err(|e| e.to_string())?;
    let mut actual = json!({});
    for _ in 0..1_000 {
        if let Some(peer) = &spec.peer {
            if world.requests.len() == peer.before_request {
                let now = world.now_ms;
                world.write(bytes_of(&peer.body), now);
            }
        }
        match step(&mut run, &mut world) {
            Stepped::Going => continue,
            Stepped::Done(result) => actual = serde_json::to_value(result).unwrap(),
            Stepped::Failed(error) => actual["error"] = json!(error.code()),
        }
        break;
    }
    actual["requests"] = json!(world.requests);
    actual["said"] = json!(world.said.len());
    let nonce = nonce_of(&spec.request);
    judge(&spec.description, "run", &spec.expected, &actual, |out| {
        let ours = world.holder_nonce().as_deref() == Some(nonce.as_str());
        if actual["held"] == true && !ours && spec.peer.is_none() {
            out.push("invariant: the run holds the lock, but it carries another nonce".into());
        }
        let deleted = world.object.is_none() && before.is_some();
        let was_other = before
            .as_ref()
            .and_then(|o| s3sync_core::state::lock::LockBody::parse(&o.body))
            .is_some_and(|b| b.nonce != nonce);
        let releasing = matches!(spec.request, LockRequest::Release { .. });
        if deleted && was_other && (releasing || actual["error"].is_string()) {
            out.push("invariant: another writer's lock was deleted".into());
        }
        if let Some(peer) = &spec.peer {
            if world.requests.len() > peer.before_request
                && actual["released"] == true
                && matches!(spec.request, LockRequest::Release { .. })
            {
                out.push("invariant: the peer's lock was released".into());
            }
        }
    })
}
