//! Property tests of the push planner's safety model over random states: an index of random
//! rels, a cache holding random subsets of them in the namespace tree and/or at the root layout,
//! new files, sometimes an emptied namespace tree, random tombstones (on present files, absent
//! files, folders, bookkeeping, unsafe paths), random policies and run facts.
//!
//! Whatever the state, a delete has evidence, never names a file that is present, never goes
//! past a guard, and uploads come only from the bound tree.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use s3sync_core::model::paths::{is_internal, is_never_synced};
use s3sync_core::model::time::format_iso_millis;
use s3sync_core::runs::push::plan::{PushInput, PushPlan, UploadReason};
use s3sync_core::runs::session::Session;
use s3sync_core::safety::{
    covering_tombstone, normalize_tombstone, DeletePolicy, Evidence, RunFacts, CATALOG_EXPORT,
    PERCENT_CAP_FLOOR,
};
use s3sync_core::wire::listing::encode_local;

const NS: &str = "ns";
const BASE_MTIME: i64 = 1_785_585_600_000;
const GUARDS: &[&str] = &[
    "mixed-layout",
    "namespace-tree-missing",
    "delete-cap",
    "lazy-hydration",
    "sidecar-unreadable",
    "symlink-in-path",
    "walk-error",
];

// ---------------------------------------------------------------------------------------------
// The generated state

/// Where an indexed file sits in the cache.
#[derive(Debug, Clone, Copy)]
enum Place {
    Absent,
    Tree,
    Root,
    Both,
}

#[derive(Debug, Clone)]
struct EntryGen {
    rel: String,
    size: u64,
    sha: Option<u8>,
    recorded_mtime: Option<i64>,
    place: Place,
    /// The local copy's size differs from the entry's.
    local_size_differs: bool,
    /// The local copy's mtime: 0..3 offsets of the base, or unknown.
    local_mtime: Option<i64>,
    /// The hash the shim reports, when asked: the entry's or another.
    hash_matches: bool,
}

#[derive(Debug, Clone)]
enum TombGen {
    /// The file of entry `n` (modulo the entries).
    File(usize),
    /// A folder above entry `n`, `k` segments deep.
    Folder(usize, usize),
    /// A path that names nothing indexed.
    Stray(String),
    /// Bookkeeping or an unsafe path, which is never evidence.
    Hostile(&'static str),
}

#[derive(Debug, Clone, Copy)]
enum TombForm {
    Namespaced,
    Bare,
    TrailingSlash,
}

/// A cache walk: `(path, size, mtimeMs)` per file.
type Walk = Vec<(String, u64, Option<i64>)>;

#[derive(Debug, Clone)]
struct Case {
    namespaced: bool,
    entries: Vec<EntryGen>,
    internal_entries: Vec<&'static str>,
    secret_entries: bool,
    new_files: Vec<(String, u64)>,
    empty_tree: bool,
    tombstones: Vec<(TombGen, TombForm)>,
    policy: DeletePolicy,
    facts: RunFacts,
}

impl Case {
    fn under(&self, rel: &str) -> String {
        if self.namespaced {
            format!("{NS}/{rel}")
        } else {
            rel.to_string()
        }
    }

    fn index_json(&self) -> Vec<u8> {
        let mut entries = Map::new();
        for e in &self.entries {
            let mut entry = json!({
                "key": e.rel,
                "size": e.size,
                "lastModified": "2026-08-01T12:00:00.000Z",
            });
            if let Some(mtime) = e.recorded_mtime {
                entry["localMtime"] = json!(format_iso_millis(mtime));
            }
            if let Some(sha) = e.sha {
                entry["sha256"] = json!(sha_of(sha));
            }
            entries.insert(e.rel.clone(), entry);
        }
        for rel in &self.internal_entries {
            entries.insert(rel.to_string(), json!({"key": rel, "size": 1}));
        }
        if self.secret_entries {
            for rel in ["secrets/api-key", "secrets/gone"] {
                entries.insert(rel.to_string(), json!({"key": rel, "size": 1}));
            }
        }
        serde_json::to_vec(&json!({"version": 1, "entries": Value::Object(entries)})).unwrap()
    }

