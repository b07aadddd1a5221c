//! The path model, natively: the shared table (`tests/common/path_cases.rs`, also run under
//! WASM by `tests/wasm.rs`) and the seed-bug regressions.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/path_cases.rs"]
mod path_cases;

use s3sync_core::index::Index;
use s3sync_core::model::layout::survey;
use s3sync_core::model::paths::{fold_key, foreign_namespaces_in, Namespace, PathModel};
use s3sync_core::runs::pull::plan::{plan_pull, PullOptions};
use s3sync_core::wire::listing::LocalFile;

#[test]
fn every_refusal_reason_has_a_case() {
    path_cases::check_every_refusal_is_covered();
}

#[test]
fn rel_refusals() {
    path_cases::check_rel_refusals();
}

#[test]
fn rel_near_misses_are_accepted() {
    path_cases::check_rel_accepted();
}

#[test]
fn namespace_refusals() {
    path_cases::check_namespace_refusals();
}

#[test]
fn namespace_near_misses_are_accepted() {
    path_cases::check_namespace_accepted();
}

#[test]
fn key_limit_applies_to_the_full_key() {
    path_cases::check_key_limit();
}

#[test]
fn internal_files() {
    path_cases::check_is_internal();
}

#[test]
fn classify_cache_paths() {
    path_cases::check_classify();
}

#[test]
fn lazy_skippable() {
    path_cases::check_lazy();
}

#[test]
fn partition_keys() {
    path_cases::check_partition_keys();
}

#[test]
fn collisions() {
    path_cases::check_collisions();
}

#[test]
fn remote_key_refusals() {
    path_cases::check_remote_key_refusals();
}

#[test]
fn seed_bug_remote_key_maps_to_the_namespaced_cache_path() {
    path_cases::check_seed_mapping();
}

#[test]
fn fold_key_ignores_case_and_normalisation() {
    assert_eq!(fold_key("Caf\u{e9}"), fold_key("cafe\u{301}"));
    assert_eq!(fold_key("DATA/X"), "data/x");
    assert_ne!(fold_key("a/b"), fold_key("a/c"));
}

#[test]
fn foreign_namespaces_are_top_level_folders_with_a_marker() {
    let own = Namespace::parse("ns").unwrap();
    let paths = [
        "ns/.namespace.json",
        "other/.namespace.json",
        "third/.namespace.json",
        "deep/er/.namespace.json",
        ".namespace.json",
        "x.namespace.json",
        "plain/data/x",
    ];
    let found = foreign_namespaces_in(paths, Some(&own));
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec!["other".to_string(), "third".to_string()]
    );
    // Solo: the bound tree has no own marker, so every marked folder is foreign.
    let found = foreign_namespaces_in(paths, None);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec!["ns".to_string(), "other".to_string(), "third".to_string()]
    );
}

/// The seed bug, end to end through the pull planner: a namespaced index pulls into
/// `<cache>/ns/...` only, even when the cache holds the root layout the bug produced.
#[test]
fn seed_bug_namespaced_pull_writes_only_under_the_namespace() {
    let index = Index::parse(
        br#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{
            "data/x/y/m1/state/1/raw":{"key":"data/x/y/m1/state/1/raw","size":812,"lastModified":"2026-08-01T12:00:00.000Z"},
            "data/x/y/m1/state/1/metadata.yaml":{"key":"data/x/y/m1/state/1/metadata.yaml","size":90},
            "workflow-runs/wf/run-1.yaml":{"key":"workflow-runs/wf/run-1.yaml","size":10},
            "README":{"key":"README","size":3},
            "_index/data--x--y--m1.json":{"key":"_index/data--x--y--m1.json","size":5}
        }}"#,
    )
    .unwrap();
    let model = PathModel::new(Some("ns"), "prefix").unwrap();
    // The root-layout copies of the seed bug are present with the right sizes: they must not
    // count as current, because they are not where the namespaced layout reads.
    let local = [
        LocalFile {
            path: "data/x/y/m1/state/1/raw",
            size: 812,
            mtime_ms: Some(1),
        },
        LocalFile {
            path: "README",
            size: 3,
            mtime_ms: Some(1),
        },
    ];
    let surveyed = survey(&model, &local);
    let plan = plan_pull(&model, &index, None, &surveyed, &PullOptions::default());

    assert_eq!(plan.downloads.len(), 4, "{plan:#?}");
    assert_eq!(plan.summary.download, 4);
    assert_eq!(plan.summary.download_bytes, 812 + 90 + 10 + 3);
    assert_eq!(plan.summary.up_to_date, 0);
    for transfer in &plan.downloads {
        assert_eq!(transfer.cache_path, transfer.remote_key, "{transfer:?}");
        assert!(transfer.cache_path.starts_with("ns/"), "{transfer:?}");
        assert_eq!(transfer.cache_path, format!("ns/{}", transfer.rel));
        assert!(!transfer.rel.starts_with("ns/"));
    }
    // The internal entry is pruned, never downloaded (the seed's `<ns>/_index/...`).
    assert_eq!(plan.prune, vec!["_index/data--x--y--m1.json".to_string()]);
    assert!(plan.downloads.iter().all(|t| !t.rel.starts_with("_index")));
    // The root layout is reported.
    assert_eq!(plan.layout.root_layout_trees, vec!["data".to_string()]);
    assert_eq!(plan.layout.root_layout_files, 1);
}

