//! The push run's seal steps (see [`crate::state::seal`]): whether this push may end on the
//! sidecar's seal, the first walk that checks it, the hashes of the files it cannot vouch for,
//! and the refresh of its walk time.

use crate::error::{CoreError, CoreResult};
use crate::model::file_class::is_derived;
use crate::model::layout::survey;
use crate::model::paths::{CachePlace, ForeignNamespaces, PathModel, INDEX_FILE, SYNC_STATE_FILE};
use crate::runs::push::plan::{PushPlan, PushSummary};
use crate::runs::session::Session;
use crate::state::seal::{self, StatSeal};
use crate::state::sync_state::SyncState;
use crate::wire::listing::decode_local;

use super::{PushAction, PushRun};

impl PushRun {
    /// Whether this push may end on the sidecar's seal: a real push of a cache with nothing
    /// marked (no tombstone, no dirty path or flag, no lazy pull). A dry run or a saved plan
    /// reports the plan, so they always plan, except a preview that only counts what would go.
    /// A two-phase push that ends on the seal hands core an empty manifest, and its commit does
    /// nothing.
    ///
    /// Marks that name only derived files do not count (swamp core marks its catalog export
    /// before every push): the first walk then checks each names a file it found, and hashes
    /// them.
    pub(super) fn may_end_on_seal(&self, state: &SyncState) -> bool {
        let request = &self.request;
        let marks: Vec<&String> = self
            .tombstones
            .iter()
            .chain(&state.tombstones)
            .chain(&state.dirty_paths)
            .collect();
        let unmarked = marks.is_empty() && !state.local_dirty;
        let marked_derived = !marks.is_empty()
            && self
                .model
                .as_ref()
                .is_some_and(|model| marks.iter().all(|mark| names_derived(model, mark)));
        (!request.dry_run || request.preview)
            && request.expect.is_none()
            && (unmarked || marked_derived)
            && !state.bulk_invalidated
            && !state.lazy_pull_active
    }

    /// The walk asked for first: the listing, each file's change time and inode
    /// (`[ctime, ino, …]` in walk order), its errors and symlinked folders, and when it began
    /// (epoch ms). Returns true when
    /// the seal holds: the push is done, with nothing sent (the session's plan is an empty
    /// one). When the digest is the seal's but some files changed too close to its walk, the
    /// base is read and they are hashed (`verifySeal`) before anything is sent. Otherwise the
    /// push goes on, and this walk answers the later `walk`.
    pub fn on_walk_first(
        &mut self,
        session: &mut Session,
        listing: &[u8],
        changes: &[f64],
        walk_errors: u64,
        symlinked_folders: u64,
        walked_at_ms: i64,
    ) -> CoreResult<bool> {
        self.expect("event \"walkFirst\"", |p| {
            matches!(p, PushAction::WalkFirst)
        })?;
        let files = decode_local(listing)?;
        let surveyed = survey(session.model(), &files);
        let stamp = (walk_errors == 0 && symlinked_folders == 0)
            .then(|| seal::stamp(&surveyed, changes))
            .flatten();
        // A derived file marked here but gone from the walk is a removal to act on.
        let marks_found = self.derived_marks.iter().all(|mark| {
            surveyed
                .payload
                .iter()
                .any(|(_, file)| file.cache_path == mark.as_str())
        });
        let racy = match (&self.seal, &stamp) {
            (Some(seal), Some(stamp)) if seal.digest == stamp.digest && marks_found => {
                Some(seal::racy_files(seal, &surveyed, changes))
            }
            _ => None,
        };
        // Derived files are hashed whatever their stats (see `crate::state::seal`); only racy
        // ones make the verified walk worth a refresh of the seal.
        let derived = seal::derived_files(&surveyed);
        match racy {
            Some(racy) if racy.is_empty() && derived.is_empty() => {
                session.set_push_plan(sealed_plan(&surveyed));
                self.pending = PushAction::Done;
                self.ended_on_seal = true;
                Ok(true)
            }
            Some(mut racy) => {
                // A dry run writes nothing, so it leaves the seal as it found it; and a walk
                // that met no racy file has nothing to refresh (derived files are hashed anyway).
                let writes = !self.request.dry_run && !racy.is_empty();
                racy.extend(derived);
                self.racy = racy;
                self.refreshed_seal = stamp.filter(|_| writes).map(|stamp| StatSeal {
                    digest: stamp.digest,
                    walked_at_ms,
                });
                self.sealed_plan = Some(sealed_plan(&surveyed));
                self.pending = PushAction::ReadBase {
                    path: INDEX_FILE.to_string(),
                };
                Ok(false)
            }
            None => {
                self.pending = PushAction::LoadIndex;
                Ok(false)
            }
        }
    }

