//! Whole rebuilds driven natively through the state machine (`RebuildRun`) against a simulated
//! bucket: a sync's rebuild of a missing index (publish create-only, adopt a peer's index that
//! lands first, never an empty one), `rebuild-index`'s judgement of what exists, lost races,
//! the hint for an empty listing, and calls out of order. Native only: proptest does not build
//! for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;

use s3sync_core::runs::rebuild::machine::{
    RebuildAction, RebuildRequest, RebuildResult, RebuildRun, RebuildStep,
};
use s3sync_core::runs::rebuild::plan::ExistingIndex;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_remote;

#[path = "common/sim.rs"]
mod sim;
use sim::{Bucket, INDEX_KEY, NS};

const NOW: &str = "2026-12-01T00:00:00.000Z";

/// What another writer does while the run lists.
#[derive(Debug, Default, Clone)]
struct Peer {
    /// Publishes this index after the listing, before the run's publish.
    publishes: Option<Vec<u8>>,
}

/// What the driver saw: the actions in order and the outcome.
#[derive(Debug)]
struct Rebuilt {
    actions: Vec<RebuildAction>,
    outcome: RebuildResult,
    session: Session,
}

/// Drives one rebuild to its end, doing each action against `bucket` as the shim does: listing
/// pages of `page_size`, publishing conditionally, reading a peer's index. It decides nothing.
fn run(bucket: &mut Bucket, request: RebuildRequest, peer: &Peer, page_size: usize) -> Rebuilt {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = RebuildRun::new(request, NOW);
    let mut actions = Vec::new();
    for _ in 0..32 {
        let action = run.poll(&mut session).unwrap();
        actions.push(action.clone());
        match action {
            RebuildAction::Get { key } => {
                let got = bucket.objects.get(&key).cloned();
                let etag = got.as_ref().map(|(_, e)| e.clone());
                run.on_got(&mut session, got.as_ref().map(|(b, _)| b.as_slice()), etag)
                    .unwrap();
            }
            RebuildAction::List { prefix, narration } => {
                assert!(narration.contains("from a listing of"), "{narration}");
                let listed: Vec<(String, u64, String)> = bucket
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, (b, e))| (k.clone(), b.len() as u64, e.clone()))
                    .collect();
                for page in listed.chunks(page_size.max(1)) {
                    let buffer = encode_remote(
                        page.iter()
                            .map(|(k, s, e)| (k.as_str(), *s, Some(e.as_str()), Some(NOW))),
                    );
                    run.on_page(&mut session, &buffer, &[]).unwrap();
                }
                run.on_listed(&mut session).unwrap();
                if let Some(theirs) = &peer.publishes {
                    bucket.put(INDEX_KEY, theirs.clone());
                }
            }
            RebuildAction::ListTopFolders => {
                let mut folders: Vec<String> = bucket
                    .objects
                    .keys()
                    .map(|k| k.split('/').next().unwrap_or("").to_string())
                    .collect();
                folders.dedup();
                run.on_top_folders(&session, &folders).unwrap();
            }
            RebuildAction::Publish { key, if_match, .. } => {
                let etag = bucket.put_if(
                    &key,
                    if_match.as_deref(),
                    session.index_json(false).unwrap(),
                );
                run.on_published(etag.is_some(), etag).unwrap();
            }
            RebuildAction::PublishShards => {
                // The shard publish is the shim's (shards.ts); here it always lands.
                run.on_published(true, None).unwrap();
            }
            RebuildAction::Done => {
                return Rebuilt {
                    actions,
                    outcome: run.outcome().unwrap(),
                    session,
                };
            }
        }
    }
    panic!("the rebuild did not finish in 32 steps");
}

/// A namespaced bucket with `n` data files and no index.
fn bucket_without_index(n: usize) -> Bucket {
    let mut bucket = Bucket::default();
    for i in 0..n {
        bucket.put(&format!("{NS}/data/m/{i}.json"), vec![b'x'; i + 1]);
    }
    bucket
}

fn missing(publish: bool) -> RebuildRequest {
    RebuildRequest::Missing {
        publish,
        prefix: None,
    }
}