    /// The cache walk, and the paths of it inside the bound tree.
    fn listing(&self) -> (Walk, BTreeSet<String>) {
        let mut files = Vec::new();
        let mut tree = BTreeSet::new();
        for e in &self.entries {
            // A large file that changed is truncated (the catalog's failure), a small one grows.
            let size = match (e.local_size_differs, e.size > 4) {
                (false, _) => e.size,
                (true, true) => 3,
                (true, false) => e.size + 1,
            };
            let in_tree = matches!(e.place, Place::Tree | Place::Both) && !self.empty_tree;
            // Solo, the root layout *is* the bound tree: root copies only exist namespaced.
            let at_root = matches!(e.place, Place::Root | Place::Both) && self.namespaced;
            if in_tree {
                let path = self.under(&e.rel);
                tree.insert(path.clone());
                files.push((path, size, e.local_mtime));
            }
            if at_root {
                files.push((e.rel.clone(), size, e.local_mtime));
            }
        }
        if !self.empty_tree {
            for (rel, size) in &self.new_files {
                let path = self.under(rel);
                if tree.insert(path.clone()) {
                    files.push((path, *size, Some(BASE_MTIME)));
                }
            }
        }
        // Files that are never payload, wherever the tree is.
        files.push((".datastore-index.json".into(), 100, Some(BASE_MTIME)));
        files.push(("secrets/token".into(), 32, Some(BASE_MTIME)));
        if self.namespaced {
            files.push((format!("{NS}/.namespace.json"), 90, Some(BASE_MTIME)));
            files.push((format!("{NS}/_index/_meta.json"), 60, Some(BASE_MTIME)));
            files.push((format!("{NS}/secrets/token"), 32, Some(BASE_MTIME)));
        }
        (files, tree)
    }

    /// The `markDirty` paths as the application would pass them.
    fn raw_tombstones(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (gen, form) in &self.tombstones {
            let rel = match gen {
                TombGen::File(n) if !self.entries.is_empty() => {
                    self.entries[n % self.entries.len()].rel.clone()
                }
                TombGen::Folder(n, k) if !self.entries.is_empty() => {
                    let rel = &self.entries[n % self.entries.len()].rel;
                    let segments: Vec<&str> = rel.split('/').collect();
                    let keep = 1 + k % segments.len().saturating_sub(1).max(1);
                    segments[..keep.min(segments.len())].join("/")
                }
                TombGen::File(_) | TombGen::Folder(..) => continue,
                TombGen::Stray(rel) => rel.clone(),
                TombGen::Hostile(path) => {
                    out.push(path.to_string());
                    continue;
                }
            };
            out.push(match form {
                TombForm::Namespaced => self.under(&rel),
                TombForm::Bare => rel,
                TombForm::TrailingSlash => format!("{}/", self.under(&rel)),
            });
        }
        out
    }

    /// A data tree at the cache root beside the namespace folder. A one-segment rel copied to
    /// the root (`.catalog-export.json`) is a stray file, not a data tree.
    fn root_layout_present(&self) -> bool {
        self.namespaced
            && self
                .entries
                .iter()
                .any(|e| matches!(e.place, Place::Root | Place::Both) && e.rel.contains('/'))
    }
}

fn sha_of(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

// ---------------------------------------------------------------------------------------------
// Strategies

/// A rel: a data tree, one to three folders, a file name. Folder and file names are disjoint,
/// so no rel is a folder of another, and the small alphabet makes folder tombstones cover
/// several files (and tests segment boundaries: `m1` against `m10`).
fn rel() -> impl Strategy<Value = String> {
    let nested = (
        prop::sample::select(vec!["data", "outputs", "files", "logs", "workflow-runs"]),
        prop::collection::vec(
            prop::sample::select(vec!["a", "b", "m1", "m10", "state"]),
            1..=3,
        ),
        prop::sample::select(vec![
            "raw",
            "metadata.yaml",
            "x.txt",
            ".catalog-export.json",
        ]),
    )
        .prop_map(|(tree, folders, name)| format!("{tree}/{}/{name}", folders.join("/")));
    // The catalog export proper sits at the root of the bound tree.
    prop_oneof![12 => nested, 1 => Just(CATALOG_EXPORT.to_string())]
}

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        3 => Just(Place::Absent),
        5 => Just(Place::Tree),
        1 => Just(Place::Root),
        1 => Just(Place::Both),
    ]
}

