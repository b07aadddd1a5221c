//! A run given no namespace on a namespaced cache: which tree it may act on (the service binds to
//! the one namespace the cache proves, the CLI refuses), and what counts as root payload.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::model::binding::{bind_unnamed, TopLevelEntry, UnnamedCaller};

fn entry(name: &str, marker: bool) -> TopLevelEntry {
    TopLevelEntry {
        name: name.to_string(),
        marker,
    }
}

/// What swamp core leaves in a namespaced cache: the local index and sidecar at the root, the
/// namespace folder with its marker, conflict copies and a repair folder.
fn namespaced_cache(namespaces: &[&str]) -> Vec<TopLevelEntry> {
    let mut entries = vec![
        entry(".datastore-index.json", false),
        entry(".datastore-sync-state.json", false),
        entry(".datastore-sync-state.journal", false),
        entry(".s3sync-conflicts", false),
        entry(".s3sync-repair", false),
        entry(".s3sync-tmp-1234", false),
        entry("secrets", false),
        entry("_catalog.db", false),
    ];
    entries.extend(namespaces.iter().map(|ns| entry(ns, true)));
    entries
}

#[test]
fn a_service_binds_to_the_one_namespace_its_cache_proves() {
    let bound = bind_unnamed(&namespaced_cache(&["team-a"]), UnnamedCaller::Service).unwrap();
    assert_eq!(bound.as_deref(), Some("team-a"));
}

#[test]
fn the_cli_never_guesses_a_namespace() {
    let error = bind_unnamed(&namespaced_cache(&["team-a"]), UnnamedCaller::Cli).unwrap_err();
    assert_eq!(error.code(), "namespace-required");
    let message = error.to_string();
    assert!(message.contains("--namespace team-a"), "{message}");
}

#[test]
fn several_namespaces_refuse_for_every_caller() {
    for caller in [UnnamedCaller::Service, UnnamedCaller::Cli] {
        let error = bind_unnamed(&namespaced_cache(&["prod", "dev"]), caller).unwrap_err();
        assert_eq!(error.code(), "namespace-required");
        assert!(error.to_string().contains("dev, prod"), "{error}");
    }
}

#[test]
fn a_cache_with_root_payload_stays_solo() {
    // A solo repository that also keeps another repository's folder (the layout the first seed
    // left): the solo run reports the folder and never touches it, as before.
    for payload in ["data", "outputs", "notes.txt", ".catalog-export.json"] {
        let mut entries = namespaced_cache(&["team-a"]);
        entries.push(entry(payload, false));
        for caller in [UnnamedCaller::Service, UnnamedCaller::Cli] {
            assert_eq!(bind_unnamed(&entries, caller).unwrap(), None, "{payload}");
        }
    }
}

#[test]
fn a_cache_without_marker_folders_is_solo() {
    let empty: Vec<TopLevelEntry> = Vec::new();
    assert_eq!(bind_unnamed(&empty, UnnamedCaller::Cli).unwrap(), None);
    assert_eq!(
        bind_unnamed(&namespaced_cache(&[]), UnnamedCaller::Service).unwrap(),
        None
    );
    // A folder without a marker is payload, not a namespace.
    let entries = vec![
        entry("team-a", false),
        entry(".datastore-index.json", false),
    ];
    assert_eq!(
        bind_unnamed(&entries, UnnamedCaller::Service).unwrap(),
        None
    );
}

#[test]
fn a_marker_on_a_name_no_namespace_may_have_is_not_a_namespace() {
    // `data/.namespace.json` or `.hidden/.namespace.json`: not a namespace, and `data` is
    // root payload, so the run stays solo rather than binding to a reserved name.
    let entries = vec![entry("data", true), entry(".datastore-index.json", false)];
    assert_eq!(
        bind_unnamed(&entries, UnnamedCaller::Service).unwrap(),
        None
    );
    let entries = vec![entry("_control", true), entry("team-a", true)];
    assert_eq!(
        bind_unnamed(&entries, UnnamedCaller::Service)
            .unwrap()
            .as_deref(),
        Some("team-a")
    );
}
