//! Whole pulls driven natively through the state machine (`PullRun`) against a simulated bucket
//! and cache, with injected failures, lost publish races and vanished objects: the run's own
//! decisions (fast path, publish, what the sidecar vouches for) tested without any I/O.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::Value;

use s3sync_core::runs::pull::machine::{PullAction, PullRequest, PullRun};
use s3sync_core::runs::session::Session;

#[path = "common/sim.rs"]
mod sim;
use sim::{run_pull, Bucket, Cache, PullFaults as Faults, INDEX_KEY, NS};

fn files(n: usize) -> BTreeMap<String, Vec<u8>> {
    (0..n)
        .map(|i| {
            (
                format!("data/m/{i}.json"),
                vec![b'a' + (i % 26) as u8; i + 1],
            )
        })
        .collect()
}

fn sizes(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, u64> {
    files
        .iter()
        .map(|(k, v)| (k.clone(), v.len() as u64))
        .collect()
}

#[test]
fn a_pull_brings_everything_and_the_next_one_is_a_single_head() {
    let data = files(5);
    let mut bucket = Bucket::with_datastore(&data, &sizes(&data));
    let mut cache = Cache::default();
    let first = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
    assert!(!first.noop);
    assert_eq!(first.downloaded.len(), 5);
    for (rel, bytes) in &data {
        assert_eq!(&cache.files[&format!("{NS}/{rel}")].0, bytes);
    }
    // No sidecar before the first pull: no HEAD was spent on a fast path.
    assert_eq!(bucket.requests.get("head"), None);
    bucket.requests.clear();
    let second = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
    assert!(second.noop);
    assert_eq!(bucket.requests, BTreeMap::from([("head", 1)]));
    // Asked to verify, it walks and compares and finds nothing to fetch.
    let verified = run_pull(&mut bucket, &mut cache, &Faults::default(), true);
    assert!(!verified.noop);
    assert!(verified.downloaded.is_empty());
}

#[test]
fn a_failed_download_keeps_the_fast_path_off_until_it_arrives() {
    let data = files(3);
    let mut bucket = Bucket::with_datastore(&data, &sizes(&data));
    let mut cache = Cache::default();
    let faults = Faults {
        failing: BTreeSet::from(["data/m/1.json".to_string()]),
        ..Faults::default()
    };
    run_pull(&mut bucket, &mut cache, &faults, false);
    assert!(!cache.files.contains_key("ns/data/m/1.json"));
    let again = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
    assert!(
        !again.noop,
        "the sidecar vouched for a cache missing a file"
    );
    assert_eq!(again.downloaded, ["data/m/1.json"]);
    assert!(run_pull(&mut bucket, &mut cache, &Faults::default(), false).noop);
}

#[test]
fn a_vanished_object_is_pruned_and_the_pruned_index_published_over_the_one_read() {
    let data = files(3);
    let mut indexed = sizes(&data);
    indexed.insert("data/m/gone.json".into(), 9);
    let mut bucket = Bucket::with_datastore(&data, &indexed);
    let mut cache = Cache::default();
    let ran = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
    assert_eq!(ran.not_found, ["data/m/gone.json"]);
    assert!(ran.published);
    let index: Value = serde_json::from_slice(&bucket.objects[INDEX_KEY].0).unwrap();
    assert!(index["entries"].get("data/m/gone.json").is_none());
    assert_eq!(index["entries"].as_object().unwrap().len(), 3);
    assert!(run_pull(&mut bucket, &mut cache, &Faults::default(), false).noop);
}

#[test]
fn an_object_at_its_bare_key_is_downloaded_and_a_missing_one_read_three_times() {
    // Bug #1250 of the extension wrote some namespaced objects at the bare key: the index is
    // right about the file, so the pull finds it there and prunes nothing.
    let data = files(2);
    let mut indexed = sizes(&data);
    indexed.insert("data/m/bare.json".into(), 4);
    indexed.insert("data/m/gone.json".into(), 9);
    let mut bucket = Bucket::with_datastore(&data, &indexed);
    bucket.put("data/m/bare.json", b"bare".to_vec());
    let mut cache = Cache::default();
    let gets = |b: &Bucket| b.requests.get("get").copied().unwrap_or(0);
    let before = gets(&bucket);
    let ran = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
    assert!(ran.downloaded.contains(&"data/m/bare.json".to_string()));
    assert_eq!(cache.files[&format!("{NS}/data/m/bare.json")].0, b"bare");
    assert_eq!(ran.not_found, ["data/m/gone.json"]);
    // Two at home, the bare one found on its second read, the gone one read at its key, at the
    // bare key and at its key again.
    assert_eq!(gets(&bucket) - before, 2 + 2 + 3);
}

#[test]
fn a_lost_publish_race_writes_nothing_over_the_newer_index_and_vouches_for_nothing() {
    let data = files(2);
    let mut indexed = sizes(&data);
    indexed.insert("data/m/gone.json".into(), 9);
    let mut bucket = Bucket::with_datastore(&data, &indexed);
    let mut cache = Cache::default();
    let raced = Faults {
        index_races: true,
        ..Faults::default()
    };
    let ran = run_pull(&mut bucket, &mut cache, &raced, false);
    assert!(!ran.published);
    // The other writer's index stands, entry and all.
    let index: Value = serde_json::from_slice(&bucket.objects[INDEX_KEY].0).unwrap();
    assert!(index["entries"].get("data/m/gone.json").is_some());
    assert!(!run_pull(&mut bucket, &mut cache, &Faults::default(), false).noop);
}

#[test]
fn answers_out_of_order_are_refused_not_obeyed() {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = PullRun::new(PullRequest::default());
    assert_eq!(run.on_head(true, None).unwrap_err().code(), "invalid-input");
    assert_eq!(
        run.on_walk(&mut session, b"").unwrap_err().code(),
        "invalid-input"
    );
    assert_eq!(
        run.on_written(&session, None).unwrap_err().code(),
        "invalid-input"
    );
    assert!(run.sidecar().is_err());
    // Polling twice before answering asks for the same thing.
    assert_eq!(run.poll(&session), run.poll(&session));
}

#[test]
fn a_cache_last_synced_with_a_v2_repo_heads_the_meta_for_its_fast_path() {
    let session = Session::new(Some(NS), "").unwrap();
    let sidecar = |commit_seq: Option<u64>| {
        let mut state = serde_json::json!({
            "version": 2, "remoteIndexETag": "m7", "lastVerifiedAt": "2026-12-01T00:00:00.000Z",
            "localDirty": false, "dirtyPaths": [], "bulkInvalidated": false,
            "lazyPullActive": false,
        });
        if let Some(seq) = commit_seq {
            state["commitSeq"] = seq.into();
        }
        serde_json::to_vec(&state).unwrap()
    };
    let head_key = |run: &mut PullRun| match run.poll(&session) {
        PullAction::HeadIndex { key } => key,
        other => panic!("expected a HEAD, got {other:?}"),
    };
    // v2: the meta, whose ETag every commit changes; the same ETag is the fast path.
    let mut run = PullRun::new(PullRequest::default());
    run.poll(&session);
    run.on_local_state(Some(sidecar(Some(7))), true).unwrap();
    assert_eq!(head_key(&mut run), format!("{NS}/_index/_meta.json"));
    run.on_head(true, Some("\"m7\"".into())).unwrap();
    assert_eq!(run.poll(&session), PullAction::Done { noop: true });
    // Another ETag: the full pull.
    let mut run = PullRun::new(PullRequest::default());
    run.poll(&session);
    run.on_local_state(Some(sidecar(Some(7))), true).unwrap();
    head_key(&mut run);
    run.on_head(true, Some("\"m8\"".into())).unwrap();
    assert_eq!(run.poll(&session), PullAction::LoadIndex);
    // v1: the monolith.
    let mut run = PullRun::new(PullRequest::default());
    run.poll(&session);
    run.on_local_state(Some(sidecar(None)), true).unwrap();
    assert_eq!(head_key(&mut run), format!("{NS}/.datastore-index.json"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever fails on the way, a pull never leaves a file that differs from the bucket's,
    /// the sidecar vouches only for a complete pull, and clean pulls afterwards converge to the
    /// bucket and then to the single-HEAD fast path.
    #[test]
    fn pulls_converge_whatever_fails_on_the_way(
        n in 1usize..12,
        failing in proptest::collection::btree_set(0usize..12, 0..6),
        vanished in proptest::collection::btree_set(0usize..12, 0..3),
        flaky in proptest::collection::btree_set(0usize..12, 0..4),
        races in any::<bool>(),
    ) {
        let data = files(n);
        let mut indexed = sizes(&data);
        let mut present = data.clone();
        for v in &vanished {
            if let Some((rel, _)) = data.iter().nth(*v) {
                present.remove(rel);
                indexed.insert(rel.clone(), 1);
            }
        }
        let mut bucket = Bucket::with_datastore(&present, &indexed);
        let mut cache = Cache::default();
        let faults = Faults {
            failing: failing.iter().filter_map(|i| data.keys().nth(*i).cloned()).collect(),
            index_races: races,
            flaky_404: flaky.iter().filter_map(|i| data.keys().nth(*i).cloned()).collect(),
        };
        let first = run_pull(&mut bucket, &mut cache, &faults, false);
        for rel in &first.downloaded {
            prop_assert_eq!(&cache.files[&format!("{NS}/{rel}")].0, &present[rel]);
        }
        // One 404 is no proof: an object that answered one and is there is never missing.
        for rel in &first.not_found {
            prop_assert!(!present.contains_key(rel), "{} pruned on one 404", rel);
        }
        // A download that failed is a failure whether or not its object still exists.
        let complete = faults.failing.is_empty()
            && (first.not_found.is_empty() || first.published);
        let second = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
        // A racing writer moved the index on: the sidecar vouched for the one read, so the next
        // pull must look again.
        prop_assert_eq!(second.noop, complete && !races, "the sidecar vouched wrongly");
        let third = run_pull(&mut bucket, &mut cache, &Faults::default(), false);
        for (rel, bytes) in &present {
            prop_assert_eq!(&cache.files[&format!("{NS}/{rel}")].0, bytes);
        }
        prop_assert!(
            third.noop || run_pull(&mut bucket, &mut cache, &Faults::default(), false).noop,
            "clean pulls never reached the fast path"
        );
    }
}
