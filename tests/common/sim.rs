//! A simulated bucket and cache, and drivers that run the core's pull and push machines over
//! them the way the shim does (each action done, its result handed back), with injectable
//! faults. The drivers make no decisions of their own.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map};

use s3sync_core::model::file_class::{merge_pointer_with_base, PointerMerge};
use s3sync_core::runs::pull::lookup::{after_not_found, AfterNotFound};
use s3sync_core::runs::pull::machine::{PullAction, PullRequest, PullRun};
use s3sync_core::runs::pull::plan::PullOutcome;
use s3sync_core::runs::pull::plan::Transfer;
use s3sync_core::runs::push::machine::{PushAction, PushRun, PushRunRequest, WalkStats};
use s3sync_core::runs::push::plan::{PushPlan, Uploaded};
use s3sync_core::runs::session::Session;
use s3sync_core::safety::object_condition::{
    judge_existing, judge_lost_condition, ObjectFacts, ObjectVerdict, OurBytes,
};
use s3sync_core::state::sync_state::SyncState;
use s3sync_core::wire::listing::encode_local;
use s3sync_core::CoreError;

/// The namespace every simulated datastore binds.
pub const NS: &str = "ns";
/// Its remote index key.
pub const INDEX_KEY: &str = "ns/.datastore-index.json";
const NOW: &str = "2026-12-01T00:00:00.000Z";

/// An object store in memory: key → (bytes, ETag); every write gets a fresh ETag.
#[derive(Debug, Default, Clone)]
pub struct Bucket {
    pub objects: BTreeMap<String, (Vec<u8>, String)>,
    writes: u64,
    /// Requests by kind.
    pub requests: BTreeMap<&'static str, u64>,
}

impl Bucket {
    /// Writes `bytes` at `key`; returns the new ETag.
    pub fn put(&mut self, key: &str, bytes: Vec<u8>) -> String {
        self.writes += 1;
        let etag = format!("\"e{}\"", self.writes);
        self.objects.insert(key.to_string(), (bytes, etag.clone()));
        etag
    }

    /// Writes `bytes` at `key` only over the copy read (`if_match`; `None`: create-only), as a
    /// conditional PUT does; returns the new ETag, or `None` when the condition failed.
    pub fn put_if(&mut self, key: &str, if_match: Option<&str>, bytes: Vec<u8>) -> Option<String> {
        let current = self.objects.get(key).map(|(_, e)| e.as_str());
        (current == if_match).then(|| self.put(key, bytes))
    }

    /// What a HEAD of `key` answers: size, ETag, and the SHA-256 every upload of this
    /// simulation records in the object's metadata (as the shim's uploads do).
    pub fn head(&self, key: &str) -> ObjectFacts {
        match self.objects.get(key) {
            Some((bytes, etag)) => ObjectFacts {
                exists: true,
                size: Some(bytes.len() as u64),
                etag: Some(etag.clone()),
                sha256: Some(fake_sha256(bytes)),
            },
            None => ObjectFacts::default(),
        }
    }

    /// A listing of every object as the core's buffer, dated `modified`, with or without the
    /// ETags (some servers list none).
    pub fn listing(&self, with_etags: bool, modified: &str) -> Vec<u8> {
        let sizes: Vec<String> = self
            .objects
            .values()
            .map(|(b, _)| b.len().to_string())
            .collect();
        s3sync_core::wire::listing::encode_remote_fields(self.objects.iter().zip(&sizes).map(
            |((key, (_, etag)), size)| {
                let etag = if with_etags { etag.as_str() } else { "" };
                [key.as_str(), size.as_str(), etag, modified]
            },
        ))
    }

    /// The index object as a push reads it (counted), if any.
    pub fn read_index(&mut self) -> Option<(Vec<u8>, String)> {
        self.count("push-get-index");
        self.objects.get(INDEX_KEY).cloned()
    }

    fn count(&mut self, what: &'static str) {
        *self.requests.entry(what).or_default() += 1;
    }

