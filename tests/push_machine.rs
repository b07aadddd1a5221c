//! Whole pushes driven natively through the state machine (`PushRun`), with pulls between them,
//! over a simulated bucket and two caches: new files, a write on both sides (neither lost),
//! deletes asked for and refused, a two-phase push whose commit meets another writer's index,
//! a stale saved plan, failed uploads, and answers out of order.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::json;

use s3sync_core::runs::push::machine::{PushAction, PushRun, PushRunRequest, UploadBatch};
use s3sync_core::runs::session::Session;
use s3sync_core::state::sync_state::SyncState;

#[path = "common/sim.rs"]
mod sim;
use sim::{
    push_plain, run_pull, run_push, run_push_with, Bucket, Cache, PullFaults, PushFaults,
    INDEX_KEY, NS,
};

fn empty_bucket() -> Bucket {
    Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new())
}

fn sidecar(cache: &Cache) -> SyncState {
    SyncState::parse(&cache.files[".datastore-sync-state.json"].0).unwrap()
}

#[test]
fn new_files_are_uploaded_indexed_and_not_sent_twice() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    cache.edit("data/b.json", b"bb");
    let first = push_plain(&mut bucket, &mut cache);
    assert_eq!(first.uploaded, ["data/a.json", "data/b.json"]);
    assert!(first.published);
    assert_eq!(
        bucket.indexed(),
        BTreeSet::from(["data/a.json".to_string(), "data/b.json".to_string()])
    );
    assert_eq!(bucket.objects[&format!("{NS}/data/b.json")].0, b"bb");
    // A clean push vouches for the cache against the index it published.
    assert!(!sidecar(&cache).local_dirty);
    let second = push_plain(&mut bucket, &mut cache);
    assert!(second.uploaded.is_empty());
    assert!(!second.published, "nothing changed, nothing to publish");
}

#[test]
fn a_bucket_without_an_index_gets_the_rebuilt_one_even_when_nothing_is_uploaded() {
    // The files are in the bucket and in the cache with the same bytes (another tool copied
    // them, or the index was lost): nothing to upload, yet the push publishes the rebuilt
    // index, create-only, so readers (the extension's included) find one.
    let mut bucket = Bucket::default();
    let mut cache = Cache::default();
    for (rel, bytes) in [("data/a.json", &b"a"[..]), ("data/b.json", &b"bb"[..])] {
        bucket.put(&format!("{NS}/{rel}"), bytes.to_vec());
        cache.edit(rel, bytes);
    }
    assert!(!bucket.objects.contains_key(INDEX_KEY));
    let first = push_plain(&mut bucket, &mut cache);
    assert!(first.uploaded.is_empty(), "{:?}", first.uploaded);
    assert!(first.published, "the rebuilt index is published");
    assert_eq!(
        bucket.indexed(),
        BTreeSet::from(["data/a.json".to_string(), "data/b.json".to_string()])
    );
    // With the index in place, the next push has nothing to publish.
    let second = push_plain(&mut bucket, &mut cache);
    assert!(!second.published);
    // An empty listing rebuilds an empty index, which is not published (as a pull does).
    let mut empty = Bucket::default();
    let mut nothing = Cache::default();
    let run = push_plain(&mut empty, &mut nothing);
    assert!(!run.published);
    assert!(!empty.objects.contains_key(INDEX_KEY));
}

#[test]
fn a_write_on_both_sides_loses_neither() {
    let mut bucket = empty_bucket();
    let (mut a, mut b) = (Cache::default(), Cache::default());
    a.edit("data/x.json", b"v1");
    push_plain(&mut bucket, &mut a);
    run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    a.edit("data/x.json", b"v2 from a");
    push_plain(&mut bucket, &mut a);
    b.edit("data/x.json", b"v2 from b!");
    let stale = push_plain(&mut bucket, &mut b);
    // B never saw A's version: its push does not overwrite it.
    assert!(stale.uploaded.is_empty());
    assert_eq!(stale.plan.conflicts, ["data/x.json"]);
    assert!(stale.plan.blocked.iter().any(|v| v.code == "conflict"));
    assert_eq!(bucket.objects[&format!("{NS}/data/x.json")].0, b"v2 from a");
    // B's pull brings A's version and keeps B's aside.
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(pulled.conflicts, ["data/x.json"]);
    assert_eq!(b.data("data/x.json").unwrap(), b"v2 from a");
    assert!(b
        .files
        .iter()
        .any(|(p, (bytes, _))| p.starts_with(".s3sync-conflicts/") && bytes == b"v2 from b!"));
}

