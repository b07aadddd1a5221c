//! A pull as a state machine, in the style of quinn-proto's connection: the core says what to
//! do next ([`PullRun::poll`]), the shim does it and hands back what happened (the `on_*`
//! methods), with time passed in. Every decision of the run lives here: whether a HEAD is worth
//! sending, whether the fast path applies, the order of the steps, whether the pruned index
//! goes back to the bucket, what the sidecar records. The shim keeps only I/O policy
//! (concurrency, retries, where a download looks when its key is gone).
//!
//! The per-file work stays in [`Session`]: the machine drives it, so the same session serves
//! the shim's other runs and the tests drive whole runs natively against a simulated bucket and
//! cache (see `tests/pull_machine.rs`).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{INDEX_FILE, SYNC_STATE_FILE};
use crate::runs::pull::plan::{PullApplied, PullOptions, PullOutcome, PullPlan};
use crate::runs::pull::run::PullEnd;
use crate::runs::session::{BaseLoad, Session};
use crate::safety::tombstones_in_sidecar;
use crate::state::sync_state::SyncState;

/// What a pull was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct PullRequest {
    /// Lazy hydration: leave the bytes of `raw` files of the data trees remote.
    pub metadata_only: bool,
    /// The cache folds case (macOS, Windows).
    pub case_insensitive: bool,
    /// Download only absent files, keeping local files that differ (the repair's hydration).
    pub keep_existing: bool,
    /// Skip the fast path: walk and compare even when the index is unchanged.
    pub verify: bool,
    /// Scoped pull: only rels under these folders (the sidecar then vouches for nothing).
    pub scope: Vec<String>,
}

/// The next thing the shim must do for a pull.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum PullAction {
    /// Read the sidecar at `sidecar` and whether a file exists at `localIndex`; answer with
    /// the `localState` event.
    ReadLocalState {
        /// The sidecar's cache path.
        sidecar: String,
        /// The local index's cache path.
        local_index: String,
    },
    /// HEAD the remote index at `key`; answer with the `head` event.
    HeadIndex {
        /// The index key, relative to the prefix.
        key: String,
    },
    /// Load the remote index into the planner (the v2 shards, the monolith, or a rebuild from a
    /// listing when it is missing); answer with the `index` event.
    LoadIndex,
    /// Read the local index at `path` (this cache's base); answer with the `base` event.
    ReadBase {
        /// The local index's cache path.
        path: String,
    },
    /// Walk the cache; answer with the `walk` event, which returns the plan.
    Walk,
    /// Create `folders` (lazy hydration), then download the plan's `downloads`, keeping the
    /// local copy of each `setAside` file first; answer with the `transfers` event.
    Transfer {
        /// Folders to create.
        folders: Vec<String>,
    },
    /// Publish the planner's index (`indexJson(false)`) at `key` over `ifMatch` under the
    /// datastore lock; answer with the `published` event.
    PublishIndex {
        /// The index key.
        key: String,
        /// The ETag the bucket's copy must still have (the one read).
        if_match: Option<String>,
    },
    /// Write the planner's `localIndexAfterPull()` at `path`; answer with the `written` event.
    WriteLocalIndex {
        /// The local index's cache path.
        path: String,
    },
    /// Write the run's `sidecar()` bytes at `path`; answer with the `written` event.
    WriteSidecar {
        /// The sidecar's cache path.
        path: String,
    },
    /// The pull is over.
    Done {
        /// True when the fast path found nothing to do (one request sent).
        noop: bool,
    },
}

/// Where a pull run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitLocalState,
    LocalStateRead,
    AwaitHead,
    Headed { exists: bool, etag: Option<String> },
    AwaitIndex,
    IndexLoaded,
    AwaitBase,
    BaseRead,
    AwaitWalk,
    Planned { folders: Vec<String> },
    AwaitTransfers,
    Transferred,
    AwaitPublish,
    AwaitLocalIndex,
    LocalIndexWritten,
    AwaitSidecar,
    Finished { noop: bool },
}

/// One pull, from reading the sidecar to writing it back.
#[derive(Debug, Clone)]
pub struct PullRun {
    request: PullRequest,
    stage: Stage,
    sidecar: Option<Vec<u8>>,
    local_index_exists: bool,
    /// The remote index exists in the bucket (not a rebuild left unpublished).
    index_exists: bool,
    /// The ETag of the index in the bucket (read, or of our published pruned copy).
    etag: Option<String>,
    commit_seq: Option<u64>,
    failures: u64,
    published: bool,
    now_iso: String,
    /// The sidecar to write, once decided.
    sidecar_after: Option<Vec<u8>>,
}