    /// A namespaced datastore holding `files` (rel → bytes) and an index naming `indexed`
    /// (rel → size; a rel indexed without an object is a vanished one).
    pub fn with_datastore(
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

    /// The rels the remote index names.
    pub fn indexed(&self) -> BTreeSet<String> {
        let index: serde_json::Value = serde_json::from_slice(&self.objects[INDEX_KEY].0).unwrap();
        index["entries"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }
}

/// A cache folder in memory: path → (bytes, mtime).
#[derive(Debug, Default, Clone)]
pub struct Cache {
    pub files: BTreeMap<String, (Vec<u8>, i64)>,
    /// Each file's change time and inode, as a real file system keeps them: every write moves
    /// the change time on, whatever the mtime says.
    pub stats: BTreeMap<String, (i64, u64)>,
    clock: i64,
    /// Walks begin right after the last write (within the racy window) instead of ten seconds
    /// later: swamp core pushes right after the command that wrote.
    pub hurried: bool,
}

impl Cache {
    /// Writes a file; returns its mtime.
    pub fn write(&mut self, path: &str, bytes: Vec<u8>) -> i64 {
        self.clock += 1;
        self.files.insert(path.to_string(), (bytes, self.clock));
        // Written as the shim writes: a temp file renamed over the old one, so a new inode.
        self.stats.insert(
            path.to_string(),
            (self.clock, self.clock as u64 + 1_000_000),
        );
        self.clock
    }

    /// Rewrites a file in place and puts its old mtime back (`touch -r`, `cp -p`): size and
    /// mtime as before, only the change time tells.
    pub fn rewrite_keeping_mtime(&mut self, rel: &str, bytes: &[u8]) {
        let path = format!("{NS}/{rel}");
        let mtime = self.files[&path].1;
        let ino = self.stats[&path].1;
        self.clock += 1;
        self.files.insert(path.clone(), (bytes.to_vec(), mtime));
        self.stats.insert(path, (self.clock, ino));
    }

    /// Each listed file's change time and inode, in listing order (`[ctime, ino, …]`).
    pub fn changes(&self) -> Vec<f64> {
        self.files
            .iter()
            .flat_map(|(path, (_, mtime))| {
                let (ctime, ino) = self.stats.get(path).copied().unwrap_or((*mtime, 7));
                [ctime as f64, ino as f64]
            })
            .collect()
    }

    /// When a walk begins: ten seconds after the last change (more than the racy window), or
    /// one millisecond when `hurried`; the clock moves on, so later writes come after it.
    pub fn now_ms(&mut self) -> i64 {
        self.clock += if self.hurried { 1 } else { 10_000 };
        self.clock
    }

    /// Rewrites a file in place with bytes of the same size within the timestamp tick of its
    /// last write: mtime, change time and inode all as before, so no stat can tell (the
    /// "racily clean" case); only its bytes can.
    pub fn rewrite_within_tick(&mut self, rel: &str, bytes: &[u8]) {
        let path = format!("{NS}/{rel}");
        let (old, mtime) = self.files[&path].clone();
        assert_eq!(old.len(), bytes.len(), "a same-size rewrite");
        self.files.insert(path, (bytes.to_vec(), mtime));
    }

    /// The simulated SHA-256 of each of `paths` (`vanished` for a file that is gone), as the
    /// shim answers a `hash` or `verifySeal` action.
    pub fn hashes(&self, paths: &[String]) -> Vec<String> {
        paths
            .iter()
            .map(|p| {
                self.files
                    .get(p)
                    .map_or("vanished".into(), |(b, _)| fake_sha256(b))
            })
            .collect()
    }

    /// Writes a data file of the bound tree, as a person editing it would.
    pub fn edit(&mut self, rel: &str, bytes: &[u8]) {
        self.write(&format!("{NS}/{rel}"), bytes.to_vec());
    }

    /// Deletes a data file and records the tombstone (swamp core's `markDirty`).
    pub fn delete_marked(&mut self, rel: &str) {
        let path = format!("{NS}/{rel}");
        self.files.remove(&path);
        self.mark(&path);
    }

    /// Writes a data file and records the mark, as swamp core does for its catalog export
    /// before every push.
    pub fn edit_marked(&mut self, rel: &str, bytes: &[u8]) {
        self.edit(rel, bytes);
        self.mark(&format!("{NS}/{rel}"));
    }

    /// Records `markDirty` of the cache path `path` in the sidecar.
    fn mark(&mut self, path: &str) {
        let sidecar = self
            .files
            .get(".datastore-sync-state.json")
            .map(|(b, _)| b.clone());
        let mut state = SyncState::for_update(sidecar.as_deref());
        state.record_dirty(Some(path));
        self.write(".datastore-sync-state.json", state.to_json());
    }

    /// Writes `bytes` (this cache's version of `cache_path`) to its conflict copy, named by
    /// content as the shim names it; returns the copy's path.
    pub fn keep_aside(&mut self, cache_path: &str, bytes: Vec<u8>) -> String {
        let copy =
            s3sync_core::safety::conflicts::conflict_copy_path(cache_path, &fake_sha256(&bytes))
                .unwrap();
        self.write(&copy, bytes);
        copy
    }

    /// The bytes of a data file of the bound tree.
    pub fn data(&self, rel: &str) -> Option<&[u8]> {
        self.files
            .get(&format!("{NS}/{rel}"))
            .map(|(b, _)| b.as_slice())
    }

    fn listing(&self) -> Vec<u8> {
        encode_local(
            self.files
                .iter()
                .map(|(p, (b, m))| (p.as_str(), b.len() as u64, Some(*m))),
        )
    }
}

/// A stand-in for SHA-256 (64 hex digits, equal for equal bytes): the core compares hashes, it
/// never computes one.
pub fn fake_sha256(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0..4u64 {
        for b in bytes {
            h = (h ^ u64::from(*b) ^ round).wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// What can go wrong during a pull.
#[derive(Debug, Default, Clone)]
pub struct PullFaults {
    /// Rels whose download fails.
    pub failing: BTreeSet<String>,
    /// Another writer replaces the index between our read and our publish.
    pub index_races: bool,
    /// Rels whose first read answers 404 although the object is there (a replica behind).
    pub flaky_404: BTreeSet<String>,
}

/// What a pull did.
#[derive(Debug, Default)]
pub struct Pulled {
    pub noop: bool,
    pub downloaded: Vec<String>,
    pub not_found: Vec<String>,
    pub published: bool,
    pub conflicts: Vec<String>,
    /// Files removed because another clone deleted them on evidence.
    pub removed: Vec<String>,
    /// Version pointers kept over the bucket's lower one.
    pub kept_pointers: Vec<String>,
}

/// Reads a download's object where the core says to look, as the shim does: its key, then,
/// after each 404, the next place `after_not_found` names, until it says the object is missing.
fn lookup(bucket: &mut Bucket, t: &Transfer, faults: &PullFaults) -> Option<(Vec<u8>, String)> {
    let mut key = t.remote_key.clone();
    for not_found in 1.. {
        bucket.count("get");
        let flaky = not_found == 1 && faults.flaky_404.contains(&t.rel);
        if let Some(found) = bucket.objects.get(&key).filter(|_| !flaky) {
            return Some(found.clone());
        }
        match after_not_found(&t.remote_key, &t.rel, true, not_found) {
            AfterNotFound::Read { key: next, .. } => key = next,
            AfterNotFound::Missing => break,
        }
    }
    None
}

/// Drives one pull to its end.
pub fn run_pull(
    bucket: &mut Bucket,
    cache: &mut Cache,
    faults: &PullFaults,
    verify: bool,
) -> Pulled {
    let mut session = Session::new(Some(NS), "").unwrap();
    let mut run = PullRun::new(PullRequest {
        verify,
        ..PullRequest::default()
    });
    let mut ran = Pulled::default();
    let mut downloads = Vec::new();
    let mut in_the_way = Vec::new();
    let mut removals = Vec::new();
    let mut set_aside = BTreeSet::new();
    let mut pointers = BTreeSet::new();
    let mut base_hashes = BTreeMap::new();
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
                    bucket.put(INDEX_KEY, bytes);
                }
            }
            PullAction::ReadBase { path } => {
                let bytes = cache.files.get(&path).map(|(b, _)| b.clone());
                run.on_base(&mut session, bytes).unwrap();
            }
            PullAction::Walk => {
                let plan = run.on_walk(&mut session, &cache.listing()).unwrap();
                downloads = plan.downloads.clone();
                in_the_way = plan.in_the_way.clone();
                removals = plan.removals.clone();
                set_aside = plan.set_aside.iter().cloned().collect();
                pointers = plan.pointers.iter().cloned().collect();
                base_hashes = plan.base_hashes.clone();
                ran.conflicts = plan.conflicts.clone();
            }
            PullAction::Transfer { folders: _ } => {
                let mut outcome = PullOutcome::default();
                // Files in the way of the bucket's shape go to their conflict copies first.
                for w in &in_the_way {
                    if let Some((mine, _)) = cache.files.remove(&w.cache_path) {
                        let copy = cache.keep_aside(&w.cache_path, mine);
                        outcome
                            .aside
                            .push(s3sync_core::safety::conflicts::KeptAside {
                                rel: w.rel.clone(),
                                copy,
                            });
                    }
                }
                let mut failures = 0;
                for t in &downloads {
                    if faults.failing.contains(&t.rel) {
                        bucket.count("get");
                        failures += 1;
                        continue;
                    }
                    match lookup(bucket, t, faults) {
                        Some((bytes, _)) => {
                            // A pointer changed on both sides merges by value, as the shim
                            // does: only one that is not a version number is a conflict.
                            let mine = cache.files.get(&t.cache_path).map(|(b, _)| b.clone());
                            let verdict = mine
                                .as_deref()
                                .filter(|_| pointers.contains(&t.rel))
                                .map(|mine| {
                                    let unchanged = base_hashes
                                        .get(&t.rel)
                                        .is_some_and(|h| *h == fake_sha256(mine));
                                    merge_pointer_with_base(mine, &bytes, unchanged)
                                });
                            if verdict == Some(PointerMerge::Local) {
                                outcome.hashes.push((t.rel.clone(), fake_sha256(&bytes)));
                                outcome.kept_pointers.push(t.rel.clone());
                                ran.kept_pointers.push(t.rel.clone());
                                continue;
                            }
                            let conflict = set_aside.contains(&t.rel)
                                || verdict == Some(PointerMerge::Conflict);
                            if conflict {
                                if let Some((mine, _)) = cache.files.get(&t.cache_path).cloned() {
                                    if mine != bytes {
                                        let copy = cache.keep_aside(&t.cache_path, mine);
                                        outcome.aside.push(
                                            s3sync_core::safety::conflicts::KeptAside {
                                                rel: t.rel.clone(),
                                                copy,
                                            },
                                        );
                                    }
                                }
                            }
                            let size = bytes.len() as u64;
                            // The shim hashes every download on the way.
                            outcome.hashes.push((t.rel.clone(), fake_sha256(&bytes)));
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
                // Removed only while the stat is the one planned, as the shim does.
                for r in &removals {
                    let still = cache
                        .files
                        .get(&r.cache_path)
                        .is_some_and(|(b, m)| b.len() as u64 == r.size && Some(*m) == r.mtime_ms);
                    if still {
                        cache.files.remove(&r.cache_path);
                        outcome.removed.push(r.rel.clone());
                        ran.removed.push(r.rel.clone());
                    }
                }
                run.on_transfers(&mut session, &outcome, failures, NOW)
                    .unwrap();
            }
            PullAction::PublishIndex { key, if_match } => {
                bucket.count("put-index");
                let etag = bucket.put_if(
                    &key,
                    if_match.as_deref(),
                    session.index_json(false).unwrap(),
                );
                run.on_published(etag.is_some(), etag).unwrap();
            }
            PullAction::WriteLocalIndex { path } => {
                cache.write(&path, session.local_index_after_pull().unwrap());
                let sidecar = cache
                    .files
                    .get(".datastore-sync-state.json")
                    .map(|(b, _)| b.clone());
                run.on_written(&session, sidecar.as_deref()).unwrap();
            }
            PullAction::WriteSidecar { path } => {
                cache.write(&path, run.sidecar().unwrap().to_vec());
                run.on_written(&session, None).unwrap();
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

/// How a simulated person and network behave during a push.
#[derive(Debug, Default, Clone)]
pub struct PushFaults {
    /// Rels whose upload fails.
    pub failing: BTreeSet<String>,
    /// The answer to a `confirm` action.
    pub confirm: bool,
    /// Runs between the prepare and the commit of a two-phase push.
    pub between: Option<fn(&mut Bucket)>,
    /// A planted bug, for the tests that must catch it: object writes and deletes go
    /// unconditionally, as before conditional object writes.
    pub unconditional: bool,
    /// When the push runs (ISO-8601; default the simulation's fixed now): what it records as
    /// its uploads' `lastModified` and its deletes' time.
    pub at: Option<&'static str>,
    /// Another process's write to the cache just before the push refreshes its seal (a
    /// `markDirty` landing between the verification and the sidecar's rewrite).
    pub before_refresh: Option<fn(&mut Cache)>,
}

/// What a push did.
#[derive(Debug, Default)]
pub struct Pushed {
    pub plan: PushPlan,
    pub uploaded: Vec<String>,
    pub deleted: Vec<String>,
    pub published: bool,
    pub lost_races: u64,
    /// The push ended on the sidecar's seal, before any request.
    pub sealed: bool,
    /// The files the push hashed to verify the seal (changed too close to its walk).
    pub seal_hashed: Vec<String>,
    /// The push wrote its own walk's time into the sidecar's seal once they were verified.
    pub seal_refreshed: bool,
}

/// An ordinary push (default request, no faults) that must finish.
pub fn push_plain(bucket: &mut Bucket, cache: &mut Cache) -> Pushed {
    run_push(
        bucket,
        cache,
        PushRunRequest::default(),
        &PushFaults::default(),
    )
    .unwrap()
}

/// Drives one push to its end (a two-phase one through its `prepared` pause).
pub fn run_push(
    bucket: &mut Bucket,
    cache: &mut Cache,
    request: PushRunRequest,
    faults: &PushFaults,
) -> Result<Pushed, CoreError> {
    run_push_with(bucket, cache, request, faults, &mut |_, _| {})
}

/// [`run_push`], with `meanwhile` called on the bucket before each action the push's machine
/// asks for (with the action): where another writer's whole run is slipped in, to explore the
/// interleavings of two runs at the granularity of the machine's steps.
pub fn run_push_with(
    bucket: &mut Bucket,
    cache: &mut Cache,
    request: PushRunRequest,
    faults: &PushFaults,
    meanwhile: &mut dyn FnMut(&PushAction, &mut Bucket),
) -> Result<Pushed, CoreError> {
    let mut session = Session::new(Some(NS), "").unwrap();
    let two_phase = request.two_phase;
    let mut run = PushRun::new(request);
    let mut ran = Pushed::default();
    for _ in 0..64 {
        let action = run.poll();
        meanwhile(&action, bucket);
        match action {
            PushAction::ReadLocalState { sidecar } => {
                let sidecar = cache.files.get(&sidecar).map(|(b, _)| b.clone());
                run.on_local_state(&session, sidecar)?;
            }
            PushAction::LoadIndex => match bucket.read_index() {
                Some((bytes, etag)) => {
                    session.load_index(&bytes)?;
                    run.on_index(Some(etag), false, None)?;
                }
                None => {
                    // No index: rebuilt from a listing, not published here (the shim's
                    // `loadRemoteIndex(…, publishRebuild = false)`).
                    session.begin_rebuild(NOW);
                    session.add_listing_page(&bucket.listing(true, NOW), &[])?;
                    session.finish_rebuild(Some(NOW))?;
                    run.on_index(None, false, None)?;
                }
            },
            PushAction::ReadBase { path } => {
                let bytes = cache.files.get(&path).map(|(b, _)| b.clone());
                run.on_base(&mut session, bytes)?;
            }
            PushAction::WalkFirst => {
                let (listing, changes) = (cache.listing(), cache.changes());
                if run.on_walk_first(&mut session, &listing, &changes, 0, 0, cache.now_ms())? {
                    ran.sealed = true;
                    ran.plan = session.push_plan()?.clone();
                    if two_phase {
                        // Core commits the (empty) manifest the prepare handed it.
                        run.commit(&session)?;
                    }
                }
            }
            PushAction::Walk => {
                let listing = cache.listing();
                let digest = fake_sha256(&listing);
                let stats = WalkStats {
                    changes: cache.changes(),
                    walked_at_ms: cache.now_ms(),
                };
                ran.plan = run
                    .on_walk(&mut session, listing, digest, 0, 0, stats)?
                    .clone();
            }
            PushAction::VerifySeal { paths } => {
                let values = cache.hashes(&paths);
                ran.seal_hashed = paths.clone();
                if run.on_seal_hashes(&mut session, paths, values)? {
                    ran.sealed = true;
                    ran.plan = session.push_plan()?.clone();
                    if two_phase {
                        run.commit(&session)?;
                    }
                }
            }
            PushAction::Hash { paths } => {
                let values = cache.hashes(&paths);
                ran.plan = run.on_hashes(&mut session, paths, values)?.clone();
            }
            PushAction::Confirm => {
                ran.plan = run.on_confirmed(&mut session, faults.confirm)?.clone();
            }
            PushAction::Upload { batch } => {
                let mut uploaded = Vec::new();
                let mut lost = Vec::new();
                let mut failures = 0;
                for u in &ran.plan.uploads {
                    if !batch.takes(u.expected.is_some()) {
                        continue;
                    }
                    if faults.failing.contains(&u.transfer.rel) {
                        failures += 1;
                        continue;
                    }
                    let (bytes, mtime) = cache.files[&u.transfer.cache_path].clone();
                    let sha256 = fake_sha256(&bytes);
                    let key = &u.transfer.remote_key;
                    // The shim's protocol: create-only for a new key; for a replacement, a
                    // HEAD judged by the core, then `If-Match` the ETag it saw; a lost
                    // condition judged again from a HEAD (our own bytes settle it).
                    // The planted bug writes without any condition.
                    let landed = if faults.unconditional {
                        Some(Some(bucket.put(key, bytes.clone())))
                    } else {
                        conditional_put(bucket, key, u.expected.as_ref(), &bytes, &sha256)
                    };
                    let Some(etag) = landed else {
                        lost.push(u.transfer.rel.clone());
                        continue;
                    };
                    uploaded.push(Uploaded {
                        rel: u.transfer.rel.clone(),
                        size: bytes.len() as u64,
                        mtime_ms: Some(mtime),
                        sha256,
                        etag,
                    });
                    ran.uploaded.push(u.transfer.rel.clone());
                }
                run.on_uploaded(
                    &mut session,
                    &uploaded,
                    failures,
                    &lost,
                    faults.at.unwrap_or(NOW),
                )?;
                ran.plan = session.push_plan()?.clone();
            }
            PushAction::Prepared => {
                if let Some(between) = faults.between {
                    between(bucket);
                }
                run.commit(&session)?;
            }
            PushAction::Rebase => {
                let (bytes, etag) = bucket.objects.get(INDEX_KEY).cloned().expect("an index");
                session.rebase_push(&bytes)?;
                run.on_rebased(Some(etag))?;
            }
            PushAction::Publish {
                v2: _,
                if_match,
                mirror: _,
            } => {
                let mut expected = if_match;
                let etag = loop {
                    let current = bucket.objects.get(INDEX_KEY).map(|(_, e)| e.clone());
                    if current == expected {
                        break bucket.put(INDEX_KEY, session.index_json(false)?);
                    }
                    // Lost the race: re-read, re-merge, try again.
                    ran.lost_races += 1;
                    assert!(ran.lost_races < 5, "publish kept losing");
                    let (bytes, etag) = bucket.objects[INDEX_KEY].clone();
                    session.rebase_push(&bytes)?;
                    expected = Some(etag);
                };
                ran.published = true;
                run.on_published(&session, Some(etag), None)?;
                ran.plan = session.push_plan()?.clone();
            }
            PushAction::Delete { rels } => {
                let mut lost = Vec::new();
                for d in ran.plan.deletes.iter().filter(|d| rels.contains(&d.rel)) {
                    let head = bucket.head(&d.remote_key);
                    let verdict = if faults.unconditional {
                        ObjectVerdict::Proceed { if_match: None }
                    } else {
                        judge_existing(&d.expected, None, &head)
                    };
                    match verdict {
                        ObjectVerdict::Proceed { .. } => {
                            bucket.objects.remove(&d.remote_key);
                            ran.deleted.push(d.rel.clone());
                        }
                        ObjectVerdict::Settled => {}
                        // A delete is never asked to create or read content.
                        ObjectVerdict::Conflict
                        | ObjectVerdict::ReadContent
                        | ObjectVerdict::Create => lost.push(d.rel.clone()),
                    }
                }
                run.on_deleted(&mut session, ran.deleted.len() as u64, 0, &lost)?;
                ran.plan = session.push_plan()?.clone();
            }
            PushAction::WriteLocalIndex { path } => {
                cache.write(&path, session.local_index_after_push()?);
                let sidecar = cache
                    .files
                    .get(".datastore-sync-state.json")
                    .map(|(b, _)| b.clone());
                run.on_written(&session, sidecar, NOW)?;
            }
            PushAction::WriteSidecar { path } => {
                cache.write(&path, run.sidecar()?.to_vec());
                run.on_written(&session, None, NOW)?;
            }
            PushAction::RefreshSeal { path } => {
                if let Some(meanwhile) = faults.before_refresh {
                    meanwhile(cache);
                }
                let now = cache.files.get(&path).map(|(b, _)| b.clone());
                if let Some(bytes) = run.seal_refresh(now.as_deref())? {
                    cache.write(&path, bytes);
                    ran.seal_refreshed = true;
                }
                run.on_seal_refreshed()?;
            }
            PushAction::Done => return Ok(ran),
        }
    }
    panic!("the push did not finish in 64 steps");
}

/// One upload by the shim's protocol: create-only for a new key; for a replacement whose entry
/// records the ETag of its version, `If-Match` that ETag with no HEAD; otherwise (or when that is
/// refused) a HEAD judged by the core, then `If-Match` the ETag it saw (create-only when the
/// object is gone, nothing when it already holds our bytes); a lost condition judged again from
/// a HEAD (our own bytes settle it). `Some(etag of our write)` when our bytes are in the bucket
/// (`Some(None)`: they already were); `None` for a conflict.
fn conditional_put(
    bucket: &mut Bucket,
    key: &str,
    expected: Option<&s3sync_core::safety::object_condition::ExpectedVersion>,
    bytes: &[u8],
    sha256: &str,
) -> Option<Option<String>> {
    let ours = OurBytes {
        sha256: sha256.to_string(),
        size: bytes.len() as u64,
    };
    if let Some(recorded) = expected.and_then(|e| e.etag.as_deref()) {
        if let Some(etag) = bucket.put_if(key, Some(recorded), bytes.to_vec()) {
            return Some(Some(etag));
        }
    }
    let if_match = match expected {
        None => None,
        // Every simulated object records its hash: never `ReadContent`.
        Some(expected) => {
            bucket.count("head-object");
            match judge_existing(expected, Some(&ours), &bucket.head(key)) {
                ObjectVerdict::Proceed { if_match } => if_match,
                ObjectVerdict::Create => None,
                ObjectVerdict::Settled => return Some(None),
                ObjectVerdict::Conflict | ObjectVerdict::ReadContent => return None,
            }
        }
    };
    if let Some(etag) = bucket.put_if(key, if_match.as_deref(), bytes.to_vec()) {
        return Some(Some(etag));
    }
    (judge_lost_condition(sha256, ours.size, &bucket.head(key)) == ObjectVerdict::Settled)
        .then_some(None)
}

/// What a shard-set write did over a simulated bucket (see [`run_shard_write`]).
pub struct ShardWriteDriven {
    /// Its requests in order: `head K`, `put K <any|match|absent>` (` refused` when the condition
    /// failed), `probe deletes=B`, `delete K <if-match|after-head>`.
    pub log: Vec<String>,
    /// Each write as `(key, condition, landed)`, in order.
    pub writes: Vec<(String, &'static str, bool)>,
    /// The run's result, or the error a poll returned (the run refused its input).
    pub outcome: Result<s3sync_core::runs::shard_write::machine::ShardWriteResult, CoreError>,
}

/// Drives a shard-set write to the end over `bucket` as the shim does: HEADs answered from the
/// bucket, each write under its condition (none starts after a refused one; the ETag of an
/// action's only write handed back), the probe answered with `conditional_deletes`, a retire
/// deleting only the version named. `before` runs just before each write or delete of a key (a
/// peer's move).
pub fn run_shard_write(
    run: &mut s3sync_core::runs::shard_write::machine::ShardWriteRun,
    session: &mut Session,
    bucket: &mut Bucket,
    conditional_deletes: bool,
    mut before: impl FnMut(&str, &mut Bucket),
) -> ShardWriteDriven {
    use s3sync_core::runs::migrate::machine::HeadFound;
    use s3sync_core::runs::shard_write::machine::{PutCondition, ShardWriteAction};
    let mut log = Vec::new();
    let mut writes_done = Vec::new();
    for _ in 0..50 {
        let action = match run.poll(session) {
            Ok(action) => action,
            Err(error) => {
                return ShardWriteDriven {
                    log,
                    writes: writes_done,
                    outcome: Err(error),
                }
            }
        };
        match action {
            ShardWriteAction::Head { keys } => {
                let heads: Vec<HeadFound> = keys
                    .iter()
                    .map(|key| {
                        log.push(format!("head {key}"));
                        let facts = bucket.head(key);
                        HeadFound {
                            key: key.clone(),
                            exists: facts.exists,
                            size: facts.size,
                            etag: facts.etag,
                        }
                    })
                    .collect();
                run.on_heads(&heads).unwrap();
            }
            ShardWriteAction::Put { writes } => {
                let single = writes.len() == 1;
                let mut landed = true;
                let mut last = None;
                for write in writes {
                    before(&write.key, bucket);
                    let body = write.body.as_slice().to_vec();
                    let (kind, done) = match &write.condition {
                        PutCondition::Any => ("any", Some(bucket.put(&write.key, body))),
                        PutCondition::Match { etag } => {
                            ("match", bucket.put_if(&write.key, Some(etag), body))
                        }
                        PutCondition::Absent => ("absent", bucket.put_if(&write.key, None, body)),
                    };
                    let refused = if done.is_some() { "" } else { " refused" };
                    log.push(format!("put {} {kind}{refused}", write.key));
                    writes_done.push((write.key.clone(), kind, done.is_some()));
                    last = done.clone();
                    if done.is_none() {
                        // The shim starts no write after a refused one.
                        landed = false;
                        break;
                    }
                }
                run.on_put(landed, last.filter(|_| single)).unwrap();
            }
            ShardWriteAction::Probe { deletes } => {
                log.push(format!("probe deletes={deletes}"));
                run.on_probed(conditional_deletes).unwrap();
            }
            ShardWriteAction::Retire { objects, if_match } => {
                let (mut retired, mut kept) = (0, 0);
                for object in objects {
                    let how = if if_match { "if-match" } else { "after-head" };
                    log.push(format!("delete {} {how}", object.key));
                    before(&object.key, bucket);
                    match bucket.objects.get(&object.key) {
                        Some((_, etag)) if *etag != object.etag => kept += 1,
                        _ => {
                            bucket.objects.remove(&object.key);
                            retired += 1;
                        }
                    }
                }
                run.on_retired(retired, kept).unwrap();
            }
            ShardWriteAction::Done => {
                return ShardWriteDriven {
                    log,
                    writes: writes_done,
                    outcome: run.result(),
                }
            }
        }
    }
    panic!("the shard-set write did not end in 50 steps");
}
