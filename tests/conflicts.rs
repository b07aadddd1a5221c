//! Conflict copies and `resolve`: a file changed here and in the bucket since the last sync
//! keeps both versions (the bucket's in place, this cache's under `.s3sync-conflicts/`, named by
//! content), and a person settles it with one command.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::model::paths::{is_never_synced, PathModel};
use s3sync_core::runs::pull::plan::{PullOptions, PullOutcome};
use s3sync_core::runs::session::Session;
use s3sync_core::safety::conflicts::{
    conflict_copy_path, files_in_conflict, original_of_copy, plan_resolve, Keep, KeptAside,
};
use s3sync_core::wire::listing::{decode_local, encode_local};
use serde_json::Value;

const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const OTHER: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
const MTIME: &str = "2026-08-01T12:00:00.512Z";
const MTIME_MS: i64 = 1_785_585_600_512;

#[test]
fn a_copy_is_named_by_content_with_the_extension_last() {
    let cases = [
        (
            "logs/app.log",
            ".s3sync-conflicts/logs/app.conflict-0123456789ab.log",
        ),
        (
            "prod/data/t/m/raw",
            ".s3sync-conflicts/prod/data/t/m/raw.conflict-0123456789ab",
        ),
        (
            "logs/.env",
            ".s3sync-conflicts/logs/.env.conflict-0123456789ab",
        ),
        (
            "a.tar.gz",
            ".s3sync-conflicts/a.tar.conflict-0123456789ab.gz",
        ),
    ];
    for (original, copy) in cases {
        assert_eq!(conflict_copy_path(original, HASH).unwrap(), copy);
        assert_eq!(original_of_copy(copy).as_deref(), Some(original), "{copy}");
    }
    // Two versions of one file never share a name; one version kept twice does.
    assert_ne!(
        conflict_copy_path("logs/app.log", HASH).unwrap(),
        conflict_copy_path("logs/app.log", OTHER).unwrap()
    );
}

#[test]
fn bad_input_is_refused_and_foreign_names_are_not_copies() {
    for hash in ["", "0123", "0123456789AB", "g123456789abcdef"] {
        let error = conflict_copy_path("logs/app.log", hash).unwrap_err();
        assert_eq!(error.code(), "invalid-input", "{hash:?}");
    }
    assert!(conflict_copy_path("logs/", HASH).is_err());
    for path in [
        "logs/app.log",
        ".s3sync-conflicts/logs/app.log",
        ".s3sync-conflicts/logs/app.conflict-xyz.log",
        ".s3sync-conflicts/logs/app.conflict-0123456789ab_log",
        ".s3sync-conflicts/logs/.conflict-0123456789ab",
        ".s3sync-repair/backup/app.conflict-0123456789ab.log",
    ] {
        assert_eq!(original_of_copy(path), None, "{path}");
    }
}

#[test]
fn the_conflict_folder_never_syncs() {
    assert!(is_never_synced(
        ".s3sync-conflicts/logs/app.conflict-0123456789ab.log"
    ));
    // It is not a namespace either, so a namespaced cache does not see another namespace.
    assert!(PathModel::new(Some(".s3sync-conflicts"), "").is_err());
}

fn copies(files: &[(&str, u64, Option<i64>)]) -> Vec<u8> {
    encode_local(files.iter().copied())
}

#[test]
fn keep_mine_puts_back_the_newest_copy_and_lists_every_copy_of_the_file() {
    let model = PathModel::new(Some("prod"), "").unwrap();
    let buffer = copies(&[
        (
            ".s3sync-conflicts/prod/logs/a.conflict-0123456789ab.log",
            3,
            Some(1_000),
        ),
        (
            ".s3sync-conflicts/prod/logs/a.conflict-fedcba987654.log",
            4,
            Some(2_000),
        ),
        (
            ".s3sync-conflicts/prod/logs/b.conflict-0123456789ab.log",
            5,
            Some(1_000),
        ),
        ("prod/logs/a.log", 9, Some(3_000)),
    ]);
    let listing = decode_local(&buffer).unwrap();
    assert_eq!(
        files_in_conflict(&model, &listing),
        ["logs/a.log", "logs/b.log"]
    );
    let plan = plan_resolve(&model, Keep::Mine, &["logs/a.log".into()], &listing).unwrap();
    assert_eq!(plan.files.len(), 1);
    let file = &plan.files[0];
    assert_eq!(file.cache_path, "prod/logs/a.log");
    assert_eq!(
        file.restore_from.as_deref(),
        Some(".s3sync-conflicts/prod/logs/a.conflict-fedcba987654.log")
    );
    assert_eq!(file.copies.len(), 2);
    // Keep theirs restores nothing; with no file named, every file with a copy is settled.
    let plan = plan_resolve(&model, Keep::Theirs, &[], &listing).unwrap();
    assert!(plan.files.iter().all(|f| f.restore_from.is_none()));
    assert_eq!(plan.files.len(), 2);
    // A file with no copy is reported, not guessed at; an unsafe name is refused.
    let plan = plan_resolve(&model, Keep::Mine, &["logs/none.log".into()], &listing).unwrap();
    assert_eq!(plan.unknown, ["logs/none.log"]);
    assert!(plan_resolve(&model, Keep::Mine, &["../x".into()], &listing).is_err());
    assert!(Keep::parse("both").is_err());
}

