//! v2 shard sets with hostile content. A partition name that is not a safe single segment is
//! refused (`partition-name-unsafe`) before any shard is read. An entry whose key breaks the
//! path rules is skipped and reported with its refusal's code, as in a v1 index, and a commit
//! keeps it in the shard it was read from: it never makes the commit fail, and is never lost.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Map, Value};

use s3sync_core::index::{parse_shard, ShardMeta};
use s3sync_core::model::paths::{check_partition_name, partition_key};
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::repair::plan::DoctorFacts;
use s3sync_core::runs::session::{Session, ShardFormat};
use s3sync_core::wire::listing::encode_local;

const OLD: &str = "2026-08-01T12:00:00.000Z";
const NOW: &str = "2026-08-08T09:30:00.000Z";
const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
/// An unsafe key with no partition at all (its first segment is `..`).
const ESCAPE: &str = "../../etc/passwd";

fn shard(rels: &[&str]) -> Vec<u8> {
    let mut entries = Map::new();
    for rel in rels {
        entries.insert(
            rel.to_string(),
            json!({"key": rel, "size": 3, "lastModified": OLD}),
        );
    }
    serde_json::to_vec(&json!({"version": 1, "entries": entries})).unwrap()
}

fn meta(partitions: &[&str], commit_seq: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({"version": 2, "partitions": partitions, "commitSeq": commit_seq}))
        .unwrap()
}

fn loaded(shards: &[(&str, &[&str])]) -> Session {
    let names: Vec<&str> = shards.iter().map(|(p, _)| *p).collect();
    let bytes: Vec<(String, Vec<u8>)> = shards
        .iter()
        .map(|(p, rels)| (p.to_string(), shard(rels)))
        .collect();
    let mut session = Session::new(Some("ns"), "").unwrap();
    assert_eq!(session.load_shards(&meta(&names, 7), &bytes).unwrap(), 7);
    session
}

/// Plans a push of `files` (cache paths, 3 bytes each) and records the upload of `new`.
fn push_new(session: &mut Session, files: &[&str], new: &str) -> Value {
    let listing = encode_local(files.iter().map(|f| (*f, 3u64, Some(1_785_585_600_512i64))));
    let plan = session.plan_push(&listing, &PushInput::default()).unwrap();
    let uploads: Vec<&str> = plan
        .uploads
        .iter()
        .map(|u| u.transfer.rel.as_str())
        .collect();
    assert_eq!(uploads, [new]);
    let plan = serde_json::to_value(plan).unwrap();
    let uploaded = [Uploaded {
        rel: new.into(),
        size: 3,
        mtime_ms: Some(1_785_585_600_512),
        sha256: SHA.into(),
        etag: None,
    }];
    assert!(session.record_push(&uploaded, NOW, true).unwrap());
    plan
}

fn code<T: std::fmt::Debug>(result: Result<T, s3sync_core::error::CoreError>) -> String {
    result.unwrap_err().code().to_string()
}

#[test]
fn partition_names_must_be_safe_single_segments() {
    for bad in [
        "../../evil",
        "..",
        ".",
        "",
        "logs/../x",
        "a/b",
        "/abs",
        "logs\\..\\x",
        "ctl\u{1}x",
        "C:",
        "aux",
        "_meta",
    ] {
        assert_eq!(
            code(check_partition_name(bad)),
            "partition-name-unsafe",
            "{bad:?}"
        );
    }
    let keys = [
        "README",
        "logs/a.log",
        "data/aws/ec2/vpc/m-1/state/3/raw",
        "data/aws/ec2/m-1/raw",
        "workflow-runs/w-1/run.yaml",
        "outputs/a/b/c/d/e",
    ];
    for rel in keys {
        let partition = partition_key(rel).unwrap();
        assert!(check_partition_name(&partition).is_ok(), "{partition:?}");
    }
}

#[test]
fn a_meta_listing_an_unsafe_partition_is_refused_before_any_shard_is_read() {
    let bytes = meta(&["logs", "../../evil", "_meta"], 3);
    // Read leniently (a rebuild that replaces it needs its commitSeq), judged strictly.
    let parsed = ShardMeta::shard_first(&bytes).unwrap().unwrap();
    assert_eq!(parsed.commit_seq, Some(3));
    let error = parsed.check_partitions().unwrap_err();
    assert_eq!(error.code(), "partition-name-unsafe");
    assert!(error.to_string().contains("../../evil"), "{error}");
    assert!(error.to_string().contains("1 more"), "{error}");
    // The session refuses it with that code, whatever shards it is handed: the shim reads none.
    let mut session = Session::new(Some("ns"), "").unwrap();
    assert_eq!(
        code(session.load_shards(&bytes, &[])),
        "partition-name-unsafe"
    );
    let evil = vec![("../../evil".to_string(), shard(&["logs/x"]))];
    assert_eq!(
        code(session.load_shards(&meta(&["../../evil"], 3), &evil)),
        "partition-name-unsafe"
    );
    // Only a version 2 meta decides the layout; a v1 one mirrors the monolith.
    let v1 = serde_json::to_vec(&json!({"version": 1, "partitions": ["../../evil"]})).unwrap();
    assert_eq!(ShardMeta::shard_first(&v1).unwrap(), None);
    assert_eq!(code(ShardMeta::shard_first(b"{nope")), "index-corrupt");
}

