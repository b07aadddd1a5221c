//! Spec-style shard-set write fixtures: every JSON file under `tests/specs/shard_write/` is one
//! write of an index cut into shards (`runs::shard_write::machine::ShardWriteRun`) over a
//! bucket in memory, driven the way the shim drives it.
//!
//! A spec holds `description`, `indexed` (the rels of the loaded index: a monolith), or `v2`
//! (`{commitSeq, shards: {partition: [rels]}}`: a v2 shard set, loaded as read), optionally
//! `pushed` (new rels a recorded push uploaded) and `deleted` (rels it deleted, confirmed), for
//! the v1 mirror and a commit, `request` (the run's request as the
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
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::runs::shard_write::machine::{ShardWriteRequest, ShardWriteRun};
use s3sync_core::wire::listing::encode_local;

use crate::sim::{run_shard_write, Bucket};
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
    #[serde(default)]
    indexed: Vec<String>,
    #[serde(default)]
    v2: Option<V2Index>,
    #[serde(default)]
    pushed: Vec<String>,
    #[serde(default)]
    deleted: Vec<String>,
    request: ShardWriteRequest,
    #[serde(default)]
    bucket: Vec<(String, String)>,
    #[serde(default)]
    peers: Vec<Peer>,
    /// What the server's probe answers about `If-Match` on DELETE.
    #[serde(default, rename = "conditionalDeletes")]
    conditional_deletes: bool,
    expected: serde_json::Map<String, Value>,
}

/// A v2 shard set as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct V2Index {
    commit_seq: u64,
    shards: std::collections::BTreeMap<String, Vec<String>>,
}

fn index_document(rels: &[String]) -> Vec<u8> {
    let entries: serde_json::Map<String, Value> = rels
        .iter()
        .map(|r| (r.clone(), json!({"key": r, "size": 1, "lastModified": OLD})))
        .collect();
    serde_json::to_vec(&json!({"version": 1, "entries": entries})).unwrap()
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
    match &spec.v2 {
        Some(v2) => {
            let meta = json!({"version": 2, "partitions": v2.shards.keys().collect::<Vec<_>>(), "commitSeq": v2.commit_seq});
            let shards: Vec<(String, Vec<u8>)> = v2
                .shards
                .iter()
                .map(|(p, rels)| (p.clone(), index_document(rels)))
                .collect();
            session
                .load_shards(&serde_json::to_vec(&meta).unwrap(), &shards)
                .map_err(|e| e.to_string())?;
        }
        None => {
            session
                .load_index(&index_document(&spec.indexed))
                .map_err(|e| e.to_string())?;
        }
    }
    if !spec.pushed.is_empty() || !spec.deleted.is_empty() {
        // The cache holds every indexed rel the push did not delete, and the new ones.
        let indexed: Vec<String> = match &spec.v2 {
            Some(v2) => v2.shards.values().flatten().cloned().collect(),
            None => spec.indexed.clone(),
        };
        let walked: Vec<&str> = indexed
            .iter()
            .filter(|r| !spec.deleted.contains(r))
            .chain(&spec.pushed)
            .map(String::as_str)
            .collect();
        let listing = encode_local(walked.iter().map(|r| (*r, 1, Some(MTIME))));
        let input = PushInput {
            tombstones: spec.deleted.iter().cloned().collect(),
            ..PushInput::default()
        };
        session
            .plan_push(&listing, &input)
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
            .record_push(&uploaded, NOW, true)
            .map_err(|e| e.to_string())?;
    }
    Ok(session)
}

fn drive(spec: &Spec, bucket: &mut Bucket) -> Result<Ran, String> {
    let mut session = session(spec)?;
    let meta_key = session.model().meta_key();
    let mut run = ShardWriteRun::new(spec.request.clone());
    let driven = run_shard_write(
        &mut run,
        &mut session,
        bucket,
        spec.conditional_deletes,
        |key, bucket| {
            for peer in spec.peers.iter().filter(|p| p.before == key) {
                bucket.put(&peer.key, peer.text.as_bytes().to_vec());
            }
        },
    );
    let result = match driven.outcome {
        Ok(result) => serde_json::to_value(result).map_err(|e| e.to_string())?,
        // A run the core refuses: the code is the result, and what it did is checked.
        Err(error) => json!({"error": error.code()}),
    };
    Ok(Ran {
        requests: driven.log,
        writes: driven.writes,
        result,
        meta_key,
    })
}

/// Properties every run has: a v2 set writes nothing unconditionally and the mirror nothing
/// conditionally; no write follows a refused one; the meta is the last write and is written
/// only when every other write landed; a published v2 meta records the request's `commitSeq`
/// and lists exactly the shards written; what a peer wrote is never written over.
fn invariants(spec: &Spec, ran: &Ran, bucket: &Bucket, out: &mut Vec<String>) {
    let v2 = spec.request.commit_seq.is_some() || spec.request.commit;
    // A commit's meta records the sequence after the one read.
    let sequence = match &spec.v2 {
        Some(read) if spec.request.commit => Some(read.commit_seq + 1),
        _ => spec.request.commit_seq,
    };
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
                if meta.commit_seq != sequence {
                    out.push("invariant: the published meta has another commitSeq".into());
                }
                let listed: Vec<Value> = meta.partitions.iter().map(|p| json!(p)).collect();
                let written = ran.result["partitions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if spec.request.commit {
                    // A commit rewrites some shards of a set whose meta lists them all, and
                    // none it retires.
                    if written.iter().any(|p| !listed.contains(p)) {
                        out.push("invariant: a written shard is not in the meta".into());
                    }
                    let retired = ran
                        .requests
                        .iter()
                        .filter_map(|r| r.strip_prefix("delete "));
                    for key in retired {
                        let partition = key.split(' ').next().unwrap_or_default();
                        let partition = partition
                            .trim_start_matches("_index/")
                            .trim_end_matches(".json");
                        if listed.contains(&json!(partition)) {
                            out.push(format!("invariant: {partition} retired but listed"));
                        }
                    }
                } else if listed != written {
                    out.push("invariant: the meta lists other shards than were written".into());
                }
            }
            _ => out.push("invariant: published, but no readable meta in the bucket".into()),
        }
    }
    for peer in &spec.peers {
        // The peer moved once this run reached `before`: whatever this run did after, the
        // peer's copy is what the bucket holds.
        if !ran
            .requests
            .iter()
            .any(|r| r.split(' ').nth(1) == Some(peer.before.as_str()))
        {
            continue;
        }
        if bucket.objects.get(&peer.key).map(|(b, _)| b.as_slice()) != Some(peer.text.as_bytes()) {
            out.push(format!(
                "invariant: the peer's copy of {} was written over or deleted",
                peer.key
            ));
        }
    }
}

/// Runs one spec file; `Err` says every way the run disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(
        path,
        &[
            "requests",
            "published",
            "partitions",
            "commitSeq",
            "retired",
            "kept",
            "error",
        ],
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