#[test]
fn a_file_made_where_this_cache_never_held_one_does_not_go_over_the_bucket_s() {
    // Cache A pushes x; cache B pushes with nothing of its own (its local index must not claim
    // x's version), then makes its own x: that is a conflict, never an upload over A's.
    // Found by the property test below.
    let mut bucket = empty_bucket();
    let (mut a, mut b) = (Cache::default(), Cache::default());
    run_pull(&mut bucket, &mut a, &PullFaults::default(), false);
    run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    a.edit("data/x.json", b"from a");
    push_plain(&mut bucket, &mut a);
    push_plain(&mut bucket, &mut b);
    b.edit("data/x.json", b"from b");
    let pushed = push_plain(&mut bucket, &mut b);
    assert!(pushed.uploaded.is_empty(), "{:?}", pushed.plan);
    assert_eq!(bucket.objects[&format!("{NS}/data/x.json")].0, b"from a");
}

#[test]
fn a_delete_goes_only_when_confirmed_and_its_evidence_stays_until_then() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/gone.json", b"g");
    cache.edit("data/kept.json", b"k");
    push_plain(&mut bucket, &mut cache);
    cache.delete_marked("data/gone.json");
    let ask = PushRunRequest {
        ask_confirmation: true,
        ..PushRunRequest::default()
    };
    let refused = run_push(&mut bucket, &mut cache, ask.clone(), &PushFaults::default()).unwrap();
    assert!(refused.deleted.is_empty());
    assert!(refused
        .plan
        .blocked
        .iter()
        .any(|v| v.code == "confirmation-required"));
    assert!(bucket.objects.contains_key(&format!("{NS}/data/gone.json")));
    assert_eq!(sidecar(&cache).tombstones, ["ns/data/gone.json"]);
    let confirmed = PushFaults {
        confirm: true,
        ..PushFaults::default()
    };
    let deleted = run_push(&mut bucket, &mut cache, ask, &confirmed).unwrap();
    assert_eq!(deleted.deleted, ["data/gone.json"]);
    assert!(!bucket.objects.contains_key(&format!("{NS}/data/gone.json")));
    assert!(!bucket.indexed().contains("data/gone.json"));
    assert!(sidecar(&cache).tombstones.is_empty());
}

#[test]
fn a_two_phase_commit_merges_over_what_others_published_meanwhile() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/mine.json", b"m");
    let other_writer: fn(&mut Bucket) = |bucket| {
        let mut index: serde_json::Value =
            serde_json::from_slice(&bucket.objects[INDEX_KEY].0).unwrap();
        index["entries"]["data/theirs.json"] = json!({"key": "data/theirs.json", "size": 1, "lastModified": "2026-11-30T00:00:00.000Z"});
        bucket.put(&format!("{NS}/data/theirs.json"), b"t".to_vec());
        bucket.put(INDEX_KEY, serde_json::to_vec(&index).unwrap());
    };
    let ran = run_push(
        &mut bucket,
        &mut cache,
        PushRunRequest {
            two_phase: true,
            ..PushRunRequest::default()
        },
        &PushFaults {
            between: Some(other_writer),
            ..PushFaults::default()
        },
    )
    .unwrap();
    assert_eq!(
        ran.lost_races, 0,
        "the commit re-read the index before publishing"
    );
    assert_eq!(
        bucket.indexed(),
        BTreeSet::from(["data/mine.json".to_string(), "data/theirs.json".to_string()])
    );
}

