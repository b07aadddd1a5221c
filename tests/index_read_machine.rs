//! The index read as a machine (`runs::index_read`): the order of its reads and what each
//! purpose makes of them are covered by `tests/specs/index_read/`; here, a push's re-merge over
//! a set another writer committed, and the events a run refuses.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/index_read_sim.rs"]
mod index_read_sim;

use serde_json::{json, Map};

use s3sync_core::runs::index_read::events::IndexReadEvent;
use s3sync_core::runs::index_read::machine::{
    IndexOrigin, IndexReadPurpose, IndexReadRequest, IndexReadRun,
};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;

use index_read_sim::{read_index, IndexBucket};

const OLD: &str = "2026-08-01T12:00:00.000Z";
const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn shard(rels: &[&str]) -> String {
    let mut entries = Map::new();
    for rel in rels {
        entries.insert(
            rel.to_string(),
            json!({"key": rel, "size": 3, "lastModified": OLD}),
        );
    }
    json!({"version": 1, "entries": entries}).to_string()
}

fn meta(partitions: &[&str], commit_seq: u64) -> String {
    json!({"version": 2, "partitions": partitions, "commitSeq": commit_seq}).to_string()
}

fn request(purpose: IndexReadPurpose) -> IndexReadRequest {
    IndexReadRequest {
        purpose,
        publish_rebuild: None,
    }
}

fn rels(session: &Session) -> Vec<String> {
    let index: serde_json::Value =
        serde_json::from_slice(&session.index_json(false).unwrap()).unwrap();
    index["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_re_merge_reads_the_newer_set_and_keeps_this_push_over_it() {
    let mut bucket = IndexBucket::default();
    bucket.put("ns/_index/_meta.json", &meta(&["logs"], 7));
    bucket.put("ns/_index/logs.json", &shard(&["logs/a.log"]));
    let mut session = Session::new(Some("ns"), "").unwrap();
    let first = read_index(&mut session, &mut bucket, request(IndexReadPurpose::Load));
    let first = first.outcome.unwrap().shards.unwrap();
    assert_eq!(first.commit_seq, 7);

    // This push uploads logs/b.log...
    let walk = encode_local(
        ["ns/logs/a.log", "ns/logs/b.log"].map(|f| (f, 3u64, Some(1_785_585_600_512i64))),
    );
    session.plan_push(&walk, &PushInput::default()).unwrap();
    let uploaded = [Uploaded {
        rel: "logs/b.log".into(),
        size: 3,
        mtime_ms: Some(1_785_585_600_512),
        sha256: SHA.into(),
        etag: None,
    }];
    assert!(session
        .record_push(&uploaded, "2026-08-08T09:30:00.000Z", true)
        .unwrap());
    // ...while another writer commits logs/c.log first.
    bucket.put("ns/_index/_meta.json", &meta(&["logs"], 8));
    bucket.put("ns/_index/logs.json", &shard(&["logs/a.log", "logs/c.log"]));

    let again = read_index(&mut session, &mut bucket, request(IndexReadPurpose::Rebase));
    let again = again.outcome.unwrap();
    assert_eq!(again.origin, IndexOrigin::Shards);
    let set = again.shards.unwrap();
    // The next commit is conditional on the copies read now, not on the first read's.
    assert_ne!(set.meta_etag, first.meta_etag);
    assert_eq!(
        set.meta_etag,
        Some(bucket.objects["ns/_index/_meta.json"].1.clone())
    );
    assert_eq!(
        set.shard_etags["logs"],
        Some(bucket.objects["ns/_index/logs.json"].1.clone())
    );
    assert_eq!(set.commit_seq, 8);
    let (shards, next) = session.shard_commit().unwrap();
    let written = String::from_utf8(shards[0].1.clone().unwrap().to_vec()).unwrap();
    for rel in ["logs/a.log", "logs/b.log", "logs/c.log"] {
        assert!(written.contains(rel), "{rel} lost from {written}");
    }
    assert!(String::from_utf8(next).unwrap().contains("\"commitSeq\":9"));
}

#[test]
fn events_the_read_is_not_waiting_for_are_refused() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    let mut run = IndexReadRun::new(request(IndexReadPurpose::Load));
    for early in [
        IndexReadEvent::Rebuilt,
        IndexReadEvent::ShardsRead {
            failed: 0,
            first: None,
        },
        IndexReadEvent::Shard {
            partition: "logs".into(),
            bytes: b"{}".to_vec().into(),
            etag: None,
        },
    ] {
        let error = Machine::handle(&mut run, &mut session, early).unwrap_err();
        assert_eq!(error.code(), "invalid-input");
    }
    assert_eq!(
        Machine::result(&run).unwrap_err().code(),
        "invalid-input",
        "not done"
    );
    // A shard the meta did not list is refused, not loaded beside the others.
    let meta = meta(&["logs"], 1);
    Machine::handle(
        &mut run,
        &mut session,
        IndexReadEvent::Got {
            bytes: Some(meta.into_bytes().into()),
            etag: None,
        },
    )
    .unwrap();
    let stray = IndexReadEvent::Shard {
        partition: "audit".into(),
        bytes: shard(&["audit/x.json"]).into_bytes().into(),
        etag: None,
    };
    let error = Machine::handle(&mut run, &mut session, stray).unwrap_err();
    assert_eq!(error.code(), "invalid-input");
    // Told that every shard was read when one never came: index-corrupt, nothing loaded.
    let error = Machine::handle(
        &mut run,
        &mut session,
        IndexReadEvent::ShardsRead {
            failed: 0,
            first: None,
        },
    )
    .unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    assert!(session.index_len().is_err(), "nothing was loaded");
}

#[test]
fn a_load_rebuilds_only_when_neither_meta_nor_monolith_exists() {
    let mut bucket = IndexBucket::default();
    bucket.put("ns/data/a.yaml", "a");
    let mut session = Session::new(Some("ns"), "").unwrap();
    let driven = read_index(&mut session, &mut bucket, request(IndexReadPurpose::Load));
    assert_eq!(driven.outcome.unwrap().origin, IndexOrigin::Rebuilt);
    assert_eq!(rels(&session), ["data/a.yaml"]);
    // With a monolith there, however empty, it is the index: no rebuild.
    let mut bucket = IndexBucket::default();
    bucket.put("ns/data/a.yaml", "a");
    bucket.put("ns/.datastore-index.json", r#"{"version":1,"entries":{}}"#);
    let mut session = Session::new(Some("ns"), "").unwrap();
    let driven = read_index(&mut session, &mut bucket, request(IndexReadPurpose::Load));
    assert_eq!(driven.outcome.unwrap().origin, IndexOrigin::Monolith);
    assert!(rels(&session).is_empty());
    assert!(!driven.actions.contains(&"rebuild".to_string()));
}
