//! The pull planner through `session::Session`, as the shim drives it. Input: a 34-byte header
//! (byte 0 namespace, byte 1 flags, bytes 2..34 four outcome mtimes), then fields (0xFF): the
//! index (raw JSON or records, see `fuzz_support::index_bytes`), the local listing (raw or text
//! records, see `fuzz_support::local_listing`), then scope folders.
//! Downloads must stay inside the bound tree, name indexed payload, never clash with each other,
//! and the index written after applying the outcome must read back.
#![no_main]

use std::collections::BTreeSet;

use fuzz_support::{
    assert_contained, byte, header, index_bytes, local_listing, namespace, text, u64_at,
};
use libfuzzer_sys::fuzz_target;
use s3sync_core::index::Index;
use s3sync_core::model::paths::{
    fold_key, foreign_namespaces_in, is_internal, is_never_synced, CachePlace,
};
use s3sync_core::model::time::format_iso_millis;
use s3sync_core::runs::pull::plan::{PullOptions, PullOutcome};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::decode_local;

fuzz_target!(|data: &[u8]| {
    let (opts, parts) = header(data, 34);
    if parts.len() < 2 {
        return;
    }
    let ns = namespace(byte(opts, 0));
    let flags = byte(opts, 1);
    let options = PullOptions {
        scope: parts[2..].iter().map(|s| text(s).into_owned()).collect(),
        metadata_only: flags & 1 != 0,
        case_insensitive: flags & 2 != 0,
        keep_existing: flags & 4 != 0,
        tombstones: Vec::new(),
    };
    let Some(index_json) = index_bytes(parts[0]) else {
        return;
    };
    let Some(listing) = local_listing(parts[1]) else {
        return;
    };
    let listing = listing.as_slice();

    let mut session = Session::new(ns, "swamp").expect("the fuzz namespaces are valid");
    if session.load_index(&index_json).is_err() {
        return;
    }
    let index = Index::parse(&index_json).expect("the session parsed it");
    let Ok(plan) = session.plan_pull(listing, &options) else {
        assert!(
            decode_local(listing).is_err(),
            "plan_pull failed on a listing that decodes"
        );
        return;
    };
    let plan = plan.clone();
    let model = session.model().clone();
    let files = decode_local(listing).expect("plan_pull decoded it");
    // The same classification the survey makes (other namespaces' folders are not payload).
    let foreign = foreign_namespaces_in(files.iter().map(|f| f.path), model.namespace());
    let local: std::collections::HashMap<String, u64> = files
        .iter()
        .filter_map(|f| match model.classify_cache_path(f.path, &foreign) {
            CachePlace::Payload(rel) => Some((rel.into_string(), f.size)),
            _ => None,
        })
        .collect();

    let mut previous: Option<&str> = None;
    let mut bytes = 0u64;
    for d in &plan.downloads {
        let rel = model.rel(&d.rel).expect("a download is a valid rel");
        assert_eq!(d.cache_path, model.cache_path(&rel));
        assert_eq!(
            d.remote_key, d.cache_path,
            "remote key and cache path disagree"
        );
        assert_contained("download", &d.cache_path);
        if let Some(ns) = ns {
            assert!(
                d.cache_path.starts_with(&format!("{ns}/")),
                "{:?} outside {ns}/",
                d.cache_path
            );
        }
        assert!(
            !is_internal(&d.rel) && !is_never_synced(&d.rel),
            "downloads {:?}",
            d.rel
        );
        let entry = index.entries.get(&d.rel).expect("a download is indexed");
        assert_eq!(entry.size, d.size);
        if let Some(size) = local.get(&d.rel) {
            assert_ne!(*size, d.size, "{:?} is already current", d.rel);
            assert!(
                !options.keep_existing,
                "{:?} overwrites a local file",
                d.rel
            );
        }
        if !options.scope.is_empty() {
            assert!(
                options.scope.iter().any(|s| {
                    let s = s.trim_end_matches('/');
                    d.rel == s || d.rel.starts_with(&format!("{s}/"))
                }),
                "{:?} is out of scope",
                d.rel
            );
        }
        assert!(
            previous < Some(d.rel.as_str()),
            "downloads unsorted or repeated"
        );
        previous = Some(&d.rel);
        bytes += d.size;
    }
    // No download needs a folder where another writes a file, nor (case-insensitive) shares a
    // folded name with another.
    let rels: BTreeSet<&str> = plan.downloads.iter().map(|d| d.rel.as_str()).collect();
    for rel in &rels {
        let mut prefix = *rel;
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            assert!(
                !rels.contains(prefix),
                "{prefix:?} and {rel:?} both downloaded"
            );
        }
    }
    if options.case_insensitive {
        let folded: BTreeSet<String> = rels.iter().map(|r| fold_key(r)).collect();
        assert_eq!(folded.len(), rels.len(), "case-colliding downloads");
    }
    for folder in &plan.lazy_folders {
        assert_contained("lazy folder", folder);
        if let Some(ns) = ns {
            assert!(folder.starts_with(&format!("{ns}/")));
        }
    }
    for rel in &plan.prune {
        assert!(is_internal(rel) && index.entries.contains_key(rel));
    }
    for refused in &plan.refused {
        assert!(index.entries.contains_key(&refused.rel));
    }
    let s = &plan.summary;
    assert_eq!(s.download, plan.downloads.len() as u64);
    assert_eq!(s.download_bytes, bytes);
    assert_eq!(s.refused, plan.refused.len() as u64);
    assert_eq!(s.pruned, plan.prune.len() as u64);

    // The shim reports its downloads (every third one vanished), and writes the index.
    let mut outcome = PullOutcome::default();
    for (i, d) in plan.downloads.iter().enumerate() {
        if i % 3 == 2 {
            outcome.not_found.push(d.rel.clone());
        } else {
            let mtime = u64_at(opts, 2 + 8 * (i % 4)) as i64;
            outcome.downloaded.push((d.rel.clone(), mtime));
        }
    }
    session.apply_pull(&outcome).expect("a plan was made");
    let written = session.index_json(false).expect("the index is loaded");
    let after = Index::parse(&written).expect("the written index parses");
    for (rel, mtime) in &outcome.downloaded {
        let recorded = after.entries.get(rel).unwrap().local_mtime.as_deref();
        assert_eq!(recorded, Some(format_iso_millis(*mtime).as_str()));
    }
    for rel in outcome.not_found.iter().chain(&plan.prune) {
        assert!(
            !after.entries.contains_key(rel),
            "{rel:?} survived its removal"
        );
    }
    let pretty = session.index_json(true).expect("the index is loaded");
    assert_eq!(Index::parse(&pretty).expect("pretty index parses"), after);
});
