//! Spec-style shard-set write fixtures: every JSON file under `tests/specs/shard_write/` is one
//! write of an index cut into shards (`runs::shard_write::machine::ShardWriteRun`) over a
//! bucket in memory, driven the way the shim drives it.
//!
//! A spec holds `description`, `indexed` (the rels of the loaded index), optionally `pushed`
//! (new rels a recorded push uploaded, for the v1 mirror), `request` (the run's request as the
//! shim sends it), `bucket` (objects there before, key → text; each gets the ETag `"e<n>"` in
//! the order listed, which a request may name), optionally `peers` (another writer's moves:
//! `{before, key, text}` writes `text` at `key` just before this run writes `before`) and
//! `expected`: any of `requests` (`head <key>` / `put <key> <any|match|absent>`, in order, a
//! refused put marked ` refused`), `published`, `partitions`, `commitSeq`. Whatever a spec says,
//! every run is checked against the invariants of the write order, recomputed here.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::index::ShardMeta;
use s3sync_core::runs::migrate::machine::HeadFound;
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::runs::shard_write::machine::{
    PutCondition, ShardWriteAction, ShardWriteRequest, ShardWriteRun,
};
use s3sync_core::wire::listing::encode_local;

use crate::sim::Bucket;
use crate::spec_diff::{judge, read_spec};

const OLD: &str = "2026-08-01T12:00:00.000Z";
const NOW: &str = "2026-12-07T10:00:00.000Z";
const MTIME: i64 = 1_785_585_600_512;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Peer {
    before: String,
    key: String,
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    indexed: Vec<String>,
    #[serde(default)]
    pushed: Vec<String>,
    request: ShardWriteRequest,
    #[serde(default)]
    bucket: Vec<(String, String)>,
    #[serde(default)]
    peers: Vec<Peer>,
    expected: serde_json::Map<String, Value>,
}

