//! Namespace-contamination repairs driven natively through the state machine
//! (`ContaminationRun`) against a simulated bucket whose ETags are content hashes: the dry run
//! writes nothing, only proven duplicates of a home copy go, their index entries first, HEADs
//! prove what a listing without ETags could not, a lost publish stops the run before any
//! delete, and a property: no object goes unless its home copy holds the same bytes, and the
//! index never names a missing object. Native only, like the other machine tests.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use s3sync_core::runs::contamination::machine::{
    ContaminationAction, ContaminationRun, ContaminationSummary,
};
use s3sync_core::runs::migrate::machine::HeadFound;
use s3sync_core::CoreError;

#[path = "common/sim.rs"]
mod sim;
use sim::{fake_sha256, Bucket};

const NS: &str = "ns";
const INDEX: &str = "ns/.datastore-index.json";

/// Writes `bytes` at `key` with a content ETag, as S3 does for a single-part upload.
fn put(bucket: &mut Bucket, key: &str, bytes: &[u8]) {
    let etag = format!("\"{}\"", &fake_sha256(bytes)[..32]);
    bucket
        .objects
        .insert(key.to_string(), (bytes.to_vec(), etag));
}

fn put_index(bucket: &mut Bucket, rels: &[&str]) {
    let mut entries = Map::new();
    for rel in rels {
        entries.insert(
            rel.to_string(),
            json!({"key": rel, "size": 1, "lastModified": "2026-11-01T00:00:00.000Z"}),
        );
    }
    put(
        bucket,
        INDEX,
        &serde_json::to_vec(&json!({"version": 1, "entries": entries})).unwrap(),
    );
}

fn indexed(bucket: &Bucket) -> Vec<String> {
    bucket
        .objects
        .get(INDEX)
        .map_or_else(Vec::new, |(bytes, _)| {
            let value: Value = serde_json::from_slice(bytes).unwrap();
            value["entries"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        })
}

#[derive(Debug, Default, Clone)]
struct World {
    list_without_etags: bool,
    index_races: bool,
    /// Another writer replaces the first object to remove just before the deletes.
    replaced_before_delete: bool,
}

#[derive(Debug)]
struct Repaired {
    actions: Vec<ContaminationAction>,
    result: Result<ContaminationSummary, CoreError>,
}

/// Drives one repair, doing each action against `bucket` as the shim does.
fn run(bucket: &mut Bucket, dry_run: bool, world: &World) -> Repaired {
    let mut run = ContaminationRun::new(NS, "", dry_run).unwrap();
    let mut actions = Vec::new();
    for _ in 0..16 {
        let action = run.poll();
        actions.push(action.clone());
        let answered = match action {
            ContaminationAction::ListAll => {
                run.on_listing(&bucket.listing(!world.list_without_etags, ""))
            }
            ContaminationAction::Head { keys } => {
                let heads: Vec<HeadFound> = keys
                    .iter()
                    .map(|key| {
                        let got = bucket.objects.get(key);
                        HeadFound {
                            key: key.clone(),
                            exists: got.is_some(),
                            size: got.map(|(b, _)| b.len() as u64),
                            etag: got.map(|(_, e)| e.clone()),
                        }
                    })
                    .collect();
                run.on_heads(&heads)
            }
            ContaminationAction::Get { key } => {
                let got = bucket.objects.get(&key).cloned();
                if world.index_races {
                    let bytes = got.as_ref().map(|(b, _)| b.clone()).unwrap_or_default();
                    bucket.put(&key, bytes);
                }
                let etag = got.as_ref().map(|(_, e)| e.clone());
                run.on_index(got.as_ref().map(|(b, _)| b.as_slice()), etag)
            }
            ContaminationAction::Publish { key, if_match } => {
                let body = run.body().unwrap().to_vec();
                run.on_published(bucket.put_if(&key, if_match.as_deref(), body).is_some())
            }
            ContaminationAction::Delete { objects } => {
                if world.replaced_before_delete {
                    if let Some(first) = objects.first() {
                        put(bucket, &first.key, b"another writer's version");
                    }
                }
                // `If-Match` the listed ETag: another version stays, and is answered as changed.
                let mut deleted = 0;
                let mut changed = Vec::new();
                for object in &objects {
                    match bucket.objects.get(&object.key) {
                        Some((_, etag)) if *etag == object.etag => {
                            bucket.objects.remove(&object.key);
                            deleted += 1;
                        }
                        Some(_) => changed.push(object.key.clone()),
                        None => deleted += 1,
                    }
                }
                run.on_deleted(deleted, &changed)
            }
            ContaminationAction::Done => {
                return Repaired {
                    actions,
                    result: run.result(),
                }
            }
        };
        if let Err(error) = answered {
            return Repaired {
                actions,
                result: Err(error),
            };
        }
    }
    panic!("the repair did not finish in 16 steps");
}

/// `other` is a namespace; under `ns/other/` sit a duplicate of its home copy, an object with
/// no home copy, and one whose home copy differs.
fn contaminated() -> Bucket {
    let mut bucket = Bucket::default();
    put(&mut bucket, "other/.namespace.json", b"{}");
    put(&mut bucket, "other/data/dup.yaml", b"same");
    put(&mut bucket, "ns/other/data/dup.yaml", b"same");
    put(&mut bucket, "ns/other/data/only.yaml", b"only");
    put(&mut bucket, "other/data/diff.yaml", b"home");
    put(&mut bucket, "ns/other/data/diff.yaml", b"mine");
    put(&mut bucket, "ns/data/own.yaml", b"own");
    put_index(
        &mut bucket,
        &[
            "other/data/dup.yaml",
            "other/data/only.yaml",
            "other/data/diff.yaml",
            "data/own.yaml",
        ],
    );
    bucket
}

#[test]
fn a_dry_run_reports_and_writes_nothing() {
    let mut bucket = contaminated();
    let before = bucket.objects.clone();
    let result = run(&mut bucket, true, &World::default()).result.unwrap();
    assert_eq!(result.total_foreign_objects, 3);
    assert_eq!(result.deleted, 0);
    let reasons: BTreeMap<&str, String> = result
        .kept
        .iter()
        .map(|k| {
            (
                k.key.as_str(),
                serde_json::to_value(k.reason)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("ns/other/data/diff.yaml", "differs".to_string()),
            ("ns/other/data/only.yaml", "only-copy".to_string())
        ]
        .into()
    );
    assert_eq!(bucket.objects, before);
}

#[test]
fn a_duplicate_another_writer_replaced_before_its_delete_stays_and_is_reported() {
    let mut bucket = contaminated();
    let world = World {
        replaced_before_delete: true,
        ..World::default()
    };
    let done = run(&mut bucket, false, &world);
    let result = done.result.unwrap();
    assert_eq!(result.deleted, 0);
    assert_eq!(
        bucket.objects["ns/other/data/dup.yaml"].0,
        b"another writer's version"
    );
    let changed = result
        .kept
        .iter()
        .find(|k| k.key == "ns/other/data/dup.yaml")
        .expect("reported as kept");
    assert_eq!(
        serde_json::to_value(changed.reason).unwrap(),
        "changed-since-listing"
    );
    // The delete named the version the listing proved redundant.
    let asked = done.actions.iter().find_map(|a| match a {
        ContaminationAction::Delete { objects } => Some(objects.clone()),
        _ => None,
    });
    let asked = asked.expect("a delete was asked for");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].etag,
        format!("\"{}\"", &sim::fake_sha256(b"same")[..32])
    );
}