/// With the extension's client a replacement cannot be `If-Match`: the prepare of a two-phase
/// push (outside swamp core's lock) then uploads only the new keys, and the replacement waits
/// for the commit (under the lock), where it goes after its HEAD compare.
#[test]
fn a_two_phase_prepare_leaves_replacements_for_the_commit_when_they_need_the_lock() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/old.json", b"v1");
    push_plain(&mut bucket, &mut cache);
    cache.edit("data/old.json", b"v2, changed");
    cache.edit("data/new.json", b"new");
    let old_key = format!("{NS}/data/old.json");
    let new_key = format!("{NS}/data/new.json");
    let mut at_prepared = None;
    let mut batches = Vec::new();
    let ran = run_push_with(
        &mut bucket,
        &mut cache,
        PushRunRequest {
            two_phase: true,
            replacements_under_lock: true,
            ..PushRunRequest::default()
        },
        &PushFaults::default(),
        &mut |action, bucket| match action {
            PushAction::Upload { batch } => batches.push(*batch),
            PushAction::Prepared => {
                at_prepared = Some((
                    bucket.objects.get(&old_key).map(|(b, _)| b.clone()),
                    bucket.objects.contains_key(&new_key),
                ));
            }
            _ => {}
        },
    )
    .unwrap();
    assert_eq!(batches, [UploadBatch::NewKeys, UploadBatch::Replacements]);
    // Prepared: the new key is up, the replacement is not.
    assert_eq!(at_prepared, Some((Some(b"v1".to_vec()), true)));
    // Committed: both are up and indexed.
    assert_eq!(bucket.objects[&old_key].0, b"v2, changed");
    assert_eq!(ran.uploaded, ["data/new.json", "data/old.json"]);
    assert_eq!(
        bucket.indexed(),
        BTreeSet::from(["data/new.json".to_string(), "data/old.json".to_string()])
    );
    // Without the need, one batch at the prepare, as before.
    cache.edit("data/old.json", b"v3");
    let mut batches = Vec::new();
    run_push_with(
        &mut bucket,
        &mut cache,
        PushRunRequest {
            two_phase: true,
            ..PushRunRequest::default()
        },
        &PushFaults::default(),
        &mut |action, _| {
            if let PushAction::Upload { batch } = action {
                batches.push(*batch);
            }
        },
    )
    .unwrap();
    assert_eq!(batches, [UploadBatch::All]);
}

#[test]
fn a_stale_saved_plan_stops_the_push_before_any_upload() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    let saved = json!({
        "kind": "s3sync-push-plan",
        "remoteIndexEtag": "\"not-this-one\"",
        "listingDigest": "x",
        "plan": {"uploads": [{"rel": "data/a.json"}], "deletes": []},
    });
    let error = run_push(
        &mut bucket,
        &mut cache,
        PushRunRequest {
            expect: Some(saved.to_string()),
            ..PushRunRequest::default()
        },
        &PushFaults::default(),
    )
    .unwrap_err();
    assert_eq!(error.code(), "plan-stale");
    assert!(!bucket.objects.contains_key(&format!("{NS}/data/a.json")));
}

#[test]
fn a_failed_upload_is_retried_by_the_next_push_and_never_vouched_for() {
    let mut bucket = empty_bucket();
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    cache.edit("data/b.json", b"b");
    let faults = PushFaults {
        failing: BTreeSet::from(["data/b.json".to_string()]),
        ..PushFaults::default()
    };
    run_push(&mut bucket, &mut cache, PushRunRequest::default(), &faults).unwrap();
    assert!(sidecar(&cache).local_dirty);
    assert!(!bucket.indexed().contains("data/b.json"));
    let again = push_plain(&mut bucket, &mut cache);
    assert_eq!(again.uploaded, ["data/b.json"]);
    assert!(!sidecar(&cache).local_dirty);
}

