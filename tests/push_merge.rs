//! The publish merge, driven through `session::Session` as the shim drives it: plan a push, record
//! what was uploaded, and — after losing the conditional publish to another writer — re-apply
//! this push's changes over the newer index. The other writer's entries survive, this push's
//! uploads survive, and a delete is re-applied only over the very entry it deleted.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use serde_json::{json, Value};

use s3sync_core::index::Index;
use s3sync_core::model::time::format_iso_millis;
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::safety::{normalize_tombstone, Evidence};
use s3sync_core::wire::listing::encode_local;

const OLD: &str = "2026-08-01T12:00:00.000Z";
const PEER: &str = "2026-08-08T09:00:00.000Z";
const NOW: &str = "2026-08-08T09:30:00.000Z";
const M1: i64 = 1_785_585_600_512;
const M2: i64 = 1_785_659_415_250;
const SHA_KEEP: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
const SHA_UP1: &str = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7";
const SHA_NEW: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

/// Deleted by this push; the other writer leaves it alone (the delete re-applies).
const GONE: &str = "data/m/2/raw";
/// Deleted by this push; the other writer re-uploads it with another size.
const REUPLOADED: &str = "data/m/3/raw";
/// Deleted by this push; the other writer re-uploads it with the same size, later.
const REUPLOADED_SAME_SIZE: &str = "data/m/4/raw";
/// Deleted by this push and by the other writer.
const BOTH_DELETED: &str = "data/m/5/raw";
/// Changed locally: this push uploads it.
const CHANGED: &str = "data/m/1/raw";
/// New locally: this push uploads it.
const NEW: &str = "files/new.txt";
/// Unchanged, touched: its hash matches, so only its localMtime is recorded.
const KEEP: &str = "files/keep.txt";
/// An internal entry a buggy writer left in the index: pruned.
const INTERNAL: &str = "_index/_meta.json";

fn entry(rel: &str, size: u64, last_modified: &str) -> Value {
    json!({"key": rel, "size": size, "lastModified": last_modified})
}

fn original_index() -> Value {
    json!({
        "version": 1,
        "lastPulled": "2026-08-07T10:00:00.000Z",
        "entries": {
            CHANGED: {"key": CHANGED, "size": 10, "lastModified": OLD, "localMtime": format_iso_millis(M1)},
            GONE: entry(GONE, 20, OLD),
            REUPLOADED: entry(REUPLOADED, 30, OLD),
            REUPLOADED_SAME_SIZE: entry(REUPLOADED_SAME_SIZE, 40, OLD),
            BOTH_DELETED: entry(BOTH_DELETED, 50, OLD),
            KEEP: {"key": KEEP, "size": 5, "lastModified": OLD, "localMtime": format_iso_millis(M1), "sha256": SHA_KEEP},
            INTERNAL: entry(INTERNAL, 60, OLD),
        }
    })
}

/// What the other writer published while this push ran: two new entries, two re-uploads of
/// rels this push deletes, one delete of its own, and fields this core does not know.
fn newer_index() -> Vec<u8> {
    let mut index = original_index();
    let entries = index["entries"].as_object_mut().unwrap();
    entries.insert(
        "data/peer/1/raw".into(),
        json!({"key": "data/peer/1/raw", "size": 100, "lastModified": PEER, "etag": "\"p1\""}),
    );
    entries.insert("files/peer.txt".into(), entry("files/peer.txt", 9, PEER));
    entries.insert(REUPLOADED.into(), entry(REUPLOADED, 31, PEER));
    entries.insert(
        REUPLOADED_SAME_SIZE.into(),
        entry(REUPLOADED_SAME_SIZE, 40, PEER),
    );
    entries.remove(BOTH_DELETED);
    index["peerField"] = json!({"writer": "extension"});
    serde_json::to_vec(&index).unwrap()
}

fn listing() -> Vec<u8> {
    encode_local([
        ("ns/data/m/1/raw", 11, Some(M2)),
        ("ns/files/keep.txt", 5, Some(M2)),
        ("ns/files/new.txt", 7, Some(M2)),
        (".datastore-index.json", 900, Some(M1)),
    ])
}

fn uploaded() -> Vec<Uploaded> {
    vec![
        Uploaded {
            rel: CHANGED.into(),
            size: 11,
            mtime_ms: Some(M2),
            sha256: SHA_UP1.into(),
            etag: None,
        },
        Uploaded {
            rel: NEW.into(),
            size: 7,
            mtime_ms: Some(M2),
            sha256: SHA_NEW.into(),
            etag: None,
        },
    ]
}

