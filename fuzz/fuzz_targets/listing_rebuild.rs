//! Listing pages → index. Input: one header byte (the namespace), then listing pages
//! (`key \0 size \0 etag \0 lastModified \0` records), separated by 0xFF. Pages that do
//! not decode are skipped, as the shim would fail that run. Every object must be accounted for
//! in the report, and nothing kept may be internal, unsafe, foreign or outside the namespace.
#![no_main]

use std::collections::BTreeSet;

use fuzz_support::{assert_contained, byte, header, namespace};
use libfuzzer_sys::fuzz_target;
use s3sync_core::index::{Index, MAX_SAFE_INTEGER};
use s3sync_core::model::paths::{is_internal, is_never_synced, PathModel, NAMESPACE_MARKER};
use s3sync_core::runs::rebuild::plan::RebuildBuilder;
use s3sync_core::wire::listing::decode_remote;

const NOW: &str = "2026-08-01T12:00:00.000Z";

fuzz_target!(|data: &[u8]| {
    let (head, pages) = header(data, 1);
    let ns = namespace(byte(head, 0));
    let model = PathModel::new(ns, "swamp").expect("the fuzz namespaces are valid");
    let mut builder = RebuildBuilder::new(model.clone(), NOW.to_string());
    let mut listed: Vec<String> = Vec::new();
    for page in &pages {
        let Ok(objects) = decode_remote(page) else {
            continue;
        };
        listed.extend(objects.iter().map(|o| o.key.to_string()));
        builder.add_page(&objects);
    }
    let (index, report) = builder.finish(None);

    let skipped = report.skipped_internal
        + report.skipped_foreign
        + report.skipped_outside_namespace
        + report.skipped_unsafe
        + report.skipped_folder_markers
        + report.skipped_duplicate;
    assert_eq!(
        report.objects_seen,
        report.kept + skipped,
        "objects unaccounted for: {report:?}"
    );
    assert_eq!(report.objects_seen, listed.len() as u64);
    assert_eq!(report.kept, index.entries.len() as u64);
    assert!(report.unsafe_examples.len() as u64 <= report.skipped_unsafe);
    assert!(report.unsafe_examples.len() <= 20);
    let bytes: u64 = index.entries.values().map(|e| e.size).sum();
    assert_eq!(report.bytes_kept, bytes);

    let keys: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    let foreign: BTreeSet<&str> = report
        .foreign_namespaces
        .iter()
        .map(String::as_str)
        .collect();
    for (rel, entry) in &index.entries {
        let parsed = model.rel(rel).expect("a kept rel is a valid rel");
        assert_contained("kept rel", rel);
        assert!(!is_internal(rel) && !is_never_synced(rel), "kept {rel:?}");
        assert!(entry.size <= MAX_SAFE_INTEGER);
        assert!(entry.last_modified.is_some());
        let key = model.remote_key(&parsed);
        assert!(
            keys.contains(key.as_str()),
            "kept {rel:?} was never listed as {key:?}"
        );
        if ns.is_none() && rel.contains('/') {
            let first = rel.split('/').next().unwrap_or("");
            assert!(
                !foreign.contains(first),
                "kept {rel:?} of foreign namespace {first:?}"
            );
        }
    }
    for folder in &report.foreign_namespaces {
        assert!(ns.is_none(), "foreign folders are a solo-mode finding");
        let marker = format!("{folder}/{NAMESPACE_MARKER}");
        assert!(keys.contains(marker.as_str()), "{folder:?} has no marker");
    }

    // The rebuilt index is written as the remote index: it must read back as itself.
    let again = Index::parse(&index.to_compact_json()).expect("rebuilt index parses");
    assert_eq!(again, index);
});
