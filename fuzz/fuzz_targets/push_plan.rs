//! The push planner through `session::Session`, as the shim drives it: plan, hash what it asks
//! for, plan again, record. Input: a 4-byte header (byte 0 namespace, byte 1 flags, byte 2 max
//! deletes (255: the default, 254: no cap), byte 3 max delete percent (255: NaN, 254: infinity,
//! else 0..=100)), then fields (0xFF): the index (raw JSON or records, see
//! `fuzz_support::index_bytes`), the local listing (raw or text records, see
//! `fuzz_support::local_listing`), then `markDirty` paths (normalised as the shim does).
//!
//! The safety model, mirroring tests/push_properties.rs: every delete has evidence (a recorded
//! tombstone that covers it, or `--delete-missing`), never names a file present in the cache,
//! no guard that fired lets a delete through, and uploads come only from the bound tree.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use fuzz_support::{assert_contained, byte, header, index_bytes, local_listing, namespace, text};
use libfuzzer_sys::fuzz_target;
use s3sync_core::index::Index;
use s3sync_core::model::paths::{is_internal, is_never_synced};
use s3sync_core::runs::push::plan::{PushInput, PushPlan, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::safety::{
    covering_tombstone, normalize_tombstone, DeletePolicy, Evidence, RunFacts, CATALOG_EXPORT,
    DEFAULT_MAX_DELETES, PERCENT_CAP_FLOOR,
};
use s3sync_core::wire::listing::decode_local;

/// Guards that withhold every delete (`catalog-shrink` holds back one upload, not deletes).
const GUARDS: &[&str] = &[
    "mixed-layout",
    "namespace-tree-missing",
    "delete-cap",
    "lazy-hydration",
    "sidecar-unreadable",
    "symlink-in-path",
    "walk-error",
];

fuzz_target!(|data: &[u8]| {
    let (opts, parts) = header(data, 4);
    if parts.len() < 2 {
        return;
    }
    let ns = namespace(byte(opts, 0));
    let flags = byte(opts, 1);
    let policy = DeletePolicy {
        delete_missing: flags & 1 != 0,
        allow_catalog_shrink: flags & 2 != 0,
        max_deletes: match byte(opts, 2) {
            255 => DEFAULT_MAX_DELETES,
            254 => u64::MAX,
            n => u64::from(n),
        },
        max_delete_percent: match byte(opts, 3) {
            255 => f64::NAN,
            254 => f64::INFINITY,
            n => f64::from(n % 101),
        },
    };
    let facts = RunFacts {
        lazy_pull_active: flags & 4 != 0,
        walk_errors: u64::from(flags & 8 != 0),
        listing_errors: u64::from(flags & 16 != 0),
        sidecar_unreadable: flags & 128 != 0,
        symlinked_folders: 0,
    };
    let hashes_match = flags & 32 != 0;
    let confirm_deletes = flags & 64 != 0;
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
    let Ok(files) = decode_local(listing) else {
        return;
    };
    let model = session.model().clone();
    let tombstones: BTreeSet<String> = parts[2..]
        .iter()
        .filter_map(|t| normalize_tombstone(&model, &text(t)))
        .collect();
    let mut input = PushInput {
        tombstones: tombstones.clone(),
        hashes: BTreeMap::new(),
        policy,
        facts,
        ..PushInput::default()
    };
    let first = session
        .plan_push(listing, &input)
        .expect("the listing decodes")
        .clone();
    check(&first, &index, &files, &input, ns);

    // The shim hashes what the plan asks for, and plans again.
    for path in &first.needs_hash {
        assert_contained("hash request", path);
        let rel = match ns {
            Some(ns) => path
                .strip_prefix(&format!("{ns}/"))
                .unwrap_or_else(|| panic!("hash of {path:?} outside {ns}/")),
            None => path.as_str(),
        };
        let entry = index
            .entries
            .get(rel)
            .expect("a hash is asked only of indexed files");
        let sha = match (&entry.sha256, hashes_match) {
            (Some(sha), true) => sha.clone(),
            _ => "0".repeat(64),
        };
        input.hashes.insert(path.clone(), sha);
    }
    let second = session
        .plan_push(listing, &input)
        .expect("the listing decodes")
        .clone();
    check(&second, &index, &files, &input, ns);
    assert!(
        second.needs_hash.is_empty(),
        "hashes given, still needed: {:?}",
        second.needs_hash
    );
    assert_eq!(first.deletes, second.deletes, "hashing changed the deletes");
    assert_eq!(first.withheld, second.withheld);
    assert_eq!(first.missing, second.missing);

    // The shim uploads everything and records it; the index it publishes must read back.
    let uploaded: Vec<Uploaded> = second
        .uploads
        .iter()
        .map(|u| Uploaded {
            rel: u.transfer.rel.clone(),
            size: u.transfer.size,
            mtime_ms: Some(1_785_585_600_000),
            sha256: "a".repeat(64),
            etag: Some(format!("\"etag-{}\"", u.transfer.rel.len())),
        })
        .collect();
    session
        .record_push(&uploaded, "2026-08-01T12:00:00.000Z", confirm_deletes)
        .expect("a plan was made");
    let written = session.index_json(false).expect("the index is loaded");
    let after = Index::parse(&written).expect("the published index parses");
    for up in &uploaded {
        assert_eq!(after.entries.get(&up.rel).unwrap().size, up.size);
    }
    for rel in &second.prune {
        assert!(!after.entries.contains_key(rel));
    }
    let applying: BTreeSet<String> = session
        .deletes_still_applying()
        .expect("loaded")
        .into_iter()
        .collect();
    let deleted: BTreeSet<String> = second.deletes.iter().map(|d| d.rel.clone()).collect();
    if confirm_deletes {
        assert_eq!(applying, deleted);
    } else {
        assert!(applying.is_empty());
        for rel in &deleted {
            assert!(
                after.entries.contains_key(rel),
                "unconfirmed delete of {rel:?} applied"
            );
        }
    }
    // A lost race against the same index re-applies the same changes.
    session.rebase_push(&index_json).expect("the index parses");
    let rebased = session.index_json(false).expect("the index is loaded");
    assert_eq!(
        Index::parse(&rebased).expect("the rebased index parses"),
        after
    );
});

fn check(
    plan: &PushPlan,
    index: &Index,
    files: &[s3sync_core::wire::listing::LocalFile<'_>],
    input: &PushInput,
    ns: Option<&str>,
) {
    let under = |rel: &str| match ns {
        Some(ns) => format!("{ns}/{rel}"),
        None => rel.to_string(),
    };
    let present: BTreeSet<&str> = files.iter().map(|f| f.path).collect();
    let codes: BTreeSet<&str> = plan.blocked.iter().map(|v| v.code.as_str()).collect();
    let guarded = GUARDS.iter().any(|g| codes.contains(g));

    // Every delete has evidence and names an indexed payload file that is not in the cache.
    for delete in plan.deletes.iter().chain(&plan.withheld) {
        let cache_path = under(&delete.rel);
        match &delete.evidence {
            Evidence::Tombstone { path } => {
                assert!(
                    input.tombstones.contains(path),
                    "{path:?} is no recorded tombstone"
                );
                assert_eq!(
                    covering_tombstone(&input.tombstones, &cache_path),
                    Some(path),
                    "tombstone {path:?} does not cover {cache_path:?}"
                );
            }
            Evidence::DeleteMissing => assert!(
                input.policy.delete_missing,
                "deleteMissing evidence without the option: {:?}",
                delete.rel
            ),
        }
        assert!(
            !present.contains(cache_path.as_str()),
            "delete of {cache_path:?}, which is in the cache"
        );
        assert_eq!(delete.remote_key, cache_path);
        assert_contained("delete", &delete.remote_key);
        assert!(
            index.entries.contains_key(&delete.rel),
            "{:?} is not indexed",
            delete.rel
        );
        assert!(
            !is_internal(&delete.rel) && !is_never_synced(&delete.rel),
            "{:?}",
            delete.rel
        );
    }

    // No guard that fired lets a delete through; nothing is withheld without a guard.
    if guarded {
        assert!(plan.deletes.is_empty(), "deletes despite {codes:?}");
    }
    if !plan.withheld.is_empty() {
        assert!(guarded, "withheld without a guard: {codes:?}");
        assert!(plan.deletes.is_empty());
    }
    // Lazy hydration withholds every delete and is reported exactly when it withheld one.
    if input.facts.lazy_pull_active {
        assert!(plan.deletes.is_empty(), "deletes while lazy");
        assert_eq!(codes.contains("lazy-hydration"), !plan.withheld.is_empty());
    } else {
        assert!(!codes.contains("lazy-hydration"));
    }
    if input.facts.sidecar_unreadable {
        assert!(
            plan.deletes.is_empty(),
            "deletes under an unreadable sidecar"
        );
        assert_eq!(
            codes.contains("sidecar-unreadable"),
            !plan.withheld.is_empty()
        );
    } else {
        assert!(!codes.contains("sidecar-unreadable"));
    }
    if input.facts.walk_errors > 0 || input.facts.listing_errors > 0 {
        assert!(codes.contains("walk-error"));
    }
    // The caps hold: a count over the cap, or (past the floor) a share that is not within the
    // percentage, is withheld. A cap that is not a number caps everything past the floor.
    let n = plan.deletes.len() as u64;
    assert!(n <= input.policy.max_deletes, "{n} deletes over the cap");
    if n > PERCENT_CAP_FLOOR {
        let percent = n as f64 * 100.0 / index.entries.len().max(1) as f64;
        assert!(
            percent <= input.policy.max_delete_percent,
            "{n} deletes ({percent}%) past the {}% cap",
            input.policy.max_delete_percent
        );
    }

    // Uploads come from the bound tree, as files the walk found.
    let mut previous: Option<&str> = None;
    for upload in &plan.uploads {
        let t = &upload.transfer;
        assert_eq!(t.cache_path, under(&t.rel));
        assert_eq!(t.remote_key, t.cache_path);
        assert_contained("upload", &t.cache_path);
        assert!(
            present.contains(t.cache_path.as_str()),
            "{:?} is not in the cache",
            t.cache_path
        );
        assert!(
            !is_internal(&t.rel) && !is_never_synced(&t.rel),
            "uploads {:?}",
            t.rel
        );
        assert!(
            previous < Some(t.rel.as_str()),
            "uploads unsorted or repeated"
        );
        previous = Some(&t.rel);
        if t.rel == CATALOG_EXPORT && !input.policy.allow_catalog_shrink {
            if let Some(entry) = index.entries.get(&t.rel) {
                assert!(!s3sync_core::safety::catalog_shrinks(t.size, entry.size));
            }
        }
    }
    for rel in &plan.missing {
        assert!(index.entries.contains_key(rel));
        assert!(!plan
            .deletes
            .iter()
            .chain(&plan.withheld)
            .any(|d| &d.rel == rel));
    }
    let s = &plan.summary;
    assert_eq!(s.upload, plan.uploads.len() as u64);
    assert_eq!(
        s.upload_bytes,
        plan.uploads.iter().map(|u| u.transfer.size).sum::<u64>()
    );
    assert_eq!(s.delete, plan.deletes.len() as u64);
    assert_eq!(s.withheld_deletes, plan.withheld.len() as u64);
    assert_eq!(s.missing, plan.missing.len() as u64);
}