fn asked(apply: bool, force: bool) -> RebuildRequest {
    RebuildRequest::Asked {
        apply,
        force,
        v2_existing: None,
        prefix: None,
    }
}

fn publishes(actions: &[RebuildAction]) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, RebuildAction::Publish { .. }))
        .count()
}

#[test]
fn a_sync_publishes_the_rebuild_create_only() {
    let mut bucket = bucket_without_index(3);
    let done = run(&mut bucket, missing(true), &Peer::default(), 2);
    assert!(done.actions.contains(&RebuildAction::Publish {
        key: INDEX_KEY.to_string(),
        if_match: None,
        retry: true,
    }));
    assert_eq!(done.outcome.step, RebuildStep::Published);
    assert_eq!(done.outcome.report.kept, 3);
    assert_eq!(
        done.outcome.etag.as_deref(),
        Some(bucket.objects[INDEX_KEY].1.as_str())
    );
    assert_eq!(bucket.indexed().len(), 3);
    assert!(!done.outcome.needs_attention);
    assert_eq!(done.outcome.existing, None);
}

#[test]
fn a_peer_index_that_lands_first_is_adopted_not_overwritten() {
    let mut bucket = bucket_without_index(3);
    let theirs = br#"{"version":1,"entries":{"data/m/0.json":{"key":"data/m/0.json","size":1,"lastModified":"2026-11-01T00:00:00.000Z"}}}"#.to_vec();
    let peer = Peer {
        publishes: Some(theirs.clone()),
    };
    let done = run(&mut bucket, missing(true), &peer, 10);
    assert_eq!(done.outcome.step, RebuildStep::AdoptedPeer);
    assert_eq!(
        bucket.objects[INDEX_KEY].0, theirs,
        "their index stays as written"
    );
    assert_eq!(
        done.session.index_len().unwrap(),
        1,
        "the session holds theirs"
    );
    assert_eq!(
        done.outcome.etag.as_deref(),
        Some(bucket.objects[INDEX_KEY].1.as_str())
    );
}

#[test]
fn nothing_is_published_when_asked_not_to_or_when_nothing_was_kept() {
    let mut bucket = bucket_without_index(2);
    let done = run(&mut bucket, missing(false), &Peer::default(), 10);
    assert_eq!(done.outcome.step, RebuildStep::Unpublished);
    assert_eq!(publishes(&done.actions), 0);
    assert!(!bucket.objects.contains_key(INDEX_KEY));

    // Only bookkeeping under the namespace: the listing saw something, kept nothing, and an
    // empty index is never written (the bucket may be mid-upload).
    let mut bucket = Bucket::default();
    bucket.put(&format!("{NS}/.datastore.lock"), b"{}".to_vec());
    let done = run(&mut bucket, missing(true), &Peer::default(), 10);
    assert_eq!(done.outcome.report.objects_seen, 1);
    assert_eq!(done.outcome.step, RebuildStep::Unpublished);
    assert_eq!(done.outcome.hint, None, "the tree is not empty");
    assert!(!bucket.objects.contains_key(INDEX_KEY));
}

#[test]
fn an_empty_namespace_names_near_folders_that_hold_data() {
    let mut bucket = Bucket::default();
    bucket.put("Ns/data/m/1.json", b"x".to_vec());
    bucket.put("other/data/m/1.json", b"x".to_vec());
    let done = run(&mut bucket, missing(true), &Peer::default(), 10);
    assert!(done.actions.contains(&RebuildAction::ListTopFolders));
    let hint = done.outcome.hint.expect("a hint");
    assert!(hint.contains("namespace ns"), "{hint}");
    assert!(hint.contains("did you mean --namespace Ns?"), "{hint}");
    assert!(!hint.contains("other"), "{hint}");
    assert_eq!(done.outcome.step, RebuildStep::Unpublished);

    let mut bucket = Bucket::default();
    let done = run(
        &mut bucket,
        RebuildRequest::Missing {
            publish: true,
            prefix: Some("team".into()),
        },
        &Peer::default(),
        10,
    );
    let hint = done.outcome.hint.expect("a hint");
    assert!(
        hint.contains("namespace ns under prefix team") && hint.contains("check --namespace"),
        "{hint}"
    );
}

