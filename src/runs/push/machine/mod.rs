//! A push as a state machine (see [`crate::runs::pull::machine`] for the shape): the core decides the
//! sequence (hash what the plan cannot judge by size, check a saved plan, ask before deleting,
//! upload, stop there for a two-phase push, re-read the index for a late commit, publish, write
//! the v1 mirror, delete only what the published index no longer names, record the push) and
//! the shim does each action. The publish itself stays one composite action of the shim: its
//! conditional writes and re-merges under the lock are I/O, with the merge in the session.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::layout::survey;
use crate::model::paths::{PathModel, INDEX_FILE, SYNC_STATE_FILE};
use crate::runs::push::plan::{PushInput, PushPlan, Uploaded};
use crate::runs::session::{BaseLoad, Session};
use crate::safety::{
    tombstones_in_sidecar, DeletePolicy, RunFacts, DEFAULT_MAX_DELETES, DEFAULT_MAX_DELETE_PERCENT,
};
use crate::state::seal::{self, StatSeal};
use crate::state::sync_state::SyncState;
use crate::wire::listing::decode_local;

mod publish;
mod sealing;

/// What a walk saw beyond the listing: the facts of the stat seal (see [`crate::state::seal`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalkStats {
    /// Each walked file's change time and inode (`[ctime, ino, …]` in walk order; NaN where
    /// unknown).
    pub changes: Vec<f64>,
    /// When the walk began (epoch ms).
    pub walked_at_ms: i64,
}

/// What a push was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct PushRunRequest {
    /// Delete index entries that are absent locally even without a tombstone.
    pub delete_missing: bool,
    /// Most deletes one push may make (default 500).
    #[tsify(optional)]
    pub max_deletes: Option<u64>,
    /// Most deletes as a percentage of the index (default 25).
    #[tsify(optional)]
    pub max_delete_percent: Option<f64>,
    /// The catalog export may shrink.
    pub allow_catalog_shrink: bool,
    /// Plan only: nothing is uploaded, deleted or published.
    pub dry_run: bool,
    /// With `dry_run`, the caller only counts what would go (swamp core's preview before
    /// `datastore sync --push`, which pushes next when the count is 0): such a dry run may end on
    /// the sidecar's seal, which says nothing would, and never refreshes it (a dry run writes
    /// nothing). Without it a dry run always plans, since a person reads the whole plan.
    pub preview: bool,
    /// Ask before any delete (a `confirm` action); without, deletes are confirmed.
    pub ask_confirmation: bool,
    /// Stop after the uploads (a `prepared` action) until the `commit` event: swamp core's
    /// two-phase push, uploads outside its lock, the commit under it.
    pub two_phase: bool,
    /// A saved plan (the JSON of `s3sync plan --out`) the plan must equal, else `plan-stale`.
    #[tsify(optional)]
    pub expect: Option<String>,
    /// The store cannot make a replacement conditional (the extension's client has no
    /// `If-Match`: a replacement rests on a HEAD compare just before it). In a two-phase push the
    /// replacements then wait for the commit, which swamp core runs under its global lock; the
    /// prepare, outside the lock, uploads only new keys, whose create-only write is atomic at the
    /// server whoever else writes.
    pub replacements_under_lock: bool,
}

/// Which of the plan's uploads an `upload` action asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum UploadBatch {
    /// Every upload of the plan.
    All,
    /// New keys only (`expected` is null): the prepare of a two-phase push whose replacements
    /// wait for the lock.
    NewKeys,
    /// Replacements only (`expected` is set): that push's commit.
    Replacements,
}

impl UploadBatch {
    /// Whether the upload with `expected` (the version it replaces, `None` for a new key)
    /// belongs to this batch.
    pub fn takes(self, replaces: bool) -> bool {
        match self {
            UploadBatch::All => true,
            UploadBatch::NewKeys => !replaces,
            UploadBatch::Replacements => replaces,
        }
    }
}

