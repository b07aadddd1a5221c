//! Two writers at once, explored step by step in the simulation (`tests/common/sim.rs`).
//!
//! Each case lets cache B push while cache A's whole run (a push, or a pull) is slipped in before
//! each of the steps B's push machine asks for, one interleaving per step: every interleaving of
//! A's run, taken as one block, with the steps of B's. After the race both caches go on as swamp
//! would (pull, push, pull each), and then, and after every step on the way:
//!
//! - no version without a descendant has disappeared: each is in the bucket, in a cache, or in a
//!   cache's conflict folder;
//! - the index never names bytes the bucket does not hold (an entry with a hash names an object
//!   with those bytes; every entry names an object of its size).
//!
//! The bound: two caches, one or two files, A's run atomic, B's split at every step (up to 12).
//! The planted bug (object writes and deletes sent unconditionally, as before this change) must
//! fail the same checks in at least one interleaving, or the checks prove nothing.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::push_machine::{PushAction, PushRunRequest};

#[path = "common/sim.rs"]
mod sim;
use sim::{
    fake_sha256, run_pull, run_push, run_push_with, Bucket, Cache, PullFaults, PushFaults,
    INDEX_KEY, NS,
};

/// What cache A does while B pushes.
#[derive(Clone, Copy, Debug)]
enum Peer {
    Push,
    Pull,
}

/// Where the world stands after one interleaving.
struct World {
    bucket: Bucket,
    caches: [Cache; 2],
    /// Versions without a descendant: bytes → rel.
    alive: BTreeMap<Vec<u8>, String>,
}

impl World {
    /// A bucket holding `files`, both caches pulled from it.
    fn new(files: &[(&str, &[u8])]) -> World {
        let objects: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), bytes.to_vec()))
            .collect();
        let indexed: BTreeMap<String, u64> = files
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), bytes.len() as u64))
            .collect();
        let mut bucket = Bucket::with_datastore(&objects, &indexed);
        let mut caches = [Cache::default(), Cache::default()];
        for cache in &mut caches {
            run_pull(&mut bucket, cache, &PullFaults::default(), false);
        }
        let alive = objects.into_iter().map(|(r, b)| (b, r)).collect();
        World {
            bucket,
            caches,
            alive,
        }
    }

    /// Cache `c` edits `rel` to `bytes` (superseding the version it held there).
    fn edit(&mut self, c: usize, rel: &str, bytes: &[u8]) {
        if let Some(seen) = self.caches[c].data(rel) {
            self.alive.remove(seen);
        }
        self.caches[c].edit(rel, bytes);
        self.alive.insert(bytes.to_vec(), rel.to_string());
    }

    /// Cache `c` deletes `rel` on purpose (the version it held is superseded by the delete).
    fn delete(&mut self, c: usize, rel: &str) {
        if let Some(seen) = self.caches[c].data(rel) {
            self.alive.remove(seen);
        }
        self.caches[c].delete_marked(rel);
    }

    /// The two checks of the module doc; `Err` names what broke.
    fn check(&self, when: &str) -> Result<(), String> {
        for (bytes, rel) in &self.alive {
            let key = format!("{NS}/{rel}");
            let in_bucket = self
                .bucket
                .objects
                .get(&key)
                .is_some_and(|(b, _)| b == bytes);
            let in_a_cache = self
                .caches
                .iter()
                .any(|c| c.files.values().any(|(b, _)| b == bytes));
            if !in_bucket && !in_a_cache {
                return Err(format!(
                    "{when}: {:?} of {rel} lost",
                    String::from_utf8_lossy(bytes)
                ));
            }
        }
        let index: serde_json::Value =
            serde_json::from_slice(&self.bucket.objects[INDEX_KEY].0).unwrap();
        for (rel, entry) in index["entries"].as_object().unwrap() {
            let Some((bytes, _)) = self.bucket.objects.get(&format!("{NS}/{rel}")) else {
                return Err(format!(
                    "{when}: the index names {rel}, the bucket has no object"
                ));
            };
            if entry["size"].as_u64() != Some(bytes.len() as u64) {
                return Err(format!(
                    "{when}: the index's size of {rel} is not its object's"
                ));
            }
            if let Some(sha) = entry["sha256"].as_str() {
                if sha != fake_sha256(bytes) {
                    return Err(format!("{when}: the index names other bytes for {rel}"));
                }
            }
        }
        Ok(())
    }
}