#[test]
fn rebuild_index_reports_only_without_apply() {
    let mut bucket = bucket_without_index(2);
    let done = run(&mut bucket, asked(false, false), &Peer::default(), 10);
    assert_eq!(
        done.actions[0],
        RebuildAction::Get {
            key: INDEX_KEY.to_string()
        }
    );
    assert_eq!(done.outcome.step, RebuildStep::DryRun);
    assert_eq!(done.outcome.existing, Some(ExistingIndex::Absent));
    assert_eq!(publishes(&done.actions), 0);
    assert!(!bucket.objects.contains_key(INDEX_KEY));
    assert!(!done.outcome.needs_attention);
}

#[test]
fn rebuild_index_keeps_a_valid_index_without_force_and_replaces_a_corrupt_one() {
    let data: BTreeMap<String, Vec<u8>> = [("data/m/1.json".to_string(), b"one".to_vec())].into();
    let sizes = [("data/m/1.json".to_string(), 3)].into();
    let mut bucket = Bucket::with_datastore(&data, &sizes);
    let before = bucket.objects[INDEX_KEY].clone();
    let done = run(&mut bucket, asked(true, false), &Peer::default(), 10);
    assert_eq!(done.outcome.step, RebuildStep::KeptExisting);
    assert_eq!(done.outcome.existing, Some(ExistingIndex::Valid));
    assert!(done.outcome.needs_attention);
    assert_eq!(bucket.objects[INDEX_KEY], before);

    let corrupt_etag = bucket.put(INDEX_KEY, b"{not json".to_vec());
    let done = run(&mut bucket, asked(true, false), &Peer::default(), 10);
    assert!(done.actions.contains(&RebuildAction::Publish {
        key: INDEX_KEY.to_string(),
        if_match: Some(corrupt_etag),
        retry: false,
    }));
    assert_eq!(done.outcome.existing, Some(ExistingIndex::Corrupt));
    assert_eq!(done.outcome.step, RebuildStep::Published);
    assert_eq!(bucket.indexed().len(), 1);
}

#[test]
fn rebuild_index_that_loses_its_race_reports_it_and_leaves_the_winner() {
    let mut bucket = bucket_without_index(2);
    bucket.put(INDEX_KEY, b"{not json".to_vec());
    let theirs = br#"{"version":1,"entries":{}}"#.to_vec();
    let peer = Peer {
        publishes: Some(theirs.clone()),
    };
    let done = run(&mut bucket, asked(true, true), &peer, 10);
    assert_eq!(done.outcome.step, RebuildStep::LostRace);
    assert!(done.outcome.needs_attention);
    assert_eq!(bucket.objects[INDEX_KEY].0, theirs);
    // The index as found is read once; a peer's index is never read back.
    assert_eq!(
        done.actions
            .iter()
            .filter(|a| matches!(a, RebuildAction::Get { .. }))
            .count(),
        1
    );
}

#[test]
fn a_peer_index_that_vanishes_before_it_is_read_is_a_publish_conflict() {
    let mut session = Session::new(Some(NS), "").unwrap();
    // A sync's rebuild: the index is known to be missing, so the listing comes first.
    let mut run = RebuildRun::new(missing(true), NOW);
    assert!(matches!(
        run.poll(&mut session).unwrap(),
        RebuildAction::List { .. }
    ));
    let key = format!("{NS}/data/m/0.json");
    let page = encode_remote([(key.as_str(), 1, Some("\"e\""), Some(NOW))]);
    run.on_page(&mut session, &page, &[]).unwrap();
    run.on_listed(&mut session).unwrap();
    assert!(matches!(
        run.poll(&mut session).unwrap(),
        RebuildAction::Publish { .. }
    ));
    // Another writer's index landed first (our create-only write lost) ...
    run.on_published(false, None).unwrap();
    assert_eq!(
        run.poll(&mut session).unwrap(),
        RebuildAction::Get {
            key: INDEX_KEY.to_string()
        }
    );
    // ... and was deleted before it could be read: nothing to adopt, nothing of ours written.
    let error = run.on_got(&mut session, None, None).unwrap_err();
    assert_eq!(error.code(), "publish-conflict");
    assert_eq!(
        session.index_len().unwrap(),
        1,
        "the rebuilt index stays the session's"
    );
}

