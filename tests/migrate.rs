//! The migrate planner's decisions: copy only to an absent key, keep a namespaced object that is
//! not proven identical (a `conflict`), index verified copies (from the solo index, or from the
//! listing when there is none), and remove only originals whose copy the namespace's index names.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::index::Index;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::migrate::plan::{
    plan_migrate, ConflictReason, IndexSource, MigrateInputs, MigratePlan, CONFLICT,
};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::{decode_remote, encode_remote};

const NOW: &str = "2026-08-07T10:00:00.000Z";
const LISTED_AT: &str = "2026-08-01T09:00:00.000Z";

type Listed<'a> = (&'a str, u64, Option<&'a str>, Option<&'a str>);

/// An index naming `(rel, size, sha256)`.
fn index(entries: &[(&str, u64, Option<&str>)]) -> Index {
    Index::parse(&index_bytes(entries)).unwrap()
}

fn index_bytes(entries: &[(&str, u64, Option<&str>)]) -> Vec<u8> {
    let entries: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|(rel, size, sha)| {
            let mut entry =
                serde_json::json!({"size": size, "lastModified": "2026-07-01T00:00:00.000Z"});
            if let Some(sha) = sha {
                entry["sha256"] = serde_json::json!(sha);
            }
            (rel.to_string(), entry)
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({"version": 1, "entries": entries})).unwrap()
}

