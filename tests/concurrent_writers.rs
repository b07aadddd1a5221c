//! Two writers at once, explored step by step in the simulation (`tests/common/sim.rs`).
//!
//! Each case lets cache B push (in one go, or as swamp core's prepare and commit) while cache A's
//! whole run (a push, or a pull) is slipped in before each of the steps B's push machine asks
//! for, one interleaving per step: every interleaving of A's run, taken as one block, with the
//! steps of B's. With three writers, A's and C's pushes go before any two of B's steps. After the race both caches go on as swamp
//! would (pull, push, pull each), and then, and after every step on the way:
//!
//! - no version without a descendant has disappeared: each is in the bucket, in a cache, or in a
//!   cache's conflict folder;
//! - the index never names bytes the bucket does not hold (an entry with a hash names an object
//!   with those bytes; every entry names an object of its size).
//!
//! The bound: two or three caches, one or two files, the other writers' runs atomic, B's split at
//! every step (up to 16).
//! The planted bug (object writes and deletes sent unconditionally, as before this change) must
//! fail the same checks in at least one interleaving, or the checks prove nothing.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::runs::push::machine::{PushAction, PushRunRequest};

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
    caches: Vec<Cache>,
    /// Versions without a descendant: bytes → rel.
    alive: BTreeMap<Vec<u8>, String>,
}

impl World {
    /// A bucket holding `files`, two caches pulled from it.
    fn new(files: &[(&str, &[u8])]) -> World {
        World::with_caches(files, 2)
    }

    /// A bucket holding `files`, `n` caches pulled from it.
    fn with_caches(files: &[(&str, &[u8])], n: usize) -> World {
        let objects: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), bytes.to_vec()))
            .collect();
        let indexed: BTreeMap<String, u64> = files
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), bytes.len() as u64))
            .collect();
        let mut bucket = Bucket::with_datastore(&objects, &indexed);
        let mut caches = vec![Cache::default(); n];
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

/// Runs B's push (cache 1; two-phase when `two_phase`) with the `peers`' runs slipped in, each
/// `(cache, run, step)` before B's step `step`, then every cache settles (pull, push, pull each,
/// checked after every run). `Ok(false)` when B's push ended before a peer's step (no more
/// interleavings there).
fn interleave(
    world: &mut World,
    peers: &[(usize, Peer, usize)],
    two_phase: bool,
    faults: &PushFaults,
) -> Result<bool, String> {
    let mut others: Vec<(usize, Cache)> = peers
        .iter()
        .map(|(c, _, _)| (*c, world.caches[*c].clone()))
        .collect();
    let mut b = world.caches[1].clone();
    let mut step = 0;
    let mut slipped = 0;
    run_push_with(
        &mut world.bucket,
        &mut b,
        PushRunRequest {
            two_phase,
            ..PushRunRequest::default()
        },
        faults,
        &mut |action: &PushAction, bucket: &mut Bucket| {
            if !matches!(action, PushAction::Done) {
                for (i, (_, peer, at)) in peers.iter().enumerate() {
                    if *at != step {
                        continue;
                    }
                    slipped += 1;
                    let cache = &mut others[i].1;
                    match peer {
                        Peer::Push => {
                            run_push(bucket, cache, PushRunRequest::default(), faults).unwrap();
                        }
                        Peer::Pull => {
                            run_pull(bucket, cache, &PullFaults::default(), false);
                        }
                    }
                }
            }
            step += 1;
        },
    )
    .map_err(|e| format!("B's push failed: {e}"))?;
    world.caches[1] = b;
    for (c, cache) in others {
        world.caches[c] = cache;
    }
    if slipped < peers.len() {
        return Ok(false);
    }
    world.check("after the race")?;
    for round in 0..2 {
        for c in 0..world.caches.len() {
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

/// Every interleaving of one race (A's run before each of B's steps); returns how many ran, or
/// the first failure.
fn explore(
    setup: &dyn Fn() -> World,
    peer: Peer,
    two_phase: bool,
    faults: &PushFaults,
) -> Result<usize, String> {
    for at in 0..16 {
        let mut world = setup();
        match interleave(&mut world, &[(0, peer, at)], two_phase, faults) {
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
            // B's push in one go, and as swamp core's prepare and commit.
            for two_phase in [false, true] {
                match explore(&setup, peer, two_phase, &PushFaults::default()) {
                    Ok(n) => {
                        assert!(n >= 6, "{name}: only {n} interleavings");
                        explored += n;
                    }
                    Err(failure) => panic!("{name} (two-phase {two_phase}): {failure}"),
                }
            }
        }
    }
    println!("{explored} interleavings explored, none lost a version");
}

/// Three writers: A's and C's whole pushes slipped in before any two of B's steps (the same step
/// too, one after the other), the same file edited by all three.
#[test]
fn no_interleaving_of_three_writers_loses_a_version() {
    let setup = || {
        let mut world = World::with_caches(&[(F, b"v0"), (G, b"g0")], 3);
        world.edit(0, F, b"from A");
        world.edit(1, F, b"from B!");
        world.edit(2, F, b"from C!!");
        world.edit(2, G, b"C's g");
        world
    };
    let mut explored = 0;
    for at_a in 0..16 {
        for at_c in 0..16 {
            let mut world = setup();
            let peers = [(0, Peer::Push, at_a), (2, Peer::Push, at_c)];
            match interleave(&mut world, &peers, false, &PushFaults::default()) {
                Ok(true) => explored += 1,
                Ok(false) => {}
                Err(failure) => panic!("A before {at_a}, C before {at_c}: {failure}"),
            }
        }
    }
    assert!(explored >= 36, "only {explored} interleavings");
    println!("{explored} three-writer interleavings explored, none lost a version");
}

#[test]
fn the_planted_bug_unconditional_writes_is_caught() {
    let planted = PushFaults {
        unconditional: true,
        ..PushFaults::default()
    };
    let caught: Vec<&str> = RACES
        .iter()
        .filter(|(_, setup)| explore(setup, Peer::Push, false, &planted).is_err())
        .map(|(name, _)| *name)
        .collect();
    assert!(
        !caught.is_empty(),
        "unconditional object writes passed every race: the checks prove nothing"
    );
    println!("the planted bug is caught in: {caught:?}");
}
