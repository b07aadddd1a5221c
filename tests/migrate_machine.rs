//! Whole solo → namespaced migrates driven natively through the state machine (`MigrateRun`)
//! against a simulated bucket: the dry run writes nothing, copies go only to absent keys and are
//! indexed, originals go only with `removeOriginals` and only after both indexes say so, a
//! sharded namespace is refused, HEADs fill in ETags a listing lacked, a lost publish stops the
//! run before any delete, and a property: no index ever names a missing object and no version is
//! lost. Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use s3sync_core::runs::migrate::machine::{
    HeadFound, MigrateAction, MigrateIndex, MigrateRequest, MigrateResult, MigrateRun,
};
use s3sync_core::CoreError;

#[path = "common/sim.rs"]
mod sim;
use sim::Bucket;

const NS: &str = "prod";
const NOW: &str = "2026-12-01T00:00:00.000Z";
const SOLO_INDEX: &str = ".datastore-index.json";
const NS_INDEX: &str = "prod/.datastore-index.json";

/// How the simulated server and other writers behave.
#[derive(Debug, Default, Clone)]
struct World {
    /// The listing sends no ETags (some S3-compatible servers do not).
    list_without_etags: bool,
    /// Another writer rewrites this index right before our publish of it.
    races: Option<&'static str>,
}

#[derive(Debug)]
struct Migrated {
    actions: Vec<MigrateAction>,
    result: Result<MigrateResult, CoreError>,
}

fn index_of(entries: &[(&str, usize)]) -> Vec<u8> {
    let mut map = Map::new();
    for (rel, size) in entries {
        map.insert(
            rel.to_string(),
            json!({"key": rel, "size": size, "lastModified": "2026-11-01T00:00:00.000Z"}),
        );
    }
    serde_json::to_vec(&json!({"version": 1, "entries": map})).unwrap()
}

