//! Whole repairs driven natively through the state machine (`RepairRun`) against a simulated
//! cache: the dry run touches nothing, an applied repair moves, removes, backs up, hydrates and
//! deduplicates in the order a rerun can roll forward, the journal says `complete` only when
//! nothing was refused or left, a file that appears at a move's target stops the repair, and a
//! property: whatever the mixed cache holds, no byte is lost. Native only: proptest does not
//! build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Map};

use s3sync_core::runs::repair::machine::{
    journal_path, RepairAction, RepairRequest, RepairResult, RepairRun, RepairStep, StepResult,
};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;
use s3sync_core::CoreError;

#[path = "common/sim.rs"]
mod sim;
use sim::{fake_sha256, NS};

const NOW: &str = "2026-12-01T00:00:00.000Z";
const LATER: &str = "2026-12-01T00:05:00.000Z";

/// The remote side: rel → (bytes, whether the index records the hash).
type Remote = BTreeMap<String, (Vec<u8>, bool)>;

/// What a simulated person or file system does during the repair.
#[derive(Debug, Default, Clone)]
struct Faults {
    /// Cache paths behind a symlinked folder: steps on them are refused.
    symlinked: BTreeSet<String>,
    /// A file written at this path right before the moves (it "appears while repairing").
    appears: Option<String>,
}

/// What the driver saw.
#[derive(Debug)]
struct Repaired {
    actions: Vec<RepairAction>,
    result: Result<RepairResult, CoreError>,
}

fn index_json(remote: &Remote) -> Vec<u8> {
    let mut entries = Map::new();
    for (rel, (bytes, hashed)) in remote {
        let mut entry =
            json!({"key": rel, "size": bytes.len(), "lastModified": "2026-11-01T00:00:00.000Z"});
        if *hashed {
            entry["sha256"] = json!(fake_sha256(bytes));
        }
        entries.insert(rel.clone(), entry);
    }
    serde_json::to_vec(&json!({"version": 1, "entries": entries})).unwrap()
}

fn listing(cache: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    encode_local(
        cache
            .iter()
            .map(|(p, b)| (p.as_str(), b.len() as u64, Some(1))),
    )
}