fn entry() -> impl Strategy<Value = EntryGen> {
    (
        rel(),
        prop_oneof![6 => 0u64..5, 1 => Just(40_000u64)],
        prop::option::of(any::<u8>()),
        prop::option::of(0i64..3),
        place(),
        prop::bool::weighted(0.2),
        prop::option::weighted(0.9, 0i64..3),
        any::<bool>(),
    )
        .prop_map(
            |(rel, size, sha, recorded, place, differs, local, hash_matches)| EntryGen {
                rel,
                size,
                sha,
                recorded_mtime: recorded.map(|k| BASE_MTIME + k * 1000),
                place,
                local_size_differs: differs,
                local_mtime: local.map(|k| BASE_MTIME + k * 1000),
                hash_matches,
            },
        )
}

fn tombstone() -> impl Strategy<Value = (TombGen, TombForm)> {
    let gen = prop_oneof![
        4 => any::<usize>().prop_map(TombGen::File),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(n, k)| TombGen::Folder(n, k)),
        1 => rel().prop_map(TombGen::Stray),
        1 => prop::sample::select(vec![
            "ns",
            "ns/",
            "ns/_index/_meta.json",
            "_index/_meta.json",
            ".datastore-index.json",
            "ns/../data",
            "../data/a/raw",
            "",
            "/",
            "ns/.namespace.json",
            "secrets/api-key",
            "secrets/gone",
            "ns/secrets/gone",
        ])
        .prop_map(TombGen::Hostile),
    ];
    let form = prop_oneof![
        Just(TombForm::Namespaced),
        Just(TombForm::Bare),
        Just(TombForm::TrailingSlash),
    ];
    (gen, form)
}

fn policy() -> impl Strategy<Value = DeletePolicy> {
    (
        any::<bool>(),
        prop_oneof![0u64..40, Just(500u64)],
        prop_oneof![(0u8..=100).prop_map(f64::from), Just(25.0)],
        any::<bool>(),
    )
        .prop_map(
            |(delete_missing, max_deletes, max_delete_percent, allow_catalog_shrink)| {
                DeletePolicy {
                    delete_missing,
                    max_deletes,
                    max_delete_percent,
                    allow_catalog_shrink,
                }
            },
        )
}

