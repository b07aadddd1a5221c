//! The shard-set write run, driven over a simulated bucket the way the shim drives it: what
//! each write is conditional on, the order (shards, the marked monolith, the meta last), and
//! that a refused condition stops the run before the meta, so nothing a peer wrote meanwhile is
//! overwritten and nothing is published.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/sim.rs"]
mod sim;

use std::collections::{BTreeMap, BTreeSet};

use s3sync_core::index::ShardMeta;
use s3sync_core::runs::migrate::machine::HeadFound;
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::runs::shard_write::machine::{
    MonolithMark, PutCondition, ShardWriteAction, ShardWriteRequest, ShardWriteResult,
    ShardWriteRun,
};
use s3sync_core::wire::listing::encode_local;
use sim::{run_shard_write, Bucket};

const OLD: &str = "2026-08-01T12:00:00.000Z";
const NOW: &str = "2026-12-07T10:00:00.000Z";
const RELS: &[&str] = &[
    "data/aws/ec2/m-1/state/1/raw",
    "logs/run.log",
    "workflow-runs/w-1/run.yaml",
];
const SHARD_KEYS: &[&str] = &[
    "_index/data--aws--ec2--m-1.json",
    "_index/logs.json",
    "_index/workflow-runs--w-1.json",
];
const META: &str = "_index/_meta.json";
const MONOLITH: &str = ".datastore-index.json";

fn index_json(rels: &[&str]) -> Vec<u8> {
    let entries: Vec<String> = rels
        .iter()
        .map(|r| format!(r#""{r}":{{"key":"{r}","size":1,"lastModified":"{OLD}"}}"#))
        .collect();
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(",")).into_bytes()
}

fn session(rels: &[&str]) -> Session {
    let mut session = Session::new(None, "").unwrap();
    session.load_index(&index_json(rels)).unwrap();
    session
}

/// Drives `run` to the end over `bucket` (the probe answers that DELETEs take `If-Match`);
/// `before_put` runs before each write or delete (a peer's move).
fn drive(
    run: &mut ShardWriteRun,
    session: &mut Session,
    bucket: &mut Bucket,
    before_put: impl FnMut(&str, &mut Bucket),
) -> (ShardWriteResult, Vec<String>) {
    let driven = run_shard_write(run, session, bucket, true, before_put);
    (driven.outcome.unwrap(), driven.log)
}

fn migrate_request(monolith_etag: Option<String>) -> ShardWriteRequest {
    ShardWriteRequest {
        commit_seq: Some(1),
        mark_monolith: Some(MonolithMark {
            etag: monolith_etag,
            now_iso: NOW.into(),
        }),
        ..ShardWriteRequest::default()
    }
}

#[test]
fn a_migration_heads_each_key_writes_the_shards_then_the_marked_monolith_then_the_meta() {
    let mut bucket = Bucket::default();
    let monolith = bucket.put(MONOLITH, index_json(RELS));
    // A crashed attempt left one shard: it is written over exactly that copy.
    bucket.put(SHARD_KEYS[1], b"{}".to_vec());
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(migrate_request(Some(monolith)));
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
    assert!(result.published);
    assert_eq!(result.commit_seq, Some(1));
    assert_eq!(result.partitions.len(), 3);
    let expected: Vec<String> = SHARD_KEYS
        .iter()
        .map(|k| format!("head {k}"))
        .chain([
            format!("put {} absent", SHARD_KEYS[0]),
            format!("put {} match", SHARD_KEYS[1]),
            format!("put {} absent", SHARD_KEYS[2]),
            format!("put {MONOLITH} match"),
            format!("head {META}"),
            format!("put {META} absent"),
        ])
        .collect();
    assert_eq!(log, expected);
    let meta = ShardMeta::parse(&bucket.objects[META].0).unwrap();
    assert_eq!((meta.version, meta.commit_seq), (2, Some(1)));
    let marked: serde_json::Value = serde_json::from_slice(&bucket.objects[MONOLITH].0).unwrap();
    assert_eq!(marked["s3syncMovedToShards"], NOW, "{marked}");
    assert_eq!(marked["entries"].as_object().unwrap().len(), RELS.len());
}

#[test]
fn a_monolith_changed_since_it_was_read_stops_the_migration_before_the_meta() {
    let mut bucket = Bucket::default();
    let monolith = bucket.put(MONOLITH, index_json(RELS));
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(migrate_request(Some(monolith)));
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |key, bucket| {
        if key == MONOLITH {
            // A v1 writer publishes between the shards and the mark.
            bucket.put(MONOLITH, index_json(&[RELS[0]]));
        }
    });
    assert!(!result.published);
    assert!(result.partitions.is_empty());
    assert_eq!(result.commit_seq, None);
    assert!(!bucket.objects.contains_key(META), "{log:?}");
    assert_eq!(bucket.objects[MONOLITH].0, index_json(&[RELS[0]]));
}