/// A session with the original index loaded and the push planned in two steps (hash asked
/// for, then given), as the shim does it.
fn planned_session() -> Session {
    let mut session = Session::new(Some("ns"), "swamp").unwrap();
    session
        .load_index(&serde_json::to_vec(&original_index()).unwrap())
        .unwrap();
    let tombstones: BTreeSet<String> = [
        "ns/data/m/2/raw",
        "ns/data/m/3/raw",
        "data/m/4/raw",
        "ns/data/m/5/raw",
    ]
    .iter()
    .filter_map(|t| normalize_tombstone(session.model(), t))
    .collect();
    assert_eq!(tombstones.len(), 4);
    let mut input = PushInput {
        tombstones,
        ..PushInput::default()
    };
    let listing = listing();
    let first = session.plan_push(&listing, &input).unwrap();
    assert_eq!(first.needs_hash, ["ns/files/keep.txt"]);
    input
        .hashes
        .insert("ns/files/keep.txt".into(), SHA_KEEP.into());
    let plan = session.plan_push(&listing, &input).unwrap();
    assert!(plan.needs_hash.is_empty());
    assert!(plan.blocked.is_empty(), "{:?}", plan.blocked);
    let uploads: Vec<&str> = plan
        .uploads
        .iter()
        .map(|u| u.transfer.rel.as_str())
        .collect();
    assert_eq!(uploads, [CHANGED, NEW]);
    let deletes: Vec<&str> = plan.deletes.iter().map(|d| d.rel.as_str()).collect();
    assert_eq!(
        deletes,
        [GONE, REUPLOADED, REUPLOADED_SAME_SIZE, BOTH_DELETED]
    );
    assert!(plan
        .deletes
        .iter()
        .all(|d| matches!(d.evidence, Evidence::Tombstone { .. })));
    assert_eq!(plan.prune, [INTERNAL]);
    assert_eq!(plan.mtime_updates.len(), 1);
    assert_eq!(plan.mtime_updates[0].rel, KEEP);
    session
}

/// The session's index as a JSON value (the compact remote copy, parsed back).
fn index_of(session: &Session) -> Value {
    let bytes = session.index_json(false).unwrap();
    // What the shim would publish is a valid index.
    Index::parse(&bytes).expect("the published index parses");
    serde_json::from_slice(&bytes).unwrap()
}

