//! The local sync-state sidecar: the extension's v1 and v2 shapes read as the extension wrote
//! them, unknown fields kept, unreadable sidecars treated as absent, and the rules this core
//! adds (uncapped tombstones, no overflow flag, untrusted ETags never recorded).
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};

use s3sync_core::runs::repair::plan::DoctorFacts;
use s3sync_core::state::sync_state::{
    is_trusted_etag, unquote_etag, PushStanding, SyncState, DIRTY_PATHS_CAP,
};

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("fixtures/sidecar/", $name)).as_slice()
    };
}

const NOW: &str = "2026-08-08T09:30:00.000Z";

fn as_value(state: &SyncState) -> Value {
    serde_json::from_slice(&state.to_json()).expect("the sidecar writes JSON")
}

// ---------------------------------------------------------------------------------------------
// Parsing the extension's shapes

#[test]
fn parses_the_extensions_v1_shape() {
    let state = SyncState::parse(fixture!("extension-v1.json")).expect("v1 parses");
    assert_eq!(state.version, 1);
    assert_eq!(state.remote_index_etag, "9b2cf535f27731c974343645a3985328");
    assert_eq!(state.last_verified_at, "2026-08-07T10:00:00.000Z");
    assert!(!state.local_dirty);
    // v2's fields default when a v1 writer left them out.
    assert!(state.dirty_paths.is_empty());
    assert!(!state.bulk_invalidated);
    assert!(!state.lazy_pull_active);
    assert_eq!(state.dirty_paths_overflowed, None);
    assert_eq!(state.commit_seq, None);
    assert_eq!(state.last_catalog_hash, None);
    assert_eq!(state.data_key_migrated, None);
    assert!(state.tombstones.is_empty());
    assert!(state.extra.is_empty(), "{:?}", state.extra);
}