#[test]
fn a_shard_written_by_a_peer_meanwhile_is_kept_and_no_later_write_starts() {
    let mut bucket = Bucket::default();
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(migrate_request(None));
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |key, bucket| {
        if key == SHARD_KEYS[1] {
            bucket.put(SHARD_KEYS[1], b"peer".to_vec());
        }
    });
    assert!(!result.published);
    assert_eq!(bucket.objects[SHARD_KEYS[1]].0, b"peer");
    assert!(!bucket.objects.contains_key(SHARD_KEYS[2]), "{log:?}");
    assert!(!bucket.objects.contains_key(META));
    assert!(!bucket.objects.contains_key(MONOLITH));
}

#[test]
fn a_rebuild_writes_over_the_copies_it_read_and_heads_only_the_rest() {
    let mut bucket = Bucket::default();
    let meta = bucket.put(
        META,
        br#"{"version":2,"partitions":["logs"],"commitSeq":4}"#.to_vec(),
    );
    let logs = bucket.put(SHARD_KEYS[1], b"{}".to_vec());
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(5),
        meta_read: true,
        meta_etag: Some(meta),
        shard_etags: BTreeMap::from([("logs".to_string(), Some(logs))]),
        ..ShardWriteRequest::default()
    });
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
    assert!(result.published);
    assert_eq!(result.commit_seq, Some(5));
    assert_eq!(
        log,
        [
            format!("head {}", SHARD_KEYS[0]),
            format!("head {}", SHARD_KEYS[2]),
            format!("put {} absent", SHARD_KEYS[0]),
            format!("put {} match", SHARD_KEYS[1]),
            format!("put {} absent", SHARD_KEYS[2]),
            format!("put {META} match"),
        ]
    );
    assert_eq!(
        ShardMeta::parse(&bucket.objects[META].0)
            .unwrap()
            .commit_seq,
        Some(5)
    );
}

#[test]
fn a_commit_that_landed_during_a_rebuild_keeps_its_meta() {
    let mut bucket = Bucket::default();
    let meta = bucket.put(
        META,
        br#"{"version":2,"partitions":[],"commitSeq":4}"#.to_vec(),
    );
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(5),
        meta_read: true,
        meta_etag: Some(meta),
        ..ShardWriteRequest::default()
    });
    let theirs = br#"{"version":2,"partitions":[],"commitSeq":5}"#.to_vec();
    let (result, _) = drive(&mut run, &mut session, &mut bucket, |key, bucket| {
        if key == META {
            bucket.put(META, theirs.clone());
        }
    });
    assert!(!result.published);
    assert_eq!(bucket.objects[META].0, theirs);
}

#[test]
fn a_copy_headed_without_an_etag_is_never_written_over() {
    let mut bucket = Bucket::default();
    bucket.put(SHARD_KEYS[0], b"{}".to_vec());
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(1),
        ..ShardWriteRequest::default()
    });
    assert!(matches!(
        run.poll(&mut session).unwrap(),
        ShardWriteAction::Head { .. }
    ));
    let heads: Vec<HeadFound> = SHARD_KEYS
        .iter()
        .map(|key| HeadFound {
            key: key.to_string(),
            exists: *key == SHARD_KEYS[0],
            size: None,
            etag: None,
        })
        .collect();
    run.on_heads(&heads).unwrap();
    let ShardWriteAction::Put { writes } = run.poll(&mut session).unwrap() else {
        panic!("expected the shard writes");
    };
    assert_eq!(writes[0].condition, PutCondition::Absent);
}

#[test]
fn a_head_that_leaves_a_key_unanswered_is_invalid_input() {
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(1),
        ..ShardWriteRequest::default()
    });
    run.poll(&mut session).unwrap();
    let error = run.on_heads(&[]).unwrap_err();
    assert_eq!(error.code(), "invalid-input");
    assert!(error.to_string().contains(SHARD_KEYS[0]), "{error}");
}

#[test]
fn events_out_of_order_and_an_early_result_are_invalid_input() {
    let mut session = session(RELS);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(1),
        ..ShardWriteRequest::default()
    });
    assert_eq!(run.result().unwrap_err().code(), "invalid-input");
    assert_eq!(run.on_put(true, None).unwrap_err().code(), "invalid-input");
    run.poll(&mut session).unwrap();
    assert_eq!(run.on_put(true, None).unwrap_err().code(), "invalid-input");
}

