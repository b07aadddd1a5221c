//! The delete guard's building blocks: the verdicts and their exact boundaries, the catalog
//! shrink test, tombstone normalisation and coverage.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use s3sync_core::model::paths::PathModel;
use s3sync_core::safety::{
    catalog_shrinks, covering_tombstone, delete_verdicts, normalize_tombstone, stored_tombstone,
    tombstones_in_sidecar, DeletePolicy, GuardInput, RunFacts, Verdict, DEFAULT_MAX_DELETES,
    DEFAULT_MAX_DELETE_PERCENT, PERCENT_CAP_FLOOR,
};

fn solo() -> PathModel {
    PathModel::new(None, "swamp").unwrap()
}

fn namespaced() -> PathModel {
    PathModel::new(Some("ns"), "swamp").unwrap()
}

/// A guard input with a healthy cache: `index` entries, all but `deletes` present.
struct Case {
    model: PathModel,
    index: u64,
    payload: u64,
    root_trees: Vec<String>,
    root_files: u64,
    deletes: u64,
    facts: RunFacts,
    policy: DeletePolicy,
}

impl Case {
    fn new(model: PathModel, index: u64, deletes: u64) -> Case {
        Case {
            model,
            index,
            payload: index - deletes,
            root_trees: Vec::new(),
            root_files: 0,
            deletes,
            facts: RunFacts::default(),
            policy: DeletePolicy::default(),
        }
    }

    fn verdicts(&self) -> Vec<Verdict> {
        delete_verdicts(&GuardInput {
            model: &self.model,
            index_entries: self.index,
            payload_files: self.payload,
            root_layout_trees: &self.root_trees,
            root_layout_files: self.root_files,
            deletes: self.deletes,
            facts: self.facts,
            policy: self.policy,
        })
    }

    fn codes(&self) -> Vec<String> {
        self.verdicts()
            .into_iter()
            .map(|v| v.code.to_string())
            .collect()
    }
}

fn policy(max_deletes: u64, max_delete_percent: f64) -> DeletePolicy {
    DeletePolicy {
        max_deletes,
        max_delete_percent,
        ..DeletePolicy::default()
    }
}

// ---------------------------------------------------------------------------------------------
// delete_verdicts

#[test]
fn defaults_are_the_documented_ones() {
    let policy = DeletePolicy::default();
    assert!(!policy.delete_missing);
    assert!(!policy.allow_catalog_shrink);
    assert_eq!(policy.max_deletes, DEFAULT_MAX_DELETES);
    assert_eq!(policy.max_deletes, 500);
    assert_eq!(policy.max_delete_percent, DEFAULT_MAX_DELETE_PERCENT);
    assert_eq!(policy.max_delete_percent, 25.0);
    assert_eq!(PERCENT_CAP_FLOOR, 10);
}

#[test]
fn a_healthy_push_has_no_verdicts() {
    for model in [solo(), namespaced()] {
        assert!(Case::new(model.clone(), 100, 0).verdicts().is_empty());
        assert!(Case::new(model.clone(), 100, 5).verdicts().is_empty());
        // An empty index and an empty cache: nothing to protect.
        let mut empty = Case::new(model, 0, 0);
        empty.payload = 0;
        assert!(empty.verdicts().is_empty());
    }
}

#[test]
fn exactly_max_deletes_is_allowed_and_one_more_trips() {
    // A large index so the percentage cap stays out of the way.
    let at = Case::new(solo(), 1_000_000, DEFAULT_MAX_DELETES);
    assert!(at.verdicts().is_empty(), "{:?}", at.verdicts());
    let over = Case::new(solo(), 1_000_000, DEFAULT_MAX_DELETES + 1);
    assert_eq!(over.codes(), ["delete-cap"]);

    for max in [0u64, 1, 3, 10, 11] {
        let mut at = Case::new(solo(), 1_000_000, max);
        at.policy = policy(max, 100.0);
        assert!(at.verdicts().is_empty(), "{max}: {:?}", at.verdicts());
        let mut over = Case::new(solo(), 1_000_000, max + 1);
        over.policy = policy(max, 100.0);
        assert_eq!(over.codes(), ["delete-cap"], "max {max}");
    }
}

