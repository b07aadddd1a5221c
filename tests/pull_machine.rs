//! Whole pulls driven natively through the state machine (`PullRun`) against a simulated bucket
//! and cache, with injected failures, lost publish races and vanished objects: the run's own
//! decisions (fast path, publish, what the sidecar vouches for) tested without any I/O.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use s3sync_core::listing::encode_local;
use s3sync_core::pull::PullOutcome;
use s3sync_core::pull_machine::{PullAction, PullRequest, PullRun};
use s3sync_core::session::Session;

const NS: &str = "ns";
const INDEX_KEY: &str = "ns/.datastore-index.json";

/// An object store in memory: key → (bytes, ETag); every write gets a fresh ETag.
#[derive(Debug, Default, Clone)]
struct Bucket {
    objects: BTreeMap<String, (Vec<u8>, String)>,
    writes: u64,
    /// Requests of each kind, by name.
    requests: BTreeMap<&'static str, u64>,
}

impl Bucket {
    fn put(&mut self, key: &str, bytes: Vec<u8>) -> String {
        self.writes += 1;
        let etag = format!("\"e{}\"", self.writes);
        self.objects.insert(key.to_string(), (bytes, etag.clone()));
        etag
    }

    fn count(&mut self, what: &'static str) {
        *self.requests.entry(what).or_default() += 1;
    }

    /// A namespaced datastore holding `files` (rel → bytes) and an index naming `indexed`
    /// (rel → size; a rel indexed without an object is a vanished one).
    fn with_datastore(
        files: &BTreeMap<String, Vec<u8>>,
        indexed: &BTreeMap<String, u64>,
    ) -> Bucket {
        let mut bucket = Bucket::default();
        for (rel, bytes) in files {
            bucket.put(&format!("{NS}/{rel}"), bytes.clone());
        }
        let mut entries = Map::new();
        for (rel, size) in indexed {
            entries.insert(
                rel.clone(),
                json!({"key": rel, "size": size, "lastModified": "2026-11-01T00:00:00.000Z"}),
            );
        }
        let index = json!({"version": 1, "entries": entries, "lastPulled": null});
        bucket.put(INDEX_KEY, serde_json::to_vec(&index).unwrap());
        bucket
    }
}

/// A cache folder in memory: path → (bytes, mtime).
#[derive(Debug, Default, Clone)]
struct Cache {
    files: BTreeMap<String, (Vec<u8>, i64)>,
    clock: i64,
}

impl Cache {
    fn write(&mut self, path: &str, bytes: Vec<u8>) -> i64 {
        self.clock += 1;
        self.files.insert(path.to_string(), (bytes, self.clock));
        self.clock
    }
}

/// What can go wrong during a run.
#[derive(Debug, Default, Clone)]
struct Faults {
    /// Rels whose download fails.
    failing: BTreeSet<String>,
    /// Another writer replaces the index between our read and our publish.
    index_races: bool,
}

/// What a run did, as the shim would report it.
#[derive(Debug, Default)]
struct Ran {
    noop: bool,
    downloaded: Vec<String>,
    not_found: Vec<String>,
    published: bool,
}

/// Drives one pull to its end: the executor a shim would be, with no decisions of its own.
fn run_pull(bucket: &mut Bucket, cache: &mut Cache, faults: &Faults, verify: bool) -> Ran {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = PullRun::new(PullRequest {
        verify,
        ..PullRequest::default()
    });
    let mut ran = Ran::default();
    let mut plan_downloads = Vec::new();
    for _ in 0..32 {
        match run.poll(&session) {
            PullAction::ReadLocalState {
                sidecar,
                local_index,
            } => {
                let sidecar = cache.files.get(&sidecar).map(|(b, _)| b.clone());
                let exists = cache.files.contains_key(&local_index);
                run.on_local_state(sidecar, exists).unwrap();
            }
            PullAction::HeadIndex { key } => {
                bucket.count("head");
                let etag = bucket.objects.get(&key).map(|(_, e)| e.clone());
                run.on_head(etag.is_some(), etag).unwrap();
            }
            PullAction::LoadIndex => {
                bucket.count("get-index");
                let (bytes, etag) = bucket.objects.get(INDEX_KEY).cloned().expect("an index");
                session.load_index(&bytes).unwrap();
                run.on_index(true, Some(etag), None).unwrap();
                if faults.index_races {
                    // Another writer publishes a new index now; ours must not go over it.
                    bucket.put(INDEX_KEY, bytes);
                }
            }
            PullAction::ReadBase { path } => {
                let bytes = cache.files.get(&path).map(|(b, _)| b.clone());
                run.on_base(&mut session, bytes.as_deref()).unwrap();
            }
            PullAction::Walk => {
                let listing = encode_local(
                    cache
                        .files
                        .iter()
                        .map(|(p, (b, m))| (p.as_str(), b.len() as u64, Some(*m))),
                );
                let plan = run.on_walk(&mut session, &listing).unwrap();
                plan_downloads = plan.downloads.clone();
            }
            PullAction::Transfer { folders: _ } => {
                let mut outcome = PullOutcome::default();
                let mut failures = 0;
                for t in &plan_downloads {
                    bucket.count("get");
                    if faults.failing.contains(&t.rel) {
                        failures += 1;
                        continue;
                    }
                    match bucket.objects.get(&t.remote_key).cloned() {
                        Some((bytes, _)) => {
                            let size = bytes.len() as u64;
                            let mtime = cache.write(&t.cache_path, bytes);
                            outcome.downloaded.push((t.rel.clone(), mtime));
                            outcome.sizes.push((t.rel.clone(), size));
                            ran.downloaded.push(t.rel.clone());
                        }
                        None => {
                            outcome.not_found.push(t.rel.clone());
                            ran.not_found.push(t.rel.clone());
                        }
                    }
                }
                run.on_transfers(&mut session, &outcome, failures, "2026-12-01T00:00:00.000Z")
                    .unwrap();
            }
            PullAction::PublishIndex { key, if_match } => {
                bucket.count("put-index");
                let current = bucket.objects.get(&key).map(|(_, e)| e.clone());
                if current == if_match {
                    let etag = bucket.put(&key, session.index_json(false).unwrap());
                    run.on_published(true, Some(etag)).unwrap();
                } else {
                    run.on_published(false, None).unwrap();
                }
            }
            PullAction::WriteLocalIndex { path } => {
                cache.write(&path, session.local_index_after_pull().unwrap());
                run.on_written(&session).unwrap();
            }
            PullAction::WriteSidecar { path } => {
                cache.write(&path, run.sidecar().unwrap().to_vec());
                run.on_written(&session).unwrap();
            }
            PullAction::Done { noop } => {
                ran.noop = noop;
                ran.published = run.index_published();
                return ran;
            }
        }
    }
    panic!("the pull did not finish in 32 steps");
}

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
        run.on_written(&session).unwrap_err().code(),
        "invalid-input"
    );
    assert!(run.sidecar().is_err());
    // Polling twice before answering asks for the same thing.
    assert_eq!(run.poll(&session), run.poll(&session));
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
        };
        let first = run_pull(&mut bucket, &mut cache, &faults, false);
        for rel in &first.downloaded {
            prop_assert_eq!(&cache.files[&format!("{NS}/{rel}")].0, &present[rel]);
        }
        let complete = faults.failing.iter().all(|r| !present.contains_key(r))
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