fn entries(bucket: &Bucket, key: &str) -> BTreeSet<String> {
    bucket
        .objects
        .get(key)
        .map_or_else(BTreeSet::new, |(bytes, _)| {
            let value: Value = serde_json::from_slice(bytes).unwrap();
            value["entries"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        })
}

/// Drives one migrate to its end, doing each action against `bucket` as the shim does. It
/// decides nothing.
fn run(bucket: &mut Bucket, request: MigrateRequest, world: &World) -> Migrated {
    let mut run = MigrateRun::new(NS, "", request, NOW).unwrap();
    let mut actions = Vec::new();
    for _ in 0..32 {
        let action = match run.poll() {
            Ok(action) => action,
            Err(error) => {
                return Migrated {
                    actions,
                    result: Err(error),
                }
            }
        };
        actions.push(action.clone());
        let read = |bucket: &Bucket, key: &str| bucket.objects.get(key).cloned();
        let answered = match action {
            // One verb for both reads: the run knows whether it asked for the meta or its index.
            MigrateAction::Get { key } => {
                let got = read(bucket, &key);
                run.on_got(got.clone().map(|(b, _)| b), got.map(|(_, e)| e))
            }
            MigrateAction::ListAll => {
                run.on_listing(&bucket.listing(!world.list_without_etags, NOW))
            }
            MigrateAction::Head { keys } => {
                let heads: Vec<HeadFound> = keys
                    .iter()
                    .map(|key| {
                        let got = read(bucket, key);
                        HeadFound {
                            key: key.clone(),
                            exists: got.is_some(),
                            size: got.as_ref().map(|(b, _)| b.len() as u64),
                            etag: got.map(|(_, e)| e),
                        }
                    })
                    .collect();
                run.on_heads(&heads)
            }
            MigrateAction::Copy { items } => {
                let mut copied = 0;
                for item in &items {
                    // A server-side copy keeps the bytes, and so the ETag of a single-part object.
                    if let Some(original) = read(bucket, &item.rel) {
                        bucket.objects.insert(item.to.clone(), original);
                        copied += 1;
                    }
                }
                run.on_copied(copied)
            }
            MigrateAction::Publish {
                index,
                key,
                lock_key,
                if_match,
            } => {
                // Each index under the lock its layout's writers take.
                let expected_lock = match index {
                    MigrateIndex::Namespace => format!(".locks/{NS}.lock"),
                    MigrateIndex::Solo => ".datastore.lock".to_string(),
                };
                assert_eq!(lock_key, expected_lock);
                let racing = matches!(
                    (index, world.races),
                    (MigrateIndex::Namespace, Some("namespace"))
                        | (MigrateIndex::Solo, Some("solo"))
                );
                if racing {
                    let bytes = read(bucket, &key)
                        .map(|(b, _)| b)
                        .unwrap_or_else(|| index_of(&[]));
                    bucket.put(&key, bytes);
                }
                let body = run.body().unwrap().to_vec();
                run.on_published(bucket.put_if(&key, if_match.as_deref(), body).is_some())
            }
            MigrateAction::Delete { items } => {
                let mut removed = 0;
                for item in &items {
                    if bucket.objects.remove(&item.rel).is_some() {
                        removed += 1;
                    }
                }
                run.on_deleted(removed)
            }
            MigrateAction::Done => {
                return Migrated {
                    actions,
                    result: run.result(),
                }
            }
        };
        if let Err(error) = answered {
            return Migrated {
                actions,
                result: Err(error),
            };
        }
    }
    panic!("the migrate did not finish in 32 steps");
}

/// A solo datastore: `files` at the root, indexed by the solo index.
fn solo_bucket(files: &[(&str, &str)]) -> Bucket {
    let mut bucket = Bucket::default();
    for (rel, bytes) in files {
        bucket.put(rel, bytes.as_bytes().to_vec());
    }
    let indexed: Vec<(&str, usize)> = files.iter().map(|(r, b)| (*r, b.len())).collect();
    bucket.put(SOLO_INDEX, index_of(&indexed));
    bucket
}

fn apply(remove_originals: bool) -> MigrateRequest {
    MigrateRequest {
        apply: true,
        remove_originals,
        max_index_entries: None,
    }
}

fn has(actions: &[MigrateAction], what: fn(&MigrateAction) -> bool) -> bool {
    actions.iter().any(what)
}

#[test]
fn a_dry_run_plans_and_writes_nothing() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one"), ("logs/x.log", "two")]);
    let before = bucket.objects.clone();
    let done = run(&mut bucket, MigrateRequest::default(), &World::default());
    let result = done.result.unwrap();
    assert!(!result.applied);
    assert_eq!(result.plan.copy.len(), 2);
    assert_eq!(bucket.objects, before);
    assert!(!has(&done.actions, |a| matches!(
        a,
        MigrateAction::Copy { .. } | MigrateAction::Publish { .. } | MigrateAction::Delete { .. }
    )));
}

#[test]
fn an_applied_migrate_copies_and_indexes_and_keeps_the_originals() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one"), ("logs/x.log", "two")]);
    let result = run(&mut bucket, apply(false), &World::default())
        .result
        .unwrap();
    assert_eq!((result.copied, result.indexed, result.removed), (2, 2, 0));
    assert_eq!(result.verified, 2);
    assert_eq!(bucket.objects["prod/data/a.yaml"].0, b"one");
    assert!(bucket.objects.contains_key("data/a.yaml"), "originals stay");
    assert_eq!(
        entries(&bucket, NS_INDEX),
        ["data/a.yaml", "logs/x.log"].map(String::from).into()
    );
    assert_eq!(entries(&bucket, SOLO_INDEX).len(), 2);
}