/// The namespaced pull counts the namespace tree, not the root, as the local state.
#[test]
fn namespaced_pull_is_up_to_date_from_the_namespace_tree() {
    let index = Index::parse(
        br#"{"version":1,"entries":{"data/x/y/m1/state/1/raw":{"key":"data/x/y/m1/state/1/raw","size":812}}}"#,
    )
    .unwrap();
    let model = PathModel::new(Some("ns"), "").unwrap();
    let local = [LocalFile {
        path: "ns/data/x/y/m1/state/1/raw",
        size: 812,
        mtime_ms: None,
    }];
    let plan = plan_pull(
        &model,
        &index,
        None,
        &survey(&model, &local),
        &PullOptions::default(),
    );
    assert!(plan.downloads.is_empty(), "{plan:#?}");
    assert_eq!(plan.summary.up_to_date, 1);
    assert!(
        plan.mtime_updates.is_empty(),
        "no mtime known, none recorded"
    );
    assert!(plan.layout.root_layout_trees.is_empty());
}

/// The global lock key is the one swamp core takes for the layout: a CLI taking any other key
/// would not exclude core's writers (solo `.datastore.lock`, namespaced `.locks/<ns>.lock`).
#[test]
fn lock_key_matches_swamp_core_per_layout() {
    assert_eq!(PathModel::solo().lock_key(), ".datastore.lock");
    assert_eq!(
        PathModel::new(Some(""), "pfx").unwrap().lock_key(),
        ".datastore.lock"
    );
    let prod = PathModel::namespaced(Namespace::parse("prod").unwrap());
    assert_eq!(prod.lock_key(), ".locks/prod.lock");
}

#[test]
fn index_and_control_keys_sit_under_the_binding() {
    let solo = PathModel::new(None, "").unwrap();
    let ns = PathModel::new(Some("prod"), "").unwrap();
    assert_eq!(solo.meta_key(), "_index/_meta.json");
    assert_eq!(ns.meta_key(), "prod/_index/_meta.json");
    assert_eq!(ns.shard_key("models").unwrap(), "prod/_index/models.json");
    assert_eq!(solo.control_folder(), "_control/");
    assert_eq!(ns.control_folder(), "prod/_control/");
}

#[test]
fn a_shard_key_is_never_made_from_an_unsafe_partition() {
    let ns = PathModel::new(Some("prod"), "").unwrap();
    for partition in ["../../evil", "a/b", "", "_meta", ".."] {
        let error = ns.shard_key(partition).unwrap_err();
        assert_eq!(error.code(), "partition-name-unsafe", "{partition:?}");
    }
}

#[test]
fn a_caller_names_a_file_by_cache_path_or_bare_rel() {
    let ns = PathModel::new(Some("prod"), "").unwrap();
    let solo = PathModel::new(None, "").unwrap();
    assert_eq!(
        ns.rel_from_caller_path("prod/data/a.json")
            .unwrap()
            .as_str(),
        "data/a.json"
    );
    assert_eq!(
        ns.rel_from_caller_path("data/a.json").unwrap().as_str(),
        "data/a.json"
    );
    // `prodx/...` is not under `prod/`: it stays whole.
    assert_eq!(
        ns.rel_from_caller_path("prodx/a.json").unwrap().as_str(),
        "prodx/a.json"
    );
    assert_eq!(
        solo.rel_from_caller_path("data/a.json").unwrap().as_str(),
        "data/a.json"
    );
    for bad in ["prod/../x", "../x", "prod/", ""] {
        assert!(ns.rel_from_caller_path(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_scoped_sync_of_a_model_covers_its_three_trees() {
    let scope = s3sync_core::model::paths::model_scope([("aws/ec2", "i-1"), ("k", "m")]);
    assert_eq!(
        scope,
        [
            "data/aws/ec2/i-1",
            "outputs/aws/ec2/i-1",
            "definitions-evaluated/aws/ec2/i-1",
            "data/k/m",
            "outputs/k/m",
            "definitions-evaluated/k/m",
        ]
    );
}

#[test]
fn near_names_suggest_a_typo_s_intended_name() {
    use s3sync_core::model::paths::near_names;
    let folders = ["prod", "staging", "dev", "Prod-old", "production"];
    assert_eq!(near_names("Prod", folders), ["prod"]);
    assert_eq!(near_names("prdo", folders), ["prod"]);
    assert_eq!(near_names("stagin", folders), ["staging"]);
    assert!(near_names("qa", folders).is_empty());
    // The name itself is no suggestion.
    assert!(near_names("dev", ["dev"]).is_empty());
}

#[test]
fn a_temporary_file_is_stale_only_after_an_hour_without_a_write() {
    use s3sync_core::model::paths::{is_stale_temp, TEMP_STALE_MS};
    let now = 10 * TEMP_STALE_MS;
    assert!(!is_stale_temp(Some(now), now));
    assert!(!is_stale_temp(Some(now - TEMP_STALE_MS), now));
    assert!(is_stale_temp(Some(now - TEMP_STALE_MS - 1), now));
    assert!(
        !is_stale_temp(Some(now + 5_000), now),
        "a future mtime is live"
    );
    assert!(!is_stale_temp(None, now), "no mtime, no verdict");
}
