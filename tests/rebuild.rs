//! Rebuilding an index from bucket listing pages: what is kept, what is skipped and why, and
//! that the report always adds up.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::codes::RefusalCode;
use s3sync_core::index::{Index, MAX_SAFE_INTEGER};
use s3sync_core::model::paths::{CollisionKind, PathModel};
use s3sync_core::runs::rebuild::plan::{RebuildBuilder, RebuildReport, RefusedKey};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::{decode_remote, encode_remote};

const NOW: &str = "2026-08-07T10:00:00.000Z";

type Listed<'a> = (&'a str, u64, Option<&'a str>, Option<&'a str>);

/// Runs a rebuild over `pages`, each encoded and decoded through the listing buffer format.
fn rebuild(namespace: Option<&str>, pages: &[&[Listed<'_>]]) -> (Index, RebuildReport) {
    let model = PathModel::new(namespace, "prefix").unwrap();
    let mut builder = RebuildBuilder::new(model, NOW.to_string());
    for page in pages {
        let buffer = encode_remote(page.iter().copied());
        let decoded = decode_remote(&buffer).unwrap();
        assert_eq!(decoded.len(), page.len());
        builder.add_page(&decoded);
    }
    let (index, report) = builder.finish(Some(NOW.to_string()));
    assert_adds_up(&index, &report);
    (index, report)
}

fn assert_adds_up(index: &Index, report: &RebuildReport) {
    assert_eq!(
        report.objects_seen,
        report.kept
            + report.skipped_internal
            + report.skipped_foreign
            + report.skipped_outside_namespace
            + report.skipped_unsafe
            + report.skipped_folder_markers
            + report.skipped_duplicate,
        "{report:#?}"
    );
    assert_eq!(report.kept, index.entries.len() as u64);
    assert_eq!(
        report.bytes_kept,
        index.entries.values().map(|e| e.size).sum::<u64>()
    );
    assert!(report.unsafe_examples.len() as u64 <= report.skipped_unsafe);
    assert!(report.unsafe_examples.len() <= 20);
}

fn rels(index: &Index) -> Vec<&str> {
    index.entries.keys().map(String::as_str).collect()
}

fn refused(key: &str, code: &str) -> RefusedKey {
    RefusedKey {
        key: key.into(),
        code: RefusalCode::parse(code).unwrap_or_else(|| panic!("no refusal code {code:?}")),
    }
}

#[test]
fn namespaced_rebuild_keeps_only_the_namespace_payload() {
    let (index, report) = rebuild(
        Some("ns"),
        &[
            &[
                (".datastore-index.json", 10, Some("\"e0\""), Some(NOW)),
                ("data/x/y/m1/state/1/raw", 5, Some("\"e1\""), Some(NOW)),
                ("ns/.datastore-index.json", 10, Some("\"e2\""), Some(NOW)),
                ("ns/.namespace.json", 60, Some("\"e3\""), Some(NOW)),
                ("ns/_catalog.db", 4096, None, None),
                ("ns/_catalog.db-wal", 100, None, None),
                ("ns/_control/lease.json", 1, None, None),
                ("ns/_index/_meta.json", 40, None, None),
                ("ns/_index/data--x--y--m1.json", 300, None, None),
            ],
            &[
                (
                    "ns/data/x/y/m1/state/1/raw",
                    812,
                    Some("\"abc\""),
                    Some("2026-08-01T12:00:00.000Z"),
                ),
                ("ns/data/x/y/m1/state/1/.lock", 0, None, None),
                (
                    "ns/workflow-runs/wf/run.yaml",
                    7,
                    None,
                    Some("2026-08-02T00:00:00.000Z"),
                ),
                ("nsx/data/a", 1, None, None),
                ("other/.namespace.json", 60, None, None),
                ("other/data/a", 1, None, None),
            ],
            &[],
        ],
    );
    assert_eq!(
        rels(&index),
        vec!["data/x/y/m1/state/1/raw", "workflow-runs/wf/run.yaml"]
    );
    let raw = index.entries.get("data/x/y/m1/state/1/raw").unwrap();
    assert_eq!(raw.size, 812);
    assert_eq!(
        raw.last_modified.as_deref(),
        Some("2026-08-01T12:00:00.000Z")
    );
    assert_eq!(raw.local_mtime, None);
    assert_eq!(raw.sha256, None, "an etag is not a content hash");
    assert_eq!(index.last_pulled.as_deref(), Some(NOW));
    assert_eq!(
        report,
        RebuildReport {
            objects_seen: 15,
            kept: 2,
            bytes_kept: 819,
            skipped_internal: 8,
            skipped_foreign: 0,
            skipped_outside_namespace: 5,
            skipped_unsafe: 0,
            skipped_folder_markers: 0,
            skipped_duplicate: 0,
            unsafe_examples: vec![],
            foreign_namespaces: vec![],
            collisions: vec![],
        }
    );
    // The index keys are bare rels: a later pull maps them back under `ns/`.
    assert!(index.entries.keys().all(|k| !k.starts_with("ns/")));
}

#[test]
fn solo_rebuild_skips_internal_files_and_foreign_folders() {
    let (index, report) = rebuild(
        None,
        &[&[
            (".datastore-index.json", 10, None, None),
            (".datastore.lock", 10, None, None),
            (".push-queue.json", 10, None, None),
            (".datastore-sync-state.json", 10, None, None),
            ("README", 3, None, None),
            ("_index/_meta.json", 40, None, None),
            ("_catalog.db-shm", 40, None, None),
            ("data/a/b/c/1/raw", 100, None, None),
            ("data/a/b/c/.lock", 0, None, None),
            ("team-b/.namespace.json", 60, None, None),
            ("team-b/data/a/b/c/1/raw", 999, None, None),
            ("team-b/README", 1, None, None),
        ]],
    );
    assert_eq!(rels(&index), vec!["README", "data/a/b/c/1/raw"]);
    assert_eq!(report.skipped_internal, 8);
    assert_eq!(report.skipped_foreign, 2);
    assert_eq!(report.skipped_outside_namespace, 0);
    assert_eq!(report.foreign_namespaces, vec!["team-b"]);
    assert_eq!(report.kept, 2);
    assert_eq!(report.bytes_kept, 103);
}

/// The marker can sort after other keys of its folder (`-` < `.`), and can arrive on a later
/// page: entries already kept for that folder must still be dropped.
#[test]
fn a_foreign_marker_that_sorts_after_its_folder_still_excludes_it() {
    let mut keys = ["other/-x", "other/.namespace.json", "other/data/a/b/c"];
    keys.sort();
    assert_eq!(keys[0], "other/-x", "'-' sorts before '.'");

    let (index, report) = rebuild(
        None,
        &[
            &[
                ("data/a/b/c/1/raw", 1, None, None),
                ("other/-x", 5, None, None),
            ],
            &[
                ("other/.namespace.json", 60, None, None),
                ("other/data/a/b/c", 7, None, None),
                ("others/x", 2, None, None),
            ],
        ],
    );
    assert_eq!(rels(&index), vec!["data/a/b/c/1/raw", "others/x"]);
    assert_eq!(report.skipped_foreign, 2);
    assert_eq!(report.skipped_internal, 1);
    assert_eq!(report.foreign_namespaces, vec!["other"]);
    assert_eq!(report.bytes_kept, 3);
}

#[test]
fn markers_that_do_not_claim_a_top_level_folder_are_ignored() {
    let (index, report) = rebuild(
        None,
        &[&[
            (".namespace.json", 60, None, None),
            ("a/b/.namespace.json", 60, None, None),
            ("a/b/c", 1, None, None),
            ("a/x", 1, None, None),
        ]],
    );
    assert!(report.foreign_namespaces.is_empty());
    assert_eq!(rels(&index), vec!["a/b/c", "a/x"]);
    assert_eq!(report.skipped_internal, 2);
}

#[test]
fn unsafe_keys_are_counted_with_their_codes() {
    let too_big = MAX_SAFE_INTEGER + 1;
    let (index, report) = rebuild(
        Some("ns"),
        &[&[
            ("ns/../x", 1, None, None),
            ("ns/a//b", 1, None, None),
            ("ns/a\\b", 1, None, None),
            ("ns/a\u{1}b", 1, None, None),
            // With bytes: a zero-byte key ending in `/` is a folder marker (see below).
            ("ns/a/", 1, None, None),
            ("ns/", 1, None, None),
            ("ns//etc/passwd", 1, None, None),
            ("ns/C:/x", 1, None, None),
            ("ns/data/CON", 1, None, None),
            ("ns/data/huge", too_big, None, None),
            ("ns/data/ok", MAX_SAFE_INTEGER, None, None),
        ]],
    );
    assert_eq!(rels(&index), vec!["data/ok"]);
    assert_eq!(report.skipped_unsafe, 10);
    assert_eq!(
        report.unsafe_examples,
        vec![
            refused("ns/../x", "path-dot-segment"),
            refused("ns/a//b", "path-empty-segment"),
            refused("ns/a\\b", "path-backslash"),
            refused("ns/a\u{1}b", "path-control-character"),
            refused("ns/a/", "path-trailing-slash"),
            refused("ns/", "path-empty"),
            refused("ns//etc/passwd", "path-absolute"),
            refused("ns/C:/x", "path-drive-letter"),
            refused("ns/data/CON", "path-reserved-name"),
            refused("ns/data/huge", "invalid-input"),
        ]
    );
    assert_eq!(report.bytes_kept, MAX_SAFE_INTEGER);
}

#[test]
fn solo_unsafe_keys_and_the_key_limit_with_a_prefix() {
    // Names within the 255-byte limit, so only the whole-key limit decides.
    let names = |n: usize| format!("{}/{}", vec!["a".repeat(250); 4].join("/"), "b".repeat(n));
    let long = format!("data/{}", names(1015 - 1004));
    let fits = format!("data/{}", names(1012 - 1004));
    let too_long_name = format!("data/{}/x.log", "n".repeat(256));
    // The builder runs under prefix "prefix" (7 bytes with its slash): 1,020 bytes no longer fit.
    let (index, report) = rebuild(
        None,
        &[&[
            ("../../etc/passwd", 1, None, None),
            ("/abs", 1, None, None),
            (long.as_str(), 1, None, None),
            (fits.as_str(), 1, None, None),
            (too_long_name.as_str(), 1, None, None),
        ]],
    );
    assert_eq!(rels(&index), vec![fits.as_str()]);
    let codes: Vec<&str> = report
        .unsafe_examples
        .iter()
        .map(|r| r.code.as_str())
        .collect();
    assert_eq!(
        codes,
        vec![
            "path-dot-segment",
            "path-absolute",
            "path-too-long",
            "path-segment-too-long"
        ]
    );
}

#[test]
fn unsafe_examples_are_capped_but_counts_are_complete() {
    let keys: Vec<String> = (0..50).map(|i| format!("bad{i}//x")).collect();
    let page: Vec<Listed<'_>> = keys.iter().map(|k| (k.as_str(), 1, None, None)).collect();
    let (index, report) = rebuild(None, &[&page]);
    assert!(index.entries.is_empty());
    assert_eq!(report.skipped_unsafe, 50);
    assert_eq!(report.unsafe_examples.len(), 20);
    assert_eq!(report.unsafe_examples[0].key, "bad0//x");
}

#[test]
fn listings_without_etags_or_dates_use_the_rebuild_time() {
    let (index, _) = rebuild(
        None,
        &[&[
            ("a", 1, None, None),
            ("b", 2, Some("\"etag-2\""), None),
            ("c", 3, None, Some("2026-01-01T00:00:00.000Z")),
        ]],
    );
    assert_eq!(
        index.entries.get("a").unwrap().last_modified.as_deref(),
        Some(NOW)
    );
    assert_eq!(
        index.entries.get("b").unwrap().last_modified.as_deref(),
        Some(NOW)
    );
    assert_eq!(
        index.entries.get("c").unwrap().last_modified.as_deref(),
        Some("2026-01-01T00:00:00.000Z")
    );
    // The rebuilt index is a valid v1 index.
    let reparsed = Index::parse(&index.to_compact_json()).unwrap();
    assert_eq!(reparsed, index);
}

#[test]
fn case_collisions_are_reported_and_file_folder_clashes_refused() {
    let (index, report) = rebuild(
        None,
        &[&[
            ("data/Model/raw", 1, None, None),
            ("data/model/raw", 1, None, None),
            ("files/a", 1, None, None),
            ("files/a/b", 1, None, None),
        ]],
    );
    // Names differing in case fit a case-sensitive cache: kept, reported (a pull on a
    // case-insensitive file system refuses them).
    let kept: Vec<&str> = index.entries.keys().map(String::as_str).collect();
    assert_eq!(kept, ["data/Model/raw", "data/model/raw"]);
    let kinds: Vec<CollisionKind> = report.collisions.iter().map(|c| c.kind.clone()).collect();
    assert_eq!(kinds, [CollisionKind::CaseFold], "{report:#?}");
    // A file where another key needs a folder fits no cache: both refused, named with a code.
    let refused: Vec<(&str, &str)> = report
        .unsafe_examples
        .iter()
        .map(|r| (r.key.as_str(), r.code.as_str()))
        .collect();
    assert_eq!(
        refused,
        [("files/a", "path-conflict"), ("files/a/b", "path-conflict")]
    );
    assert_eq!(report.skipped_unsafe, 2);
    assert_eq!(report.kept, 2);
}

#[test]
fn empty_listing_gives_an_empty_index() {
    let (index, report) = rebuild(Some("ns"), &[]);
    assert!(index.entries.is_empty());
    assert_eq!(report, RebuildReport::default());
    assert_eq!(
        index.to_compact_json(),
        br#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{}}"#
    );
}

#[test]
fn report_serializes_in_camel_case() {
    let (_, report) = rebuild(None, &[&[("a//b", 1, None, None), ("x", 1, None, None)]]);
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(value["objectsSeen"], 2);
    assert_eq!(value["kept"], 1);
    assert_eq!(value["skippedUnsafe"], 1);
    assert_eq!(value["unsafeExamples"][0]["code"], "path-empty-segment");
    assert!(value.get("skippedOutsideNamespace").is_some());
}

/// The same rebuild through the session, as the shim drives it with raw buffers.
#[test]
fn session_rebuild_from_buffers() {
    let mut session = Session::new(Some("ns"), "prefix").unwrap();
    assert_eq!(
        session.add_listing_page(b"", &[]).unwrap_err().code(),
        "invalid-input",
        "a page before begin_rebuild"
    );
    session.begin_rebuild(NOW);
    session
        .add_listing_page(
            &encode_remote([
                ("ns/data/a/b/c/raw", 5, Some("\"e\""), Some(NOW)),
                ("ns/_index/_meta.json", 5, None, None),
            ]),
            &[],
        )
        .unwrap();
    // A malformed page is an input error; it does not poison the rebuild.
    assert_eq!(
        session
            .add_listing_page(b"key\0only-two-fields\0", &[])
            .unwrap_err()
            .code(),
        "invalid-input"
    );
    assert_eq!(
        session
            .add_listing_page(b"k\x001\x00\x00\x00k2", &[])
            .unwrap_err()
            .code(),
        "invalid-input"
    );
    session
        .add_listing_page(
            &encode_remote([("ns/files/x", 7, None, None)]),
            // A key with a NUL cannot travel in the buffer: it arrives aside and is refused.
            &["ns/data/nul\0byte".to_string()],
        )
        .unwrap();
    let report = session.finish_rebuild(Some(NOW)).unwrap();
    assert_eq!(report.objects_seen, 4);
    assert_eq!(report.kept, 2);
    assert_eq!(report.skipped_internal, 1);
    assert_eq!(report.skipped_unsafe, 1);
    assert_eq!(report.unsafe_examples[0].code, "path-control-character");
    assert_eq!(session.index_len().unwrap(), 2);
    assert_eq!(
        session.finish_rebuild(None).unwrap_err().code(),
        "invalid-input",
        "finishing twice"
    );
    let json = session.index_json(false).unwrap();
    let index = Index::parse(&json).unwrap();
    assert_eq!(
        index.entries.keys().collect::<Vec<_>>(),
        vec!["data/a/b/c/raw", "files/x"]
    );
}

#[test]
fn rebuild_index_replaces_a_valid_index_only_when_forced() {
    use s3sync_core::runs::rebuild::plan::{rebuild_step, ExistingIndex, RebuildDecision};
    for existing in [
        ExistingIndex::Absent,
        ExistingIndex::Valid,
        ExistingIndex::Corrupt,
    ] {
        assert_eq!(rebuild_step(false, true, existing), RebuildDecision::DryRun);
        assert_eq!(rebuild_step(true, true, existing), RebuildDecision::Publish);
    }
    assert_eq!(
        rebuild_step(true, false, ExistingIndex::Valid),
        RebuildDecision::KeptExisting
    );
    assert_eq!(
        rebuild_step(true, false, ExistingIndex::Absent),
        RebuildDecision::Publish
    );
    assert_eq!(
        rebuild_step(true, false, ExistingIndex::Corrupt),
        RebuildDecision::Publish
    );
}

#[test]
fn an_existing_index_is_judged_by_the_parser() {
    use s3sync_core::runs::rebuild::plan::ExistingIndex;
    assert_eq!(ExistingIndex::of(None), ExistingIndex::Absent);
    assert_eq!(
        ExistingIndex::of(Some(br#"{"version":1,"entries":{}}"#)),
        ExistingIndex::Valid
    );
    assert_eq!(
        ExistingIndex::of(Some(b"{\"version\":1,")),
        ExistingIndex::Corrupt
    );
    assert_eq!(
        ExistingIndex::of(Some(br#"{"version":99,"entries":{}}"#)),
        ExistingIndex::Corrupt
    );
}

/// The S3 console's folders (issue 17): zero-byte keys ending in `/` are skipped and counted,
/// not refused as unsafe, so a pull does not stop for them; a key ending in `/` that holds
/// bytes is still refused, in both modes.
#[test]
fn folder_markers_are_skipped_and_counted_not_refused() {
    let (index, report) = rebuild(
        Some("ns"),
        &[&[
            ("ns/", 0, None, None),
            ("ns/data/", 0, None, None),
            ("ns/workflow-runs/", 0, None, None),
            ("ns/workflow-runs/wf/run.yaml", 4, None, None),
            ("ns/data/x/", 2, None, None),
            ("swamp/", 0, None, None),
        ]],
    );
    assert_eq!(rels(&index), vec!["workflow-runs/wf/run.yaml"]);
    assert_eq!(report.skipped_folder_markers, 4);
    assert_eq!(report.skipped_unsafe, 1);
    assert_eq!(
        report.unsafe_examples,
        vec![refused("ns/data/x/", "path-trailing-slash")]
    );
    let (index, report) = rebuild(
        None,
        &[&[
            ("swamp/", 0, None, None),
            ("workflow-runs/", 0, None, None),
            ("workflow-runs/wf/run.yaml", 4, None, None),
        ]],
    );
    assert_eq!(rels(&index), vec!["workflow-runs/wf/run.yaml"]);
    assert_eq!(report.skipped_folder_markers, 2);
    assert_eq!(report.skipped_unsafe, 0);
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(value["skippedFolderMarkers"], 2);
}

/// A listing under the bound tree that holds another datastore's index (a namespace written
/// without a marker, or a bucket read with too short a prefix) stops the rebuild: indexing that
/// bookkeeping as payload is how a root index came to name `prod/.datastore-index.json`.
#[test]
fn a_nested_datastore_stops_the_rebuild() {
    for (nested, folder) in [
        ("prod/.datastore-index.json", "prod"),
        ("swamp/prod/.datastore-index.json", "swamp/prod"),
        ("prod/_index/_meta.json", "prod"),
    ] {
        let mut session = Session::new(None, "").unwrap();
        session.begin_rebuild(NOW);
        session
            .add_listing_page(
                &encode_remote([
                    ("prod/data/m1.yaml", 5, Some("\"e\""), Some(NOW)),
                    (nested, 50, Some("\"f\""), Some(NOW)),
                ]),
                &[],
            )
            .unwrap();
        let error = session.finish_rebuild(Some(NOW)).unwrap_err();
        assert_eq!(error.code(), "nested-datastore", "{nested}");
        let message = error.to_string();
        assert!(message.contains(&format!("under {folder}/")), "{message}");
    }
    // The same names inside a marked namespace folder are that namespace's, skipped as foreign.
    let mut session = Session::new(None, "").unwrap();
    session.begin_rebuild(NOW);
    session
        .add_listing_page(
            &encode_remote([
                ("data/mine.yaml", 5, Some("\"e\""), Some(NOW)),
                ("prod/.datastore-index.json", 50, Some("\"f\""), Some(NOW)),
                ("prod/.namespace.json", 50, Some("\"g\""), Some(NOW)),
            ]),
            &[],
        )
        .unwrap();
    let report = session.finish_rebuild(Some(NOW)).unwrap();
    assert_eq!(report.kept, 1);
    assert_eq!(report.foreign_namespaces, vec!["prod".to_string()]);
}