/// The next thing the shim must do for a push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum PushAction {
    /// Read the sidecar at `sidecar`; answer with the `localState` event.
    ReadLocalState {
        /// The sidecar's cache path.
        sidecar: String,
    },
    /// Walk the cache before any request: the sidecar's seal may show there is nothing to
    /// push (see [`crate::state::seal`]); answer with the `walkFirst` event. The same walk answers the later
    /// `walk`.
    WalkFirst,
    /// Hash these cache paths' files (SHA-256, hex), which the seal cannot vouch for (changed
    /// too close to its walk); answer with the `sealHashes` event. Asked after `readBase`, before any
    /// request: the push ends on the seal when each still holds the bytes last synced.
    VerifySeal {
        /// Cache paths.
        paths: Vec<String>,
    },
    /// The seal held once the files it could not vouch for were hashed: record this walk's
    /// time in the sidecar at `path` as the seal's, so the next push need not hash them again
    /// (git's index refresh). Ask `sealRefresh` for the bytes against the sidecar as it is
    /// now, write them (nothing when it returns none), then answer with the `sealRefreshed` event
    /// whatever happened: a refresh that fails costs the next push a re-hash, never a change.
    RefreshSeal {
        /// The sidecar's cache path.
        path: String,
    },
    /// Load the remote index into the planner (a missing one rebuilt from a listing, not
    /// published); answer with the `index` event.
    LoadIndex,
    /// Read the local index at `path`; answer with the `base` event.
    ReadBase {
        /// The local index's cache path.
        path: String,
    },
    /// Walk the cache; answer with the `walk` event (the listing, its digest, the walk's errors).
    Walk,
    /// Hash these cache paths' files (SHA-256, hex); answer with the `hashes` event.
    Hash {
        /// Cache paths.
        paths: Vec<String>,
    },
    /// Ask a person whether the plan's deletes may go; answer with the `confirmed` event.
    Confirm,
    /// Upload the plan's `uploads` of `batch`; answer with the `uploaded` event.
    Upload {
        /// Which of them.
        batch: UploadBatch,
    },
    /// The uploads are done; the `commit` event continues (two-phase push).
    Prepared,
    /// Read the index as it is now and re-apply this push's changes over it (a commit after
    /// others may have published); answer with the `rebased` event.
    Rebase,
    /// Publish the planner's index (the v2 shards and meta when `v2`) over the copy read, with
    /// re-merges on lost races, under the lock; answer with the `published` event.
    Publish {
        /// The repo uses the v2 shard-first index.
        v2: bool,
        /// v1: the ETag the bucket's index must still have (`None`: create-only).
        if_match: Option<String>,
        /// v1: also write the per-partition mirror of the published index (peers' scoped pulls
        /// read it first), in the same hold of the lock, right after the publish wins: mirrors
        /// then land in publish order, so an earlier writer's shard never lands over a later
        /// one's that already holds its entries.
        mirror: bool,
    },
    /// Delete the objects of these deletes (the published index no longer names them);
    /// answer with the `deleted` event.
    Delete {
        /// Index keys of the plan's deletes that still apply.
        rels: Vec<String>,
    },
    /// Write the planner's `localIndexAfterPush()` at `path`; answer with the `written` event.
    WriteLocalIndex {
        /// The local index's cache path.
        path: String,
    },
    /// Write the run's `sidecar()` at `path`; answer with the `written` event.
    WriteSidecar {
        /// The sidecar's cache path.
        path: String,
    },
    /// The push is over.
    Done,
}

/// One push.
#[derive(Debug, Clone)]
pub struct PushRun {
    request: PushRunRequest,
    /// The action the shim was last asked to do.
    pending: PushAction,
    sidecar: Option<Vec<u8>>,
    tombstones: Vec<String>,
    lazy_pull_active: bool,
    sidecar_unreadable: bool,
    index_etag: Option<String>,
    /// The bucket had no index: the planner holds one rebuilt from a listing.
    index_rebuilt: bool,
    v2: bool,
    commit_seq: Option<u64>,
    listing: Vec<u8>,
    listing_digest: String,
    facts: RunFacts,
    deletes_confirmed: bool,
    must_publish: bool,
    uploaded: u64,
    deleted: u64,
    failures: u64,
    committing: bool,
    published: bool,
    sidecar_after: Option<Vec<u8>>,
    /// The new keys a two-phase prepare uploaded while its replacements wait for the commit,
    /// recorded together with them then (`None`: nothing deferred).
    prepared_uploads: Option<Vec<Uploaded>>,
    /// The seal the sidecar holds, when this push may end on it (see [`crate::state::seal`]).
    seal: Option<StatSeal>,
    /// The push ended on the seal (nothing sent; a two-phase commit has nothing to do).
    ended_on_seal: bool,
    /// The seal this push's walk makes, recorded if the push leaves the cache verified.
    sealing: Option<StatSeal>,
    /// The sidecar's seal, whatever else it holds: files changed since it are hashed.
    sidecar_seal: Option<StatSeal>,
    /// The walk's change times and inodes, for the plan.
    changes: Vec<f64>,
    /// The files the seal cannot vouch for, while `verifySeal` is pending, and the plan the
    /// push ends with if they hold the bytes last synced.
    racy: Vec<crate::state::seal::RacyFile>,
    sealed_plan: Option<PushPlan>,
    /// The local index is loaded as the base already (read to verify the seal).
    base_read: bool,
    /// Hashes taken to verify the seal, by cache path: the plan uses them instead of asking
    /// again.
    seal_hashes: std::collections::BTreeMap<String, String>,
    /// The seal the first walk would leave (its digest is the sidecar's seal's, its time this
    /// walk's), recorded when the racy files it had to hash hold the bytes last synced.
    refreshed_seal: Option<StatSeal>,
    /// The binding's path model, to read the sidecar's marks (set by the `localState` event).
    model: Option<PathModel>,
    /// Marks (tombstones, dirty paths) that name derived files: they leave the seal usable when
    /// each names a file the first walk finds (see [`crate::state::seal`]).
    derived_marks: Vec<String>,
}