#[test]
fn a_dry_run_plans_and_sends_nothing() {
    let mut bucket = empty_bucket();
    let before = bucket.objects.clone();
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    let ran = run_push(
        &mut bucket,
        &mut cache,
        PushRunRequest {
            dry_run: true,
            ..PushRunRequest::default()
        },
        &PushFaults::default(),
    )
    .unwrap();
    assert_eq!(ran.plan.uploads.len(), 1);
    assert_eq!(bucket.objects, before);
}

#[test]
fn answers_out_of_order_are_refused_not_obeyed() {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = PushRun::new(PushRunRequest::default());
    assert!(matches!(run.poll(), PushAction::ReadLocalState { .. }));
    assert_eq!(
        run.on_index(None, false, None).unwrap_err().code(),
        "invalid-input"
    );
    assert_eq!(
        run.on_uploaded(&mut session, &[], 0, &[], "x")
            .unwrap_err()
            .code(),
        "invalid-input"
    );
    assert_eq!(run.commit(&session).unwrap_err().code(), "invalid-input");
    assert_eq!(
        run.on_deleted(&mut session, 1, 0, &[]).unwrap_err().code(),
        "invalid-input"
    );
    assert!(run.on_written(&session, None, "x").is_err());
    assert!(run.sidecar().is_err());
}

/// One step of two caches sharing a bucket.
#[derive(Debug, Clone)]
enum Step {
    Edit { cache: usize, file: usize, byte: u8 },
    Push { cache: usize },
    Pull { cache: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..2usize, 0..3usize, any::<u8>()).prop_map(|(cache, file, byte)| Step::Edit {
            cache,
            file,
            byte
        }),
        (0..2usize).prop_map(|cache| Step::Push { cache }),
        (0..2usize).prop_map(|cache| Step::Pull { cache }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// Whatever two caches do in turn, every version someone wrote is still somewhere: in the
    /// bucket, in a cache, or in a cache's conflict folder, unless a later version written
    /// where it was seen replaced it.
    #[test]
    fn no_version_is_lost_whatever_two_caches_do(steps in proptest::collection::vec(step(), 1..24)) {
        let mut bucket = empty_bucket();
        let mut caches = [Cache::default(), Cache::default()];
        // Each cache starts as swamp starts one, with a pull: it then has a base. A cache that
        // never synced has none and keeps the extension's rules (its push uploads what differs
        // by content; see docs/reliability.md), which this property does not cover.
        for cache in &mut caches {
            run_pull(&mut bucket, cache, &PullFaults::default(), false);
        }
        // Versions without a descendant, by content (each edit writes distinct bytes): an edit
        // supersedes the version its cache held at that path, which a person has seen.
        let mut alive: BTreeMap<Vec<u8>, String> = BTreeMap::new();
        let mut edits = 0;
        for (n, s) in steps.iter().enumerate() {
            match s {
                Step::Edit { cache, file, byte } => {
                    let rel = format!("data/f{file}.json");
                    if let Some(seen) = caches[*cache].data(&rel) {
                        alive.remove(seen);
                    }
                    let bytes = format!("{n}:{byte}").into_bytes();
                    caches[*cache].edit(&rel, &bytes);
                    alive.insert(bytes, rel);
                    edits += 1;
                }
                Step::Push { cache } => {
                    run_push(&mut bucket, &mut caches[*cache], PushRunRequest::default(), &PushFaults::default()).unwrap();
                }
                Step::Pull { cache } => {
                    run_pull(&mut bucket, &mut caches[*cache], &PullFaults::default(), false);
                }
            }
            for (bytes, rel) in &alive {
                let key = format!("{NS}/{rel}");
                let in_bucket = bucket.objects.get(&key).is_some_and(|(b, _)| b == bytes);
                // In a cache: at its path, or kept aside in the conflict folder.
                let in_a_cache = caches.iter().any(|c| c.files.values().any(|(b, _)| b == bytes));
                prop_assert!(
                    in_bucket || in_a_cache,
                    "step {}: {:?} of {} lost", n, String::from_utf8_lossy(bytes), rel
                );
            }
        }
        prop_assert!(edits > 0 || alive.is_empty());
    }
}
