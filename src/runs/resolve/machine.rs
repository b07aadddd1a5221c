//! `resolve` as a state machine in the shape of the other runs: the core says what to do next
//! ([`ResolveRun::poll`]), the shim does it and hands back what happened.
//!
//! Order: a full pull first (never the fast path: it is what sets aside conflicts a push met),
//! and nothing is resolved when any of it failed; a walk and the plan (which copy goes where);
//! then, keeping mine, the newest copy of each file goes back in place and a push sends them,
//! its deletes unconfirmed (settling a conflict never removes a remote object). A file's copies
//! are removed only once its version is in the bucket (the push published, or had nothing to
//! send), or at once when keeping theirs.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::PathModel;
use crate::safety::conflicts::{plan_resolve, Keep, ResolveFile, ResolvePlan};
use crate::wire::listing::decode_local;

/// What `resolve` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ResolveRequest {
    /// `mine` or `theirs`.
    #[tsify(type = "\"mine\" | \"theirs\"")]
    pub keep: String,
    /// The files to settle (index keys); every file with a conflict copy when empty.
    #[serde(default)]
    pub rels: Vec<String>,
}

/// A conflict copy to put back in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Restore {
    /// The index key.
    pub rel: String,
    /// The copy.
    pub from: String,
    /// The file's cache path.
    pub to: String,
}

/// What the push of the restored files did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ResolvePushed {
    /// Rels the push met in conflict again (another cache pushed meanwhile).
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// Rels whose upload failed.
    #[serde(default)]
    pub failed: Vec<String>,
    /// True when the push published its index.
    pub published: bool,
    /// Files it uploaded.
    pub uploaded: u64,
}

/// The next thing the shim must do for a resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ResolveAction {
    /// Pull (`verify`: never the fast path); answer with the `pulled` event and the items that
    /// failed.
    Pull {
        /// Compare every file, never trusting a sealed cache: a conflict is settled against what
        /// the bucket and the cache hold now. Always true.
        verify: bool,
    },
    /// Walk the cache; answer with the `walk` event.
    Walk,
    /// Put each copy back in place (read `from`, write `to` atomically; a copy gone meanwhile
    /// is skipped); answer with the `restored` event and the rels put back.
    Restore {
        /// The copies.
        files: Vec<Restore>,
    },
    /// Push; answer with the `pushed` event.
    Push {
        /// Whether the push's deletes are confirmed. Always false: resolving a conflict never
        /// removes a remote object.
        confirm_deletes: bool,
    },
    /// Remove these conflict copies; answer with the `removed` event and those removed.
    RemoveCopies {
        /// Cache paths.
        paths: Vec<String>,
    },
    /// The resolve is over; `result()` says what it did.
    Done,
}

/// A copy put back in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// The index key.
    pub rel: String,
    /// The copy it came from.
    pub from: String,
}

/// What `resolve` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ResolveResult {
    /// Copies put back in place (keep mine).
    pub restored: Vec<Restored>,
    /// Copies removed: their version is in the bucket, or the bucket's was kept.
    pub removed: Vec<String>,
    /// Files the push met in conflict again: copies kept.
    pub still_in_conflict: Vec<String>,
    /// Asked-for files that had no conflict copy.
    pub unknown: Vec<String>,
}

/// Where a resolve run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitPull,
    AwaitWalk,
    AwaitRestore,
    AwaitPush,
    AwaitRemove,
    Finished,
}

/// One resolve, from the pull to the last copy removed.
#[derive(Debug)]
pub struct ResolveRun {
    keep: Keep,
    rels: Vec<String>,
    model: PathModel,
    stage: Stage,
    plan: ResolvePlan,
    restored: Vec<ResolveFile>,
    settled: Vec<String>,
    still_in_conflict: Vec<String>,
    removed: Vec<String>,
}