#[test]
fn an_answer_naming_objects_the_delete_did_not_name_is_refused() {
    let mut bucket = contaminated();
    let mut run = ContaminationRun::new(NS, "", false).unwrap();
    run.on_listing(&bucket.listing(true, "")).unwrap();
    loop {
        match run.poll() {
            ContaminationAction::Get { key } => {
                let got = bucket.objects.get(&key).cloned();
                let etag = got.as_ref().map(|(_, e)| e.clone());
                run.on_index(got.as_ref().map(|(b, _)| b.as_slice()), etag)
                    .unwrap();
            }
            ContaminationAction::Publish { key, if_match } => {
                let body = run.body().unwrap().to_vec();
                let landed = bucket.put_if(&key, if_match.as_deref(), body).is_some();
                run.on_published(landed).unwrap();
            }
            ContaminationAction::Delete { .. } => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(run
        .on_deleted(0, &["ns/other/data/only.yaml".to_string()])
        .is_err());
    assert!(run.on_deleted(2, &[]).is_err());
}

#[test]
fn only_proven_duplicates_go_and_their_entries_first() {
    let mut bucket = contaminated();
    let done = run(&mut bucket, false, &World::default());
    let result = done.result.unwrap();
    assert_eq!(result.deleted, 1);
    assert!(!bucket.objects.contains_key("ns/other/data/dup.yaml"));
    assert!(bucket.objects.contains_key("ns/other/data/only.yaml"));
    assert!(bucket.objects.contains_key("ns/other/data/diff.yaml"));
    assert!(!indexed(&bucket).contains(&"other/data/dup.yaml".to_string()));
    assert!(indexed(&bucket).contains(&"data/own.yaml".to_string()));
    let order: Vec<&str> = done
        .actions
        .iter()
        .filter_map(|a| match a {
            ContaminationAction::Publish { .. } => Some("publish"),
            ContaminationAction::Delete { .. } => Some("delete"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["publish", "delete"]);
}

#[test]
fn heads_prove_what_a_listing_without_etags_could_not() {
    let mut bucket = contaminated();
    let world = World {
        list_without_etags: true,
        ..World::default()
    };
    let done = run(&mut bucket, false, &world);
    let Some(ContaminationAction::Head { keys }) = done
        .actions
        .iter()
        .find(|a| matches!(a, ContaminationAction::Head { .. }))
    else {
        panic!("no HEAD asked for");
    };
    assert_eq!(
        keys,
        &[
            "ns/other/data/diff.yaml",
            "other/data/diff.yaml",
            "ns/other/data/dup.yaml",
            "other/data/dup.yaml"
        ]
    );
    let result = done.result.unwrap();
    assert_eq!(result.deleted, 1);
    assert!(bucket.objects.contains_key("ns/other/data/diff.yaml"));
}

#[test]
fn a_lost_publish_stops_the_run_before_any_delete() {
    let mut bucket = contaminated();
    let world = World {
        list_without_etags: false,
        index_races: true,
        ..World::default()
    };
    let done = run(&mut bucket, false, &world);
    assert_eq!(done.result.unwrap_err().code(), "publish-conflict");
    assert!(bucket.objects.contains_key("ns/other/data/dup.yaml"));
    assert!(!done
        .actions
        .iter()
        .any(|a| matches!(a, ContaminationAction::Delete { .. })));
}

#[test]
fn without_an_index_the_duplicates_still_go() {
    let mut bucket = contaminated();
    bucket.objects.remove(INDEX);
    let result = run(&mut bucket, false, &World::default()).result.unwrap();
    assert_eq!(result.deleted, 1);
    assert!(!bucket.objects.contains_key(INDEX), "no index is created");
}

#[test]
fn calls_out_of_order_are_input_errors() {
    assert!(ContaminationRun::new("../x", "", true).is_err());
    let mut run = ContaminationRun::new(NS, "", false).unwrap();
    assert!(run.result().is_err());
    assert!(run.on_heads(&[]).is_err());
    assert!(run.on_index(None, None).is_err());
    assert!(run.on_published(true).is_err());
    assert!(run.on_deleted(1, &[]).is_err());
    assert!(run.body().is_err());
    assert_eq!(
        run.on_listing(b"no-terminator").unwrap_err().code(),
        "invalid-input"
    );
    assert_eq!(run.poll(), ContaminationAction::ListAll);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever sits under `ns/other/` and at home, listed with ETags or not: a removed object
    /// had a home copy with the same bytes, nothing else is removed, and the index names no
    /// missing object.
    #[test]
    fn nothing_goes_without_an_identical_home_copy(
        pairs in prop::collection::btree_map(
            prop::sample::select(vec!["data/a", "data/b", "logs/c", "files/d"]),
            (prop::option::of(prop::sample::select(vec!["x", "y"])), prop::option::of(prop::sample::select(vec!["x", "y", "xy"]))),
            0..4,
        ),
        list_without_etags in any::<bool>(),
    ) {
        let mut bucket = Bucket::default();
        put(&mut bucket, "other/.namespace.json", b"{}");
        let mut rels = Vec::new();
        for (rel, (home, nested)) in &pairs {
            if let Some(bytes) = home {
                put(&mut bucket, &format!("other/{rel}"), bytes.as_bytes());
            }
            if let Some(bytes) = nested {
                put(&mut bucket, &format!("ns/other/{rel}"), bytes.as_bytes());
                rels.push(format!("other/{rel}"));
            }
        }
        let rel_refs: Vec<&str> = rels.iter().map(String::as_str).collect();
        put_index(&mut bucket, &rel_refs);
        let before = bucket.objects.clone();
        let world = World { list_without_etags, ..World::default() };
        let result = run(&mut bucket, false, &world).result.unwrap();
        for (key, (bytes, _)) in &before {
            if bucket.objects.contains_key(key) {
                continue;
            }
            let home = key.strip_prefix("ns/").unwrap();
            prop_assert_eq!(before.get(home).map(|(b, _)| b), Some(bytes), "{} went without an identical home copy", key);
        }
        prop_assert_eq!(result.deleted as usize, before.len() - bucket.objects.len());
        for rel in indexed(&bucket) {
            prop_assert!(bucket.objects.contains_key(&format!("ns/{rel}")), "the index names missing {}", rel);
        }
    }
}
