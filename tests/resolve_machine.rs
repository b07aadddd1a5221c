//! `resolve` driven natively through the state machine (`ResolveRun`) against a simulated cache:
//! a failed pull resolves nothing, keeping theirs drops the copies, keeping mine puts the newest
//! copy back and removes the copies only once the push put that version in the bucket, and a
//! copy gone meanwhile is not settled. Native only, like the other machine tests.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::resolve::machine::{
    ResolveAction, ResolvePushed, ResolveRequest, ResolveResult, ResolveRun,
};
use s3sync_core::safety::conflicts::conflict_copy_path;
use s3sync_core::wire::listing::encode_local;
use s3sync_core::CoreError;

#[path = "common/sim.rs"]
mod sim;
use sim::{fake_sha256, NS};

/// A cache: path → (bytes, mtime).
type Cache = BTreeMap<String, (Vec<u8>, i64)>;

/// What the pull and the push do.
#[derive(Debug, Default, Clone)]
struct World {
    pull_failed: Vec<String>,
    pushed: ResolvePushed,
    /// A copy removed by a person between the plan and the restore.
    copy_vanishes: Option<String>,
}

#[derive(Debug)]
struct Resolved {
    actions: Vec<ResolveAction>,
    result: Result<ResolveResult, CoreError>,
}

fn model() -> PathModel {
    PathModel::new(Some(NS), "").unwrap()
}

fn copy_of(rel: &str, bytes: &[u8]) -> String {
    conflict_copy_path(&format!("{NS}/{rel}"), &fake_sha256(bytes)).unwrap()
}

/// Drives one resolve over `cache`, doing each action as the shim does.
fn run(cache: &mut Cache, keep: &str, rels: &[&str], world: &World) -> Resolved {
    let request = ResolveRequest {
        keep: keep.to_string(),
        rels: rels.iter().map(|r| r.to_string()).collect(),
    };
    let mut run = ResolveRun::new(model(), request).unwrap();
    let mut actions = Vec::new();
    for _ in 0..16 {
        let action = run.poll();
        actions.push(action.clone());
        let answered = match action {
            ResolveAction::Pull { verify } => {
                assert!(verify, "a resolve's pull compares every file");
                run.on_pulled(&world.pull_failed)
            }
            ResolveAction::Walk => {
                let listing = encode_local(
                    cache
                        .iter()
                        .map(|(p, (b, m))| (p.as_str(), b.len() as u64, Some(*m))),
                );
                run.on_walk(&listing)
            }
            ResolveAction::Restore { files } => {
                if let Some(gone) = &world.copy_vanishes {
                    cache.remove(gone);
                }
                let mut restored = Vec::new();
                for file in files {
                    if let Some((bytes, _)) = cache.get(&file.from).cloned() {
                        cache.insert(file.to.clone(), (bytes, 99));
                        restored.push(file.rel.clone());
                    }
                }
                run.on_restored(&restored)
            }
            ResolveAction::Push { confirm_deletes } => {
                assert!(!confirm_deletes, "a resolve never confirms a delete");
                run.on_pushed(&world.pushed)
            }
            ResolveAction::RemoveCopies { paths } => {
                let removed: Vec<String> = paths
                    .into_iter()
                    .filter(|p| cache.remove(p).is_some())
                    .collect();
                run.on_removed(removed)
            }
            ResolveAction::Done => {
                return Resolved {
                    actions,
                    result: run.result(),
                }
            }
        };
        if let Err(error) = answered {
            return Resolved {
                actions,
                result: Err(error),
            };
        }
    }
    panic!("the resolve did not finish in 16 steps");
}

/// A cache where `data/a.yaml` has two conflict copies (the newer is "mine-2") and
/// `data/b.yaml` one.
fn conflicted() -> Cache {
    let mut cache = Cache::new();
    cache.insert(format!("{NS}/data/a.yaml"), (b"theirs-a".to_vec(), 5));
    cache.insert(copy_of("data/a.yaml", b"mine-1"), (b"mine-1".to_vec(), 1));
    cache.insert(copy_of("data/a.yaml", b"mine-2"), (b"mine-2".to_vec(), 2));
    cache.insert(format!("{NS}/data/b.yaml"), (b"theirs-b".to_vec(), 5));
    cache.insert(copy_of("data/b.yaml", b"mine-b"), (b"mine-b".to_vec(), 1));
    cache
}

fn published() -> ResolvePushed {
    ResolvePushed {
        published: true,
        uploaded: 2,
        ..ResolvePushed::default()
    }
}