fn entry(rel: &str, size: u64, modified: &str) -> String {
    format!(
        r#""{rel}":{{"key":"{rel}","size":{size},"lastModified":"{modified}","localMtime":"{MTIME}"}}"#
    )
}

fn index(entries: &[String]) -> String {
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(","))
}

#[test]
fn a_conflict_whose_bucket_version_arrived_is_synced_to_it_and_reported_with_its_copy() {
    let newer = "2026-08-02T09:00:00.000Z";
    let remote = index(&[
        entry("logs/both.log", 9, newer),
        entry("logs/same.log", 4, newer),
    ]);
    let base = index(&[
        entry("logs/both.log", 5, MTIME),
        entry("logs/same.log", 5, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("logs/both.log", 7, Some(MTIME_MS + 1000)),
        ("logs/same.log", 4, Some(MTIME_MS + 1000)),
    ]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap()
        .clone();
    assert_eq!(plan.set_aside, ["logs/both.log", "logs/same.log"]);
    let copy = ".s3sync-conflicts/logs/both.conflict-0123456789ab.log";
    // same.log turned out to hold the bucket's bytes already: no copy, no conflict.
    let applied = session
        .apply_pull(&PullOutcome {
            downloaded: vec![
                ("logs/both.log".into(), MTIME_MS + 5000),
                ("logs/same.log".into(), MTIME_MS + 5000),
            ],
            sizes: vec![("logs/both.log".into(), 9), ("logs/same.log".into(), 4)],
            aside: vec![KeptAside {
                rel: "logs/both.log".into(),
                copy: copy.into(),
            }],
            ..PullOutcome::default()
        })
        .unwrap();
    assert!(applied.unsettled_conflicts.is_empty());
    let verdict = applied.conflict.expect("a conflict verdict");
    assert_eq!(verdict.code, "conflict");
    assert!(verdict.message.contains(copy), "{}", verdict.message);
    assert!(!verdict.message.contains("same.log"), "{}", verdict.message);
    assert!(verdict.message.contains("s3sync resolve --keep mine"));
    // The cache now holds the bucket's version: the base says so, so the next push sends
    // nothing of this file and the next pull downloads nothing.
    let local: Value = serde_json::from_slice(&session.local_index_after_pull().unwrap()).unwrap();
    assert_eq!(local["entries"]["logs/both.log"]["size"], 9);
    assert_eq!(local["entries"]["logs/both.log"]["lastModified"], newer);
}

#[test]
fn a_file_never_synced_here_is_set_aside_when_sizes_differ_and_kept_when_they_match() {
    let remote = index(&[
        entry("logs/new.log", 9, MTIME),
        entry("logs/eq.log", 4, MTIME),
    ]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    let listing = encode_local([
        ("logs/new.log", 3, Some(MTIME_MS)),
        ("logs/eq.log", 4, Some(MTIME_MS)),
    ]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    assert_eq!(plan.conflicts, ["logs/new.log"]);
    assert_eq!(plan.set_aside, ["logs/new.log"]);
    assert_eq!(plan.summary.up_to_date, 1);
}

#[test]
fn once_a_cache_has_synced_a_new_file_here_is_compared_by_its_bytes_even_at_the_same_size() {
    let remote = index(&[
        entry("logs/eq.log", 4, MTIME),
        entry("logs/old.log", 1, MTIME),
    ]);
    let base = index(&[entry("logs/old.log", 1, MTIME)]);
    let mut session = Session::new(None, "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("logs/eq.log", 4, Some(MTIME_MS + 9)),
        ("logs/old.log", 1, Some(MTIME_MS)),
    ]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    // Recorded as "up to date", ours would pass for the bucket's version and be overwritten
    // by the next pull once the bucket moved on.
    assert_eq!(plan.set_aside, ["logs/eq.log"]);
    assert_eq!(plan.summary.up_to_date, 1);
}
