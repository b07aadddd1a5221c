//! Namespace contamination: which objects of other namespaces sit under the bound one, and
//! that only a copy proven identical at home is ever marked removable.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::model::paths::Namespace;
use s3sync_core::runs::contamination::plan::{find_contamination, ForeignVerdict};
use s3sync_core::wire::listing::{decode_remote, encode_remote};

type Listed<'a> = (&'a str, u64, Option<&'a str>, Option<&'a str>);

fn scan(listing: &[Listed<'_>]) -> Vec<(String, ForeignVerdict)> {
    let buffer = encode_remote(listing.iter().copied());
    let decoded = decode_remote(&buffer).unwrap();
    let objects: Vec<_> = decoded.iter().map(|r| r.checked().unwrap()).collect();
    let report = find_contamination(&Namespace::parse("prod").unwrap(), &objects);
    let total: u64 = report
        .foreign_namespaces
        .iter()
        .map(|f| f.object_count)
        .sum();
    assert_eq!(total as usize, report.objects.len(), "counts add up");
    report
        .objects
        .into_iter()
        .map(|o| (o.key, o.verdict))
        .collect()
}

#[test]
fn only_objects_under_a_known_namespace_count() {
    let found = scan(&[
        ("prod/.namespace.json", 10, Some("\"m\""), None),
        ("dev/.namespace.json", 10, Some("\"m\""), None),
        ("prod/data/a/b/c/raw", 3, Some("\"x\""), None),
        // `logs` is a data tree, not a namespace (no marker): never contamination.
        ("prod/logs/run.log", 3, Some("\"x\""), None),
        ("prod/dev/data/a/b/c/raw", 3, Some("\"e1\""), None),
        ("dev/data/a/b/c/raw", 3, Some("\"e1\""), None),
    ]);
    assert_eq!(
        found,
        vec![(
            "prod/dev/data/a/b/c/raw".to_string(),
            ForeignVerdict::Redundant
        )]
    );
}

#[test]
fn a_copy_without_proof_is_kept() {
    let found = scan(&[
        ("dev/.namespace.json", 10, None, None),
        // No home copy at all: maybe the only one.
        ("prod/dev/logs/only.log", 5, Some("\"a\""), None),
        // Home copy of another size.
        ("prod/dev/logs/size.log", 5, Some("\"a\""), None),
        ("dev/logs/size.log", 6, Some("\"a\""), None),
        // Same size, other content.
        ("prod/dev/logs/edit.log", 5, Some("\"a\""), None),
        ("dev/logs/edit.log", 5, Some("\"b\""), None),
        // Same size, a multipart ETag: not a content hash.
        ("prod/dev/logs/big.log", 5, Some("\"a-2\""), None),
        ("dev/logs/big.log", 5, Some("\"a-2\""), None),
        // Same size, the server sent no ETag.
        ("prod/dev/logs/bare.log", 5, None, None),
        ("dev/logs/bare.log", 5, None, None),
    ]);
    let verdict = |key: &str| found.iter().find(|(k, _)| k == key).unwrap().1;
    assert_eq!(verdict("prod/dev/logs/only.log"), ForeignVerdict::OnlyCopy);
    assert_eq!(verdict("prod/dev/logs/size.log"), ForeignVerdict::Differs);
    assert_eq!(verdict("prod/dev/logs/edit.log"), ForeignVerdict::Differs);
    assert_eq!(verdict("prod/dev/logs/big.log"), ForeignVerdict::Unproven);
    assert_eq!(verdict("prod/dev/logs/bare.log"), ForeignVerdict::Unproven);
    assert_eq!(found.len(), 5);
}

#[test]
fn a_marker_nested_under_the_namespace_names_a_namespace_too() {
    let found = scan(&[
        ("prod/stage/.namespace.json", 10, Some("\"m\""), None),
        ("prod/stage/logs/x.log", 1, Some("\"q\""), None),
    ]);
    let keys: Vec<_> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        vec!["prod/stage/.namespace.json", "prod/stage/logs/x.log"]
    );
    assert!(found.iter().all(|(_, v)| *v == ForeignVerdict::OnlyCopy));
}