/// What one run did: its requests in order, the keys it wrote and the run's result.
struct Ran {
    requests: Vec<String>,
    /// `(key, condition, landed)` of each write, in order.
    writes: Vec<(String, &'static str, bool)>,
    result: Value,
    meta_key: String,
}

fn session(spec: &Spec) -> Result<Session, String> {
    let mut session = Session::new(None, "").map_err(|e| e.to_string())?;
    let entries: serde_json::Map<String, Value> = spec
        .indexed
        .iter()
        .map(|r| (r.clone(), json!({"key": r, "size": 1, "lastModified": OLD})))
        .collect();
    let index = serde_json::to_vec(&json!({"version": 1, "entries": entries})).unwrap();
    session.load_index(&index).map_err(|e| e.to_string())?;
    if !spec.pushed.is_empty() {
        let listing = encode_local(spec.pushed.iter().map(|r| (r.as_str(), 1, Some(MTIME))));
        session
            .plan_push(&listing, &PushInput::default())
            .map_err(|e| e.to_string())?;
        let uploaded: Vec<Uploaded> = spec
            .pushed
            .iter()
            .map(|rel| Uploaded {
                rel: rel.clone(),
                size: 1,
                mtime_ms: Some(MTIME),
                sha256: "ab".repeat(32),
                etag: None,
            })
            .collect();
        session
            .record_push(&uploaded, NOW, false)
            .map_err(|e| e.to_string())?;
    }
    Ok(session)
}

fn drive(spec: &Spec, bucket: &mut Bucket) -> Result<Ran, String> {
    let mut session = session(spec)?;
    let mut run = ShardWriteRun::new(spec.request.clone());
    let mut ran = Ran {
        requests: Vec::new(),
        writes: Vec::new(),
        result: Value::Null,
        meta_key: session.model().meta_key(),
    };
    for _ in 0..50 {
        let action = match run.poll(&mut session) {
            Ok(action) => action,
            Err(error) => {
                // A run the core refuses: the code is the result, and what it did is checked.
                ran.result = json!({"error": error.code()});
                return Ok(ran);
            }
        };
        match action {
            ShardWriteAction::Head { keys } => {
                let heads: Vec<HeadFound> = keys
                    .iter()
                    .map(|key| {
                        ran.requests.push(format!("head {key}"));
                        let facts = bucket.head(key);
                        HeadFound {
                            key: key.clone(),
                            exists: facts.exists,
                            size: facts.size,
                            etag: facts.etag,
                        }
                    })
                    .collect();
                run.on_heads(&heads).map_err(|e| e.to_string())?;
            }
            ShardWriteAction::Put { writes } => {
                let mut landed = true;
                for write in writes {
                    for peer in spec.peers.iter().filter(|p| p.before == write.key) {
                        bucket.put(&peer.key, peer.text.as_bytes().to_vec());
                    }
                    let body = write.body.as_slice().to_vec();
                    let (kind, done) = match &write.condition {
                        PutCondition::Any => ("any", Some(bucket.put(&write.key, body))),
                        PutCondition::Match { etag } => {
                            ("match", bucket.put_if(&write.key, Some(etag), body))
                        }
                        PutCondition::Absent => ("absent", bucket.put_if(&write.key, None, body)),
                    };
                    let refused = if done.is_some() { "" } else { " refused" };
                    ran.requests
                        .push(format!("put {} {kind}{refused}", write.key));
                    ran.writes.push((write.key.clone(), kind, done.is_some()));
                    if done.is_none() {
                        // The shim starts no write after a refused one.
                        landed = false;
                        break;
                    }
                }
                run.on_put(landed, None).map_err(|e| e.to_string())?;
            }
            ShardWriteAction::Probe { deletes } => {
                ran.requests.push(format!("probe deletes={deletes}"));
                run.on_probed(false).map_err(|e| e.to_string())?;
            }
            ShardWriteAction::Retire { objects, .. } => {
                let (mut retired, mut kept) = (0, 0);
                for object in objects {
                    ran.requests.push(format!("delete {}", object.key));
                    match bucket.objects.get(&object.key) {
                        Some((_, etag)) if *etag != object.etag => kept += 1,
                        _ => {
                            bucket.objects.remove(&object.key);
                            retired += 1;
                        }
                    }
                }
                run.on_retired(retired, kept).map_err(|e| e.to_string())?;
            }
            ShardWriteAction::Done => {
                let result = run.result().map_err(|e| e.to_string())?;
                ran.result = serde_json::to_value(result).map_err(|e| e.to_string())?;
                return Ok(ran);
            }
        }
    }
    Err("the run did not end in 50 steps".into())
}

/// Properties every run has: a v2 set writes nothing unconditionally and the mirror nothing
/// conditionally; no write follows a refused one; the meta is the last write and is written
/// only when every other write landed; a published v2 meta records the request's `commitSeq`
/// and lists exactly the shards written; what a peer wrote is never written over.
fn invariants(spec: &Spec, ran: &Ran, bucket: &Bucket, out: &mut Vec<String>) {
    let v2 = spec.request.commit_seq.is_some();
    for (key, kind, _) in &ran.writes {
        if v2 == (*kind == "any") {
            out.push(format!(
                "invariant: {key} written `{kind}` in a {} write",
                if v2 { "v2" } else { "mirror" }
            ));
        }
    }
    if let Some(at) = ran.writes.iter().position(|(_, _, landed)| !landed) {
        if at + 1 != ran.writes.len() {
            out.push(format!(
                "invariant: writes started after {} was refused",
                ran.writes[at].0
            ));
        }
    }
    if let Some(at) = ran
        .writes
        .iter()
        .position(|(key, _, _)| *key == ran.meta_key)
    {
        if at + 1 != ran.writes.len() {
            out.push("invariant: the meta is not the last write".into());
        }
        if ran.writes[..at].iter().any(|(_, _, landed)| !landed) {
            out.push("invariant: the meta was written after a refused write".into());
        }
    }
    let published = ran.result["published"] == true;
    if published && v2 {
        match bucket
            .objects
            .get(&ran.meta_key)
            .map(|(b, _)| ShardMeta::parse(b))
        {
            Some(Ok(meta)) => {
                if meta.commit_seq != spec.request.commit_seq {
                    out.push("invariant: the published meta has another commitSeq".into());
                }
                let written: Vec<Value> = meta.partitions.iter().map(|p| json!(p)).collect();
                if Value::Array(written) != ran.result["partitions"] {
                    out.push("invariant: the meta lists other shards than were written".into());
                }
            }
            _ => out.push("invariant: published, but no readable meta in the bucket".into()),
        }
    }
    for peer in &spec.peers {
        // The peer wrote just before this run's first write of `before`.
        let Some(at) = ran
            .writes
            .iter()
            .position(|(key, _, _)| *key == peer.before)
        else {
            continue;
        };
        if ran.writes[at..]
            .iter()
            .any(|(key, _, landed)| *key == peer.key && *landed)
        {
            out.push(format!(
                "invariant: {} written over the peer's copy",
                peer.key
            ));
        }
    }
}

/// Runs one spec file; `Err` says every way the run disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &["requests", "published", "partitions", "commitSeq", "error"],
    )?;
    let mut bucket = Bucket::default();
    for (key, text) in &spec.bucket {
        bucket.put(key, text.as_bytes().to_vec());
    }
    let ran = drive(&spec, &mut bucket)?;
    let mut actual = ran.result.clone();
    actual["requests"] = json!(ran.requests);
    judge(&spec.description, "run", &spec.expected, &actual, |out| {
        invariants(&spec, &ran, &bucket, out)
    })
}