#[test]
fn the_percentage_cap_applies_only_above_the_floor() {
    // At the floor, 100% of a small index may go without an override.
    let mut at_floor = Case::new(solo(), PERCENT_CAP_FLOOR, PERCENT_CAP_FLOOR);
    at_floor.payload = 1; // a new file, so the tree is not empty
    assert!(at_floor.verdicts().is_empty(), "{:?}", at_floor.verdicts());
    let small = Case::new(solo(), 12, PERCENT_CAP_FLOOR);
    assert!(small.verdicts().is_empty(), "{:?}", small.verdicts());
    // One above the floor, the percentage counts.
    let above = Case::new(solo(), 12, PERCENT_CAP_FLOOR + 1);
    assert_eq!(above.codes(), ["delete-cap"]);
    // Above the floor but within the percentage: allowed.
    let within = Case::new(solo(), 44, 11); // 25.0 %
    assert!(within.verdicts().is_empty(), "{:?}", within.verdicts());
}

#[test]
fn the_percentage_boundary_is_inclusive() {
    // Exactly the cap is allowed; the smallest step above trips.
    let at = Case::new(solo(), 100, 25);
    assert!(at.verdicts().is_empty(), "{:?}", at.verdicts());
    let over = Case::new(solo(), 100, 26);
    assert_eq!(over.codes(), ["delete-cap"]);
    let over = Case::new(solo(), 1000, 251);
    assert_eq!(over.codes(), ["delete-cap"]);
    let mut raised = Case::new(solo(), 100, 60);
    raised.policy = policy(500, 60.0);
    assert!(raised.verdicts().is_empty());
    raised.policy = policy(500, 59.9);
    assert_eq!(raised.codes(), ["delete-cap"]);
    // The count cap and the percentage cap are independent: either trips.
    let mut count_only = Case::new(solo(), 100, 60);
    count_only.policy = policy(59, 100.0);
    assert_eq!(count_only.codes(), ["delete-cap"]);
}

#[test]
fn the_delete_cap_message_names_the_numbers_and_the_override() {
    let verdicts = Case::new(solo(), 20, 12).verdicts();
    assert_eq!(verdicts.len(), 1);
    let message = &verdicts[0].message;
    for needle in [
        "12 deletes",
        "60.0%",
        "20 indexed",
        "500",
        "25",
        "--max-deletes",
        "--max-delete-percent",
    ] {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
}

#[test]
fn mixed_layout_only_when_namespaced() {
    let mut case = Case::new(namespaced(), 100, 1);
    case.root_trees = vec!["data".into(), "outputs".into()];
    case.root_files = 7431;
    let verdicts = case.verdicts();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(verdicts[0].code, "mixed-layout");
    for needle in [
        "7431 files",
        "data, outputs",
        "ns/",
        "s3sync doctor",
        "s3sync repair --apply",
    ] {
        assert!(
            verdicts[0].message.contains(needle),
            "{needle:?}: {}",
            verdicts[0].message
        );
    }
    // With nothing to delete there is nothing to withhold: uploads go, no verdict (doctor
    // reports the layout).
    case.root_trees = vec!["data".into()];
    case.deletes = 0;
    assert!(case.codes().is_empty(), "{:?}", case.codes());
    // Solo, the root is the bound tree: there is no mixed layout.
    let mut solo_case = Case::new(solo(), 100, 0);
    solo_case.root_trees = vec!["data".into()];
    solo_case.root_files = 3;
    assert!(solo_case.verdicts().is_empty());
}

#[test]
fn namespace_tree_missing_messages() {
    let mut case = Case::new(namespaced(), 40, 40);
    case.payload = 0;
    let verdicts = case.verdicts();
    let verdict = verdicts
        .iter()
        .find(|v| v.code == "namespace-tree-missing")
        .expect("fires");
    assert!(
        verdict
            .message
            .contains("the namespace folder ns/ is absent or empty"),
        "{}",
        verdict.message
    );
    assert!(verdict.message.contains("40 files"), "{}", verdict.message);

    // Solo mode says so in its own words.
    let mut case = Case::new(solo(), 5, 5);
    case.payload = 0;
    let verdicts = case.verdicts();
    assert_eq!(
        verdicts.iter().map(|v| v.code.as_str()).collect::<Vec<_>>(),
        ["namespace-tree-missing"]
    );
    assert!(
        verdicts[0]
            .message
            .contains("the cache holds no datastore files"),
        "{}",
        verdicts[0].message
    );
    assert!(!verdicts[0].message.contains("namespace folder"));

    // An empty index: nothing to protect.
    let mut case = Case::new(namespaced(), 0, 0);
    case.payload = 0;
    assert!(case.verdicts().is_empty());
    // One payload file is enough to lift it.
    let mut case = Case::new(namespaced(), 5, 5);
    case.payload = 1;
    assert!(case.verdicts().is_empty());
}

#[test]
fn run_facts_withhold_deletes() {
    let mut lazy = Case::new(namespaced(), 100, 1);
    lazy.facts.lazy_pull_active = true;
    assert_eq!(lazy.codes(), ["lazy-hydration"]);
    // Lazy hydration with nothing to delete is the extension's normal state, not a problem.
    let mut quiet = Case::new(namespaced(), 100, 0);
    quiet.facts.lazy_pull_active = true;
    assert!(quiet.codes().is_empty());

    let mut unreadable = Case::new(namespaced(), 100, 1);
    unreadable.facts.sidecar_unreadable = true;
    assert_eq!(unreadable.codes(), ["sidecar-unreadable"]);
    let mut quiet = Case::new(namespaced(), 100, 0);
    quiet.facts.sidecar_unreadable = true;
    assert!(quiet.codes().is_empty());

    let mut walk = Case::new(namespaced(), 100, 1);
    walk.facts.walk_errors = 1;
    assert_eq!(walk.codes(), ["walk-error"]);
    // A symlinked folder is reported even with nothing to delete: nothing beneath it is pushed.
    for deletes in [0, 1] {
        let mut linked = Case::new(namespaced(), 100, deletes);
        linked.facts.symlinked_folders = 2;
        assert_eq!(linked.codes(), ["symlink-in-path"]);
    }
    let mut listing = Case::new(namespaced(), 100, 1);
    listing.facts.listing_errors = 3;
    let verdicts = listing.verdicts();
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0].code, "walk-error");
    assert!(verdicts[0]
        .message
        .contains("0 errors walking the cache and 3 listing the bucket"));
}