#[test]
fn originals_go_only_with_remove_originals_and_after_both_indexes_say_so() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one"), ("logs/x.log", "two")]);
    let done = run(&mut bucket, apply(true), &World::default());
    let result = done.result.unwrap();
    assert_eq!(result.removed, 2);
    assert!(!bucket.objects.contains_key("data/a.yaml"));
    assert!(entries(&bucket, SOLO_INDEX).is_empty());
    assert_eq!(entries(&bucket, NS_INDEX).len(), 2);
    // The namespace's index first, then the solo index, then the deletes.
    let order: Vec<&str> = done
        .actions
        .iter()
        .filter_map(|a| match a {
            MigrateAction::Publish {
                index: MigrateIndex::Namespace,
                ..
            } => Some("ns"),
            MigrateAction::Publish {
                index: MigrateIndex::Solo,
                ..
            } => Some("solo"),
            MigrateAction::Delete { .. } => Some("delete"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["ns", "solo", "delete"]);
}

#[test]
fn a_different_object_at_the_namespaced_key_is_a_conflict_and_is_kept() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one")]);
    bucket.put("prod/data/a.yaml", b"someone else".to_vec());
    let result = run(&mut bucket, apply(true), &World::default())
        .result
        .unwrap();
    assert_eq!(result.conflicts.len(), 1);
    assert_eq!(result.removed, 0);
    assert_eq!(bucket.objects["prod/data/a.yaml"].0, b"someone else");
    assert_eq!(bucket.objects["data/a.yaml"].0, b"one");
    assert_eq!(entries(&bucket, SOLO_INDEX).len(), 1);
}

#[test]
fn a_sharded_namespace_is_refused_before_anything_is_written() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one")]);
    bucket.put(
        "prod/_index/_meta.json",
        br#"{"version":2,"partitions":[],"commitSeq":3}"#.to_vec(),
    );
    let before = bucket.objects.clone();
    let error = run(&mut bucket, apply(true), &World::default())
        .result
        .unwrap_err();
    assert_eq!(error.code(), "migrate-v2-unsupported");
    assert!(
        error.to_string().starts_with("prod/ uses the sharded"),
        "{error}"
    );
    assert_eq!(bucket.objects, before);

    bucket.put("prod/_index/_meta.json", b"{nope".to_vec());
    let error = run(&mut bucket, apply(true), &World::default())
        .result
        .unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    assert!(
        error
            .to_string()
            .contains("layout this repo uses is unknown"),
        "{error}"
    );
}

#[test]
fn heads_fill_in_the_etags_a_listing_lacked() {
    let mut bucket = solo_bucket(&[("data/a.yaml", "one")]);
    let original = bucket.objects["data/a.yaml"].clone();
    bucket.objects.insert("prod/data/a.yaml".into(), original);
    let world = World {
        list_without_etags: true,
        races: None,
    };
    let done = run(&mut bucket, MigrateRequest::default(), &world);
    assert!(has(&done.actions, |a| matches!(
        a,
        MigrateAction::Head { .. }
    )));
    let result = done.result.unwrap();
    assert_eq!(result.verified, 1, "proven by the HEADs' ETags");
    assert!(result.conflicts.is_empty());
}

#[test]
fn a_lost_publish_stops_the_run_before_any_delete() {
    for races in ["namespace", "solo"] {
        let mut bucket = solo_bucket(&[("data/a.yaml", "one")]);
        let world = World {
            list_without_etags: false,
            races: Some(races),
        };
        let done = run(&mut bucket, apply(true), &world);
        let error = done.result.unwrap_err();
        assert_eq!(error.code(), "publish-conflict", "{races}");
        assert!(error.to_string().ends_with("; run it again"), "{error}");
        assert!(!has(&done.actions, |a| matches!(
            a,
            MigrateAction::Delete { .. }
        )));
        assert!(bucket.objects.contains_key("data/a.yaml"));
    }
}