impl ResolveRun {
    /// A run for `request` in the layout `model` binds.
    pub fn new(model: PathModel, request: ResolveRequest) -> CoreResult<ResolveRun> {
        Ok(ResolveRun {
            keep: Keep::parse(&request.keep)?,
            rels: request.rels,
            model,
            stage: Stage::Start,
            plan: ResolvePlan::default(),
            restored: Vec::new(),
            settled: Vec::new(),
            still_in_conflict: Vec::new(),
            removed: Vec::new(),
        })
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self) -> ResolveAction {
        match self.stage {
            Stage::Start | Stage::AwaitPull => {
                self.stage = Stage::AwaitPull;
                ResolveAction::Pull { verify: true }
            }
            Stage::AwaitWalk => ResolveAction::Walk,
            Stage::AwaitRestore => ResolveAction::Restore {
                files: self
                    .plan
                    .files
                    .iter()
                    .filter_map(|f| {
                        Some(Restore {
                            rel: f.rel.clone(),
                            from: f.restore_from.clone()?,
                            to: f.cache_path.clone(),
                        })
                    })
                    .collect(),
            },
            Stage::AwaitPush => ResolveAction::Push {
                confirm_deletes: false,
            },
            Stage::AwaitRemove => ResolveAction::RemoveCopies {
                paths: self.settled.clone(),
            },
            Stage::Finished => ResolveAction::Done,
        }
    }

    fn expect(&self, stage: Stage, what: &str) -> CoreResult<()> {
        if self.stage == stage {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "resolve run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// The pull is over: the items that failed. Nothing is resolved after a failed pull: a
    /// conflict it did not set aside would be settled blind.
    pub fn on_pulled(&mut self, failed: &[String]) -> CoreResult<()> {
        self.expect(Stage::AwaitPull, "event \"pulled\"")?;
        if !failed.is_empty() {
            return Err(CoreError::ResolvePullFailed {
                failed: failed.len() as u64,
                examples: failed
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        self.stage = Stage::AwaitWalk;
        Ok(())
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`).
    pub fn on_walk(&mut self, listing: &[u8]) -> CoreResult<()> {
        self.expect(Stage::AwaitWalk, "event \"walk\"")?;
        let files = decode_local(listing)?;
        self.plan = plan_resolve(&self.model, self.keep, &self.rels, &files)?;
        match self.keep {
            Keep::Mine => self.stage = Stage::AwaitRestore,
            Keep::Theirs => {
                let settled: Vec<ResolveFile> = self.plan.files.clone();
                self.settle(&settled);
            }
        }
        Ok(())
    }

    /// The rels whose copy was put back in place.
    pub fn on_restored(&mut self, rels: &[String]) -> CoreResult<()> {
        self.expect(Stage::AwaitRestore, "event \"restored\"")?;
        self.restored = self
            .plan
            .files
            .iter()
            .filter(|f| f.restore_from.is_some() && rels.contains(&f.rel))
            .cloned()
            .collect();
        self.stage = Stage::AwaitPush;
        Ok(())
    }

    /// What the push of the restored files did.
    pub fn on_pushed(&mut self, pushed: &ResolvePushed) -> CoreResult<()> {
        self.expect(Stage::AwaitPush, "event \"pushed\"")?;
        self.still_in_conflict = self
            .restored
            .iter()
            .filter(|f| pushed.conflicts.contains(&f.rel))
            .map(|f| f.rel.clone())
            .collect();
        // A file's copies go only once its version reached the bucket (or already matched it).
        let in_bucket = pushed.published || pushed.uploaded == 0;
        let settled: Vec<ResolveFile> = if in_bucket {
            self.restored
                .iter()
                .filter(|f| !pushed.conflicts.contains(&f.rel) && !pushed.failed.contains(&f.rel))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        self.settle(&settled);
        Ok(())
    }

    fn settle(&mut self, files: &[ResolveFile]) {
        self.settled = files.iter().flat_map(|f| f.copies.clone()).collect();
        self.stage = if self.settled.is_empty() {
            Stage::Finished
        } else {
            Stage::AwaitRemove
        };
    }

    /// The copies removed.
    pub fn on_removed(&mut self, removed: Vec<String>) -> CoreResult<()> {
        self.expect(Stage::AwaitRemove, "event \"removed\"")?;
        self.removed = removed;
        self.stage = Stage::Finished;
        Ok(())
    }

    /// What the resolve did; an error before the run is done.
    pub fn result(&self) -> CoreResult<ResolveResult> {
        self.expect(Stage::Finished, "result")?;
        Ok(ResolveResult {
            restored: self
                .restored
                .iter()
                .filter_map(|f| {
                    Some(Restored {
                        rel: f.rel.clone(),
                        from: f.restore_from.clone()?,
                    })
                })
                .collect(),
            removed: self.removed.clone(),
            still_in_conflict: self.still_in_conflict.clone(),
            unknown: self.plan.unknown.clone(),
        })
    }
}
