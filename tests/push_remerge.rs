//! The re-merge after a lost publish race compares with what this push read. Another writer's
//! publish between this push's read and its own is judged entry by entry:
//!
//! - a file this push uploaded that the other writer also changed is a conflict: the other
//!   writer's entry stays, never overwritten by a re-insert of ours (one the other writer
//!   deleted goes back in: an edit outlives a delete of the version it edits);
//! - any other file the other writer changed is one this cache never saw: the local index keeps
//!   its base entry and the sidecar does not vouch for the cache, so the next push cannot mistake
//!   the old local copy for an edit, and the next pull does not skip the new version.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};

use s3sync_core::codes::GuardCode;
use s3sync_core::model::time::format_iso_millis;
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::wire::listing::encode_local;

const OLD: &str = "2026-08-01T12:00:00.000Z";
const PEER: &str = "2026-08-08T09:00:00.000Z";
const NOW: &str = "2026-08-08T09:30:00.000Z";
const M1: i64 = 1_785_585_600_512;
const M2: i64 = 1_785_659_415_250;
const SHA_A1: &str = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7";
const SHA_B0: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

/// Edited here and uploaded by this push.
const A: &str = "data/m/a/1/raw";
/// Unchanged here; the other writer replaces it.
const B: &str = "data/m/b/1/raw";
/// Unchanged here; touched (same bytes), so this push records its mtime.
const C: &str = "data/m/c/1/raw";

fn entry(rel: &str, size: u64, modified: &str, mtime: i64, sha: Option<&str>) -> Value {
    let mut e = json!({"key": rel, "size": size, "lastModified": modified,
        "localMtime": format_iso_millis(mtime)});
    if let Some(sha) = sha {
        e["sha256"] = json!(sha);
    }
    e
}

fn read_index() -> Value {
    json!({"version": 1, "entries": {
        A: entry(A, 10, OLD, M1, None),
        B: entry(B, 5, OLD, M1, Some(SHA_B0)),
        C: entry(C, 7, OLD, M1, Some(SHA_B0)),
    }})
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// A push that read `read_index()` with that index as its base, uploaded A and verified C.
fn pushed() -> Session {
    let mut session = Session::new(None, "").unwrap();
    session.load_index(&bytes(&read_index())).unwrap();
    assert_eq!(session.load_base(bytes(&read_index())), BaseLoad::Loaded);
    let listing = encode_local([(A, 11, Some(M2)), (B, 5, Some(M1)), (C, 7, Some(M2))]);
    let mut input = PushInput::default();
    input.hashes.insert(C.into(), SHA_B0.into());
    let plan = session.plan_push(&listing, &input).unwrap();
    assert_eq!(plan.uploads.len(), 1);
    assert_eq!(plan.mtime_updates.len(), 1);
    let uploaded = [Uploaded {
        rel: A.into(),
        size: 11,
        mtime_ms: Some(M2),
        sha256: SHA_A1.into(),
        etag: None,
    }];
    assert!(session.record_push(&uploaded, NOW, true).unwrap());
    session
}

fn published(session: &Session) -> Value {
    serde_json::from_slice(&session.index_json(false).unwrap()).unwrap()
}

fn local(session: &Session) -> Value {
    serde_json::from_slice(&session.local_index_after_push().unwrap()).unwrap()
}

#[test]
fn a_file_the_other_writer_changed_is_behind_not_claimed() {
    let mut session = pushed();
    let mut newer = read_index();
    newer["entries"][B] = entry(B, 6, PEER, M2, None);
    newer["entries"]["files/peer-new.txt"] = entry("files/peer-new.txt", 3, PEER, M2, None);
    session.rebase_push(&bytes(&newer)).unwrap();
    let index = published(&session);
    // The bucket's index holds both writers' work.
    assert_eq!(index["entries"][A]["size"], 11);
    assert_eq!(index["entries"][B]["size"], 6);
    assert_eq!(index["entries"]["files/peer-new.txt"]["size"], 3);
    // This cache's record keeps what it saw: its base entry of B, nothing of the new file.
    let local = local(&session);
    assert_eq!(local["entries"][B]["size"], 5);
    assert!(local["entries"].get("files/peer-new.txt").is_none());
    assert_eq!(local["entries"][A]["size"], 11);
    let plan = session.push_plan().unwrap();
    assert_eq!(plan.behind, [B, "files/peer-new.txt"]);
    assert!(plan.conflicts.is_empty());
}

#[test]
fn an_upload_the_other_writer_also_changed_is_a_conflict() {
    let mut session = pushed();
    let mut newer = read_index();
    newer["entries"][A] = entry(A, 12, PEER, M2, None);
    session.rebase_push(&bytes(&newer)).unwrap();
    // The other writer's version stays in the index.
    assert_eq!(published(&session)["entries"][A]["size"], 12);
    assert_eq!(published(&session)["entries"][A]["lastModified"], PEER);
    let plan = session.push_plan().unwrap();
    assert_eq!(plan.conflicts, [A]);
    assert_eq!(
        plan.blocked
            .iter()
            .filter(|v| v.code == GuardCode::Conflict)
            .count(),
        1
    );
    // The local record keeps the base's A: the next pull sees a conflict, not a plain update.
    assert_eq!(local(&session)["entries"][A]["size"], 10);
}

#[test]
fn an_upload_outlives_the_other_writers_delete_of_the_version_it_edits() {
    let mut session = pushed();
    let mut newer = read_index();
    newer["entries"].as_object_mut().unwrap().remove(A);
    session.rebase_push(&bytes(&newer)).unwrap();
    assert_eq!(published(&session)["entries"][A]["size"], 11);
    assert!(session.push_plan().unwrap().conflicts.is_empty());
}

#[test]
fn a_verified_mtime_stays_off_another_writers_version() {
    let mut session = pushed();
    let mut newer = read_index();
    newer["entries"][C] = entry(C, 7, PEER, M1, Some(SHA_A1));
    session.rebase_push(&bytes(&newer)).unwrap();
    // Not this cache's mtime on the other writer's version of C...
    assert_eq!(
        published(&session)["entries"][C]["localMtime"],
        format_iso_millis(M1)
    );
    // ...and C is behind here: the local record keeps the base's version.
    assert_eq!(local(&session)["entries"][C]["sha256"], SHA_B0);
    assert_eq!(session.push_plan().unwrap().behind, [C]);
}

#[test]
fn a_race_that_changed_nothing_of_ours_changes_no_verdict() {
    let mut session = pushed();
    // The same index again (another writer's publish that only rewrote it).
    session.rebase_push(&bytes(&read_index())).unwrap();
    let plan = session.push_plan().unwrap();
    assert!(plan.behind.is_empty());
    assert!(plan.conflicts.is_empty());
    assert!(plan.blocked.is_empty());
    assert_eq!(published(&session)["entries"][A]["size"], 11);
}