#[test]
fn a_push_commits_around_an_unsafe_shard_entry_and_keeps_it_in_its_shard() {
    // `../../etc/passwd` (no partition) in the shard the push touches, `/abs/olute` (none
    // either) alone in a shard it does not.
    let mut session = loaded(&[
        ("logs", &["logs/a.log", ESCAPE]),
        ("_root", &["/abs/olute"]),
    ]);
    let plan = push_new(
        &mut session,
        &["ns/logs/a.log", "ns/logs/b.log"],
        "logs/b.log",
    );
    assert_eq!(
        plan["refused"],
        json!([
            {"rel": ESCAPE, "code": "path-dot-segment"},
            {"rel": "/abs/olute", "code": "path-absolute"},
        ])
    );
    assert_eq!(plan["summary"]["refused"], 2);
    assert_eq!(plan["deletes"], json!([]));
    let (shards, next) = session.shard_commit().unwrap();
    assert_eq!(shards.len(), 1, "only the touched shard is written");
    let (partition, bytes) = &shards[0];
    assert_eq!(partition, "logs");
    let entries = parse_shard(bytes.as_ref().unwrap(), partition).unwrap();
    let rels: Vec<&str> = entries.keys().map(String::as_str).collect();
    assert_eq!(rels, [ESCAPE, "logs/a.log", "logs/b.log"]);
    assert_eq!(
        entries.get(ESCAPE).unwrap().last_modified.as_deref(),
        Some(OLD),
        "kept as read"
    );
    let next = ShardMeta::parse(&next).unwrap();
    assert_eq!(
        next.partitions,
        ["_root", "logs"],
        "the untouched shard stays listed"
    );
    assert_eq!(next.commit_seq, Some(8));
}

#[test]
fn an_entry_filed_under_another_partition_stays_in_the_shard_it_was_read_from() {
    // `audit/x.json` belongs to `audit` by its key but sits in `logs`: a commit of `logs` that
    // moved it out would list an `audit` shard it never wrote.
    let mut session = loaded(&[("logs", &["logs/a.log", "audit/x.json"])]);
    push_new(
        &mut session,
        &["ns/logs/a.log", "ns/audit/x.json", "ns/logs/b.log"],
        "logs/b.log",
    );
    let (shards, next) = session.shard_commit().unwrap();
    assert_eq!(shards.len(), 1);
    let entries = parse_shard(shards[0].1.as_ref().unwrap(), "logs").unwrap();
    assert!(entries.contains_key("audit/x.json"));
    assert_eq!(ShardMeta::parse(&next).unwrap().partitions, ["logs"]);
}

#[test]
fn a_rebase_over_a_newer_shard_set_keeps_the_unsafe_entry_too() {
    let mut session = loaded(&[("logs", &["logs/a.log"])]);
    push_new(
        &mut session,
        &["ns/logs/a.log", "ns/logs/b.log"],
        "logs/b.log",
    );
    // Another writer committed meanwhile, and its shard carries an unsafe entry.
    let newer = vec![("logs".to_string(), shard(&["logs/a.log", ESCAPE]))];
    session
        .rebase_push_shards(&meta(&["logs"], 8), &newer)
        .unwrap();
    let (shards, next) = session.shard_commit().unwrap();
    let entries = parse_shard(shards[0].1.as_ref().unwrap(), "logs").unwrap();
    assert!(entries.contains_key(ESCAPE) && entries.contains_key("logs/b.log"));
    assert_eq!(ShardMeta::parse(&next).unwrap().commit_seq, Some(9));
}

#[test]
fn doctor_reports_unsafe_shard_entries_with_their_codes() {
    let session = loaded(&[("logs", &["logs/a.log", ESCAPE])]);
    let listing = encode_local([("ns/logs/a.log", 3u64, Some(1_785_585_600_512i64))]);
    let problems = session.diagnose(&listing, DoctorFacts::default()).unwrap();
    let found = problems
        .iter()
        .find(|p| p.code == "unsafe-index-entry")
        .unwrap_or_else(|| panic!("{problems:?}"));
    assert!(found.message.contains(ESCAPE), "{}", found.message);
    assert!(
        found.message.contains("path-dot-segment"),
        "{}",
        found.message
    );
}

#[test]
fn shard_layouts_never_name_an_unsafe_partition() {
    // `data/x\..\y/a/b` is an unsafe key whose partition would be `data--x\..\y--a`.
    let unsafe_key = "data/x\\..\\y/a/b";
    let body = json!({"version": 1, "entries": {
        "logs/a.log": {"key": "logs/a.log", "size": 3},
        unsafe_key: {"key": unsafe_key, "size": 3},
    }});
    let mut session = Session::new(None, "").unwrap();
    session
        .load_index(&serde_json::to_vec(&body).unwrap())
        .unwrap();
    let mirror = session.shard_layout(ShardFormat::V1Mirror, false).unwrap();
    let names: Vec<&str> = mirror.shards.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["logs"]);
    assert_eq!(mirror.unpartitioned, [unsafe_key]);
    assert!(session
        .shard_layout(ShardFormat::V2 { commit_seq: 1 }, false)
        .is_err());
}