#[test]
fn parses_the_extensions_v2_shape() {
    let state = SyncState::parse(fixture!("extension-v2.json")).expect("v2 parses");
    assert_eq!(state.version, 2);
    assert_eq!(state.remote_index_etag, "6f1ed002ab5595859014ebf0951522d9");
    assert!(state.local_dirty);
    assert_eq!(
        state.dirty_paths,
        [
            "ns/data/aws/ec2/vpc/m-1/state/3/raw",
            "ns/workflow-runs/wf-1"
        ]
    );
    assert!(!state.bulk_invalidated);
    assert!(
        state.lazy_pull_active,
        "lazyPullActive must be read: it gates deletes"
    );
    assert_eq!(state.dirty_paths_overflowed, Some(false));
    assert_eq!(state.commit_seq, Some(42));
    assert_eq!(
        state.last_catalog_hash.as_deref(),
        Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
    assert_eq!(state.data_key_migrated, Some(true));
    // A field this core does not know (the extension's newer control-plane flag) is kept.
    assert_eq!(
        state.extra.get("controlPlaneKeysMigrated"),
        Some(&json!(true))
    );
    assert_eq!(state.extra.len(), 1, "{:?}", state.extra);
}

#[test]
fn parses_the_extensions_minimal_v2_shape() {
    let state = SyncState::parse(fixture!("extension-v2-minimal.json")).expect("parses");
    assert_eq!(state.version, 2);
    assert_eq!(state.remote_index_etag, "");
    assert!(state.bulk_invalidated);
    assert_eq!(state.dirty_paths_overflowed, None);
    assert_eq!(state.commit_seq, None);
}

/// The extension names the ETag field `remoteIndexETag` (capital T). Writing it under any other
/// name would make every sidecar unreadable to the other service.
#[test]
fn writes_the_extensions_field_names() {
    let state = SyncState::parse(fixture!("extension-v2.json")).unwrap();
    let value = as_value(&state);
    let object = value.as_object().unwrap();
    for field in [
        "version",
        "remoteIndexETag",
        "lastVerifiedAt",
        "localDirty",
        "dirtyPaths",
        "bulkInvalidated",
        "lazyPullActive",
        "dirtyPathsOverflowed",
        "commitSeq",
        "lastCatalogHash",
        "dataKeyMigrated",
        "controlPlaneKeysMigrated",
    ] {
        assert!(object.contains_key(field), "{field} missing from {value}");
    }
    assert!(!object.contains_key("remoteIndexEtag"), "{value}");
    // No tombstones recorded: the core's own field is left out entirely.
    assert!(!object.contains_key("s3syncTombstones"), "{value}");
}

#[test]
fn round_trips_keep_every_field() {
    for bytes in [
        fixture!("extension-v1.json"),
        fixture!("extension-v2.json"),
        fixture!("extension-v2-minimal.json"),
        fixture!("extension-v2-overflowed.json"),
    ] {
        let state = SyncState::parse(bytes).unwrap();
        let written = state.to_json();
        assert_eq!(SyncState::parse(&written).as_ref(), Some(&state));
        // Every field of the original survives with its value (v1 gains v2's defaults only).
        let original: Value = serde_json::from_slice(bytes).unwrap();
        let after: Value = serde_json::from_slice(&written).unwrap();
        for (field, value) in original.as_object().unwrap() {
            assert_eq!(after.get(field), Some(value), "{field} changed in {after}");
        }
    }
}

#[test]
fn unknown_fields_and_tombstones_survive_a_round_trip() {
    let bytes = serde_json::to_vec(&json!({
        "version": 2,
        "remoteIndexETag": "abc",
        "lastVerifiedAt": "2026-08-07T10:00:00.000Z",
        "localDirty": true,
        "dirtyPaths": ["ns/files/a"],
        "bulkInvalidated": false,
        "lazyPullActive": false,
        "s3syncTombstones": ["ns/files/a", "ns/data/x"],
        "futureField": {"nested": [1, 2, 3]},
        "anotherOne": null
    }))
    .unwrap();
    let state = SyncState::parse(&bytes).unwrap();
    assert_eq!(state.tombstones, ["ns/files/a", "ns/data/x"]);
    assert_eq!(
        state.extra.get("futureField"),
        Some(&json!({"nested": [1, 2, 3]}))
    );
    assert_eq!(state.extra.get("anotherOne"), Some(&Value::Null));
    let after = as_value(&state);
    assert_eq!(after["futureField"], json!({"nested": [1, 2, 3]}));
    assert_eq!(
        after["s3syncTombstones"],
        json!(["ns/files/a", "ns/data/x"])
    );
    assert!(after.as_object().unwrap().contains_key("anotherOne"));
}

/// Sidecars this core wrote before it used the extension's spelling still read, and are
/// rewritten with it.
#[test]
fn reads_the_old_etag_spelling() {
    let bytes =
        br#"{"version": 2, "remoteIndexEtag": "abc", "lastVerifiedAt": "2026-08-07T10:00:00.000Z",
        "localDirty": false, "dirtyPaths": [], "bulkInvalidated": false, "lazyPullActive": true,
        "s3syncTombstones": ["ns/data/x"]}"#;
    let state = SyncState::parse(bytes).expect("the old spelling parses");
    assert_eq!(state.remote_index_etag, "abc");
    assert!(state.lazy_pull_active);
    assert_eq!(state.tombstones, ["ns/data/x"]);
    let value = as_value(&state);
    assert_eq!(value["remoteIndexETag"], json!("abc"));
    assert!(!value.as_object().unwrap().contains_key("remoteIndexEtag"));
}

/// Pretty JSON with a two-space indent and no trailing newline, as the extension writes it.
#[test]
fn writes_pretty_json_without_a_trailing_newline() {
    let state = SyncState::parse(fixture!("extension-v1.json")).unwrap();
    let text = String::from_utf8(state.to_json()).unwrap();
    assert!(text.starts_with("{\n  \"version\": 1,\n"), "{text}");
    assert!(text.ends_with('}'), "{text:?}");
}