#[test]
fn every_guard_reports_at_once() {
    let mut case = Case::new(namespaced(), 20, 20);
    case.payload = 0;
    case.root_trees = vec!["data".into()];
    case.root_files = 20;
    case.facts = RunFacts {
        walk_errors: 2,
        listing_errors: 1,
        lazy_pull_active: true,
        sidecar_unreadable: true,
        symlinked_folders: 1,
    };
    assert_eq!(
        case.codes(),
        [
            "mixed-layout",
            "namespace-tree-missing",
            "lazy-hydration",
            "sidecar-unreadable",
            "symlink-in-path",
            "walk-error",
            "delete-cap"
        ]
    );
}

#[test]
fn messages_are_lowercase_and_name_a_next_step() {
    let mut case = Case::new(namespaced(), 20, 20);
    case.payload = 0;
    case.root_trees = vec!["data".into()];
    case.facts = RunFacts {
        walk_errors: 1,
        listing_errors: 0,
        lazy_pull_active: true,
        sidecar_unreadable: true,
        symlinked_folders: 1,
    };
    for verdict in case.verdicts() {
        let first = verdict.message.chars().next().unwrap();
        assert!(
            !first.is_uppercase(),
            "{}: {}",
            verdict.code,
            verdict.message
        );
        assert!(
            verdict.message.contains("s3sync")
                || verdict.message.contains("--")
                || verdict.message.contains("fix"),
            "{}: no next step in {}",
            verdict.code,
            verdict.message
        );
    }
}

// ---------------------------------------------------------------------------------------------
// catalog_shrinks