impl PushRun {
    /// A push run for `request`.
    pub fn new(request: PushRunRequest) -> PushRun {
        PushRun {
            request,
            pending: PushAction::ReadLocalState {
                sidecar: SYNC_STATE_FILE.to_string(),
            },
            sidecar: None,
            tombstones: Vec::new(),
            lazy_pull_active: false,
            sidecar_unreadable: false,
            index_etag: None,
            index_rebuilt: false,
            v2: false,
            commit_seq: None,
            listing: Vec::new(),
            listing_digest: String::new(),
            facts: RunFacts::default(),
            deletes_confirmed: false,
            must_publish: false,
            uploaded: 0,
            deleted: 0,
            failures: 0,
            committing: false,
            published: false,
            sidecar_after: None,
            prepared_uploads: None,
            seal: None,
            sealing: None,
            ended_on_seal: false,
            sidecar_seal: None,
            changes: Vec::new(),
            racy: Vec::new(),
            sealed_plan: None,
            base_read: false,
            seal_hashes: Default::default(),
            refreshed_seal: None,
            model: None,
            derived_marks: Vec::new(),
        }
    }

    /// The `upload` action: every upload, or for a two-phase push whose replacements need the
    /// lock, the new keys first.
    fn upload_action(&self) -> PushAction {
        let batch = if self.request.two_phase && self.request.replacements_under_lock {
            UploadBatch::NewKeys
        } else {
            UploadBatch::All
        };
        PushAction::Upload { batch }
    }

    /// The next action (the same one until it is answered).
    pub fn poll(&self) -> PushAction {
        self.pending.clone()
    }