#[test]
fn unreadable_sidecars_count_as_absent() {
    let cases: &[&[u8]] = &[
        b"",
        b"   ",
        b"not json",
        b"{",
        b"[]",
        b"null",
        b"42",
        b"\"version\"",
        b"{}",
        // Missing required fields.
        br#"{"version": 2}"#,
        br#"{"version": 1, "lastVerifiedAt": "x", "localDirty": false}"#,
        // Wrong types.
        br#"{"version": "2", "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false}"#,
        br#"{"version": 2, "remoteIndexETag": 7, "lastVerifiedAt": "", "localDirty": false}"#,
        br#"{"version": 2, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": "yes"}"#,
        br#"{"version": 2, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false, "dirtyPaths": "a"}"#,
        br#"{"version": 2, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false, "lazyPullActive": 1}"#,
        br#"{"version": -1, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false}"#,
        // Trailing garbage after the object.
        br#"{"version": 1, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false} x"#,
        &[0xff, 0xfe, 0x00],
    ];
    for bytes in cases {
        assert_eq!(
            SyncState::parse(bytes),
            None,
            "{:?} should not parse",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn a_fresh_sidecar_reads_back() {
    // What a push writes for a cache that had no readable sidecar, even when it verified
    // nothing: it must parse again (version 0 did not, here or in the extension).
    let mut fresh = SyncState::fresh();
    fresh.consume_tombstones(&[]);
    let read = SyncState::parse(&fresh.to_json()).expect("a fresh sidecar parses");
    assert_eq!(read.version, 2);
    assert!(!read.lazy_pull_active);
    assert!(read.remote_index_etag.is_empty());
}

#[test]
fn an_unreadable_sidecar_is_replaced_by_one_that_withholds_deletes() {
    assert!(!SyncState::for_update(None).lazy_pull_active);
    let replaced = SyncState::for_update(Some(b"{\"version\": 2, \"lazyPu"));
    assert_eq!(replaced.version, 2);
    assert!(replaced.lazy_pull_active, "the doubt is carried forward");
    let read = SyncState::for_update(Some(fixture!("extension-v2.json")));
    assert_eq!(
        read,
        SyncState::parse(fixture!("extension-v2.json")).unwrap()
    );
}

#[test]
fn doctor_facts_from_the_raw_sidecar() {
    let none = DoctorFacts::from_sidecar(None);
    assert!(!none.lazy_pull_active && !none.sidecar_unreadable);
    let torn = DoctorFacts::from_sidecar(Some(b"{\"version\": 2, \"lazyPu"));
    assert!(!torn.lazy_pull_active && torn.sidecar_unreadable);
    let lazy = SyncState {
        lazy_pull_active: true,
        ..SyncState::fresh()
    };
    let read = DoctorFacts::from_sidecar(Some(&lazy.to_json()));
    assert!(read.lazy_pull_active && !read.sidecar_unreadable);
}

#[test]
fn unknown_versions_count_as_absent() {
    assert_eq!(SyncState::parse(fixture!("version-3.json")), None);
    for version in [0u64, 3, 4, 99] {
        let bytes = serde_json::to_vec(&json!({
            "version": version,
            "remoteIndexETag": "abc",
            "lastVerifiedAt": "2026-08-07T10:00:00.000Z",
            "localDirty": false
        }))
        .unwrap();
        assert_eq!(SyncState::parse(&bytes), None, "version {version}");
    }
}

// ---------------------------------------------------------------------------------------------
// markDirty

#[test]
fn record_dirty_keeps_every_tombstone_past_the_extensions_cap() {
    let mut state = SyncState::parse(fixture!("extension-v1.json")).unwrap();
    let paths: Vec<String> = (0..250).map(|i| format!("ns/files/f{i:03}")).collect();
    for (i, path) in paths.iter().enumerate() {
        state.record_dirty(Some(path));
        assert_eq!(state.version, 2, "a recorded sidecar is v2");
        assert!(state.local_dirty);
        assert_eq!(state.tombstones.len(), i + 1, "tombstones are never capped");
        assert_eq!(
            state.dirty_paths_overflowed, None,
            "the overflow flag is never set (it turns every absent file into a delete)"
        );
        if i < DIRTY_PATHS_CAP {
            assert_eq!(state.dirty_paths.len(), i + 1);
            assert!(!state.bulk_invalidated);
        } else {
            assert!(state.dirty_paths.is_empty(), "past the cap: collapsed");
            assert!(state.bulk_invalidated, "past the cap: walk everything");
        }
    }
    assert_eq!(state.tombstones, paths);
    let value = as_value(&state);
    assert!(
        !value
            .as_object()
            .unwrap()
            .contains_key("dirtyPathsOverflowed"),
        "{value}"
    );
    assert_eq!(value["s3syncTombstones"].as_array().unwrap().len(), 250);
    assert_eq!(value["dirtyPaths"], json!([]));
    assert_eq!(value["bulkInvalidated"], json!(true));
}

#[test]
fn record_dirty_at_exactly_the_cap() {
    let mut state = SyncState::default();
    for i in 0..DIRTY_PATHS_CAP {
        state.record_dirty(Some(&format!("files/f{i}")));
    }
    assert_eq!(state.dirty_paths.len(), DIRTY_PATHS_CAP);
    assert!(!state.bulk_invalidated);
    // A path already recorded changes nothing.
    state.record_dirty(Some("files/f0"));
    assert_eq!(state.dirty_paths.len(), DIRTY_PATHS_CAP);
    assert_eq!(state.tombstones.len(), DIRTY_PATHS_CAP);
    assert!(!state.bulk_invalidated);
    // One more collapses.
    state.record_dirty(Some("files/one-more"));
    assert!(state.dirty_paths.is_empty());
    assert!(state.bulk_invalidated);
    assert_eq!(state.tombstones.len(), DIRTY_PATHS_CAP + 1);
    assert_eq!(state.dirty_paths_overflowed, None);
}

#[test]
fn record_dirty_deduplicates() {
    let mut state = SyncState::default();
    state.record_dirty(Some("ns/data/a"));
    state.record_dirty(Some("ns/data/a"));
    state.record_dirty(Some("ns/data/b"));
    assert_eq!(state.tombstones, ["ns/data/a", "ns/data/b"]);
    assert_eq!(state.dirty_paths, ["ns/data/a", "ns/data/b"]);
}

#[test]
fn record_dirty_without_a_path_is_a_modification_signal_only() {
    let mut state = SyncState::parse(fixture!("extension-v2.json")).unwrap();
    let tombstones_before = state.tombstones.clone();
    let dirty_before = state.dirty_paths.clone();
    state.record_dirty(None);
    assert!(state.bulk_invalidated);
    assert!(state.local_dirty);
    assert_eq!(
        state.tombstones, tombstones_before,
        "no tombstone without a path"
    );
    assert_eq!(state.dirty_paths, dirty_before);
    assert_eq!(state.dirty_paths_overflowed, Some(false), "left as found");
}

#[test]
fn record_dirty_on_an_absent_sidecar() {
    let mut state = SyncState::default();
    state.record_dirty(Some("files/a"));
    assert_eq!(state.version, 2);
    let reread = SyncState::parse(&state.to_json()).expect("what record_dirty writes parses");
    assert_eq!(reread.tombstones, ["files/a"]);
    assert!(reread.local_dirty);
}

#[test]
fn consume_tombstones_forgets_only_what_was_acted_on() {
    let mut state = SyncState::default();
    for path in ["ns/a", "ns/b", "ns/c", "ns/d"] {
        state.record_dirty(Some(path));
    }
    state.consume_tombstones(&["ns/b".to_string(), "ns/d".to_string(), "ns/zzz".to_string()]);
    assert_eq!(state.tombstones, ["ns/a", "ns/c"]);
    state.consume_tombstones(&[]);
    assert_eq!(state.tombstones, ["ns/a", "ns/c"]);
    state.consume_tombstones(&["ns/a".to_string(), "ns/c".to_string()]);
    assert!(state.tombstones.is_empty());
    assert!(
        !as_value(&state)
            .as_object()
            .unwrap()
            .contains_key("s3syncTombstones"),
        "an empty list is left out"
    );
}

// ---------------------------------------------------------------------------------------------
// mark_synced

#[test]
fn mark_synced_records_the_unquoted_etag_and_clears_the_dirty_state() {
    let mut state = SyncState::parse(fixture!("extension-v2-overflowed.json")).unwrap();
    state.record_dirty(Some("ns/files/kept"));
    state.lazy_pull_active = true;
    state.mark_synced(Some("\"0f343b0931126a20f133d67c2b018a3b\""), NOW);
    assert_eq!(state.version, 2);
    assert_eq!(state.remote_index_etag, "0f343b0931126a20f133d67c2b018a3b");
    assert_eq!(state.last_verified_at, NOW);
    assert!(!state.local_dirty);
    assert!(state.dirty_paths.is_empty());
    assert!(!state.bulk_invalidated);
    assert_eq!(
        state.dirty_paths_overflowed, None,
        "the extension's overflow flag is cleared"
    );
    // Tombstones are consumed only by the push that acted on them; lazy state is the caller's.
    assert_eq!(state.tombstones, ["ns/files/kept"]);
    assert!(state.lazy_pull_active);
}

#[test]
fn mark_synced_never_records_an_untrusted_etag() {
    for (etag, recorded) in [
        (Some("\"abc\""), "abc"),
        (Some("abc"), "abc"),
        (Some("W/\"abc\""), "abc"),
        (Some("\"abc-3\""), ""),
        (Some("abc-3"), ""),
        (Some("\"d41d8cd98f00b204e9800998ecf8427e-12\""), ""),
        (Some("\"\""), ""),
        (Some(""), ""),
        (None, ""),
        // A dash that is not followed by a part count is still a content identity.
        (Some("\"abc-def\""), "abc-def"),
    ] {
        let mut state = SyncState::parse(fixture!("extension-v1.json")).unwrap();
        state.mark_synced(etag, NOW);
        assert_eq!(state.remote_index_etag, recorded, "{etag:?}");
    }
}

#[test]
fn etag_helpers() {
    assert_eq!(unquote_etag("\"abc\""), "abc");
    assert_eq!(unquote_etag("W/\"abc\""), "abc");
    assert_eq!(unquote_etag("abc"), "abc");
    assert!(is_trusted_etag("\"abc\""));
    assert!(!is_trusted_etag("\"abc-1\""));
    assert!(!is_trusted_etag("\"\""));
    assert!(!is_trusted_etag(""));
}

// ---------------------------------------------------------------------------------------------
// The pull fast path

fn synced(etag: &str, lazy: bool) -> SyncState {
    let mut state = SyncState::parse(fixture!("extension-v1.json")).unwrap();
    state.remote_index_etag = etag.to_string();
    state.lazy_pull_active = lazy;
    state
}

/// (recorded etag, lazy, head etag, local index, metadata-only, no-op)
type NoopRow = (&'static str, bool, Option<&'static str>, bool, bool, bool);

#[test]
fn pull_is_noop_truth_table() {
    let table: &[NoopRow] = &[
        ("abc", false, Some("\"abc\""), true, false, true),
        ("abc", false, Some("abc"), true, false, true),
        ("abc", false, Some("\"abc\""), true, true, true),
        // The remote index changed.
        ("abc", false, Some("\"abd\""), true, false, false),
        // No HEAD answer (or no ETag in it).
        ("abc", false, None, true, false, false),
        // The local index is missing: must pull.
        ("abc", false, Some("\"abc\""), false, false, false),
        ("abc", false, Some("\"abc\""), false, true, false),
        // Lazy hydration pending: only a metadata-only pull may skip.
        ("abc", true, Some("\"abc\""), true, false, false),
        ("abc", true, Some("\"abc\""), true, true, true),
        // Multipart ETags identify no content, even when they match.
        ("abc-3", false, Some("\"abc-3\""), true, false, false),
        ("abc", false, Some("\"abc-3\""), true, false, false),
        // Nothing recorded.
        ("", false, Some("\"\""), true, false, false),
        ("", false, Some(""), true, false, false),
        ("", false, Some("\"abc\""), true, false, false),
    ];
    for &(recorded, lazy, head, local_index, metadata_only, noop) in table {
        let state = synced(recorded, lazy);
        assert_eq!(
            state.pull_is_noop(head, local_index, metadata_only),
            noop,
            "recorded {recorded:?} lazy {lazy} head {head:?} local index {local_index} \
             metadata-only {metadata_only}"
        );
    }
}

#[test]
fn a_freshly_synced_state_takes_the_fast_path() {
    let mut state = SyncState::default();
    assert!(
        !state.pull_is_noop(Some("\"abc\""), true, false),
        "nothing recorded yet"
    );
    state.mark_synced(Some("\"abc\""), NOW);
    assert!(state.pull_is_noop(Some("\"abc\""), true, false));
    state.mark_synced(Some("\"abc-2\""), NOW);
    assert!(!state.pull_is_noop(Some("\"abc-2\""), true, false));
}

// ---------------------------------------------------------------------------------------------
// The tombstone journal (`markDirty` appends a line; every reader folds the journal in).

fn journal_of(tombstones: &[&str]) -> Vec<u8> {
    tombstones
        .iter()
        .flat_map(|t| s3sync_core::state::sync_state::journal_line(t))
        .collect()
}

fn marked_one_by_one(sidecar: Option<&[u8]>, tombstones: &[&str]) -> Vec<u8> {
    let mut state = SyncState::for_update(sidecar);
    for t in tombstones {
        state.record_dirty(Some(t));
    }
    state.to_json()
}

#[test]
fn a_folded_journal_reads_as_the_markdirty_rewrites_it_stands_for() {
    use s3sync_core::state::sync_state::fold_journal;
    let clean = SyncState::fresh().to_json();
    let tombstones = ["ns/data/a", "ns/logs", "ns/data/a", "ns/ünï/x.yaml"];
    for sidecar in [None, Some(clean.as_slice()), Some(b"{garbage".as_slice())] {
        assert_eq!(
            fold_journal(sidecar, &journal_of(&tombstones)),
            Some(marked_one_by_one(sidecar, &tombstones)),
        );
    }
    // Nothing that counts: the sidecar as it was (absent stays absent).
    assert_eq!(fold_journal(None, b""), None);
    assert_eq!(fold_journal(Some(&clean), b"\n\n"), Some(clean.clone()));
}

#[test]
fn torn_malformed_and_unsafe_journal_lines_are_skipped_and_spare_their_neighbours() {
    use s3sync_core::state::sync_state::{journal_line, journal_tombstones};
    let mut journal = journal_line("ns/a");
    // A crash mid-append: the line has no closing newline...
    journal.extend_from_slice(b"\n\"ns/to");
    // ...and the next append's leading newline ends it, so this one still counts.
    journal.extend(journal_line("ns/b"));
    for bad in [
        &b"not json"[..],
        b"42",
        b"\"\"",
        b"\"../escape\"",
        b"\"/abs\"",
        b"\"ns//b\"",
        b"[\"ns/c\"]",
    ] {
        journal.push(b'\n');
        journal.extend_from_slice(bad);
        journal.push(b'\n');
    }
    journal.extend(journal_line("ns/c"));
    // A torn last line (no closing newline) does not count yet.
    journal.extend_from_slice(b"\n\"ns/d\"");
    assert_eq!(journal_tombstones(&journal), ["ns/a", "ns/b", "ns/c"]);
}

#[test]
fn the_journal_files_are_internal_and_never_travel() {
    use s3sync_core::model::paths::{is_internal, TOMBSTONE_JOURNAL_FILE, TOMBSTONE_JOURNAL_TAKEN};
    assert!(is_internal(TOMBSTONE_JOURNAL_FILE));
    assert!(is_internal(TOMBSTONE_JOURNAL_TAKEN));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Cut anywhere (a crash mid-append), the journal yields exactly the tombstones whose lines
    /// were written whole, in order: never a partial path, never one skipped before the cut.
    #[test]
    fn a_journal_cut_anywhere_yields_exactly_its_whole_lines(
        paths in proptest::collection::vec("[a-zé\"\\\\]{1,6}(/[a-z0-9 .]{1,6}){0,3}", 0..12),
        cut in 0usize..400,
    ) {
        use s3sync_core::state::sync_state::{journal_line, journal_tombstones};
        let mut journal = Vec::new();
        let mut ends = Vec::new();
        for path in &paths {
            journal.extend(journal_line(path));
            ends.push(journal.len());
        }
        let cut = cut.min(journal.len());
        let whole: Vec<String> = paths
            .iter()
            .zip(&ends)
            .filter(|(_, end)| **end <= cut)
            .map(|(path, _)| path.clone())
            // Which paths are safe is the path rules' business (tests/paths.rs); here only
            // whether a line survives the cut.
            .filter(|path| {
                s3sync_core::model::paths::PathModel::new(None, "")
                    .is_ok_and(|rules| rules.check_rel(path).is_ok())
            })
            .collect();
        proptest::prop_assert_eq!(journal_tombstones(&journal[..cut]), whole);
    }
}

#[test]
fn only_a_dirty_sidecar_past_the_extensions_cap_walks_everything() {
    let walks_everything =
        |bytes: &[u8]| SyncState::parse(bytes).is_some_and(|s| s.asks_walk_of_everything());
    let mut state = SyncState::fresh();
    assert!(!walks_everything(&state.to_json()));
    for i in 0..DIRTY_PATHS_CAP {
        state.record_dirty(Some(&format!("ns/p-{i}")));
        assert!(!walks_everything(&state.to_json()), "{i}");
    }
    state.record_dirty(Some("ns/one-more"));
    assert!(walks_everything(&state.to_json()));
    assert!(!walks_everything(b"{garbage"));
    state.mark_synced(Some("\"e\""), "2026-12-01T00:00:00.000Z");
    assert!(!walks_everything(&state.to_json()), "a sync settles it");
}

#[test]
fn an_unverified_push_forgets_used_tombstones_in_dirty_paths_too() {
    // `dirtyPaths` count as evidence (`tombstones_of`); a push that could not verify the cache
    // keeps them, so a path it acted on must leave them as well as `s3syncTombstones`.
    let mut state = SyncState::fresh();
    state.record_dirty(Some("ns/used"));
    state.record_dirty(Some("ns/kept"));
    state.record_push(
        PushStanding::Unsent,
        None,
        "2026-12-01T00:00:00.000Z",
        &["ns/used".to_string()],
    );
    assert_eq!(SyncState::tombstones_of(&state.to_json()), ["ns/kept"]);
}

/// One `markDirty` rewrite without a recorder: parse, record, serialise (what the service did
/// per call before the recorder).
fn rewritten(sidecar: Option<&[u8]>, tombstone: Option<&str>) -> Vec<u8> {
    let mut state = SyncState::for_update(sidecar);
    state.record_dirty(tombstone);
    state.to_json()
}

/// A JSON value for unknown sidecar fields: the shapes whose round trip could drift (floats,
/// big integers, escapes, nesting).
fn any_extra_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\"\\\\é\u{1F600}\n]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// What lies on disk before a `markDirty`: whatever the recorder wrote last, or someone else's
/// rewrite of it.
#[derive(Debug, Clone)]
enum OnDisk {
    /// The recorder's own bytes, untouched.
    Ours,
    /// Removed.
    Absent,
    /// Unreadable bytes.
    Garbage,
    /// A sync settled it (the push or a pull rewrote it), with extra fields of another writer.
    Synced(Vec<(String, Value)>),
    /// Another writer added a tombstone.
    OtherTombstone(String),
    /// Another writer edited it in place without changing its length (one path letter swapped).
    SameLengthEdit(usize),
    /// The extension wrote it, in one of its own shapes.
    Extension(usize),
}

/// Sidecars as the extension (or an older writer) leaves them: compact, the old ETag spelling,
/// an explicit null, version 1.
const EXTENSION_SHAPES: [&str; 4] = [
    r#"{"version":2,"remoteIndexETag":"abc","lastVerifiedAt":"2026-08-08T09:30:00.000Z","localDirty":true,"dirtyPaths":["ns/x"],"bulkInvalidated":false,"lazyPullActive":false}"#,
    r#"{"version":2,"remoteIndexEtag":"abc","lastVerifiedAt":"","localDirty":false,"dirtyPaths":[],"bulkInvalidated":false,"lazyPullActive":true,"dirtyPathsOverflowed":null}"#,
    r#"{"version":1,"remoteIndexETag":"abc","lastVerifiedAt":"2026-08-08T09:30:00.000Z","localDirty":false}"#,
    "{\n  \"version\": 2,\n  \"remoteIndexETag\": \"\",\n  \"lastVerifiedAt\": \"\",\n  \"localDirty\": true,\n  \"dirtyPaths\": [],\n  \"bulkInvalidated\": true,\n  \"lazyPullActive\": false,\n  \"lastCatalogHash\": \"h\",\n  \"commitSeq\": 4\n}",
];

/// `bytes` with one path letter (an `a`, `b` or `c` after `ns/`) swapped for another, chosen by
/// `pick`; the same bytes when there is none.
fn swap_a_path_letter(bytes: &[u8], pick: usize) -> Vec<u8> {
    let mut edited = bytes.to_vec();
    let letters: Vec<usize> = (3..bytes.len())
        .filter(|&i| &bytes[i - 3..i] == b"ns/" && matches!(bytes[i], b'a'..=b'c'))
        .collect();
    if let Some(&at) = letters.get(pick % letters.len().max(1)) {
        edited[at] = if edited[at] == b'a' { b'b' } else { b'a' };
    }
    edited
}

fn any_on_disk() -> impl proptest::strategy::Strategy<Value = OnDisk> {
    use proptest::prelude::*;
    prop_oneof![
        6 => Just(OnDisk::Ours),
        1 => Just(OnDisk::Absent),
        1 => Just(OnDisk::Garbage),
        1 => proptest::collection::vec(("x[a-z]{1,4}", any_extra_value()), 0..4)
            .prop_map(OnDisk::Synced),
        1 => "ns/[a-c]{1,2}".prop_map(OnDisk::OtherTombstone),
        1 => any::<usize>().prop_map(OnDisk::SameLengthEdit),
        1 => (0..EXTENSION_SHAPES.len()).prop_map(OnDisk::Extension),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The recorder writes exactly the bytes a fresh parse per call writes, whatever happened
    /// to the sidecar between calls: reusing its own state never hides another writer's change.
    #[test]
    fn the_recorder_writes_what_a_parse_per_call_writes(
        steps in proptest::collection::vec(
            (any_on_disk(), proptest::option::weighted(0.9, "ns/[a-c]{1,2}")),
            1..40,
        ),
    ) {
        use s3sync_core::state::sync_state::DirtyRecorder;
        let mut recorder = DirtyRecorder::new();
        let mut disk: Option<Vec<u8>> = None;
        for (change, tombstone) in steps {
            match change {
                OnDisk::Ours => {}
                OnDisk::Absent => disk = None,
                OnDisk::Garbage => disk = Some(b"{\"version\":2,".to_vec()),
                OnDisk::Synced(extra) => {
                    let mut state = SyncState::for_update(disk.as_deref());
                    state.mark_synced(Some("\"etag\""), NOW);
                    state.extra.extend(extra);
                    disk = Some(state.to_json());
                }
                OnDisk::OtherTombstone(path) => {
                    disk = Some(rewritten(disk.as_deref(), Some(&path)));
                }
                OnDisk::SameLengthEdit(pick) => {
                    disk = disk.map(|bytes| swap_a_path_letter(&bytes, pick));
                }
                OnDisk::Extension(shape) => disk = Some(EXTENSION_SHAPES[shape].as_bytes().to_vec()),
            }
            let expected = rewritten(disk.as_deref(), tombstone.as_deref());
            let written = recorder.record(disk.as_deref(), tombstone.as_deref()).to_vec();
            proptest::prop_assert_eq!(&written, &expected);
            let parsed = SyncState::parse(&written).expect("the recorder writes a readable sidecar");
            proptest::prop_assert_eq!(recorder.walks_everything(), parsed.asks_walk_of_everything());
            disk = Some(written);
        }
    }
}

#[test]
fn the_recorder_crosses_the_extensions_cap_like_a_parse_per_call() {
    use s3sync_core::state::sync_state::DirtyRecorder;
    let walks_everything =
        |bytes: &[u8]| SyncState::parse(bytes).is_some_and(|s| s.asks_walk_of_everything());
    let mut recorder = DirtyRecorder::new();
    assert!(!recorder.walks_everything(), "nothing recorded yet");
    let mut disk: Option<Vec<u8>> = None;
    for i in 0..=DIRTY_PATHS_CAP {
        let path = format!("ns/p-{i}");
        let expected = rewritten(disk.as_deref(), Some(&path));
        let written = recorder.record(disk.as_deref(), Some(&path)).to_vec();
        assert_eq!(written, expected, "call {i}");
        assert_eq!(
            recorder.walks_everything(),
            walks_everything(&written),
            "call {i}"
        );
        disk = Some(written);
    }
    assert!(
        recorder.walks_everything(),
        "past the cap the extension walks everything"
    );
}

#[test]
fn the_recorder_parses_again_after_any_one_byte_edit_at_the_same_length() {
    use s3sync_core::state::sync_state::DirtyRecorder;
    // Paths of eight lengths (each written twice: dirty path and tombstone), so the sidecar's
    // length takes four remainders modulo 8: the comparison runs eight bytes per step, then the
    // tail, and an edit lands in every position of both (a comparison skipping the tail fails
    // here).
    for path in [
        "ns/a",
        "ns/ab",
        "ns/abc",
        "ns/abcd",
        "ns/abcde",
        "ns/abcdef",
        "ns/abcdefg",
        "ns/abcdefgh",
    ] {
        let mut first = DirtyRecorder::new();
        let ours = first.record(None, Some(path)).to_vec();
        for at in 0..ours.len() {
            let mut edited = ours.clone();
            // Another printable byte: mostly still JSON, sometimes not (both must be parsed).
            edited[at] = if edited[at] == b'x' { b'y' } else { b'x' };
            let mut recorder = DirtyRecorder::new();
            assert_eq!(recorder.record(None, Some(path)), ours.as_slice());
            let expected = rewritten(Some(&edited), Some("ns/next"));
            assert_eq!(
                recorder.record(Some(&edited), Some("ns/next")),
                expected.as_slice(),
                "{path}: byte {at} of {}",
                ours.len()
            );
        }
    }
}