/// Drives one repair to its end over `cache`, doing each action as the shim does. It decides
/// nothing: a refused step is one the faults name, an occupied move one whose target exists.
fn run(
    cache: &mut BTreeMap<String, Vec<u8>>,
    remote: &Remote,
    apply: bool,
    faults: &Faults,
) -> Repaired {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = RepairRun::new(RepairRequest { apply }, NOW);
    let mut actions = Vec::new();
    for _ in 0..32 {
        let action = run.poll();
        actions.push(action.clone());
        let answered = match action {
            RepairAction::ReadJournal { path } => {
                run.on_journal(cache.get(&path).map(Vec::as_slice), None)
            }
            RepairAction::LoadIndex => {
                session.load_index(&index_json(remote)).unwrap();
                run.on_index()
            }
            RepairAction::Walk => run.on_walk(&session, &listing(cache), &[]),
            RepairAction::Hash { paths } => {
                let hashes = paths
                    .iter()
                    .filter_map(|p| cache.get(p).map(|b| (p.clone(), fake_sha256(b))))
                    .collect();
                run.on_hashes(&session, &hashes)
            }
            RepairAction::Apply { steps, .. } => {
                if let Some(path) = &faults.appears {
                    cache.entry(path.clone()).or_insert_with(|| b"new".to_vec());
                }
                let results: Vec<StepResult> =
                    steps.iter().map(|s| apply_step(cache, s, faults)).collect();
                run.on_applied(&results)
            }
            RepairAction::Hydrate => {
                let mut failures = 0;
                for (rel, (bytes, _)) in remote {
                    let path = format!("{NS}/{rel}");
                    if faults.symlinked.contains(&path) {
                        failures += 1;
                    } else {
                        cache.entry(path).or_insert_with(|| bytes.clone());
                    }
                }
                run.on_hydrated(failures, LATER)
            }
            RepairAction::Done => {
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
    panic!("the repair did not finish in 32 steps");
}

fn apply_step(
    cache: &mut BTreeMap<String, Vec<u8>>,
    step: &RepairStep,
    faults: &Faults,
) -> StepResult {
    let touched = match step {
        RepairStep::WriteJournal { path, .. }
        | RepairStep::Remove { path }
        | RepairStep::RemoveTree { path } => path,
        RepairStep::Move { from, .. } => from,
    };
    if faults.symlinked.contains(touched) {
        return StepResult::Refused {
            message: format!("{touched}: a folder in its path is a symlink"),
        };
    }
    match step {
        RepairStep::WriteJournal { path, body } => {
            cache.insert(path.clone(), body.as_bytes().to_vec());
        }
        RepairStep::Move { from, to } => {
            if cache.contains_key(to) {
                return StepResult::Occupied;
            }
            let bytes = cache.remove(from).expect("a planned move's source exists");
            cache.insert(to.clone(), bytes);
        }
        RepairStep::Remove { path } => {
            cache.remove(path);
        }
        RepairStep::RemoveTree { path } => {
            if cache.keys().any(|p| p.starts_with(&format!("{path}/"))) {
                return StepResult::Occupied;
            }
        }
    }
    StepResult::Done
}

fn journal_status(cache: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    let bytes = cache.get(&journal_path())?;
    let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    value["status"].as_str().map(str::to_string)
}

/// The first seed's cache: data at the root beside the namespace folder.
fn mixed() -> (BTreeMap<String, Vec<u8>>, Remote) {
    let remote: Remote = [
        ("data/a.yaml", "same", true),
        ("data/b.yaml", "only-here", true),
        ("data/c.yaml", "theirs", true),
        ("data/d.yaml", "remote-only", false),
    ]
    .iter()
    .map(|(rel, bytes, hashed)| (rel.to_string(), (bytes.as_bytes().to_vec(), *hashed)))
    .collect();
    let cache: BTreeMap<String, Vec<u8>> = [
        ("data/a.yaml", "same"),
        ("ns/data/a.yaml", "same"),
        ("data/b.yaml", "only-here"),
        ("data/c.yaml", "mine!!"),
        ("ns/data/c.yaml", "theirs"),
        // A backup an earlier repair kept (the index had no hash): the hydration brings the
        // same bytes down, so the dedupe proves it redundant.
        (".s3sync-repair/backup/data/d.yaml", "remote-only"),
    ]
    .iter()
    .map(|(p, b)| (p.to_string(), b.as_bytes().to_vec()))
    .collect();
    (cache, remote)
}

#[test]
fn a_dry_run_plans_and_touches_nothing() {
    let (mut cache, remote) = mixed();
    let before = cache.clone();
    let done = run(&mut cache, &remote, false, &Faults::default());
    let result = done.result.unwrap();
    assert!(!result.applied && !result.complete);
    assert_eq!(result.plan.summary.move_into_namespace, 1);
    assert_eq!(result.plan.summary.remove_redundant, 1);
    assert_eq!(result.plan.summary.backup, 1);
    assert!(done
        .actions
        .iter()
        .any(|a| matches!(a, RepairAction::Hash { .. })));
    assert!(!done
        .actions
        .iter()
        .any(|a| matches!(a, RepairAction::Apply { .. } | RepairAction::Hydrate)));
    assert_eq!(cache, before);
}

#[test]
fn an_applied_repair_moves_removes_backs_up_hydrates_and_dedupes() {
    let (mut cache, remote) = mixed();
    let done = run(&mut cache, &remote, true, &Faults::default());
    let result = done.result.unwrap();
    assert!(result.applied && result.complete && !result.resumed);
    assert_eq!(cache["ns/data/b.yaml"], b"only-here");
    assert_eq!(cache["ns/data/a.yaml"], b"same");
    assert_eq!(cache["ns/data/c.yaml"], b"theirs");
    assert_eq!(cache[".s3sync-repair/backup/data/c.yaml"], b"mine!!");
    assert_eq!(cache["ns/data/d.yaml"], b"remote-only");
    assert!(!cache.contains_key(".s3sync-repair/backup/data/d.yaml"));
    assert_eq!(result.deduped_backups, 1);
    assert!(!cache.keys().any(|p| p.starts_with("data/")), "{cache:?}");
    assert_eq!(journal_status(&cache).as_deref(), Some("complete"));
    // The journal goes first, and `running`, so a repair killed at any step rolls forward.
    let Some(RepairAction::Apply { steps, narration }) = done
        .actions
        .iter()
        .find(|a| matches!(a, RepairAction::Apply { .. }))
    else {
        panic!("no apply");
    };
    assert!(
        matches!(&steps[0], RepairStep::WriteJournal { body, .. } if body.contains("\"running\""))
    );
    assert_eq!(narration, &None);
}

#[test]
fn a_repair_that_was_interrupted_is_rolled_forward() {
    let (mut cache, remote) = mixed();
    cache.insert(journal_path(), br#"{"status": "running"}"#.to_vec());
    let done = run(&mut cache, &remote, true, &Faults::default());
    let result = done.result.unwrap();
    assert!(result.resumed && result.complete);
    assert!(done.actions.iter().any(|a| matches!(
        a,
        RepairAction::Apply { narration: Some(n), .. } if n.contains("rolling it forward")
    )));
    // A journal that cannot be read was not written complete either.
    let (mut cache, remote) = mixed();
    cache.insert(journal_path(), b"{\"status\": \"runn".to_vec());
    assert!(
        run(&mut cache, &remote, false, &Faults::default())
            .result
            .unwrap()
            .resumed
    );
    // One that says complete is history.
    let (mut cache, remote) = mixed();
    cache.insert(journal_path(), br#"{"status": "complete"}"#.to_vec());
    assert!(
        !run(&mut cache, &remote, false, &Faults::default())
            .result
            .unwrap()
            .resumed
    );
}

#[test]
fn a_refused_step_is_reported_the_rest_goes_on_and_the_journal_stays_running() {
    let (mut cache, remote) = mixed();
    let faults = Faults {
        symlinked: ["data/c.yaml".to_string()].into(),
        appears: None,
    };
    let result = run(&mut cache, &remote, true, &faults).result.unwrap();
    assert_eq!(result.refused.len(), 1);
    assert_eq!(result.refused[0].item, "data/c.yaml");
    assert_eq!(result.refused[0].code.as_str(), "symlink-in-path");
    assert_eq!(cache["data/c.yaml"], b"mine!!", "the refused file stays");
    assert_eq!(cache["ns/data/b.yaml"], b"only-here", "the rest went on");
    assert!(result.left_trees.contains(&"data".to_string()));
    assert!(!result.complete);
    assert_eq!(journal_status(&cache).as_deref(), Some("running"));
}

#[test]
fn a_failed_hydration_leaves_the_journal_running() {
    let (mut cache, remote) = mixed();
    let faults = Faults {
        symlinked: ["ns/data/d.yaml".to_string()].into(),
        appears: None,
    };
    let result = run(&mut cache, &remote, true, &faults).result.unwrap();
    assert!(!result.complete);
    assert_eq!(journal_status(&cache).as_deref(), Some("running"));
}

#[test]
fn a_file_that_appears_at_a_move_target_stops_the_repair_and_is_kept() {
    let (mut cache, remote) = mixed();
    let faults = Faults {
        symlinked: BTreeSet::new(),
        appears: Some("ns/data/b.yaml".to_string()),
    };
    let done = run(&mut cache, &remote, true, &faults);
    let error = done.result.unwrap_err();
    assert_eq!(error.code(), "repair-conflict");
    assert!(error.to_string().contains("ns/data/b.yaml"), "{error}");
    assert_eq!(cache["ns/data/b.yaml"], b"new", "never overwritten");
    assert_eq!(cache["data/b.yaml"], b"only-here", "the only copy stays");
    assert!(!done
        .actions
        .iter()
        .any(|a| matches!(a, RepairAction::Hydrate)));
}

#[test]
fn a_file_that_vanishes_before_it_is_hashed_stops_the_plan() {
    let (cache, remote) = mixed();
    let mut session = Session::new(Some(NS), "").unwrap();
    session.load_index(&index_json(&remote)).unwrap();
    let mut run = RepairRun::new(RepairRequest { apply: true }, NOW);
    assert!(matches!(run.poll(), RepairAction::ReadJournal { .. }));
    run.on_journal(None, None).unwrap();
    assert!(matches!(run.poll(), RepairAction::LoadIndex));
    run.on_index().unwrap();
    assert!(matches!(run.poll(), RepairAction::Walk));
    run.on_walk(&session, &listing(&cache), &[]).unwrap();
    let RepairAction::Hash { paths } = run.poll() else {
        panic!("no hash asked");
    };
    assert!(!paths.is_empty());
    let error = run.on_hashes(&session, &BTreeMap::new()).unwrap_err();
    assert_eq!(error.code(), "walk-error");
}

#[test]
fn a_cache_that_cannot_all_be_read_is_not_planned_on() {
    let mut session = Session::new(Some(NS), "").unwrap();
    session.load_index(&index_json(&Remote::new())).unwrap();
    let mut run = RepairRun::new(RepairRequest { apply: true }, NOW);
    run.poll();
    run.on_journal(None, None).unwrap();
    run.poll();
    run.on_index().unwrap();
    run.poll();
    let error = run
        .on_walk(&session, b"", &["data/x: permission denied".to_string()])
        .unwrap_err();
    assert_eq!(error.code(), "walk-error");
    assert!(error.to_string().contains("permission denied"), "{error}");
}

#[test]
fn calls_out_of_order_and_wrong_result_counts_are_input_errors() {
    let session = Session::new(Some(NS), "").unwrap();
    let mut run = RepairRun::new(RepairRequest { apply: true }, NOW);
    assert!(run.result().is_err());
    assert!(run.on_index().is_err());
    assert!(run.on_walk(&session, b"", &[]).is_err());
    assert!(run.on_hashes(&session, &BTreeMap::new()).is_err());
    assert!(run.on_applied(&[]).is_err());
    assert!(run.on_hydrated(0, LATER).is_err());
    let (mut cache, remote) = mixed();
    let mut session = Session::new(Some(NS), "").unwrap();
    session.load_index(&index_json(&remote)).unwrap();
    run.poll();
    run.on_journal(None, None).unwrap();
    run.poll();
    run.on_index().unwrap();
    run.poll();
    cache.retain(|p, _| p != "data/a.yaml");
    run.on_walk(&session, &listing(&cache), &[]).unwrap();
    while let RepairAction::Hash { paths } = run.poll() {
        let hashes = paths
            .iter()
            .map(|p| (p.clone(), fake_sha256(&cache[p])))
            .collect();
        run.on_hashes(&session, &hashes).unwrap();
    }
    assert!(matches!(run.poll(), RepairAction::Apply { .. }));
    assert_eq!(
        run.on_applied(&[StepResult::Done]).unwrap_err().code(),
        "invalid-input"
    );
}

/// A random mixed cache: for each rel, maybe a root-level copy, maybe a namespace copy, maybe
/// a remote copy (hash recorded or not); contents from a small alphabet so sizes and bytes
/// collide.
fn mixed_cache() -> impl Strategy<Value = (BTreeMap<String, Vec<u8>>, Remote)> {
    const RELS: &[&str] = &[
        "data/m/1/raw",
        "data/m/2/raw",
        "outputs/o/1/raw",
        "workflow-runs/w/run-1.yaml",
        "logs/run-1.log",
        "files/f.txt",
    ];
    let content = prop::sample::select(vec!["a", "b", "ab", "ba", "abc"]);
    let slot = (
        prop::option::of(content.clone()),
        prop::option::of(content.clone()),
        prop::option::of((content, any::<bool>())),
    );
    prop::collection::vec(slot, RELS.len()).prop_map(|slots| {
        let mut cache = BTreeMap::new();
        let mut remote = Remote::new();
        for (rel, (root, ns, rem)) in RELS.iter().zip(slots) {
            if let Some(c) = root {
                cache.insert(rel.to_string(), c.as_bytes().to_vec());
            }
            if let Some(c) = ns {
                cache.insert(format!("{NS}/{rel}"), c.as_bytes().to_vec());
            }
            if let Some((c, hashed)) = rem {
                remote.insert(rel.to_string(), (c.as_bytes().to_vec(), hashed));
            }
        }
        (cache, remote)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Whatever the mixed cache holds, an applied repair loses no version: every content a
    /// root-level or namespace file held is still held at its namespace path or in the backup
    /// folder (or the remote holds exactly it); no root-layout data is left; the journal says
    /// complete; and a second run finds nothing to do.
    #[test]
    fn a_repair_loses_no_version((mut cache, remote) in mixed_cache()) {
        let before = cache.clone();
        let result = run(&mut cache, &remote, true, &Faults::default()).result.unwrap();
        prop_assert!(result.complete);
        prop_assert!(!cache.keys().any(|p| !p.starts_with("ns/") && !p.starts_with(".s3sync-repair/")), "{:?}", cache);
        for (path, bytes) in &before {
            let rel = path.strip_prefix("ns/").unwrap_or(path);
            let at_home = cache.get(&format!("ns/{rel}")) == Some(bytes);
            let backed_up = cache.iter().any(|(p, b)| {
                p.starts_with(&format!(".s3sync-repair/backup/{path}")) && b == bytes
            });
            let remote_same = remote.get(rel).is_some_and(|(b, _)| b == bytes);
            prop_assert!(at_home || backed_up || remote_same, "{} lost: {:?}", path, cache);
        }
        let again = run(&mut cache, &remote, true, &Faults::default()).result.unwrap();
        prop_assert!(again.plan.move_into_namespace.is_empty() && again.plan.remove_redundant.is_empty() && again.plan.backup.is_empty());
    }
}