#[test]
fn catalog_shrink_boundaries() {
    for (local, remote, shrinks) in [
        // The field's truncation: `[]\n` over a real catalog.
        (3, 40_000, true),
        (0, 40_000, true),
        (2, 5, true),
        (4, 5, true),
        // Already (nearly) empty remotely: an empty local copy is no loss.
        (3, 3, false),
        (3, 4, false),
        (0, 0, false),
        (5, 6, false),
        // Cut to under a tenth of a remote copy of at least 256 bytes.
        (25, 256, true),
        (26, 256, false),
        (25, 255, false),
        (3_999, 40_000, true),
        (4_000, 40_000, false),
        // Edits, growth.
        (39_000, 40_000, false),
        (40_000, 40_000, false),
        (80_000, 40_000, false),
        (40_000, 3, false),
        // No overflow at the extremes.
        (u64::MAX, u64::MAX, false),
        (u64::MAX / 2, u64::MAX, false),
        (0, u64::MAX, true),
    ] {
        assert_eq!(
            catalog_shrinks(local, remote),
            shrinks,
            "local {local} over remote {remote}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// normalize_tombstone

#[test]
fn namespaced_tombstones() {
    let model = namespaced();
    let cases: &[(&str, Option<&str>)] = &[
        // `<ns>/<rel>`, as core passes it.
        (
            "ns/data/x/y/m1/state/1/raw",
            Some("ns/data/x/y/m1/state/1/raw"),
        ),
        ("ns/files/a.txt", Some("ns/files/a.txt")),
        ("ns/README", Some("ns/README")),
        ("ns/.catalog-export.json", Some("ns/.catalog-export.json")),
        // A bare rel is read inside the namespace, as the extension does.
        (
            "data/x/y/m1/state/1/raw",
            Some("ns/data/x/y/m1/state/1/raw"),
        ),
        ("files/a.txt", Some("ns/files/a.txt")),
        ("README", Some("ns/README")),
        // Folders, with or without a trailing slash.
        ("ns/data/x", Some("ns/data/x")),
        ("ns/data/x/", Some("ns/data/x")),
        ("ns/data/x//", Some("ns/data/x")),
        ("ns/data", Some("ns/data")),
        ("data/x/", Some("ns/data/x")),
        ("data", Some("ns/data")),
        // The whole namespace folder is never one tombstone.
        ("ns", None),
        ("ns/", None),
        // Internal paths are never evidence, whichever way they are named.
        ("ns/_index/_meta.json", None),
        ("ns/_index", None),
        ("ns/_control/lease", None),
        ("ns/.datastore-index.json", None),
        ("ns/.namespace.json", None),
        ("ns/data/x/.lock", None),
        ("ns/_catalog.db", None),
        ("ns/_catalog.db-wal", None),
        ("_index/_meta.json", None),
        ("_control/lease", None),
        (".datastore-index.json", None),
        (".datastore-sync-state.json", None),
        (".push-queue.json", None),
        ("data/x/.lock", None),
        ("data/x/.namespace.json", None),
        // Unsafe paths.
        ("", None),
        ("/", None),
        ("..", None),
        ("../ns/data/x", None),
        ("ns/../other/data/x", None),
        ("ns/data/../../x", None),
        ("ns/data/./x", None),
        ("/ns/data/x", None),
        ("ns\\data\\x", None),
        ("ns/data/x\u{0}", None),
        ("C:/data/x", None),
    ];
    for &(input, want) in cases {
        assert_eq!(
            normalize_tombstone(&model, input).as_deref(),
            want,
            "normalize_tombstone({input:?})"
        );
    }
}

/// A tombstone read back from the sidecar is cache-relative: namespaced, a bare rel is the cache
/// root's path (a solo-bound `mark-deleted` recorded it), never the namespace's. Read the way a
/// caller's path is read, `mark-deleted data/new.yaml` without `--namespace` then deleted
/// `ns/data/new.yaml` at the next `push --namespace ns`.
#[test]
fn stored_tombstones_are_cache_relative() {
    let namespaced = namespaced();
    let solo = solo();
    let cases: &[(&str, Option<&str>)] = &[
        // (stored, read namespaced)
        ("ns/data/new.yaml", Some("ns/data/new.yaml")),
        ("ns/data/x/", Some("ns/data/x")),
        ("data/new.yaml", None),
        ("data", None),
        ("ns", None),
        ("ns/.datastore-index.json", None),
        (".datastore-sync-state.json", None),
        ("../ns/data/x", None),
    ];
    for &(stored, want) in cases {
        assert_eq!(
            stored_tombstone(&namespaced, stored).as_deref(),
            want,
            "namespaced {stored:?}"
        );
        // Solo, the bound tree is the cache root: both readings agree.
        assert_eq!(
            stored_tombstone(&solo, stored),
            normalize_tombstone(&solo, stored),
            "solo {stored:?}"
        );
    }
    assert_eq!(
        stored_tombstone(&solo, "data/new.yaml").as_deref(),
        Some("data/new.yaml")
    );
    // Through a sidecar as the extension writes it (`dirtyPaths`): only the namespace's path.
    let sidecar = br#"{"version":2,"remoteIndexETag":"e1","lastVerifiedAt":"2026-12-01T00:00:00.000Z","localDirty":true,
        "dirtyPaths":["data/new.yaml","ns/data/old.yaml"],"bulkInvalidated":false,
        "lazyPullActive":false}"#;
    assert_eq!(
        tombstones_in_sidecar(&namespaced, sidecar),
        vec!["ns/data/old.yaml".to_string()]
    );
    // What a namespaced caller records is always prefixed, so it reads back the same.
    let recorded = normalize_tombstone(&namespaced, "data/new.yaml").unwrap();
    assert_eq!(recorded, "ns/data/new.yaml");
    assert_eq!(
        stored_tombstone(&namespaced, &recorded).as_deref(),
        Some("ns/data/new.yaml")
    );
}

/// A path under another namespace's folder is not a tombstone in that folder: at most it reads
/// as a bare rel of this namespace, so it can never name another namespace's objects.
#[test]
fn other_namespaces_folders_stay_out_of_reach() {
    let model = namespaced();
    for input in [
        "other/data/x",
        "other",
        "other/",
        "other/.namespace.json",
        "ns2/files/a",
    ] {
        if let Some(tombstone) = normalize_tombstone(&model, input) {
            assert!(
                tombstone.starts_with("ns/"),
                "{input:?} became {tombstone:?}, outside the bound tree"
            );
        }
    }
    // Read as bare rels, as the extension reads them.
    assert_eq!(
        normalize_tombstone(&model, "other/data/x").as_deref(),
        Some("ns/other/data/x")
    );
    assert_eq!(normalize_tombstone(&model, "other/.namespace.json"), None);
    // Named with its own prefix, a sibling namespace is still only a rel inside ours.
    let sibling = PathModel::new(Some("ns2"), "").unwrap();
    assert_eq!(
        normalize_tombstone(&sibling, "ns/data/x").as_deref(),
        Some("ns2/ns/data/x")
    );
}

#[test]
fn solo_tombstones() {
    let model = solo();
    let cases: &[(&str, Option<&str>)] = &[
        ("data/x/y/m1/state/1/raw", Some("data/x/y/m1/state/1/raw")),
        ("data/x/", Some("data/x")),
        ("data", Some("data")),
        ("README", Some("README")),
        (".catalog-export.json", Some(".catalog-export.json")),
        // Solo, a folder named like a namespace is an ordinary folder of the root tree.
        ("ns/data/x", Some("ns/data/x")),
        // Never synced, internal, unsafe.
        ("secrets/api-key", None),
        // A one-segment `secrets` is an ordinary rel (`is_never_synced` needs a folder); as a
        // folder tombstone it covers only never-synced entries, which no push ever deletes.
        ("secrets/", Some("secrets")),
        ("_index/_meta.json", None),
        ("_control/x", None),
        (".datastore-index.json", None),
        ("data/x/.lock", None),
        ("files/_catalog.db-shm", None),
        ("", None),
        ("../x", None),
        ("data/../x", None),
        ("/data/x", None),
    ];
    for &(input, want) in cases {
        assert_eq!(
            normalize_tombstone(&model, input).as_deref(),
            want,
            "normalize_tombstone({input:?})"
        );
    }
}

/// What `normalize_tombstone` returns is a fixed point: normalising it again changes nothing.
#[test]
fn normalised_tombstones_are_fixed_points() {
    for model in [solo(), namespaced()] {
        for input in ["ns/data/x/", "data/x", "files/a", "README", "ns/files/b//"] {
            if let Some(once) = normalize_tombstone(&model, input) {
                assert_eq!(
                    normalize_tombstone(&model, &once).as_deref(),
                    Some(once.as_str()),
                    "{input:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// covering_tombstone

#[test]
fn covering_tombstones() {
    let tombstones: BTreeSet<String> = ["ns/data/a", "ns/data/b/c", "ns/README"]
        .into_iter()
        .map(String::from)
        .collect();
    let cases: &[(&str, Option<&str>)] = &[
        ("ns/data/a", Some("ns/data/a")),
        ("ns/data/a/raw", Some("ns/data/a")),
        ("ns/data/a/b/c/d/raw", Some("ns/data/a")),
        ("ns/data/b/c", Some("ns/data/b/c")),
        ("ns/data/b/c/d/e", Some("ns/data/b/c")),
        ("ns/README", Some("ns/README")),
        // Folders cover on segment boundaries only.
        ("ns/data/ab", None),
        ("ns/data/a.txt", None),
        ("ns/data/b/cd", None),
        ("ns/README.md", None),
        // A tombstone below a path does not cover the path.
        ("ns/data/b", None),
        ("ns/data", None),
        ("ns", None),
        // Not inside the tree at all.
        ("data/a", None),
        ("other/data/a", None),
        ("", None),
    ];
    for &(path, want) in cases {
        assert_eq!(
            covering_tombstone(&tombstones, path).map(String::as_str),
            want,
            "covering_tombstone({path:?})"
        );
    }
    assert_eq!(covering_tombstone(&BTreeSet::new(), "ns/data/a"), None);
}

#[test]
fn the_nearest_tombstone_is_named() {
    let tombstones: BTreeSet<String> = ["ns/data", "ns/data/a", "ns/data/a/b"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        covering_tombstone(&tombstones, "ns/data/a/b/c").map(String::as_str),
        Some("ns/data/a/b")
    );
    assert_eq!(
        covering_tombstone(&tombstones, "ns/data/a/x").map(String::as_str),
        Some("ns/data/a")
    );
    assert_eq!(
        covering_tombstone(&tombstones, "ns/data/z").map(String::as_str),
        Some("ns/data")
    );
}