#[test]
fn a_v2_index_comes_judged_and_is_published_as_shards() {
    let mut bucket = bucket_without_index(2);
    let request = RebuildRequest::Asked {
        apply: true,
        force: false,
        v2_existing: Some(ExistingIndex::Corrupt),
        prefix: None,
    };
    let done = run(&mut bucket, request, &Peer::default(), 10);
    assert!(!done
        .actions
        .iter()
        .any(|a| matches!(a, RebuildAction::Get { .. })));
    assert!(done.actions.contains(&RebuildAction::PublishShards));
    assert_eq!(
        publishes(&done.actions),
        0,
        "no monolith is written on a v2 repo"
    );
    assert_eq!(done.outcome.step, RebuildStep::Published);
}

#[test]
fn unsafe_keys_need_a_person() {
    let mut bucket = bucket_without_index(1);
    bucket.put(&format!("{NS}/data/../escape.json"), b"x".to_vec());
    let done = run(&mut bucket, missing(true), &Peer::default(), 10);
    assert_eq!(done.outcome.report.skipped_unsafe, 1);
    assert_eq!(done.outcome.step, RebuildStep::Published);
    assert!(done.outcome.needs_attention);
}

#[test]
fn calls_out_of_order_are_input_errors_not_panics() {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = RebuildRun::new(missing(true), NOW);
    assert!(run.outcome().is_err());
    assert!(run.on_published(true, None).is_err());
    assert!(run.on_existing(None, None).is_err());
    assert!(run.on_top_folders(&session, &[]).is_err());
    assert!(run.on_peer_index(&mut session, b"{}", None).is_err());
    assert!(matches!(
        run.poll(&mut session).unwrap(),
        RebuildAction::List { .. }
    ));
    // Asking again before answering returns the same action.
    assert!(matches!(
        run.poll(&mut session).unwrap(),
        RebuildAction::List { .. }
    ));
    assert!(run.on_page(&mut session, b"no-terminator", &[]).is_err());
    run.on_listed(&mut session).unwrap();
    assert!(run.on_listed(&mut session).is_err());
    assert!(run.on_page(&mut session, b"", &[]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the bucket holds, however it is paged, and whether or not a peer publishes
    /// meanwhile, a sync's rebuild never overwrites an index: the bucket ends with the peer's
    /// index when there was one, with ours only when it kept something and there was none, and
    /// the session's index agrees with the bucket's.
    #[test]
    fn a_rebuild_never_overwrites_an_index(
        n in 0usize..12,
        page_size in 1usize..5,
        peer_publishes in any::<bool>(),
        publish in any::<bool>(),
    ) {
        let mut bucket = bucket_without_index(n);
        let theirs = br#"{"version":1,"entries":{}}"#.to_vec();
        let peer = Peer { publishes: peer_publishes.then(|| theirs.clone()) };
        let done = run(&mut bucket, missing(publish), &peer, page_size);
        prop_assert_eq!(done.outcome.report.kept, n as u64);
        match (peer_publishes, publish && n > 0) {
            (true, _) => prop_assert_eq!(&bucket.objects[INDEX_KEY].0, &theirs),
            (false, true) => prop_assert_eq!(bucket.indexed().len(), n),
            (false, false) => prop_assert!(!bucket.objects.contains_key(INDEX_KEY)),
        }
        let step = done.outcome.step;
        match step {
            RebuildStep::Published | RebuildStep::AdoptedPeer => {
                let held = done.session.index_json(false).unwrap();
                let remote = &bucket.objects[INDEX_KEY].0;
                let held: serde_json::Value = serde_json::from_slice(&held).unwrap();
                let remote: serde_json::Value = serde_json::from_slice(remote).unwrap();
                prop_assert_eq!(&held["entries"], &remote["entries"]);
            }
            RebuildStep::Unpublished => prop_assert!(!(publish && n > 0 && !peer_publishes)),
            other => prop_assert!(false, "a sync's rebuild ended {:?}", other),
        }
    }
}