fn facts() -> impl Strategy<Value = RunFacts> {
    (
        prop_oneof![6 => Just(0u64), 1 => 1u64..4],
        prop_oneof![6 => Just(0u64), 1 => 1u64..4],
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(walk_errors, listing_errors, lazy_pull_active, sidecar_unreadable)| RunFacts {
                walk_errors,
                listing_errors,
                lazy_pull_active,
                sidecar_unreadable,
                symlinked_folders: 0,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        prop::collection::vec(entry(), 0..30),
        prop::sample::subsequence(
            vec!["_index/_meta.json", "data/a/.lock", "_catalog.db"],
            0..=3,
        ),
        prop::bool::weighted(0.3),
        prop::collection::vec((rel(), 0u64..5), 0..5),
        prop::bool::weighted(0.15),
        prop::collection::vec(tombstone(), 0..8),
        policy(),
        facts(),
        prop::option::weighted(
            0.3,
            (
                entry(),
                prop::sample::select(vec![0u64, 4, 5, 255, 256, 40_000]),
                any::<bool>(),
            ),
        ),
    )
        .prop_map(
            |(
                namespaced,
                raw,
                internal_entries,
                secret_entries,
                new,
                empty_tree,
                tombstones,
                policy,
                facts,
                catalog,
            )| {
                // Often a catalog export of a size that may shrink; then one entry per rel
                // (the index is a map).
                let catalog = catalog.map(|(entry, size, truncated)| EntryGen {
                    rel: CATALOG_EXPORT.to_string(),
                    size,
                    local_size_differs: truncated,
                    ..entry
                });
                let mut seen = BTreeSet::new();
                let entries: Vec<EntryGen> = catalog
                    .into_iter()
                    .chain(raw)
                    .filter(|e| seen.insert(e.rel.clone()))
                    .collect();
                let new_files = new
                    .into_iter()
                    .map(|(rel, size)| (format!("files/new-{rel}"), size))
                    .collect();
                Case {
                    namespaced,
                    entries,
                    internal_entries,
                    secret_entries,
                    new_files,
                    empty_tree,
                    tombstones,
                    policy,
                    facts,
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Running a case the way the shim does

struct Planned {
    tombstones: BTreeSet<String>,
    tree: BTreeSet<String>,
    walk: BTreeSet<String>,
    first: PushPlan,
    second: PushPlan,
}

fn plan(case: &Case) -> Planned {
    let ns = case.namespaced.then_some(NS);
    let mut session = Session::new(ns, "swamp").unwrap();
    session.load_index(&case.index_json()).unwrap();
    let tombstones: BTreeSet<String> = case
        .raw_tombstones()
        .iter()
        .filter_map(|t| normalize_tombstone(session.model(), t))
        .collect();
    let (files, tree) = case.listing();
    let walk = files.iter().map(|(p, _, _)| p.clone()).collect();
    let listing = encode_local(files.iter().map(|(p, s, m)| (p.as_str(), *s, *m)));
    let mut input = PushInput {
        tombstones: tombstones.clone(),
        hashes: BTreeMap::new(),
        policy: case.policy,
        facts: case.facts,
        ..PushInput::default()
    };
    let first = session.plan_push(&listing, &input).unwrap().clone();
    // The shim hashes what the plan asks for, and plans again.
    let by_path: BTreeMap<String, &EntryGen> = case
        .entries
        .iter()
        .map(|e| (case.under(&e.rel), e))
        .collect();
    for path in &first.needs_hash {
        let entry = by_path[path];
        let sha = match (entry.sha, entry.hash_matches) {
            (Some(sha), true) => sha_of(sha),
            _ => "0".repeat(64),
        };
        input.hashes.insert(path.clone(), sha);
    }
    let second = session.plan_push(&listing, &input).unwrap().clone();
    Planned {
        tombstones,
        tree,
        walk,
        first,
        second,
    }
}

/// Every property of one plan; `Err` names the first that fails.
fn check(case: &Case, planned: &Planned, plan: &PushPlan) -> Result<(), TestCaseError> {
    let tombstones = &planned.tombstones;
    let codes: BTreeSet<&str> = plan.blocked.iter().map(|v| v.code.as_str()).collect();
    let guarded = GUARDS.iter().any(|g| codes.contains(g));
    let index_rels: BTreeSet<&str> = case.entries.iter().map(|e| e.rel.as_str()).collect();

    // (a) every delete has evidence, and (b) never names a file that is present.
    for delete in plan.deletes.iter().chain(&plan.withheld) {
        let cache_path = case.under(&delete.rel);
        match &delete.evidence {
            Evidence::Tombstone { path } => {
                prop_assert!(
                    tombstones.contains(path),
                    "{path:?} is no recorded tombstone"
                );
                prop_assert_eq!(
                    covering_tombstone(tombstones, &cache_path),
                    Some(path),
                    "tombstone {} does not cover {}",
                    path,
                    cache_path
                );
            }
            Evidence::DeleteMissing => prop_assert!(
                case.policy.delete_missing,
                "deleteMissing evidence without the option: {}",
                delete.rel
            ),
        }
        prop_assert!(
            !planned.tree.contains(&cache_path),
            "delete of {cache_path}, which is in the tree"
        );
        prop_assert_eq!(&delete.remote_key, &cache_path);
        prop_assert!(
            index_rels.contains(delete.rel.as_str()),
            "{} is not indexed",
            delete.rel
        );
        prop_assert!(!is_internal(&delete.rel) && !is_never_synced(&delete.rel));
    }

    // (c) a guard withholds every delete.
    if guarded {
        prop_assert!(plan.deletes.is_empty(), "deletes despite {codes:?}");
    }
    if !plan.withheld.is_empty() {
        prop_assert!(guarded, "withheld without a guard: {codes:?}");
        prop_assert!(plan.deletes.is_empty());
    }

    // (d) a root-layout tree beside the namespace folder: no deletes, and the layout named
    // exactly when it withheld one (uploads go either way, so it is no fault by itself).
    if case.root_layout_present() {
        prop_assert!(plan.deletes.is_empty());
        prop_assert_eq!(
            codes.contains("mixed-layout"),
            !plan.withheld.is_empty(),
            "{:?}",
            codes
        );
    } else {
        prop_assert!(!codes.contains("mixed-layout"), "{codes:?}");
    }

    // An emptied tree under an index that names files: no deletes, and the guard named exactly
    // when it withheld one. An index of bookkeeping entries only counts as empty.
    if planned.tree.is_empty() && !case.entries.is_empty() {
        prop_assert!(plan.deletes.is_empty());
        if !plan.withheld.is_empty() {
            prop_assert!(codes.contains("namespace-tree-missing"), "{codes:?}");
        }
    }
    if codes.contains("namespace-tree-missing") {
        prop_assert!(!plan.withheld.is_empty(), "{codes:?}");
        prop_assert!(case.entries.iter().any(|e| !is_internal(&e.rel)));
    }
    // Run facts withhold deletes.
    // Lazy hydration withholds every delete, and is reported exactly when it withheld one.
    if case.facts.lazy_pull_active {
        prop_assert!(plan.deletes.is_empty());
        prop_assert_eq!(codes.contains("lazy-hydration"), !plan.withheld.is_empty());
    } else {
        prop_assert!(!codes.contains("lazy-hydration"), "{codes:?}");
    }
    // So does a sidecar that cannot be read (it may hide a lazy hydration).
    if case.facts.sidecar_unreadable {
        prop_assert!(plan.deletes.is_empty());
        prop_assert_eq!(
            codes.contains("sidecar-unreadable"),
            !plan.withheld.is_empty()
        );
    } else {
        prop_assert!(!codes.contains("sidecar-unreadable"), "{codes:?}");
    }
    if case.facts.walk_errors + case.facts.listing_errors > 0 {
        prop_assert!(codes.contains("walk-error"));
    }

    // Deletes that go stay within both caps.
    if !plan.deletes.is_empty() {
        let n = plan.deletes.len() as u64;
        prop_assert!(
            n <= case.policy.max_deletes,
            "{n} deletes over {}",
            case.policy.max_deletes
        );
        let entries =
            case.entries.len() + case.internal_entries.len() + 2 * case.secret_entries as usize;
        let percent = n as f64 * 100.0 / entries as f64;
        prop_assert!(
            n <= PERCENT_CAP_FLOOR || percent <= case.policy.max_delete_percent,
            "{n} deletes are {percent}% over {}%",
            case.policy.max_delete_percent
        );
    }

    // (e) uploads come from the bound tree only.
    for upload in &plan.uploads {
        let path = &upload.transfer.cache_path;
        prop_assert_eq!(path, &case.under(&upload.transfer.rel));
        prop_assert_eq!(path, &upload.transfer.remote_key);
        prop_assert!(
            planned.tree.contains(path),
            "upload of {path}, not in the tree"
        );
        if case.namespaced {
            prop_assert!(path.starts_with("ns/"), "{path}");
        }
        prop_assert!(planned.walk.contains(path));
        prop_assert!(!is_internal(&upload.transfer.rel) && !is_never_synced(&upload.transfer.rel));
    }

    // (f) the summary counts the lists.
    let s = &plan.summary;
    prop_assert_eq!(s.upload, plan.uploads.len() as u64);
    prop_assert_eq!(
        s.upload_new,
        plan.uploads
            .iter()
            .filter(|u| u.reason == UploadReason::New)
            .count() as u64
    );
    prop_assert_eq!(s.delete, plan.deletes.len() as u64);
    prop_assert_eq!(s.withheld_deletes, plan.withheld.len() as u64);
    prop_assert_eq!(s.missing, plan.missing.len() as u64);
    prop_assert_eq!(
        s.upload_bytes,
        plan.uploads.iter().map(|u| u.transfer.size).sum::<u64>()
    );
    let held_back = plan
        .blocked
        .iter()
        .filter(|v| v.code == "catalog-shrink")
        .count();
    prop_assert_eq!(s.held_back as usize, held_back);
    // The catalog guard holds back the export only, and only without the override.
    if held_back > 0 {
        prop_assert!(!case.policy.allow_catalog_shrink);
        prop_assert!(!plan
            .uploads
            .iter()
            .any(|u| u.transfer.rel == CATALOG_EXPORT));
    }

    // (g) without evidence of any kind, nothing is deleted or even a candidate.
    if tombstones.is_empty() && !case.policy.delete_missing {
        prop_assert!(plan.deletes.is_empty());
        prop_assert!(plan.withheld.is_empty());
    }

    // Internal entries are pruned and appear nowhere else; missing files are really absent.
    let prune: BTreeSet<&str> = plan.prune.iter().map(String::as_str).collect();
    let internal: BTreeSet<&str> = case.internal_entries.iter().copied().collect();
    prop_assert_eq!(prune, internal);
    for rel in &plan.missing {
        prop_assert!(!planned.tree.contains(&case.under(rel)), "{rel} is present");
        prop_assert!(!is_internal(rel) && !is_never_synced(rel));
        if case.policy.delete_missing {
            prop_assert!(false, "{rel} missing despite --delete-missing");
        }
    }
    // Every tombstone in the plan lies inside the bound tree.
    for t in tombstones {
        if case.namespaced {
            prop_assert!(t.starts_with("ns/"), "{t}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn push_plans_keep_the_safety_model(case in case()) {
        let planned = plan(&case);
        check(&case, &planned, &planned.first)?;
        check(&case, &planned, &planned.second)?;
        // With every hash it asked for, the plan is final.
        prop_assert!(planned.second.needs_hash.is_empty(), "{:?}", planned.second.needs_hash);
        // Hashing decides about files, never about deletes.
        prop_assert_eq!(&planned.first.deletes, &planned.second.deletes);
        prop_assert_eq!(&planned.first.withheld, &planned.second.withheld);
        prop_assert_eq!(&planned.first.missing, &planned.second.missing);
    }

    /// An emptied namespace folder (or, solo, a cache without payload) under an index that
    /// names files: nothing uploads and nothing is deleted, whatever the evidence and policy.
    #[test]
    fn emptying_the_tree_never_unlocks_deletes(mut case in case()) {
        case.empty_tree = true;
        let planned = plan(&case);
        check(&case, &planned, &planned.second)?;
        prop_assert!(planned.second.uploads.is_empty());
        if !case.entries.is_empty() {
            prop_assert!(planned.second.deletes.is_empty());
        }
    }
}

/// The checker itself: plans that break the safety model are rejected, so a green run means
/// something.
#[test]
fn the_checker_rejects_unsafe_plans() {
    let entry = |rel: &str, place| EntryGen {
        rel: rel.to_string(),
        size: 1,
        sha: None,
        recorded_mtime: None,
        place,
        local_size_differs: false,
        local_mtime: Some(BASE_MTIME),
        hash_matches: true,
    };
    let case = Case {
        namespaced: true,
        entries: vec![
            entry("files/a/raw", Place::Absent),
            entry("files/b/raw", Place::Tree),
            entry("data/a/raw", Place::Root),
        ],
        internal_entries: vec![],
        secret_entries: false,
        new_files: vec![("files/new-x".into(), 2)],
        empty_tree: false,
        tombstones: vec![(TombGen::File(0), TombForm::Namespaced)],
        policy: DeletePolicy::default(),
        facts: RunFacts::default(),
    };
    let planned = plan(&case);
    let good = &planned.second;
    assert!(check(&case, &planned, good).is_ok());
    assert_eq!(good.withheld.len(), 1, "{good:?}");
    assert!(good.deletes.is_empty());

    // A withheld delete let through despite mixed-layout.
    let mut bad = good.clone();
    bad.deletes = std::mem::take(&mut bad.withheld);
    bad.summary.delete = 1;
    bad.summary.withheld_deletes = 0;
    assert!(check(&case, &planned, &bad).is_err());

    // A delete of a file that is present, with evidence that does not cover it.
    let mut bad = good.clone();
    let mut present = bad.withheld[0].clone();
    present.rel = "files/b/raw".into();
    present.remote_key = "ns/files/b/raw".into();
    bad.withheld.push(present);
    bad.summary.withheld_deletes = 2;
    assert!(check(&case, &planned, &bad).is_err());

    // An upload of a root-layout copy.
    let mut bad = good.clone();
    let mut root = bad.uploads[0].clone();
    root.transfer.rel = "data/a/raw".into();
    root.transfer.cache_path = "data/a/raw".into();
    root.transfer.remote_key = "data/a/raw".into();
    bad.uploads.push(root);
    bad.summary.upload += 1;
    bad.summary.upload_bytes += 1;
    assert!(check(&case, &planned, &bad).is_err());

    // A miscounted summary.
    let mut bad = good.clone();
    bad.summary.missing += 1;
    assert!(check(&case, &planned, &bad).is_err());
    let mut bad = good.clone();
    bad.summary.upload_new += 1;
    assert!(check(&case, &planned, &bad).is_err());
}