/// Plans a migrate into `prod`, the listing going through the buffer format as in the shim.
fn plan(listing: &[Listed<'_>], solo: Option<&Index>, ns: Option<&Index>) -> MigratePlan {
    let model = PathModel::new(Some("prod"), "swamp").unwrap();
    let buffer = encode_remote(listing.iter().copied());
    let listed = decode_remote(&buffer).unwrap();
    plan_migrate(
        &model,
        MigrateInputs {
            listing: &listed,
            solo_index: solo,
            ns_index: ns,
            now_iso: NOW,
        },
    )
}

fn rels(items: &[s3sync_core::runs::migrate::plan::MigrateItem]) -> Vec<&str> {
    items.iter().map(|i| i.rel.as_str()).collect()
}

#[test]
fn an_absent_key_is_copied() {
    let p = plan(&[("logs/a.log", 10, Some("\"e1\""), None)], None, None);
    assert_eq!(rels(&p.copy), ["logs/a.log"]);
    assert_eq!(p.copy[0].to, "prod/logs/a.log");
    assert!(p.conflicts.is_empty() && p.verified.is_empty() && p.removable.is_empty());
    assert_eq!(p.summary.to_copy, 1);
}

#[test]
fn a_newer_namespaced_object_of_another_size_is_a_conflict_not_a_copy() {
    // The case: 12 B solo original, 46 B namespaced object the namespace index names.
    let ns = index(&[("logs/x.log", 46, None)]);
    let p = plan(
        &[
            ("logs/x.log", 12, Some("\"old\""), None),
            ("logs/y.log", 10, Some("\"y\""), None),
            ("prod/logs/x.log", 46, Some("\"new\""), None),
        ],
        None,
        Some(&ns),
    );
    assert_eq!(
        rels(&p.copy),
        ["logs/y.log"],
        "only the absent key is copied"
    );
    assert_eq!(p.conflicts.len(), 1);
    let c = &p.conflicts[0];
    assert_eq!(
        (c.code, c.rel.as_str(), c.to.as_str()),
        (CONFLICT, "logs/x.log", "prod/logs/x.log")
    );
    assert_eq!(
        (c.reason, c.size, c.existing_size, c.indexed_size),
        (ConflictReason::SizeDiffers, 12, Some(46), Some(46))
    );
    assert!(
        c.message
            .starts_with("prod/logs/x.log differs from the solo copy logs/x.log"),
        "{}",
        c.message
    );
    assert!(p.removable.is_empty() && p.verified.is_empty());
    assert_eq!(p.summary.conflicts, 1);
}

#[test]
fn same_size_with_different_content_etags_is_a_conflict() {
    let p = plan(
        &[
            ("logs/a.log", 10, Some("\"aaa\""), None),
            ("prod/logs/a.log", 10, Some("\"bbb\""), None),
        ],
        None,
        None,
    );
    assert!(p.copy.is_empty() && p.verified.is_empty());
    assert_eq!(p.conflicts[0].reason, ConflictReason::ContentDiffers);
}

#[test]
fn same_size_without_comparable_evidence_is_an_unproven_conflict() {
    // Multipart ETags hash part hashes, and one side has no ETag at all: neither proves content.
    for (a, b) in [
        (Some("\"abc-2\""), Some("\"abc-2\"")),
        (Some("\"abc\""), None),
    ] {
        let p = plan(
            &[
                ("logs/a.log", 10, a, None),
                ("prod/logs/a.log", 10, b, None),
            ],
            None,
            None,
        );
        assert!(
            p.copy.is_empty() && p.verified.is_empty(),
            "never overwritten on no proof"
        );
        assert_eq!(p.conflicts[0].reason, ConflictReason::Unproven);
    }
}

#[test]
fn keys_listed_without_an_etag_are_asked_for_one_when_nothing_else_decides() {
    let listing = [
        ("logs/a.log", 10, None, None),
        ("prod/logs/a.log", 10, None, None),
    ];
    let p = plan(&listing, None, None);
    assert_eq!(p.conflicts[0].reason, ConflictReason::Unproven);
    assert_eq!(p.needs_etag, ["logs/a.log", "prod/logs/a.log"]);
    // A HEAD's ETag settles it either way.
    let same = [
        ("logs/a.log", 10, Some("\"e\""), None),
        ("prod/logs/a.log", 10, Some("\"e\""), None),
    ];
    let p = plan(&same, None, None);
    assert_eq!(
        (rels(&p.verified), p.needs_etag.len()),
        (vec!["logs/a.log"], 0)
    );
    // Hashes in both indexes decide without a HEAD; a size difference needs none either.
    let solo = index(&[("logs/a.log", 10, Some("ab12"))]);
    let ns = index(&[("logs/a.log", 10, Some("ab12"))]);
    assert!(plan(&listing, Some(&solo), Some(&ns)).needs_etag.is_empty());
    let sized = [
        ("logs/a.log", 10, None, None),
        ("prod/logs/a.log", 11, None, None),
    ];
    assert!(plan(&sized, None, None).needs_etag.is_empty());
}

#[test]
fn equal_hashes_in_both_indexes_prove_what_multipart_etags_cannot() {
    let solo = index(&[("logs/a.log", 10, Some("ab12"))]);
    let ns = index(&[("logs/a.log", 10, Some("AB12"))]);
    let listing = [
        ("logs/a.log", 10, Some("\"x-2\""), None),
        ("prod/logs/a.log", 10, Some("\"y-3\""), None),
    ];
    let p = plan(&listing, Some(&solo), Some(&ns));
    assert_eq!(rels(&p.verified), ["logs/a.log"]);
    assert_eq!(rels(&p.removable), ["logs/a.log"]);
    let other = index(&[("logs/a.log", 10, Some("cd34"))]);
    let p = plan(&listing, Some(&solo), Some(&other));
    assert_eq!(p.conflicts[0].reason, ConflictReason::ContentDiffers);
}

#[test]
fn with_no_solo_index_a_verified_copy_is_indexed_from_its_listing_and_not_yet_removable() {
    let p = plan(
        &[
            ("logs/a.log", 10, Some("\"e\""), Some(LISTED_AT)),
            ("prod/logs/a.log", 10, Some("\"e\""), Some(LISTED_AT)),
            ("data/x/raw", 3, Some("\"f\""), None),
            ("prod/data/x/raw", 3, Some("\"f\""), None),
        ],
        None,
        None,
    );
    assert_eq!(rels(&p.verified), ["logs/a.log", "data/x/raw"]);
    assert!(
        p.removable.is_empty(),
        "a copy in no index is invisible to pulls: keep the original"
    );
    let indexed: Vec<_> = p
        .to_index
        .iter()
        .map(|i| {
            (
                i.rel.as_str(),
                i.from,
                i.entry.size,
                i.entry.last_modified.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        indexed,
        [
            ("logs/a.log", IndexSource::Listing, 10, Some(LISTED_AT)),
            ("data/x/raw", IndexSource::Listing, 3, Some(NOW)),
        ]
    );
}

#[test]
fn a_solo_entry_is_carried_over_only_when_it_describes_the_same_size() {
    let solo = index(&[
        ("logs/a.log", 10, Some("ab12")),
        ("logs/b.log", 99, Some("cd34")),
    ]);
    let p = plan(
        &[
            ("logs/a.log", 10, Some("\"e\""), None),
            ("prod/logs/a.log", 10, Some("\"e\""), None),
            ("logs/b.log", 5, Some("\"f\""), None),
            ("prod/logs/b.log", 5, Some("\"f\""), None),
        ],
        Some(&solo),
        None,
    );
    let a = &p.to_index[0];
    assert_eq!(
        (a.rel.as_str(), a.from, a.entry.sha256.as_deref()),
        ("logs/a.log", IndexSource::SoloIndex, Some("ab12"))
    );
    let b = &p.to_index[1];
    assert_eq!(
        (
            b.rel.as_str(),
            b.from,
            b.entry.size,
            b.entry.sha256.as_deref()
        ),
        ("logs/b.log", IndexSource::Listing, 5, None)
    );
}

#[test]
fn only_a_verified_copy_the_namespace_index_names_at_its_size_frees_its_original() {
    let ns = index(&[("logs/a.log", 10, None), ("logs/b.log", 7, None)]);
    let p = plan(
        &[
            ("logs/a.log", 10, Some("\"e\""), None),
            ("prod/logs/a.log", 10, Some("\"e\""), None),
            ("logs/b.log", 5, Some("\"f\""), None),
            ("prod/logs/b.log", 5, Some("\"f\""), None),
        ],
        None,
        Some(&ns),
    );
    assert_eq!(rels(&p.removable), ["logs/a.log"]);
    assert_eq!(p.conflicts.len(), 1);
    let c = &p.conflicts[0];
    assert_eq!(
        (c.rel.as_str(), c.reason, c.indexed_size),
        ("logs/b.log", ConflictReason::IndexDiffers, Some(7))
    );
    assert!(
        p.to_index.is_empty(),
        "an entry already there is never replaced"
    );
}

#[test]
fn an_absent_key_the_namespace_index_names_differently_is_not_copied() {
    let ns = index(&[("logs/a.log", 46, None), ("logs/b.log", 10, None)]);
    let p = plan(
        &[
            ("logs/a.log", 12, Some("\"e\""), None),
            ("logs/b.log", 10, Some("\"f\""), None),
        ],
        None,
        Some(&ns),
    );
    assert_eq!(
        rels(&p.copy),
        ["logs/b.log"],
        "an index entry of the same size is restored"
    );
    assert_eq!(p.conflicts[0].rel, "logs/a.log");
    assert_eq!(p.conflicts[0].reason, ConflictReason::IndexDiffers);
}

#[test]
fn other_namespaces_and_bookkeeping_are_passed_over() {
    let p = plan(
        &[
            ("team/.namespace.json", 2, None, None),
            ("team/logs/a.log", 1, None, None),
            (".datastore-index.json", 5, None, None),
            ("notes.txt", 5, None, None),
            ("prod/logs/z.log", 5, None, None),
        ],
        None,
        None,
    );
    assert_eq!(p.summary.solo_objects, 0);
    assert_eq!(
        p.summary.passed_over, 4,
        "the namespace's own keys are not counted"
    );
    assert!(p.copy.is_empty() && p.conflicts.is_empty());
}

#[test]
fn the_plan_json_names_each_conflict_with_its_code() {
    let p = plan(
        &[
            ("logs/a.log", 1, Some("\"a\""), None),
            ("prod/logs/a.log", 2, Some("\"b\""), None),
        ],
        None,
        None,
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["summary"]["conflicts"], 1);
    assert_eq!(json["conflicts"][0]["code"], "conflict");
    assert_eq!(json["conflicts"][0]["reason"], "size-differs");
    assert_eq!(json["conflicts"][0]["existingSize"], 2);
    assert!(json["toIndex"].as_array().unwrap().is_empty());
}

#[test]
fn the_session_indexes_the_copies_and_then_their_originals_become_removable() {
    let listing = encode_remote([
        ("logs/a.log", 10, Some("\"e\""), Some(LISTED_AT)),
        ("prod/logs/a.log", 10, Some("\"e\""), Some(LISTED_AT)),
        ("logs/b.log", 5, Some("\"f\""), None),
        ("prod/logs/b.log", 6, Some("\"g\""), None),
    ]);
    let mut session = Session::new(Some("prod"), "").unwrap();
    session.load_empty_index();
    assert_eq!(
        session.index_migrated_copies(&listing, None, NOW).unwrap(),
        1
    );
    assert_eq!(
        session.index_migrated_copies(&listing, None, NOW).unwrap(),
        0,
        "idempotent"
    );
    let published = Index::parse(&session.index_json(false).unwrap()).unwrap();
    assert_eq!(
        published.entries.keys().collect::<Vec<_>>(),
        ["logs/a.log"],
        "a conflict is not indexed"
    );

    let listed = decode_remote(&listing).unwrap();
    let model = PathModel::new(Some("prod"), "").unwrap();
    let after = plan_migrate(
        &model,
        MigrateInputs {
            listing: &listed,
            solo_index: None,
            ns_index: Some(&published),
            now_iso: NOW,
        },
    );
    assert_eq!(rels(&after.removable), ["logs/a.log"]);
    assert_eq!(after.conflicts[0].rel, "logs/b.log");
}

#[test]
fn the_session_refuses_a_solo_binding_and_a_corrupt_solo_index() {
    let listing = encode_remote([("logs/a.log", 1, None, None)]);
    let mut solo = Session::new(None, "").unwrap();
    solo.load_empty_index();
    assert_eq!(
        solo.index_migrated_copies(&listing, None, NOW)
            .unwrap_err()
            .code(),
        "invalid-input"
    );
    let mut ns = Session::new(Some("prod"), "").unwrap();
    ns.load_empty_index();
    let error = ns
        .index_migrated_copies(&listing, Some(b"{not json"), NOW)
        .unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    let good = index_bytes(&[("logs/a.log", 1, None)]);
    assert_eq!(
        ns.index_migrated_copies(&listing, Some(&good), NOW)
            .unwrap(),
        0
    );
}