#[test]
fn a_v2_set_refuses_a_rel_without_partition_before_any_request() {
    let mut session = session(&["logs/run.log", "custom/thing"]);
    let mut run = ShardWriteRun::new(ShardWriteRequest {
        commit_seq: Some(1),
        ..ShardWriteRequest::default()
    });
    let error = run.poll(&mut session).unwrap_err();
    assert!(error.to_string().contains("custom/thing"), "{error}");
}

/// A solo session with `RELS` indexed and a push of a new log file planned and recorded.
fn pushed_session() -> Session {
    let mut session = session(RELS);
    let listing = encode_local([("logs/new.log", 3, Some(1_785_585_600_512))]);
    let plan = session.plan_push(&listing, &PushInput::default()).unwrap();
    assert_eq!(plan.uploads.len(), 1, "{plan:?}");
    let uploaded = [Uploaded {
        rel: "logs/new.log".into(),
        size: 3,
        mtime_ms: Some(1_785_585_600_512),
        sha256: "ab".repeat(32),
        etag: None,
    }];
    session.record_push(&uploaded, NOW, false).unwrap();
    session
}

#[test]
fn the_v1_mirror_writes_only_the_touched_shards_and_its_meta_unconditionally() {
    let mut bucket = Bucket::default();
    // The mirror is a copy: whatever is there is replaced.
    bucket.put(SHARD_KEYS[1], b"stale".to_vec());
    let mut session = pushed_session();
    let mut run = ShardWriteRun::new(ShardWriteRequest::default());
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
    assert!(result.published);
    assert_eq!(result.partitions, ["logs"]);
    assert_eq!(result.commit_seq, None);
    assert_eq!(
        log,
        [
            format!("put {} any", SHARD_KEYS[1]),
            format!("put {META} any")
        ]
    );
    let meta = ShardMeta::parse(&bucket.objects[META].0).unwrap();
    assert_eq!(meta.version, 1);
    let shard: serde_json::Value =
        serde_json::from_slice(&bucket.objects[SHARD_KEYS[1]].0).unwrap();
    let written: BTreeSet<&str> = shard["entries"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(written, BTreeSet::from(["logs/new.log", "logs/run.log"]));
}

#[test]
fn a_mirror_with_nothing_touched_makes_no_request() {
    let mut bucket = Bucket::default();
    let mut session = session(RELS);
    let listing = encode_local([] as [(&str, u64, Option<i64>); 0]);
    session.plan_push(&listing, &PushInput::default()).unwrap();
    session.record_push(&[], NOW, false).unwrap();
    let mut run = ShardWriteRun::new(ShardWriteRequest::default());
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
    assert!(!result.published);
    assert!(log.is_empty());
    assert!(bucket.objects.is_empty());
}

/// A solo v2 index at `commitSeq` 7 (`logs` and `files` shards in `bucket`, their ETags
/// returned) with a push recorded that adds `logs/new.log` and deletes `files/a.txt`, emptying
/// the `files` partition.
fn committing(bucket: &mut Bucket) -> (Session, String, String, String) {
    let logs = br#"{"version":1,"entries":{"logs/run.log":{"key":"logs/run.log","size":1,"lastModified":"2026-08-01T12:00:00.000Z"}}}"#;
    let files = br#"{"version":1,"entries":{"files/a.txt":{"key":"files/a.txt","size":1,"lastModified":"2026-08-01T12:00:00.000Z"}}}"#;
    let meta = br#"{"version":2,"partitions":["files","logs"],"commitSeq":7}"#;
    let meta_etag = bucket.put(META, meta.to_vec());
    let logs_etag = bucket.put(SHARD_KEYS[1], logs.to_vec());
    let files_etag = bucket.put("_index/files.json", files.to_vec());
    let mut session = Session::new(None, "").unwrap();
    session
        .load_shards(
            meta,
            &[
                ("files".to_string(), files.to_vec()),
                ("logs".to_string(), logs.to_vec()),
            ],
        )
        .unwrap();
    let listing = encode_local([
        ("logs/run.log", 1, Some(1_785_585_600_512)),
        ("logs/new.log", 3, Some(1_785_585_600_512)),
    ]);
    let input = PushInput {
        tombstones: ["files/a.txt".to_string()].into(),
        ..PushInput::default()
    };
    let plan = session.plan_push(&listing, &input).unwrap();
    assert_eq!((plan.uploads.len(), plan.deletes.len()), (1, 1), "{plan:?}");
    let uploaded = [Uploaded {
        rel: "logs/new.log".into(),
        size: 3,
        mtime_ms: Some(1_785_585_600_512),
        sha256: "ab".repeat(32),
        etag: None,
    }];
    assert!(session.record_push(&uploaded, NOW, true).unwrap());
    (session, meta_etag, logs_etag, files_etag)
}

fn commit_request(meta: &str, shards: &[(&str, Option<&str>)]) -> ShardWriteRequest {
    ShardWriteRequest {
        commit: true,
        meta_read: true,
        meta_etag: Some(meta.to_string()),
        shard_etags: shards
            .iter()
            .map(|(p, e)| (p.to_string(), e.map(str::to_string)))
            .collect(),
        ..ShardWriteRequest::default()
    }
}

#[test]
fn a_commit_probes_writes_its_shards_then_the_meta_then_retires_the_emptied_shard() {
    let mut bucket = Bucket::default();
    let (mut session, meta, logs, files) = committing(&mut bucket);
    let request = commit_request(&meta, &[("logs", Some(&logs)), ("files", Some(&files))]);
    let mut run = ShardWriteRun::new(request);
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
    assert_eq!(
        log,
        [
            "probe deletes=true".to_string(),
            format!("put {} match", SHARD_KEYS[1]),
            format!("put {META} match"),
            "delete _index/files.json if-match".to_string(),
        ]
    );
    assert!(result.published);
    assert_eq!(result.commit_seq, Some(8));
    assert_eq!(result.partitions, ["logs"]);
    assert_eq!((result.retired, result.kept), (1, 0));
    assert_eq!(result.meta_etag.as_ref(), Some(&bucket.objects[META].1));
    let meta = ShardMeta::parse(&bucket.objects[META].0).unwrap();
    assert_eq!(
        (meta.commit_seq, meta.partitions),
        (Some(8), vec!["logs".to_string()])
    );
    assert!(!bucket.objects.contains_key("_index/files.json"));
}

#[test]
fn a_commit_that_loses_its_meta_retires_nothing() {
    let mut bucket = Bucket::default();
    let (mut session, meta, logs, files) = committing(&mut bucket);
    let request = commit_request(&meta, &[("logs", Some(&logs)), ("files", Some(&files))]);
    let mut run = ShardWriteRun::new(request);
    let (result, log) = drive(&mut run, &mut session, &mut bucket, |key, bucket| {
        if key == META {
            bucket.put(
                META,
                br#"{"version":2,"partitions":["files","logs"],"commitSeq":8}"#.to_vec(),
            );
        }
    });
    assert!(!result.published);
    assert_eq!(
        (result.retired, result.kept, result.commit_seq),
        (0, 0, None)
    );
    assert!(log.iter().all(|l| !l.starts_with("delete")), "{log:?}");
    assert!(bucket.objects.contains_key("_index/files.json"));
}

#[test]
fn an_emptied_shard_read_without_an_etag_or_not_read_is_kept() {
    for files in [Some(None), None] {
        let mut bucket = Bucket::default();
        let (mut session, meta, logs, _) = committing(&mut bucket);
        let mut shards = vec![("logs", Some(logs.as_str()))];
        if let Some(etag) = files {
            shards.push(("files", etag));
        }
        let mut run = ShardWriteRun::new(commit_request(&meta, &shards));
        let (result, log) = drive(&mut run, &mut session, &mut bucket, |_, _| {});
        assert!(result.published);
        assert!(log.iter().all(|l| !l.starts_with("delete")), "{log:?}");
        assert_eq!(result.kept, u64::from(files.is_some()), "{files:?}");
        assert!(bucket.objects.contains_key("_index/files.json"));
    }
}

#[test]
fn a_commit_asks_the_server_about_deletes_and_passes_on_the_answer() {
    let mut bucket = Bucket::default();
    let (mut session, meta, logs, files) = committing(&mut bucket);
    let mut run = ShardWriteRun::new(commit_request(
        &meta,
        &[("logs", Some(&logs)), ("files", Some(&files))],
    ));
    assert_eq!(
        run.poll(&mut session).unwrap(),
        ShardWriteAction::Probe { deletes: true }
    );
    run.on_probed(false).unwrap();
    run.on_put(true, None).unwrap();
    run.on_put(true, None).unwrap();
    let ShardWriteAction::Retire { objects, if_match } = run.poll(&mut session).unwrap() else {
        panic!("expected the retire");
    };
    assert!(!if_match);
    assert_eq!(objects.len(), 1);
    assert_eq!(
        (objects[0].key.as_str(), objects[0].etag.as_str()),
        ("_index/files.json", files.as_str())
    );
}

#[test]
fn a_commit_with_a_commit_seq_of_its_own_is_invalid_input() {
    let mut bucket = Bucket::default();
    let (mut session, meta, _, _) = committing(&mut bucket);
    let mut request = commit_request(&meta, &[]);
    request.commit_seq = Some(99);
    let error = ShardWriteRun::new(request).poll(&mut session).unwrap_err();
    assert_eq!(error.code(), "invalid-input");
    assert!(bucket.requests.is_empty());
}