impl PullRun {
    /// A pull run for `request`.
    pub fn new(request: PullRequest) -> PullRun {
        PullRun {
            request,
            stage: Stage::Start,
            sidecar: None,
            local_index_exists: false,
            index_exists: false,
            etag: None,
            commit_seq: None,
            failures: 0,
            published: false,
            now_iso: String::new(),
            sidecar_after: None,
        }
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self, session: &Session) -> PullAction {
        let (action, next) = match &self.stage {
            Stage::Start | Stage::AwaitLocalState => (
                PullAction::ReadLocalState {
                    sidecar: SYNC_STATE_FILE.to_string(),
                    local_index: INDEX_FILE.to_string(),
                },
                Stage::AwaitLocalState,
            ),
            // Without a sidecar there is no fast path to take, so no HEAD is spent on one. A
            // cache last synced with a v2 repo (the sidecar has its `commitSeq`) heads
            // `_index/_meta.json`, which every commit rewrites (the monolith is stale there).
            Stage::LocalStateRead | Stage::AwaitHead
                if self.sidecar.is_some() && !self.request.verify =>
            {
                let v2 = self
                    .sidecar
                    .as_deref()
                    .and_then(SyncState::parse)
                    .is_some_and(|s| s.commit_seq.is_some());
                let key = if v2 {
                    session.model().meta_key()
                } else {
                    session.model().under_binding(INDEX_FILE)
                };
                (PullAction::HeadIndex { key }, Stage::AwaitHead)
            }
            Stage::Headed { exists: true, etag } if self.fast_path_applies(etag.as_deref()) => (
                PullAction::Done { noop: true },
                Stage::Finished { noop: true },
            ),
            Stage::LocalStateRead | Stage::AwaitHead | Stage::Headed { .. } | Stage::AwaitIndex => {
                (PullAction::LoadIndex, Stage::AwaitIndex)
            }
            Stage::IndexLoaded | Stage::AwaitBase => (
                PullAction::ReadBase {
                    path: INDEX_FILE.to_string(),
                },
                Stage::AwaitBase,
            ),
            Stage::BaseRead | Stage::AwaitWalk => (PullAction::Walk, Stage::AwaitWalk),
            Stage::Planned { folders } => (
                PullAction::Transfer {
                    folders: folders.clone(),
                },
                Stage::AwaitTransfers,
            ),
            Stage::AwaitTransfers => (
                PullAction::Transfer {
                    folders: Vec::new(),
                },
                Stage::AwaitTransfers,
            ),
            Stage::Transferred | Stage::AwaitPublish
                if session
                    .pull_publishes_pruned_index(self.index_exists)
                    .unwrap_or(false)
                    && !self.published =>
            {
                // Prune vanished and internal entries remotely too, but only over the copy read.
                (
                    PullAction::PublishIndex {
                        key: session.model().under_binding(INDEX_FILE),
                        if_match: self.etag.clone(),
                    },
                    Stage::AwaitPublish,
                )
            }
            Stage::Transferred | Stage::AwaitPublish | Stage::AwaitLocalIndex => (
                PullAction::WriteLocalIndex {
                    path: INDEX_FILE.to_string(),
                },
                Stage::AwaitLocalIndex,
            ),
            Stage::LocalIndexWritten | Stage::AwaitSidecar if self.sidecar_after.is_some() => (
                PullAction::WriteSidecar {
                    path: SYNC_STATE_FILE.to_string(),
                },
                Stage::AwaitSidecar,
            ),
            Stage::LocalIndexWritten | Stage::AwaitSidecar => (
                PullAction::Done { noop: false },
                Stage::Finished { noop: false },
            ),
            Stage::Finished { noop } => (PullAction::Done { noop: *noop }, self.stage.clone()),
        };
        self.stage = next;
        action
    }

    /// The fast path: the sidecar vouches for a cache synced against exactly the index the HEAD
    /// found, and the local index exists.
    fn fast_path_applies(&self, head_etag: Option<&str>) -> bool {
        self.sidecar
            .as_deref()
            .and_then(SyncState::parse)
            .is_some_and(|s| {
                s.pull_is_noop(
                    head_etag,
                    self.local_index_exists,
                    self.request.metadata_only,
                )
            })
    }

