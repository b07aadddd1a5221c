//! The base: the local index, what this cache last synced. It decides what changed here and
//! what changed remotely, for pull and push alike, and is written back so that the next run
//! still knows (files left behind, conflicts, remote deletions keep their base entries).
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::runs::pull::plan::{PullOptions, PullOutcome};
use s3sync_core::runs::push::plan::PushInput;
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::wire::listing::encode_local;
use serde_json::Value;

const MTIME: &str = "2026-08-01T12:00:00.512Z";
const MTIME_MS: i64 = 1_785_585_600_512;

fn entry(rel: &str, size: u64, mtime: &str, modified: &str) -> String {
    format!(
        r#""{rel}":{{"key":"{rel}","size":{size},"lastModified":"{modified}","localMtime":"{mtime}"}}"#
    )
}

fn index(entries: &[String]) -> String {
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(","))
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn a_local_index_of_another_binding_is_no_base() {
    // Written by this core for the solo layout...
    let mut solo = Session::new(None, "").unwrap();
    solo.load_index(index(&[entry("logs/a.log", 1, MTIME, MTIME)]).as_bytes())
        .unwrap();
    let listing = encode_local([("logs/a.log", 1, Some(MTIME_MS))]);
    solo.plan_pull(&listing, &PullOptions::default()).unwrap();
    solo.apply_pull(&PullOutcome::default()).unwrap();
    let local = solo.local_index_after_pull().unwrap();
    assert_eq!(json(&local)["s3syncBaseOf"], ".datastore-index.json");
    // ...is the base of the solo layout, not of a namespace the cache moved into.
    let mut again = Session::new(None, "").unwrap();
    assert_eq!(again.load_base(local.clone()), BaseLoad::Loaded);
    let mut namespaced = Session::new(Some("prod"), "").unwrap();
    assert_eq!(namespaced.load_base(local.clone()), BaseLoad::OtherIndex);
    // An index without the field (the extension's) is taken as it is; garbage is no base.
    let plain = index(&[entry("logs/a.log", 1, MTIME, MTIME)]);
    assert_eq!(
        namespaced.load_base(plain.as_bytes().to_vec()),
        BaseLoad::Loaded
    );
    assert_eq!(namespaced.load_base(b"{".to_vec()), BaseLoad::Unreadable);
}