fn keys(index: &Value) -> Vec<String> {
    index["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn record_push_applies_uploads_deletes_mtimes_and_prune() {
    let mut session = planned_session();
    assert!(session.record_push(&uploaded(), NOW, true).unwrap());
    let index = index_of(&session);
    assert_eq!(keys(&index), [CHANGED, KEEP, NEW]);
    let changed = &index["entries"][CHANGED];
    assert_eq!(changed["size"], 11);
    assert_eq!(changed["sha256"], SHA_UP1);
    assert_eq!(changed["lastModified"], NOW);
    assert_eq!(changed["localMtime"], format_iso_millis(M2));
    assert_eq!(index["entries"][NEW]["size"], 7);
    assert_eq!(index["entries"][NEW]["key"], NEW);
    assert_eq!(index["entries"][KEEP]["localMtime"], format_iso_millis(M2));
    assert_eq!(index["entries"][KEEP]["sha256"], SHA_KEEP);
}

#[test]
fn rebase_keeps_the_other_writers_work() {
    let mut session = planned_session();
    assert!(session.record_push(&uploaded(), NOW, true).unwrap());
    session.rebase_push(&newer_index()).unwrap();
    let index = index_of(&session);
    let entries = index["entries"].as_object().unwrap();

    // The other writer's new entries, with their unknown fields.
    assert_eq!(entries["data/peer/1/raw"]["size"], 100);
    assert_eq!(entries["data/peer/1/raw"]["etag"], "\"p1\"");
    assert_eq!(entries["files/peer.txt"]["size"], 9);
    assert_eq!(index["peerField"], json!({"writer": "extension"}));

    // This push's uploads.
    assert_eq!(entries[CHANGED]["size"], 11);
    assert_eq!(entries[CHANGED]["sha256"], SHA_UP1);
    assert_eq!(entries[NEW]["size"], 7);
    assert_eq!(entries[KEEP]["localMtime"], format_iso_millis(M2));

    // This push's delete re-applies over the entry it deleted...
    assert!(!entries.contains_key(GONE), "{GONE} should stay deleted");
    // ...but never over the other writer's re-upload, whatever its size.
    assert_eq!(entries[REUPLOADED]["size"], 31);
    assert_eq!(entries[REUPLOADED]["lastModified"], PEER);
    assert_eq!(entries[REUPLOADED_SAME_SIZE]["size"], 40);
    assert_eq!(entries[REUPLOADED_SAME_SIZE]["lastModified"], PEER);
    // Deleted on both sides: gone, and not resurrected.
    assert!(!entries.contains_key(BOTH_DELETED));
    // The internal entry is pruned again.
    assert!(!entries.contains_key(INTERNAL));

    assert_eq!(
        keys(&index),
        [
            "data/m/1/raw",
            "data/m/3/raw",
            "data/m/4/raw",
            "data/peer/1/raw",
            "files/keep.txt",
            "files/new.txt",
            "files/peer.txt",
        ]
    );
}

/// A second lost race: the changes re-apply over the next index just the same.
#[test]
fn rebase_again_over_a_still_newer_index() {
    let mut session = planned_session();
    assert!(session.record_push(&uploaded(), NOW, true).unwrap());
    session.rebase_push(&newer_index()).unwrap();
    let mut newest: Value = serde_json::from_slice(&newer_index()).unwrap();
    newest["entries"]["logs/late"] = entry("logs/late", 3, PEER);
    // The other writer also re-uploaded the rel this push deleted without contest.
    newest["entries"][GONE] = entry(GONE, 21, PEER);
    session
        .rebase_push(&serde_json::to_vec(&newest).unwrap())
        .unwrap();
    let index = index_of(&session);
    let entries = index["entries"].as_object().unwrap();
    assert_eq!(entries["logs/late"]["size"], 3);
    assert_eq!(entries[GONE]["size"], 21, "a re-upload is never dropped");
    assert_eq!(entries[CHANGED]["size"], 11);
    assert!(entries.contains_key(NEW));
    assert!(entries.contains_key("data/peer/1/raw"));
    assert!(!entries.contains_key(INTERNAL));
}

#[test]
fn unconfirmed_deletes_remove_nothing() {
    let mut session = planned_session();
    assert!(
        session.record_push(&uploaded(), NOW, false).unwrap(),
        "the uploads still need publishing"
    );
    let index = index_of(&session);
    let entries = index["entries"].as_object().unwrap();
    for rel in [GONE, REUPLOADED, REUPLOADED_SAME_SIZE, BOTH_DELETED] {
        assert!(
            entries.contains_key(rel),
            "{rel} removed without confirmation"
        );
        assert_eq!(entries[rel]["lastModified"], OLD);
    }
    assert_eq!(entries[CHANGED]["size"], 11);
    assert!(entries.contains_key(NEW));
    assert!(
        !entries.contains_key(INTERNAL),
        "pruning needs no confirmation"
    );

    // Nor does a rebase: only what the other writer did itself is gone.
    session.rebase_push(&newer_index()).unwrap();
    let index = index_of(&session);
    let entries = index["entries"].as_object().unwrap();
    assert_eq!(entries[GONE]["size"], 20);
    assert_eq!(entries[REUPLOADED]["size"], 31);
    assert!(entries.contains_key(REUPLOADED_SAME_SIZE));
    assert!(
        !entries.contains_key(BOTH_DELETED),
        "the other writer deleted it"
    );
    assert!(entries.contains_key("files/peer.txt"));
    assert_eq!(entries[CHANGED]["size"], 11);
}

/// Nothing uploaded, deletes not confirmed, nothing to prune: the remote index stays as it is.
#[test]
fn a_push_that_changes_nothing_remote_does_not_publish() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    let index = json!({"version": 1, "entries": {
        "files/a": entry("files/a", 1, OLD),
        "files/b": entry("files/b", 2, OLD),
    }});
    session
        .load_index(&serde_json::to_vec(&index).unwrap())
        .unwrap();
    let listing = encode_local([("ns/files/a", 1, Some(M1))]);
    let input = PushInput {
        tombstones: ["ns/files/b".to_string()].into_iter().collect(),
        ..PushInput::default()
    };
    let plan = session.plan_push(&listing, &input).unwrap();
    assert_eq!(plan.deletes.len(), 1);
    assert!(plan.uploads.is_empty());
    assert!(!session.record_push(&[], NOW, false).unwrap());
    assert_eq!(index_of(&session)["entries"]["files/b"]["size"], 2);
    // Confirmed, the delete must be published.
    let plan = session.plan_push(&listing, &input).unwrap();
    assert_eq!(plan.deletes.len(), 1);
    assert!(session.record_push(&[], NOW, true).unwrap());
    assert_eq!(keys(&index_of(&session)), ["files/a"]);
}