#[test]
fn calls_out_of_order_are_input_errors_and_a_root_namespace_is_refused() {
    assert!(MigrateRun::new("../x", "", MigrateRequest::default(), NOW).is_err());
    let mut run = MigrateRun::new(NS, "", MigrateRequest::default(), NOW).unwrap();
    assert!(run.result().is_err());
    assert!(run.on_indexes(None, None, None, None).is_err());
    assert!(run.on_listing(b"").is_err());
    assert!(run.on_heads(&[]).is_err());
    assert!(run.on_copied(1).is_err());
    assert!(run.on_namespace_index(None, None).is_err());
    assert!(run.on_published(true).is_err());
    assert!(run.on_deleted(1).is_err());
    assert!(run.body().is_err());
    assert!(matches!(run.poll().unwrap(), MigrateAction::Get { .. }));
    run.on_meta(None).unwrap();
    assert_eq!(
        run.poll().unwrap(),
        MigrateAction::Get {
            key: ".datastore-index.json".to_string()
        }
    );
    run.on_got(Some(b"{".to_vec()), None).unwrap();
    assert_eq!(
        run.poll().unwrap(),
        MigrateAction::Get {
            key: NS_INDEX.to_string()
        }
    );
    run.on_got(None, None).unwrap();
    assert!(matches!(run.poll().unwrap(), MigrateAction::ListAll));
    assert_eq!(run.on_listing(b"").unwrap_err().code(), "index-corrupt");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the bucket holds at the namespaced keys, whether the listing sends ETags and
    /// whether originals are removed: no index ever names a missing object, every original's
    /// bytes are still in the bucket (at its key, or at its namespaced key that the namespace's
    /// index names), and nothing at a namespaced key that existed before was overwritten.
    #[test]
    fn a_migrate_loses_nothing(
        files in prop::collection::btree_map(
            prop::sample::select(vec!["data/a.yaml", "data/b.yaml", "logs/l.log", "files/f.txt"]),
            prop::sample::select(vec!["x", "yy", "zzz"]),
            0..4,
        ),
        squatters in prop::collection::btree_map(
            prop::sample::select(vec!["data/a.yaml", "logs/l.log"]),
            prop::sample::select(vec!["x", "other"]),
            0..2,
        ),
        list_without_etags in any::<bool>(),
        remove_originals in any::<bool>(),
    ) {
        let pairs: Vec<(&str, &str)> = files.iter().map(|(r, b)| (*r, *b)).collect();
        let mut bucket = solo_bucket(&pairs);
        for (rel, bytes) in &squatters {
            // Sometimes the same bytes under a copy's ETag, sometimes different bytes.
            match bucket.objects.get(*rel).cloned() {
                Some(original) if original.0 == bytes.as_bytes() => {
                    bucket.objects.insert(format!("{NS}/{rel}"), original);
                }
                _ => {
                    bucket.put(&format!("{NS}/{rel}"), bytes.as_bytes().to_vec());
                }
            }
        }
        let before: BTreeMap<String, (Vec<u8>, String)> = bucket.objects.clone();
        let world = World { list_without_etags, races: None };
        let result = run(&mut bucket, apply(remove_originals), &world).result.unwrap();
        for key in [SOLO_INDEX, NS_INDEX] {
            let under = if key == NS_INDEX { format!("{NS}/") } else { String::new() };
            for rel in entries(&bucket, key) {
                prop_assert!(bucket.objects.contains_key(&format!("{under}{rel}")), "{} names missing {}", key, rel);
            }
        }
        for (rel, bytes) in &files {
            let kept = bucket.objects.get(*rel).is_some_and(|(b, _)| b == bytes.as_bytes());
            let moved = bucket.objects.get(&format!("{NS}/{rel}")).is_some_and(|(b, _)| b == bytes.as_bytes())
                && entries(&bucket, NS_INDEX).contains(*rel);
            prop_assert!(kept || moved, "{} lost", rel);
        }
        for (key, (bytes, _)) in before.iter().filter(|(k, _)| k.starts_with("prod/") && *k != NS_INDEX) {
            prop_assert_eq!(&bucket.objects[key].0, bytes, "{} overwritten", key);
        }
        prop_assert!(result.removed == 0 || remove_originals);
    }
}