    /// The hashes of the files the seal could not vouch for (`values[i]` of `paths[i]`).
    /// Returns true when each holds the bytes the base records: the push is done, with nothing
    /// sent. Otherwise the push goes on the normal path, and the plan uses these hashes.
    pub fn on_seal_hashes(
        &mut self,
        session: &mut Session,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> CoreResult<bool> {
        self.expect("event \"sealHashes\"", |p| {
            matches!(p, PushAction::VerifySeal { .. })
        })?;
        if paths.len() != values.len() {
            return Err(CoreError::input("hash paths and values differ in length"));
        }
        let hashes: std::collections::BTreeMap<String, String> =
            paths.into_iter().zip(values).collect();
        let racy = std::mem::take(&mut self.racy);
        let plan = self.sealed_plan.take();
        let verified = racy.iter().all(|file| {
            hashes
                .get(&file.cache_path)
                .is_some_and(|sha| session.base_holds(&file.rel, file.size, sha))
        });
        if let (true, Some(plan)) = (verified, plan) {
            session.set_push_plan(plan);
            self.pending = if self.refreshed_seal.is_some() {
                PushAction::RefreshSeal {
                    path: SYNC_STATE_FILE.to_string(),
                }
            } else {
                PushAction::Done
            };
            self.ended_on_seal = true;
            return Ok(true);
        }
        self.refreshed_seal = None;
        self.seal_hashes = hashes;
        self.pending = PushAction::LoadIndex;
        Ok(false)
    }

    /// The sidecar to write for `refreshSeal`, decided from `sidecar_now` (the sidecar as it
    /// is now, the journal folded in): the same state with this walk's seal, or `None` (write
    /// nothing) when it no longer holds the seal this push verified or no longer lets a push
    /// end on one (a tombstone, a dirty mark, a lazy pull since): that state is the next
    /// push's to act on, and a refreshed seal must never vouch past it.
    pub fn seal_refresh(&self, sidecar_now: Option<&[u8]>) -> CoreResult<Option<Vec<u8>>> {
        self.expect("sealRefresh", |p| {
            matches!(p, PushAction::RefreshSeal { .. })
        })?;
        let (Some(bytes), Some(fresh)) = (sidecar_now, &self.refreshed_seal) else {
            return Ok(None);
        };
        let Some(mut state) = SyncState::parse(bytes) else {
            return Ok(None);
        };
        let unchanged = state.seal == self.sidecar_seal && self.may_end_on_seal(&state);
        if !unchanged {
            return Ok(None);
        }
        state.seal = Some(fresh.clone());
        Ok(Some(state.to_json()))
    }

    /// The `refreshSeal` is over (written, skipped or failed): the push is done.
    pub fn on_seal_refreshed(&mut self) -> CoreResult<()> {
        self.expect("event \"sealRefreshed\"", |p| {
            matches!(p, PushAction::RefreshSeal { .. })
        })?;
        self.refreshed_seal = None;
        self.pending = PushAction::Done;
        Ok(())
    }
}

/// The plan of a push that ended on the seal: every payload file unchanged, nothing to do.
fn sealed_plan(surveyed: &crate::model::layout::Survey<'_>) -> PushPlan {
    PushPlan {
        summary: PushSummary {
            unchanged: surveyed.payload.len() as u64,
            ..PushSummary::default()
        },
        layout: surveyed.findings.clone(),
        ..PushPlan::default()
    }
}

/// True when `mark` (a tombstone or dirty path as the sidecar stores it: cache-relative) names a
/// derived file of `model`'s bound tree.
fn names_derived(model: &PathModel, mark: &str) -> bool {
    match model.classify_cache_path(mark.trim_end_matches('/'), &ForeignNamespaces::new()) {
        CachePlace::Payload(rel) => is_derived(rel.as_str()),
        _ => false,
    }
}