#[test]
fn steps_out_of_order_are_refused() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    assert!(session.rebase_push(&newer_index()).is_err());
    session
        .load_index(&serde_json::to_vec(&original_index()).unwrap())
        .unwrap();
    assert!(session.record_push(&[], NOW, true).is_err(), "no plan yet");
    assert!(
        session.rebase_push(&newer_index()).is_err(),
        "nothing recorded yet"
    );
}

/// A corrupt newer index aborts the rebase and leaves the recorded index as it was: it is never
/// read as empty (which would publish an index without the other writer's entries).
#[test]
fn a_corrupt_newer_index_is_never_read_as_empty() {
    let mut session = planned_session();
    assert!(session.record_push(&uploaded(), NOW, true).unwrap());
    let before = session.index_json(false).unwrap();
    for bad in [
        &b""[..],
        b"{",
        b"[]",
        br#"{"version": 1}"#,
        br#"{"version": 9, "entries": {}}"#,
        br#"{"version": 1, "entries": {"a": {"key": "b", "size": 1}}}"#,
    ] {
        let error = session.rebase_push(bad).unwrap_err();
        assert!(
            ["index-corrupt", "index-version-unsupported"].contains(&error.code()),
            "{:?}: {}",
            String::from_utf8_lossy(bad),
            error.code()
        );
        assert_eq!(session.index_json(false).unwrap(), before);
    }
    // And the next good index still merges.
    session.rebase_push(&newer_index()).unwrap();
    assert!(index_of(&session)["entries"]
        .as_object()
        .unwrap()
        .contains_key("files/peer.txt"));
}

/// After a push, a file this cache still holds in its base version while another cache pushed a
/// newer one keeps its base entry in the local index: the next push must not read the stale
/// copy as a local change and upload it over the newer version.
#[test]
fn the_local_index_keeps_the_base_of_files_behind_the_remote() {
    let entry = |size: u64, mtime: &str, sha: &str| {
        format!(
            r#"{{"key":"logs/shared.log","size":{size},"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"{mtime}","sha256":"{sha}"}}"#
        )
    };
    let index = |e: String| format!(r#"{{"version":1,"entries":{{"logs/shared.log":{e}}}}}"#);
    let ours = entry(12, "2026-08-01T12:00:00.512Z", "aa");
    let theirs = entry(46, "2026-08-02T09:00:00.000Z", "bb");
    let mut session = Session::new(None, "").unwrap();
    session.load_index(index(theirs).as_bytes()).unwrap();
    assert_eq!(
        session.load_base(index(ours).into_bytes()),
        BaseLoad::Loaded
    );
    let listing = encode_local([
        ("logs/shared.log", 12, Some(1_785_585_600_512)),
        ("logs/new.log", 3, Some(1_785_585_600_512)),
    ]);
    let plan = session
        .plan_push(&listing, &PushInput::default())
        .unwrap()
        .clone();
    assert_eq!(plan.behind, vec!["logs/shared.log".to_string()]);
    let uploads: Vec<_> = plan
        .uploads
        .iter()
        .map(|u| u.transfer.rel.as_str())
        .collect();
    assert_eq!(uploads, ["logs/new.log"]);
    let uploaded = [Uploaded {
        rel: "logs/new.log".into(),
        size: 3,
        mtime_ms: Some(1_785_585_600_512),
        sha256: "cc".into(),
        etag: None,
    }];
    session
        .record_push(&uploaded, "2026-08-03T00:00:00.000Z", false)
        .unwrap();
    let remote: serde_json::Value =
        serde_json::from_slice(&session.index_json(false).unwrap()).unwrap();
    let local: serde_json::Value =
        serde_json::from_slice(&session.local_index_after_push().unwrap()).unwrap();
    // The bucket's index keeps the newer version; the local one our base.
    assert_eq!(remote["entries"]["logs/shared.log"]["size"], 46);
    assert_eq!(local["entries"]["logs/shared.log"]["size"], 12);
    assert_eq!(local["entries"]["logs/new.log"]["size"], 3);
}