/// Runs B's push with A's `peer` run slipped in before B's step `at`, then both caches settle
/// (pull, push, pull each, checked after every run). `Ok(false)` when B's push ended before
/// step `at` (no more interleavings).
fn interleave(
    world: &mut World,
    peer: Peer,
    at: usize,
    faults: &PushFaults,
) -> Result<bool, String> {
    let World { bucket, caches, .. } = world;
    let [a, b] = caches;
    let mut step = 0;
    let mut slipped = false;
    run_push_with(
        bucket,
        b,
        PushRunRequest::default(),
        faults,
        &mut |action: &PushAction, bucket: &mut Bucket| {
            if step == at && !slipped && !matches!(action, PushAction::Done) {
                slipped = true;
                match peer {
                    Peer::Push => {
                        run_push(bucket, a, PushRunRequest::default(), faults).unwrap();
                    }
                    Peer::Pull => {
                        run_pull(bucket, a, &PullFaults::default(), false);
                    }
                }
            }
            step += 1;
        },
    )
    .map_err(|e| format!("B's push failed: {e}"))?;
    if !slipped {
        return Ok(false);
    }
    world.check("after the race")?;
    for round in 0..2 {
        for c in 0..2 {
            run_pull(
                &mut world.bucket,
                &mut world.caches[c],
                &PullFaults::default(),
                false,
            );
            world.check(&format!("after pull {round} of cache {c}"))?;
            run_push(
                &mut world.bucket,
                &mut world.caches[c],
                PushRunRequest::default(),
                faults,
            )
            .map_err(|e| format!("push {round} of cache {c} failed: {e}"))?;
            world.check(&format!("after push {round} of cache {c}"))?;
        }
    }
    Ok(true)
}

/// Every interleaving of one race; returns how many ran, or the first failure.
fn explore(setup: &dyn Fn() -> World, peer: Peer, faults: &PushFaults) -> Result<usize, String> {
    for at in 0..16 {
        let mut world = setup();
        match interleave(&mut world, peer, at, faults) {
            Ok(true) => {}
            Ok(false) => return Ok(at),
            Err(failure) => return Err(format!("{peer:?} before B's step {at}: {failure}")),
        }
    }
    Err("B's push did not end in 16 steps".into())
}

const F: &str = "data/m/1/raw";
const G: &str = "data/m/2/raw";

fn same_file_edited_on_both() -> World {
    let mut world = World::new(&[(F, b"v0"), (G, b"g0")]);
    world.edit(0, F, b"from A");
    world.edit(1, F, b"from B!");
    world
}

fn same_file_same_size_on_both() -> World {
    let mut world = World::new(&[(F, b"v0"), (G, b"g0")]);
    world.edit(0, F, b"AAAA");
    world.edit(1, F, b"BBBB");
    world
}

fn different_files_edited() -> World {
    let mut world = World::new(&[(F, b"v0"), (G, b"g0")]);
    world.edit(0, G, b"A's g");
    world.edit(1, F, b"B's f");
    world
}

fn deleted_here_edited_there() -> World {
    let mut world = World::new(&[(F, b"v0"), (G, b"g0")]);
    world.edit(0, F, b"A's edit");
    world.delete(1, F);
    world
}

fn edited_here_deleted_there() -> World {
    let mut world = World::new(&[(F, b"v0"), (G, b"g0")]);
    world.delete(0, F);
    world.edit(1, F, b"B's edit");
    world
}

fn new_file_on_both() -> World {
    let mut world = World::new(&[(G, b"g0")]);
    world.edit(0, F, b"A's new");
    world.edit(1, F, b"B's new!");
    world
}

type Setup = fn() -> World;

const RACES: [(&str, Setup); 6] = [
    ("the same file edited on both", same_file_edited_on_both),
    (
        "the same file, same size, on both",
        same_file_same_size_on_both,
    ),
    ("different files edited", different_files_edited),
    ("deleted here, edited there", deleted_here_edited_there),
    ("edited here, deleted there", edited_here_deleted_there),
    ("the same new file on both", new_file_on_both),
];

#[test]
fn no_interleaving_of_two_writers_loses_a_version() {
    let mut explored = 0;
    for (name, setup) in RACES {
        for peer in [Peer::Push, Peer::Pull] {
            match explore(&setup, peer, &PushFaults::default()) {
                Ok(n) => {
                    assert!(n >= 6, "{name}: only {n} interleavings");
                    explored += n;
                }
                Err(failure) => panic!("{name}: {failure}"),
            }
        }
    }
    println!("{explored} interleavings explored, none lost a version");
}

#[test]
fn the_planted_bug_unconditional_writes_is_caught() {
    let planted = PushFaults {
        unconditional: true,
        ..PushFaults::default()
    };
    let caught: Vec<&str> = RACES
        .iter()
        .filter(|(_, setup)| explore(setup, Peer::Push, &planted).is_err())
        .map(|(name, _)| *name)
        .collect();
    assert!(
        !caught.is_empty(),
        "unconditional object writes passed every race: the checks prove nothing"
    );
    println!("the planted bug is caught in: {caught:?}");
}