#[test]
fn after_a_pull_files_left_alone_keep_their_base_entries() {
    let remote = index(&[
        entry("logs/edited-here.log", 5, MTIME, MTIME),
        entry(
            "logs/both.log",
            9,
            "2026-08-02T09:00:00.000Z",
            "2026-08-02T09:00:00.000Z",
        ),
    ]);
    let base = index(&[
        entry("logs/edited-here.log", 5, MTIME, MTIME),
        entry("logs/both.log", 5, MTIME, MTIME),
        entry("logs/gone.log", 4, MTIME, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    assert_eq!(
        session.load_base(base.as_bytes().to_vec()),
        BaseLoad::Loaded
    );
    let listing = encode_local([
        ("logs/edited-here.log", 6, Some(MTIME_MS + 1000)),
        ("logs/both.log", 7, Some(MTIME_MS + 1000)),
        ("logs/gone.log", 4, Some(MTIME_MS)),
    ]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap()
        .clone();
    // Only the conflict comes down (its local version set aside first); here its download
    // never arrives (failed), so it is left exactly as it was.
    let downloads: Vec<&str> = plan.downloads.iter().map(|t| t.rel.as_str()).collect();
    assert_eq!(downloads, ["logs/both.log"], "{plan:?}");
    assert_eq!(plan.set_aside, ["logs/both.log"]);
    let applied = session.apply_pull(&PullOutcome::default()).unwrap();
    assert_eq!(applied.unsettled_conflicts, ["logs/both.log"]);
    assert!(applied
        .conflict
        .is_some_and(|v| v.code == "conflict" && v.message.contains("left as they are")));
    let local = json(&session.local_index_after_pull().unwrap());
    let size = |rel: &str| local["entries"][rel]["size"].clone();
    assert_eq!(
        size("logs/edited-here.log"),
        5,
        "the base version, so the push uploads the edit"
    );
    assert_eq!(
        size("logs/both.log"),
        5,
        "the base version: still a conflict next time"
    );
    assert_eq!(
        size("logs/gone.log"),
        4,
        "kept: the push must not bring it back"
    );
    // The bucket's index is untouched by any of it.
    let remote_after = json(&session.index_json(false).unwrap());
    assert_eq!(remote_after["entries"]["logs/both.log"]["size"], 9);
    assert!(remote_after["entries"].get("logs/gone.log").is_none());
}

#[test]
fn a_push_never_uploads_over_a_remote_that_moved_when_the_file_changed_here_too() {
    let remote = index(&[entry(
        "logs/both.log",
        9,
        "2026-08-02T09:00:00.000Z",
        "2026-08-02T09:00:00.000Z",
    )]);
    let base = index(&[
        entry("logs/both.log", 5, MTIME, MTIME),
        entry("logs/gone.log", 4, MTIME, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("logs/both.log", 7, Some(MTIME_MS + 1000)),
        ("logs/gone.log", 4, Some(MTIME_MS)),
    ]);
    let plan = session
        .plan_push(&listing, &PushInput::default())
        .unwrap()
        .clone();
    assert!(plan.uploads.is_empty(), "{plan:?}");
    assert_eq!(plan.conflicts, vec!["logs/both.log".to_string()]);
    assert_eq!(plan.behind, vec!["logs/gone.log".to_string()]);
    let codes: Vec<_> = plan.blocked.iter().map(|v| v.code.as_str()).collect();
    assert_eq!(codes, ["conflict"]);
    assert!(plan.blocked[0].message.contains("logs/both.log"));
}

#[test]
fn versions_compare_by_hash_where_both_sides_record_one() {
    use s3sync_core::index::{same_version, Index};
    let parse = |text: &str| {
        Index::parse(format!(r#"{{"version":1,"entries":{{"r":{text}}}}}"#).as_bytes())
            .unwrap()
            .entries
            .remove("r")
            .unwrap()
    };
    let hashed = |sha: &str, modified: &str| {
        parse(&format!(
            r#"{{"key":"r","size":1,"lastModified":"{modified}","sha256":"{sha}"}}"#
        ))
    };
    let bare = |modified: &str| {
        parse(&format!(
            r#"{{"key":"r","size":1,"lastModified":"{modified}"}}"#
        ))
    };
    // The same bytes re-uploaded (or re-indexed by a rebuild) are the same version.
    assert!(same_version(
        &hashed("aa", MTIME),
        &hashed("AA", "2026-09-01T00:00:00.000Z")
    ));
    // Other bytes of the same size are not, whatever the times say.
    assert!(!same_version(&hashed("aa", MTIME), &hashed("bb", MTIME)));
    // Without a hash on both sides, a new upload time is a new version.
    assert!(same_version(&bare(MTIME), &bare(MTIME)));
    assert!(!same_version(
        &bare(MTIME),
        &bare("2026-09-01T00:00:00.000Z")
    ));
    assert!(!same_version(
        &hashed("aa", MTIME),
        &bare("2026-09-01T00:00:00.000Z")
    ));
}

#[test]
fn a_push_deletes_only_what_this_cache_had_and_the_remote_still_holds_unchanged() {
    let remote = index(&[
        entry("logs/mine.log", 3, MTIME, MTIME),
        entry(
            "logs/theirs-changed.log",
            9,
            MTIME,
            "2026-08-02T09:00:00.000Z",
        ),
        entry("logs/theirs-new.log", 4, MTIME, "2026-08-02T09:00:00.000Z"),
        entry("logs/keep.log", 1, MTIME, MTIME),
    ]);
    let base = index(&[
        entry("logs/mine.log", 3, MTIME, MTIME),
        entry("logs/theirs-changed.log", 5, MTIME, MTIME),
        entry("logs/keep.log", 1, MTIME, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([("logs/keep.log", 1, Some(MTIME_MS))]);
    // The whole folder was marked deleted here.
    let input = PushInput {
        tombstones: ["logs".to_string()].into(),
        ..PushInput::default()
    };
    let plan = session.plan_push(&listing, &input).unwrap().clone();
    let deletes: Vec<_> = plan.deletes.iter().map(|d| d.rel.as_str()).collect();
    assert_eq!(deletes, ["logs/mine.log"]);
    assert_eq!(plan.conflicts, vec!["logs/theirs-changed.log".to_string()]);
    assert_eq!(plan.missing, vec!["logs/theirs-new.log".to_string()]);
}

#[test]
fn a_scoped_pull_vouches_only_for_what_it_fetched() {
    let remote = index(&[
        entry("data/t/a/latest", 1, MTIME, "2026-08-02T09:00:00.000Z"),
        entry("data/t/b/latest", 1, MTIME, MTIME),
        entry("data/t/c/new", 2, MTIME, MTIME),
    ]);
    let base = index(&[
        entry("data/t/a/latest", 1, MTIME, MTIME),
        entry("data/t/b/latest", 1, MTIME, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("data/t/a/latest", 1, Some(MTIME_MS)),
        ("data/t/b/latest", 1, Some(MTIME_MS)),
        ("data/t/c/new", 2, Some(MTIME_MS)),
    ]);
    let scoped = PullOptions {
        scope: vec!["data/t/b".into()],
        ..PullOptions::default()
    };
    let plan = session.plan_pull(&listing, &scoped).unwrap().clone();
    assert!(plan.downloads.is_empty(), "{plan:?}");
    session.apply_pull(&PullOutcome::default()).unwrap();
    let local = json(&session.local_index_after_pull().unwrap());
    // `a` changed remotely but was outside the scope: the base entry stays, so a push sees the
    // local copy as behind, not as a change to upload; `c` was never fetched: no entry at all.
    assert_eq!(local["entries"]["data/t/a/latest"]["lastModified"], MTIME);
    assert!(local["entries"].get("data/t/c/new").is_none());

    let mut push = Session::new(None, "").unwrap();
    push.load_index(remote.as_bytes()).unwrap();
    assert_eq!(
        push.load_base(session.local_index_after_pull().unwrap()),
        BaseLoad::Loaded
    );
    let plan = push
        .plan_push(&listing, &PushInput::default())
        .unwrap()
        .clone();
    assert!(plan.uploads.is_empty(), "{plan:?}");
    assert_eq!(plan.behind, vec!["data/t/a/latest".to_string()]);
}

#[test]
fn after_a_push_untouched_files_keep_this_caches_mtime_not_the_uploaders() {
    // Another cache uploaded a.log (its localMtime is in the remote entry); this cache pulled
    // it (its own mtime in the base) and now pushes b.log.
    let theirs = "2026-08-01T12:30:00.000Z";
    let remote = index(&[entry("logs/a.log", 4, theirs, MTIME)]);
    let base = index(&[entry("logs/a.log", 4, MTIME, MTIME)]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("logs/a.log", 4, Some(MTIME_MS)),
        ("logs/b.log", 2, Some(MTIME_MS + 7)),
    ]);
    session.plan_push(&listing, &PushInput::default()).unwrap();
    let uploaded = [s3sync_core::runs::push::plan::Uploaded {
        rel: "logs/b.log".into(),
        size: 2,
        mtime_ms: Some(MTIME_MS + 7),
        sha256: "ab".repeat(32),
        etag: None,
    }];
    session.record_push(&uploaded, MTIME, false).unwrap();
    let local = json(&session.local_index_after_push().unwrap());
    assert_eq!(local["entries"]["logs/a.log"]["localMtime"], MTIME);
    // So the next pull, after the remote moves on, downloads it: unchanged here, not a conflict.
    let newer = index(&[entry("logs/a.log", 6, theirs, "2026-08-02T09:00:00.000Z")]);
    let mut next = Session::new(None, "").unwrap();
    next.load_index(newer.as_bytes()).unwrap();
    next.load_base(session.local_index_after_push().unwrap());
    let plan = next
        .plan_pull(
            &encode_local([("logs/a.log", 4, Some(MTIME_MS))]),
            &PullOptions::default(),
        )
        .unwrap();
    assert!(plan.conflicts.is_empty(), "{plan:?}");
    assert_eq!(plan.downloads.len(), 1);
}

#[test]
fn a_conflict_this_cache_never_synced_leaves_no_entry_in_the_local_index() {
    // Another cache pushed logs/b.log (20 bytes); this cache, which synced before but never
    // that file, made its own (21 bytes). Found by the two-way property test, seed 1455.
    let remote = index(&[entry("logs/b.log", 20, MTIME, MTIME)]);
    let base = index(&[]);
    let listing = encode_local([("logs/b.log", 21, Some(MTIME_MS + 3000))]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let plan = session
        .plan_push(&listing, &PushInput::default())
        .unwrap()
        .clone();
    assert_eq!(plan.conflicts, ["logs/b.log"], "{plan:?}");
    assert!(plan.uploads.is_empty());
    session.record_push(&[], MTIME, false).unwrap();
    let after_push = session.local_index_after_push().unwrap();
    assert!(json(&after_push)["entries"].get("logs/b.log").is_none());
    // So the next pull sees a file never synced here: set aside, the bucket's put in place.
    let mut next = Session::new(None, "").unwrap();
    next.load_index(remote.as_bytes()).unwrap();
    next.load_base(after_push.clone());
    let plan = next.plan_pull(&listing, &PullOptions::default()).unwrap();
    assert_eq!(plan.set_aside, ["logs/b.log"]);
    // And a pull whose download of it failed leaves no entry either.
    next.apply_pull(&PullOutcome::default()).unwrap();
    let after_pull = next.local_index_after_pull().unwrap();
    assert!(json(&after_pull)["entries"].get("logs/b.log").is_none());
}

#[test]
fn a_file_this_cache_never_had_leaves_no_entry_in_the_local_index_after_a_push() {
    // Another cache pushed logs/b.log; this one, synced before but never holding that file,
    // pushes something else. Recording the remote's entry for logs/b.log would say this cache
    // synced that version: a file it makes there later would then read as "changed here, the
    // remote unchanged" and go up over a version it never saw. Found by the push machine's
    // property test (tests/push_machine.rs).
    let remote = index(&[entry("logs/b.log", 20, MTIME, MTIME)]);
    let base = index(&[]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let plan = session
        .plan_push(&encode_local([]), &PushInput::default())
        .unwrap()
        .clone();
    // Not missing: this cache never had it, so its absence is no deletion to report.
    assert!(plan.missing.is_empty(), "{plan:?}");
    assert_eq!(plan.not_pulled, ["logs/b.log"], "{plan:?}");
    session.record_push(&[], MTIME, false).unwrap();
    let after_push = session.local_index_after_push().unwrap();
    assert!(json(&after_push)["entries"].get("logs/b.log").is_none());
    // So the file made here next is one this cache never synced: compared by content with the
    // bucket's, never uploaded over it.
    let mut next = Session::new(None, "").unwrap();
    next.load_index(remote.as_bytes()).unwrap();
    next.load_base(after_push.clone());
    let listing = encode_local([("logs/b.log", 20, Some(MTIME_MS + 3000))]);
    let plan = next.plan_push(&listing, &PushInput::default()).unwrap();
    assert!(plan.uploads.is_empty(), "{plan:?}");
}

#[test]
fn absence_is_missing_only_for_files_the_base_names() {
    // A scoped pull (swamp's `method run`) brings one model's files; the bucket names others
    // the cache never had. Their absence is no deletion: not `missing` (no warning, no block on
    // the seal), but `not_pulled`. A file the base names and the cache lost stays `missing`.
    let remote = index(&[
        entry("data/kept.yaml", 4, MTIME, MTIME),
        entry("data/lost.yaml", 4, MTIME, MTIME),
        entry("data/peer.yaml", 4, MTIME, MTIME),
    ]);
    let base = index(&[
        entry("data/kept.yaml", 4, MTIME, MTIME),
        entry("data/lost.yaml", 4, MTIME, MTIME),
    ]);
    let listing = encode_local([("data/kept.yaml", 4, Some(MTIME_MS))]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let plan = session
        .plan_push(&listing, &PushInput::default())
        .unwrap()
        .clone();
    assert_eq!(plan.missing, ["data/lost.yaml"], "{plan:?}");
    assert_eq!(plan.not_pulled, ["data/peer.yaml"], "{plan:?}");
    assert_eq!((plan.summary.missing, plan.summary.not_pulled), (1, 1));
    assert!(
        plan.deletes.is_empty() && plan.uploads.is_empty(),
        "{plan:?}"
    );

    // With no base at all nothing tells the two apart: both are reported missing, as before.
    let mut baseless = Session::new(None, "").unwrap();
    baseless.load_index(remote.as_bytes()).unwrap();
    let plan = baseless.plan_push(&listing, &PushInput::default()).unwrap();
    assert_eq!(plan.missing, ["data/lost.yaml", "data/peer.yaml"]);
    assert!(plan.not_pulled.is_empty());
}