    fn expect(&self, stage: &Stage, what: &str) -> CoreResult<()> {
        if std::mem::discriminant(&self.stage) == std::mem::discriminant(stage) {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "pull run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// The sidecar (absent: `None`) and whether the local index exists.
    pub fn on_local_state(
        &mut self,
        sidecar: Option<Vec<u8>>,
        local_index_exists: bool,
    ) -> CoreResult<()> {
        self.expect(&Stage::AwaitLocalState, "event \"localState\"")?;
        self.sidecar = sidecar;
        self.local_index_exists = local_index_exists;
        self.stage = Stage::LocalStateRead;
        Ok(())
    }

    /// What the HEAD of the remote index found.
    pub fn on_head(&mut self, exists: bool, etag: Option<String>) -> CoreResult<()> {
        self.expect(&Stage::AwaitHead, "event \"head\"")?;
        self.stage = Stage::Headed { exists, etag };
        Ok(())
    }

    /// The remote index is loaded into the session: `exists` when it is in the bucket (false
    /// for a rebuild left unpublished), with its ETag (v1; for v2, `_index/_meta.json`'s) and
    /// `commit_seq` (v2).
    pub fn on_index(
        &mut self,
        exists: bool,
        etag: Option<String>,
        commit_seq: Option<u64>,
    ) -> CoreResult<()> {
        self.expect(&Stage::AwaitIndex, "event \"index\"")?;
        self.index_exists = exists;
        self.etag = etag;
        self.commit_seq = commit_seq;
        self.stage = Stage::IndexLoaded;
        Ok(())
    }

    /// The local index as read (`None`: there is none); returns how it loaded as the base
    /// (`None` when there was none to load).
    pub fn on_base(
        &mut self,
        session: &mut Session,
        bytes: Option<Vec<u8>>,
    ) -> CoreResult<Option<BaseLoad>> {
        self.expect(&Stage::AwaitBase, "event \"base\"")?;
        let outcome = bytes.map(|bytes| session.load_base(bytes));
        self.stage = Stage::BaseRead;
        Ok(outcome)
    }

    /// The cache walk (a listing buffer); returns the plan the transfers carry out.
    pub fn on_walk<'s>(
        &mut self,
        session: &'s mut Session,
        listing: &[u8],
    ) -> CoreResult<&'s PullPlan> {
        self.expect(&Stage::AwaitWalk, "event \"walk\"")?;
        // Files deleted here and not yet pushed are local changes, never brought back.
        let tombstones = self
            .sidecar
            .as_deref()
            .map(|bytes| tombstones_in_sidecar(session.model(), bytes))
            .unwrap_or_default();
        let options = PullOptions {
            scope: self.request.scope.clone(),
            metadata_only: self.request.metadata_only,
            case_insensitive: self.request.case_insensitive,
            keep_existing: self.request.keep_existing,
            tombstones,
        };
        let plan = session.plan_pull(listing, &options)?;
        self.stage = Stage::Planned {
            folders: plan.lazy_folders.clone(),
        };
        Ok(plan)
    }

    /// What the transfers did (`failures` counts downloads and folders that failed), at
    /// `now_iso`; returns what the session applied.
    pub fn on_transfers(
        &mut self,
        session: &mut Session,
        outcome: &PullOutcome,
        failures: u64,
        now_iso: &str,
    ) -> CoreResult<PullApplied> {
        self.expect(&Stage::AwaitTransfers, "event \"transfers\"")?;
        let applied = session.apply_pull(outcome)?;
        session.set_last_pulled(now_iso)?;
        self.failures = failures;
        self.now_iso = now_iso.to_string();
        self.stage = Stage::Transferred;
        Ok(applied)
    }

    /// The publish of the pruned index: `published` false when the bucket's copy changed
    /// meanwhile (nothing was written; the sidecar then vouches for nothing), else with the
    /// new ETag (if the server gave one).
    pub fn on_published(&mut self, published: bool, etag: Option<String>) -> CoreResult<()> {
        self.expect(&Stage::AwaitPublish, "event \"published\"")?;
        self.published = published;
        self.etag = etag.filter(|_| published);
        // Whether published or not, the next step is the local index.
        self.stage = Stage::AwaitLocalIndex;
        Ok(())
    }

    /// The last write asked for is done. After the local index, `sidecar_now` is the sidecar
    /// read again (absent: `None`): the sidecar this pull writes is decided from it, not from
    /// the copy read at the start, so what others recorded meanwhile (a `markDirty`, a push that
    /// consumed tombstones) is kept, never written over. After the sidecar it is ignored.
    pub fn on_written(&mut self, session: &Session, sidecar_now: Option<&[u8]>) -> CoreResult<()> {
        match self.stage {
            Stage::AwaitLocalIndex => {
                let end = PullEnd {
                    failures: self.failures,
                    index_published: self.published,
                    scoped: !self.request.scope.is_empty(),
                    etag: self.etag.clone(),
                    commit_seq: self.commit_seq,
                    now_iso: self.now_iso.clone(),
                };
                self.sidecar_after = session.sidecar_after_pull(sidecar_now, &end)?;
                self.stage = Stage::LocalIndexWritten;
                Ok(())
            }
            Stage::AwaitSidecar => {
                self.sidecar_after = None;
                self.stage = Stage::Finished { noop: false };
                Ok(())
            }
            _ => Err(CoreError::input(format!(
                "pull run: event \"written\" out of order (at {:?})",
                self.stage
            ))),
        }
    }

    /// The sidecar bytes a `WriteSidecar` action writes.
    pub fn sidecar(&self) -> CoreResult<&[u8]> {
        self.sidecar_after
            .as_deref()
            .ok_or_else(|| CoreError::input("pull run: no sidecar to write"))
    }

    /// How the run ended, once it has.
    pub fn ended(&self) -> Option<crate::runs::pull::events::PullEnded> {
        match self.stage {
            Stage::Finished { noop } => Some(crate::runs::pull::events::PullEnded {
                noop,
                index_published: self.published,
            }),
            _ => None,
        }
    }

    /// True once the pull has published its pruned index.
    pub fn index_published(&self) -> bool {
        self.published
    }
}
