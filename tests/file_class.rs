//! Swamp's kinds of files and their merge rules: the table classifies what swamp core writes,
//! and a derived file (the catalog export) changed on both sides is the bucket's on pull and
//! superseded on push, never a conflict, while every other file keeps today's rule.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::model::file_class::{classify, FileClass, SWAMP_FILES};
use s3sync_core::runs::pull::plan::PullOptions;
use s3sync_core::runs::push::plan::PushInput;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;
use serde_json::Value;

const MTIME: &str = "2026-08-01T12:00:00.512Z";
const MTIME_MS: i64 = 1_785_585_600_512;
const NEWER: &str = "2026-08-02T09:00:00.000Z";

#[test]
fn the_table_classifies_swamp_core_files() {
    let cases = [
        (".catalog-export.json", FileClass::Derived),
        ("data/command/shell/m1/log/latest", FileClass::Pointer),
        ("data/command/shell/m1/log/3/raw", FileClass::WriteOnce),
        (
            "data/command/shell/m1/log/12/metadata.yaml",
            FileClass::WriteOnce,
        ),
        (
            "workflow-runs/wf-1/workflow-run-0b5f6a9e-1111-4222-8333-944455556666.yaml",
            FileClass::Unique,
        ),
        // Look-alikes stay under today's rule.
        ("logs/.catalog-export.json", FileClass::Other),
        ("data/latest", FileClass::Pointer),
        ("outputs/latest", FileClass::Other),
        ("data/command/shell/m1/log/v3/raw", FileClass::Other),
        ("data/raw", FileClass::Other),
        ("datax/m/1/raw", FileClass::Other),
        ("workflow-runs/wf-1/notes.yaml", FileClass::Other),
        ("", FileClass::Other),
    ];
    for (rel, class) in cases {
        assert_eq!(classify(rel), class, "{rel:?}");
    }
    // Every row says who writes the file and when.
    assert!(SWAMP_FILES.iter().all(|rule| rule.written.len() > 20));
}

fn entry(rel: &str, size: u64, modified: &str) -> String {
    format!(
        r#""{rel}":{{"key":"{rel}","size":{size},"lastModified":"{modified}","localMtime":"{MTIME}"}}"#
    )
}

fn index(entries: &[String]) -> String {
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(","))
}

/// A namespaced session whose base and bucket disagree on the catalog export and on a log,
/// both rewritten here since.
fn two_sided_session() -> (Session, Vec<u8>) {
    let remote = index(&[
        entry(".catalog-export.json", 900, NEWER),
        entry("logs/app.log", 9, NEWER),
    ]);
    let base = index(&[
        entry(".catalog-export.json", 800, MTIME),
        entry("logs/app.log", 5, MTIME),
    ]);
    let mut session = Session::new(Some("team-a"), "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(base.as_bytes().to_vec());
    let listing = encode_local([
        ("team-a/.catalog-export.json", 850, Some(MTIME_MS + 1000)),
        ("team-a/logs/app.log", 7, Some(MTIME_MS + 1000)),
    ]);
    (session, listing)
}

#[test]
fn a_pull_takes_the_buckets_derived_file_without_a_conflict() {
    let (mut session, listing) = two_sided_session();
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    assert_eq!(plan.derived_taken, [".catalog-export.json"]);
    let downloads: Vec<&str> = plan.downloads.iter().map(|t| t.rel.as_str()).collect();
    assert_eq!(downloads, [".catalog-export.json", "logs/app.log"]);
    // The log is somebody's work on both sides: today's rule.
    assert_eq!(plan.conflicts, ["logs/app.log"]);
    assert_eq!(plan.set_aside, ["logs/app.log"]);
}

#[test]
fn a_derived_file_never_synced_here_is_the_buckets_too() {
    let remote = index(&[entry(".catalog-export.json", 900, NEWER)]);
    let mut session = Session::new(Some("team-a"), "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    let listing = encode_local([("team-a/.catalog-export.json", 3, Some(MTIME_MS))]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    assert_eq!(plan.derived_taken, [".catalog-export.json"]);
    assert!(plan.conflicts.is_empty() && plan.set_aside.is_empty());
}

#[test]
fn a_push_leaves_a_derived_file_another_writer_replaced_and_conflicts_on_the_rest() {
    let (mut session, listing) = two_sided_session();
    let plan = session.plan_push(&listing, &PushInput::default()).unwrap();
    assert_eq!(plan.superseded, [".catalog-export.json"]);
    assert!(plan.behind.contains(&".catalog-export.json".to_string()));
    assert_eq!(plan.conflicts, ["logs/app.log"]);
    assert!(plan.uploads.is_empty());
    let codes: Vec<&str> = plan.blocked.iter().map(|v| v.code.as_str()).collect();
    assert_eq!(codes, ["conflict"]);
    let message = &plan.blocked[0].message;
    assert!(!message.contains("catalog-export"), "{message}");
}

#[test]
fn a_lost_condition_on_a_derived_file_is_superseded_not_a_conflict() {
    let remote = index(&[
        entry(".catalog-export.json", 800, MTIME),
        entry("logs/app.log", 5, MTIME),
    ]);
    let mut session = Session::new(Some("team-a"), "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    session.load_base(remote.as_bytes().to_vec());
    let listing = encode_local([
        ("team-a/.catalog-export.json", 850, Some(MTIME_MS + 1000)),
        ("team-a/logs/app.log", 7, Some(MTIME_MS + 1000)),
    ]);
    let plan = session.plan_push(&listing, &PushInput::default()).unwrap();
    assert_eq!(plan.uploads.len(), 2);
    // Both uploads found another writer's version in the bucket (their conditions failed).
    session
        .add_push_conflicts([
            ".catalog-export.json".to_string(),
            "logs/app.log".to_string(),
        ])
        .unwrap();
    let plan: Value = serde_json::to_value(session.push_plan().unwrap()).unwrap();
    assert_eq!(
        plan["superseded"],
        serde_json::json!([".catalog-export.json"])
    );
    assert_eq!(plan["conflicts"], serde_json::json!(["logs/app.log"]));
    // The local index keeps the base for both, so the next pull brings the bucket's versions.
    let local: Value = serde_json::from_slice(&session.local_index_after_push().unwrap()).unwrap();
    assert_eq!(local["entries"][".catalog-export.json"]["size"], 800);
}