    fn expect(&self, what: &str, pending: impl Fn(&PushAction) -> bool) -> CoreResult<()> {
        if pending(&self.pending) {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "push run: {what} out of order (waiting for {:?})",
                self.pending
            )))
        }
    }

    /// The sidecar as read (`None`: absent): the tombstones (normalised to the bound tree),
    /// whether a lazy pull left files remote, whether it is unreadable.
    pub fn on_local_state(
        &mut self,
        session: &Session,
        sidecar: Option<Vec<u8>>,
    ) -> CoreResult<()> {
        self.expect("event \"localState\"", |p| {
            matches!(p, PushAction::ReadLocalState { .. })
        })?;
        self.model = Some(session.model().clone());
        if let Some(bytes) = sidecar.as_deref() {
            self.tombstones = tombstones_in_sidecar(session.model(), bytes);
            match SyncState::parse(bytes) {
                Some(state) => {
                    self.lazy_pull_active = state.lazy_pull_active;
                    self.sidecar_seal = state.seal.clone();
                    self.seal = state.seal.clone().filter(|_| self.may_end_on_seal(&state));
                    if self.seal.is_some() {
                        self.derived_marks = self
                            .tombstones
                            .iter()
                            .chain(&state.tombstones)
                            .chain(&state.dirty_paths)
                            .map(|mark| mark.trim_end_matches('/').to_string())
                            .collect();
                    }
                }
                None => self.sidecar_unreadable = true,
            }
        }
        self.sidecar = sidecar;
        self.pending = if self.seal.is_some() {
            PushAction::WalkFirst
        } else {
            PushAction::LoadIndex
        };
        Ok(())
    }

    /// The remote index is loaded: its ETag (v1; `None` when it was missing), or the v2
    /// `commit_seq`.
    pub fn on_index(
        &mut self,
        etag: Option<String>,
        v2: bool,
        commit_seq: Option<u64>,
    ) -> CoreResult<()> {
        self.expect("event \"index\"", |p| matches!(p, PushAction::LoadIndex))?;
        self.index_rebuilt = etag.is_none() && !v2;
        self.index_etag = etag;
        self.v2 = v2;
        self.commit_seq = commit_seq;
        self.pending = if self.base_read {
            PushAction::Walk
        } else {
            PushAction::ReadBase {
                path: INDEX_FILE.to_string(),
            }
        };
        Ok(())
    }

    /// The local index as read (`None`: none); returns how it loaded as the base.
    pub fn on_base(
        &mut self,
        session: &mut Session,
        bytes: Option<Vec<u8>>,
    ) -> CoreResult<Option<BaseLoad>> {
        self.expect("event \"base\"", |p| {
            matches!(p, PushAction::ReadBase { .. })
        })?;
        let outcome = bytes.map(|b| session.load_base(b));
        self.base_read = true;
        self.pending = if self.racy.is_empty() {
            PushAction::Walk
        } else {
            PushAction::VerifySeal {
                paths: self.racy.iter().map(|f| f.cache_path.clone()).collect(),
            }
        };
        Ok(outcome)
    }

    /// The cache walk: the listing buffer, its SHA-256 (what a saved plan names), the errors
    /// met and the symlinked folders not followed. Returns the plan (final unless the next
    /// action is `hash`).
    pub fn on_walk<'s>(
        &mut self,
        session: &'s mut Session,
        listing: Vec<u8>,
        listing_digest: String,
        walk_errors: u64,
        symlinked_folders: u64,
        stats: WalkStats,
    ) -> CoreResult<&'s PushPlan> {
        self.expect("event \"walk\"", |p| matches!(p, PushAction::Walk))?;
        if walk_errors == 0 && symlinked_folders == 0 {
            let files = decode_local(&listing)?;
            let stamp = seal::stamp(&survey(session.model(), &files), &stats.changes);
            self.sealing = stamp.map(|stamp| StatSeal {
                digest: stamp.digest,
                walked_at_ms: stats.walked_at_ms,
            });
        }
        self.changes = stats.changes;
        self.listing = listing;
        self.listing_digest = listing_digest;
        self.facts = RunFacts {
            walk_errors,
            listing_errors: 0,
            lazy_pull_active: self.lazy_pull_active,
            sidecar_unreadable: self.sidecar_unreadable,
            symlinked_folders,
        };
        self.plan(session, Vec::new(), Vec::new())
    }

    /// The hashes asked for (`values[i]` of `paths[i]`; a file that vanished gets a value no
    /// hash has, so it plans as changed and its upload fails visibly). Returns the final plan.
    pub fn on_hashes<'s>(
        &mut self,
        session: &'s mut Session,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> CoreResult<&'s PushPlan> {
        self.expect("event \"hashes\"", |p| matches!(p, PushAction::Hash { .. }))?;
        if paths.len() != values.len() {
            return Err(CoreError::input("hash paths and values differ in length"));
        }
        self.plan(session, paths, values)
    }

    fn plan<'s>(
        &mut self,
        session: &'s mut Session,
        paths: Vec<String>,
        values: Vec<String>,
    ) -> CoreResult<&'s PushPlan> {
        let hashed = !paths.is_empty();
        let mut hashes = self.seal_hashes.clone();
        hashes.extend(paths.into_iter().zip(values));
        let input = PushInput {
            tombstones: self.tombstones.iter().cloned().collect(),
            hashes,
            policy: DeletePolicy {
                delete_missing: self.request.delete_missing,
                max_deletes: self.request.max_deletes.unwrap_or(DEFAULT_MAX_DELETES),
                max_delete_percent: self
                    .request
                    .max_delete_percent
                    .unwrap_or(DEFAULT_MAX_DELETE_PERCENT),
                allow_catalog_shrink: self.request.allow_catalog_shrink,
            },
            facts: self.facts,
            changes: self.changes.clone(),
            sealed_at_ms: self.sidecar_seal.as_ref().map(|seal| seal.walked_at_ms),
        };
        let listing = std::mem::take(&mut self.listing);
        let needs_hash = {
            let plan = session.plan_push(&listing, &input)?;
            plan.needs_hash.clone()
        };
        self.listing = listing;
        if !needs_hash.is_empty() && !hashed {
            self.pending = PushAction::Hash { paths: needs_hash };
        } else {
            // A person approved exactly one plan: anything else stops before the first request.
            if let Some(saved) = &self.request.expect {
                session.check_saved_plan(
                    saved.as_bytes(),
                    self.index_etag.as_deref(),
                    &self.listing_digest,
                )?;
            }
            self.listing = Vec::new();
            self.pending = if self.request.dry_run {
                PushAction::Done
            } else if self.plan_has_deletes(session)? && self.request.ask_confirmation {
                PushAction::Confirm
            } else {
                self.deletes_confirmed = self.plan_has_deletes(session)?;
                self.upload_action()
            };
        }
        session.push_plan()
    }

    fn plan_has_deletes(&self, session: &Session) -> CoreResult<bool> {
        Ok(!session.push_plan()?.deletes.is_empty())
    }

    /// Whether a person confirmed the deletes; returns the plan as it now stands (unconfirmed
    /// deletes withheld with the `confirmation-required` verdict).
    pub fn on_confirmed<'s>(
        &mut self,
        session: &'s mut Session,
        confirmed: bool,
    ) -> CoreResult<&'s PushPlan> {
        self.expect("event \"confirmed\"", |p| matches!(p, PushAction::Confirm))?;
        self.deletes_confirmed = confirmed;
        if !confirmed {
            session.withhold_unconfirmed_deletes()?;
        }
        self.pending = self.upload_action();
        session.push_plan()
    }

    /// The uploads that landed and how many failed, at `now_iso`; records them in the index.
    pub fn on_uploaded(
        &mut self,
        session: &mut Session,
        uploaded: &[Uploaded],
        failures: u64,
        lost: &[String],
        now_iso: &str,
    ) -> CoreResult<()> {
        self.expect("event \"uploaded\"", |p| {
            matches!(p, PushAction::Upload { .. })
        })?;
        let PushAction::Upload { batch } = self.pending else {
            return Err(CoreError::input("push run: onUploaded out of order"));
        };
        // The shim's count so far (a two-phase push's second batch counts the first's too).
        self.failures = failures;
        // Another writer's version was in the bucket (see `object_condition`): not uploaded,
        // a conflict, and the rest of the push goes on.
        session.add_push_conflicts(lost.iter().cloned())?;
        if batch == UploadBatch::NewKeys {
            // The replacements go at the commit; both halves are recorded together then.
            self.uploaded = uploaded.len() as u64;
            self.prepared_uploads = Some(uploaded.to_vec());
            self.pending = PushAction::Prepared;
            return Ok(());
        }
        let all: Vec<Uploaded> = self
            .prepared_uploads
            .take()
            .unwrap_or_default()
            .into_iter()
            .chain(uploaded.iter().cloned())
            .collect();
        self.uploaded = all.len() as u64;
        self.must_publish = session.record_push(&all, now_iso, self.deletes_confirmed)?;
        // A bucket without an index whose listing held files gets the rebuilt index even when
        // this push sends nothing (create-only, as a pull publishes it): left unpublished, every
        // later run rebuilt it again and the extension's readers saw no index at all.
        if self.index_rebuilt && session.index_len()? > 0 {
            self.must_publish = true;
        }
        match (self.request.two_phase, batch) {
            (true, UploadBatch::All) => self.pending = PushAction::Prepared,
            // The second half of a prepared push: its commit goes on at once.
            (true, _) => self.commit_next(session, true)?,
            (false, _) => self.commit_next(session, false)?,
        }
        Ok(())
    }

    /// The bytes a `writeSidecar` action writes.
    pub fn sidecar(&self) -> CoreResult<&[u8]> {
        self.sidecar_after
            .as_deref()
            .ok_or_else(|| CoreError::input("push run: no sidecar to write"))
    }

    /// The ETag of the remote index the plan was made from (a saved plan records it).
    pub fn remote_index_etag(&self) -> Option<&str> {
        self.index_etag.as_deref().filter(|_| !self.committing)
    }

    /// True once the index was published.
    pub fn published(&self) -> bool {
        self.published
    }
}