#[test]
fn a_failed_pull_resolves_nothing() {
    let mut cache = conflicted();
    let before = cache.clone();
    let world = World {
        pull_failed: vec!["data/x.yaml".into()],
        ..World::default()
    };
    let done = run(&mut cache, "mine", &[], &world);
    let error = done.result.unwrap_err();
    assert_eq!(error.code(), "download-failed");
    assert!(error.to_string().contains("data/x.yaml"), "{error}");
    assert_eq!(cache, before);
    assert_eq!(done.actions, [ResolveAction::Pull { verify: true }]);
}

#[test]
fn keeping_theirs_drops_every_copy_and_pushes_nothing() {
    let mut cache = conflicted();
    let done = run(&mut cache, "theirs", &[], &World::default());
    let result = done.result.unwrap();
    assert_eq!(result.removed.len(), 3);
    assert!(result.restored.is_empty());
    assert!(!done
        .actions
        .iter()
        .any(|a| matches!(a, ResolveAction::Push { .. })));
    assert_eq!(cache[&format!("{NS}/data/a.yaml")].0, b"theirs-a");
    assert_eq!(cache.len(), 2);
}

#[test]
fn keeping_mine_restores_the_newest_copy_and_removes_copies_once_published() {
    let mut cache = conflicted();
    let world = World {
        pushed: published(),
        ..World::default()
    };
    let result = run(&mut cache, "mine", &["data/a.yaml"], &world)
        .result
        .unwrap();
    assert_eq!(cache[&format!("{NS}/data/a.yaml")].0, b"mine-2");
    assert_eq!(result.restored.len(), 1);
    assert_eq!(result.removed.len(), 2, "both copies of a");
    assert!(
        cache.contains_key(&copy_of("data/b.yaml", b"mine-b")),
        "b was not asked for"
    );
}

#[test]
fn copies_stay_when_the_version_did_not_reach_the_bucket() {
    for pushed in [
        ResolvePushed {
            published: false,
            uploaded: 2,
            ..ResolvePushed::default()
        },
        ResolvePushed {
            conflicts: vec!["data/a.yaml".into()],
            ..published()
        },
        ResolvePushed {
            failed: vec!["data/a.yaml".into()],
            ..published()
        },
    ] {
        let mut cache = conflicted();
        let world = World {
            pushed: pushed.clone(),
            ..World::default()
        };
        let result = run(&mut cache, "mine", &[], &world).result.unwrap();
        assert!(
            cache.contains_key(&copy_of("data/a.yaml", b"mine-2")),
            "{pushed:?}"
        );
        assert_eq!(
            result.still_in_conflict,
            if pushed.conflicts.is_empty() {
                vec![]
            } else {
                vec!["data/a.yaml".to_string()]
            }
        );
    }
}

#[test]
fn a_copy_gone_before_the_restore_is_not_settled_and_unknown_files_are_named() {
    let mut cache = conflicted();
    let world = World {
        pushed: published(),
        copy_vanishes: Some(copy_of("data/a.yaml", b"mine-2")),
        ..World::default()
    };
    let result = run(
        &mut cache,
        "mine",
        &["data/a.yaml", "data/none.yaml"],
        &world,
    )
    .result
    .unwrap();
    assert!(result.restored.is_empty());
    assert!(result.removed.is_empty());
    assert!(cache.contains_key(&copy_of("data/a.yaml", b"mine-1")));
    assert_eq!(result.unknown, ["data/none.yaml"]);
}

#[test]
fn bad_requests_and_calls_out_of_order_are_input_errors() {
    let bad = ResolveRequest {
        keep: "both".into(),
        rels: vec![],
    };
    assert!(ResolveRun::new(model(), bad).is_err());
    let mut run = ResolveRun::new(
        model(),
        ResolveRequest {
            keep: "mine".into(),
            rels: vec!["../escape".into()],
        },
    )
    .unwrap();
    assert!(run.result().is_err());
    assert!(run.on_walk(b"").is_err());
    assert!(run.on_restored(&[]).is_err());
    assert!(run.on_pushed(&published()).is_err());
    assert!(run.on_removed(vec![]).is_err());
    assert_eq!(run.poll(), ResolveAction::Pull { verify: true });
    run.on_pulled(&[]).unwrap();
    assert_eq!(run.poll(), ResolveAction::Walk);
    assert_eq!(
        run.on_walk(&encode_local([])).unwrap_err().code(),
        "path-dot-segment"
    );
}
