//! The doctor on an index no cache can fully hold, and on a cache with conflict copies: each
//! problem names the fix that works (a pull cannot fetch what no file system holds).
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::runs::repair::plan::DoctorFacts;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;

fn entry(rel: &str) -> String {
    format!(
        r#"{rel:?}:{{"key":{rel:?},"size":1,"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"2026-08-01T12:00:00.512Z"}}"#
    )
}

#[test]
fn index_entries_no_cache_can_hold_are_named_with_their_real_fix() {
    let long = format!("logs/{}.log", "n".repeat(256));
    let entries = ["logs/x", "logs/x/y.log", "logs/ok.log", long.as_str()]
        .iter()
        .map(|rel| entry(rel))
        .collect::<Vec<_>>()
        .join(",");
    let mut session = Session::new(None, "").unwrap();
    session
        .load_index(format!(r#"{{"version":1,"entries":{{{entries}}}}}"#).as_bytes())
        .unwrap();
    let listing = encode_local([("logs/ok.log", 1, Some(1_785_585_600_512))]);
    let problems = session.diagnose(&listing, DoctorFacts::default()).unwrap();
    let codes: Vec<&str> = problems.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(
        codes,
        ["unsafe-index-entry", "index-path-conflict"],
        "{problems:#?}"
    );
    assert!(problems[0].message.contains("path-segment-too-long"));
    assert!(problems[1].message.contains("logs/x and logs/x/y.log"));
    for p in &problems {
        assert!(
            p.message.contains("rebuild-index --apply --force"),
            "{}",
            p.message
        );
        assert!(!p.message.contains("s3sync pull"), "{}", p.message);
    }
    // Nothing of it is "absent, run pull": every holdable file is here.
    assert!(!codes.contains(&"index-drift"));
}

#[test]
fn conflict_copies_waiting_for_a_decision_are_reported() {
    let mut session = Session::new(Some("prod"), "").unwrap();
    session.load_empty_index();
    let listing = encode_local([
        (
            ".s3sync-conflicts/prod/logs/a.conflict-0123456789ab.log",
            3,
            Some(1),
        ),
        ("prod/logs/a.log", 4, Some(2)),
    ]);
    let problems = session.diagnose(&listing, DoctorFacts::default()).unwrap();
    let found = problems.iter().find(|p| p.code == "conflict-copies");
    let found = found.unwrap_or_else(|| panic!("{problems:#?}"));
    assert!(found.message.contains("logs/a.log"));
    assert!(found.message.contains("s3sync resolve --keep mine"));
    // The conflict folder is not a layout problem of its own.
    assert_eq!(problems.len(), 1, "{problems:#?}");
}
