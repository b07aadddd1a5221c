//! The layout repair as a state machine in the shape of the pull and push runs: the core says
//! what to do next ([`RepairRun::poll`]), the shim does it and hands back what happened.
//!
//! Order: read the journal (a repair that did not finish is rolled forward); load the remote
//! index; walk and plan, hashing only what the plan asks for; then, applied, write the journal
//! (`running`), move the only copies into the namespace folder, remove proven-redundant copies,
//! move differing copies, other namespaces' folders and stray bookkeeping to the backup folder,
//! remove the emptied root-level trees; hydrate the namespace folder download-only; remove the
//! backups the hydration proved identical; and write the journal `complete` only when nothing
//! failed, was refused or was left. Every step is an atomic rename or unlink the shim does; the
//! plan is recomputed from the cache on every run, so a killed repair rolls forward when run
//! again. A repair never writes to the bucket.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::codes::GuardCode;
use crate::error::{CoreError, CoreResult};
use crate::runs::repair::plan::{
    plan_backup_dedupe, BackupDedupe, RepairPlan, RepairSummary, REPAIR_DIR,
};
use crate::runs::session::Session;
use crate::wire::listing::decode_local;

/// Where repair keeps its journal (inside the never-synced repair folder).
pub fn journal_path() -> String {
    format!("{REPAIR_DIR}/journal.json")
}

/// What a repair was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct RepairRequest {
    /// Carry it out (otherwise only plan).
    pub apply: bool,
}

/// One change to the cache, done by the shim as one atomic operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "step",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RepairStep {
    /// Write `body` at `path` atomically (temp file + rename).
    WriteJournal {
        /// The journal's cache path.
        path: String,
        /// The journal's text.
        body: String,
    },
    /// Rename `from` to `to`, never over an existing file (answer `occupied` when one is
    /// there), creating the folders above `to`.
    Move {
        /// Where the file is.
        from: String,
        /// Where it goes.
        to: String,
    },
    /// Unlink the file at `path`.
    Remove {
        /// The file's cache path.
        path: String,
    },
    /// Remove the folder at `path` if it holds no file (answer `occupied` when it does).
    RemoveTree {
        /// The folder's cache path.
        path: String,
    },
}

impl RepairStep {
    /// The cache path the step is about, for a refusal's report.
    fn item(&self) -> &str {
        match self {
            RepairStep::WriteJournal { path, .. }
            | RepairStep::Remove { path }
            | RepairStep::RemoveTree { path } => path,
            RepairStep::Move { from, .. } => from,
        }
    }
}

/// What became of one step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(
    tag = "result",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StepResult {
    /// Done.
    Done,
    /// Not done: a folder in its path is a symlink, and nothing is written through one.
    Refused {
        /// What the shim found.
        message: String,
    },
    /// Not done: a move's target exists, or a tree still holds files.
    Occupied,
}

/// The next thing the shim must do for a repair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum RepairAction {
    /// Read the journal at `path` (undefined when there is none); answer with the `journal` event.
    ReadJournal {
        /// The journal's cache path.
        path: String,
    },
    /// Load the remote index into the planner without publishing anything (a missing one is
    /// rebuilt from a listing, in memory); answer with the `index` event.
    LoadIndex,
    /// Walk the cache; answer with the `walk` event.
    Walk,
    /// Hash these cache paths (those that still exist); answer with the `hashes` event.
    Hash {
        /// Cache paths.
        paths: Vec<String>,
    },
    /// Do `steps` in order, each on its own, and answer with the `applied` event and one result per
    /// step; say `narration` first when there is one.
    Apply {
        /// The steps.
        steps: Vec<RepairStep>,
        /// What to tell the person before the steps.
        narration: Option<String>,
    },
    /// Hydrate the namespace folder download-only (a verified pull that keeps every local
    /// file); answer with the `hydrated` event.
    Hydrate,
    /// The repair is over; `result()` says what it did.
    Done,
}

/// A step refused because a folder in its path is a symlink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RefusedStep {
    /// The cache path of the step.
    pub item: String,
    /// Always `symlink-in-path`.
    #[tsify(type = "GuardCode")]
    pub code: GuardCode,
    /// What the shim found.
    pub message: String,
}

/// What a repair did (or, not applied, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RepairResult {
    /// The plan.
    pub plan: RepairPlan,
    /// True when it was carried out.
    pub applied: bool,
    /// True when an interrupted repair was found and rolled forward.
    pub resumed: bool,
    /// Root-level folders left because something new appeared in them meanwhile.
    pub left_trees: Vec<String>,
    /// Backups removed after the hydration proved them identical to the namespace copy.
    pub deduped_backups: u64,
    /// Steps refused (`symlink-in-path`): the file stays where it is, nothing is written
    /// through the link, and the rest of the repair goes on.
    pub refused: Vec<RefusedStep>,
    /// True when the journal now says `complete`.
    pub complete: bool,
}

/// What a batch of steps was for, so their results are read the right way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batch {
    /// The journal (`running`) and the plan's moves, removes and tree removals.
    Repair,
    /// Removing backups the hydration proved redundant.
    Dedupe,
    /// The journal (`complete`).
    Complete,
}

/// Where a repair run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitJournal,
    AwaitIndex,
    AwaitWalk,
    AwaitHashes,
    Planned,
    AwaitApply(Batch),
    Applied(Batch),
    AwaitHydrate,
    AwaitDedupeWalk,
    AwaitDedupeHashes,
    Finished,
}

/// One repair, from the journal to the journal.
#[derive(Debug, Clone)]
pub struct RepairRun {
    request: RepairRequest,
    started_iso: String,
    finished_iso: String,
    stage: Stage,
    resumed: bool,
    listing: Vec<u8>,
    /// The cache paths the current hash stage asked for.
    asked: Vec<String>,
    plan: Option<RepairPlan>,
    steps: Vec<RepairStep>,
    refused: Vec<RefusedStep>,
    left_trees: Vec<String>,
    hydration_failures: u64,
    deduped_backups: u64,
    complete: bool,
}

impl RepairRun {
    /// A repair run for `request`, started at `now_iso` (the journal records it).
    pub fn new(request: RepairRequest, now_iso: &str) -> RepairRun {
        RepairRun {
            request,
            started_iso: now_iso.to_string(),
            finished_iso: now_iso.to_string(),
            stage: Stage::Start,
            resumed: false,
            listing: Vec::new(),
            asked: Vec::new(),
            plan: None,
            steps: Vec::new(),
            refused: Vec::new(),
            left_trees: Vec::new(),
            hydration_failures: 0,
            deduped_backups: 0,
            complete: false,
        }
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self) -> RepairAction {
        loop {
            match &self.stage {
                Stage::Start | Stage::AwaitJournal => {
                    self.stage = Stage::AwaitJournal;
                    return RepairAction::ReadJournal {
                        path: journal_path(),
                    };
                }
                Stage::AwaitIndex => return RepairAction::LoadIndex,
                Stage::AwaitWalk | Stage::AwaitDedupeWalk => return RepairAction::Walk,
                Stage::AwaitHashes | Stage::AwaitDedupeHashes => {
                    return RepairAction::Hash {
                        paths: self.asked.clone(),
                    }
                }
                Stage::Planned if !self.request.apply => self.stage = Stage::Finished,
                Stage::Planned => {
                    self.steps = self.repair_steps();
                    self.stage = Stage::AwaitApply(Batch::Repair);
                }
                Stage::AwaitApply(batch) => {
                    let narration = (*batch == Batch::Repair && self.resumed)
                        .then(|| "an interrupted repair was found: rolling it forward".to_string());
                    return RepairAction::Apply {
                        steps: self.steps.clone(),
                        narration,
                    };
                }
                Stage::Applied(Batch::Repair) => self.stage = Stage::AwaitHydrate,
                Stage::AwaitHydrate => return RepairAction::Hydrate,
                Stage::Applied(Batch::Dedupe) => self.settle(),
                Stage::Applied(Batch::Complete) => {
                    self.complete = true;
                    self.stage = Stage::Finished;
                }
                Stage::Finished => return RepairAction::Done,
            }
        }
    }

    /// After the dedupe: the journal says `complete` only when nothing failed, was refused or
    /// was left, so an unfinished repair is rolled forward by the next run.
    fn settle(&mut self) {
        if self.hydration_failures == 0 && self.left_trees.is_empty() && self.refused.is_empty() {
            let summary = self.plan.as_ref().map(|p| p.summary.clone());
            self.steps = vec![RepairStep::WriteJournal {
                path: journal_path(),
                body: journal_body("complete", "finishedAt", &self.finished_iso, summary),
            }];
            self.stage = Stage::AwaitApply(Batch::Complete);
        } else {
            self.stage = Stage::Finished;
        }
    }

    /// The applied repair's steps, in the order that keeps every state a rerun can roll
    /// forward: the journal first, the only copies moved before anything is removed.
    fn repair_steps(&self) -> Vec<RepairStep> {
        let Some(plan) = &self.plan else {
            return Vec::new();
        };
        let mut steps = vec![RepairStep::WriteJournal {
            path: journal_path(),
            body: journal_body(
                "running",
                "startedAt",
                &self.started_iso,
                Some(plan.summary.clone()),
            ),
        }];
        steps.extend(plan.move_into_namespace.iter().map(|m| RepairStep::Move {
            from: m.from.clone(),
            to: m.to.clone(),
        }));
        steps.extend(plan.remove_redundant.iter().map(|r| RepairStep::Remove {
            path: r.path.clone(),
        }));
        steps.extend(plan.backup.iter().map(|m| RepairStep::Move {
            from: m.from.clone(),
            to: m.to.clone(),
        }));
        steps.extend(
            plan.remove_trees
                .iter()
                .map(|t| RepairStep::RemoveTree { path: t.clone() }),
        );
        steps
    }

    fn expect(&self, stage: &Stage, what: &str) -> CoreResult<()> {
        if &self.stage == stage {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "repair run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// The journal as read (`None`: there is none), or why it could not be read (a folder in
    /// its path is a symlink).
    pub fn on_journal(&mut self, bytes: Option<&[u8]>, refused: Option<String>) -> CoreResult<()> {
        self.expect(&Stage::AwaitJournal, "event \"journal\"")?;
        // A journal that does not say `complete` was left by a repair that stopped: one that
        // cannot be read at all was not written complete either.
        self.resumed = bytes.is_some_and(|b| {
            serde_json::from_slice::<serde_json::Value>(b)
                .map(|v| v["status"] == "running")
                .unwrap_or(true)
        });
        if let Some(message) = refused {
            self.refused.push(RefusedStep {
                item: journal_path(),
                code: GuardCode::SymlinkInPath,
                message,
            });
        }
        self.stage = Stage::AwaitIndex;
        Ok(())
    }

    /// The remote index is loaded into the session.
    pub fn on_index(&mut self) -> CoreResult<()> {
        self.expect(&Stage::AwaitIndex, "event \"index\"")?;
        self.stage = Stage::AwaitWalk;
        Ok(())
    }

    /// The cache walk (a local listing buffer, `encodeLocalListing`) and what it could not read.
    pub fn on_walk(
        &mut self,
        session: &Session,
        listing: &[u8],
        walk_errors: &[String],
    ) -> CoreResult<()> {
        match self.stage {
            // A plan made on a cache that cannot all be read could move the only copy of a
            // file it did not see over; the dedupe after it only ever removes proven copies.
            Stage::AwaitWalk if !walk_errors.is_empty() => Err(CoreError::CacheUnreadable {
                detail: walk_errors[0].clone(),
            }),
            Stage::AwaitWalk => {
                let plan = session.plan_repair(listing, &BTreeMap::new())?;
                self.listing = listing.to_vec();
                self.asked = plan.needs_hash.clone();
                self.stage = if self.asked.is_empty() {
                    Stage::Planned
                } else {
                    Stage::AwaitHashes
                };
                self.plan = Some(plan);
                Ok(())
            }
            Stage::AwaitDedupeWalk => {
                let files = decode_local(listing)?;
                let BackupDedupe {
                    needs_hash,
                    redundant,
                } = plan_backup_dedupe(session.model(), &files, &BTreeMap::new());
                self.listing = listing.to_vec();
                if needs_hash.is_empty() {
                    self.dedupe(redundant);
                } else {
                    self.asked = needs_hash;
                    self.stage = Stage::AwaitDedupeHashes;
                }
                Ok(())
            }
            _ => self.expect(&Stage::AwaitWalk, "event \"walk\""),
        }
    }

    /// The SHA-256 of the paths asked for that still exist, by cache path.
    pub fn on_hashes(
        &mut self,
        session: &Session,
        hashes: &BTreeMap<String, String>,
    ) -> CoreResult<()> {
        match self.stage {
            Stage::AwaitHashes => {
                if let Some(gone) = self.asked.iter().find(|p| !hashes.contains_key(*p)) {
                    // The plan would be made on a cache that is not there any more.
                    return Err(CoreError::FileVanished { path: gone.clone() });
                }
                self.plan = Some(session.plan_repair(&self.listing, hashes)?);
                self.stage = Stage::Planned;
                Ok(())
            }
            Stage::AwaitDedupeHashes => {
                let files = decode_local(&self.listing)?;
                // A backup that vanished meanwhile is simply not proven redundant.
                let proven = plan_backup_dedupe(session.model(), &files, hashes);
                self.dedupe(proven.redundant);
                Ok(())
            }
            _ => self.expect(&Stage::AwaitHashes, "event \"hashes\""),
        }
    }

    /// Removes the backups proven redundant, if any.
    fn dedupe(&mut self, redundant: Vec<crate::runs::repair::plan::Redundant>) {
        self.steps = redundant
            .into_iter()
            .map(|r| RepairStep::Remove { path: r.path })
            .collect();
        self.stage = if self.steps.is_empty() {
            Stage::Applied(Batch::Dedupe)
        } else {
            Stage::AwaitApply(Batch::Dedupe)
        };
    }

    /// One result per step of the last `apply` action, in order.
    pub fn on_applied(&mut self, results: &[StepResult]) -> CoreResult<()> {
        let Stage::AwaitApply(batch) = self.stage else {
            return Err(CoreError::input(format!(
                "repair run: onApplied out of order (at {:?})",
                self.stage
            )));
        };
        if results.len() != self.steps.len() {
            return Err(CoreError::input(format!(
                "repair run: {} results for {} steps",
                results.len(),
                self.steps.len()
            )));
        }
        for (step, result) in self.steps.iter().zip(results) {
            match (result, step) {
                (StepResult::Done, RepairStep::Remove { .. }) if batch == Batch::Dedupe => {
                    self.deduped_backups += 1;
                }
                (StepResult::Done, _) => {}
                (StepResult::Refused { message }, _) => {
                    if let RepairStep::RemoveTree { path } = step {
                        self.left_trees.push(path.clone());
                    }
                    self.refused.push(RefusedStep {
                        item: step.item().to_string(),
                        code: GuardCode::SymlinkInPath,
                        message: message.clone(),
                    });
                }
                (StepResult::Occupied, RepairStep::RemoveTree { path }) => {
                    self.left_trees.push(path.clone());
                }
                // A file appeared where an only copy was going: stop, never overwrite it.
                (StepResult::Occupied, RepairStep::Move { to, .. }) => {
                    return Err(CoreError::RepairConflict { path: to.clone() });
                }
                (StepResult::Occupied, other) => {
                    return Err(CoreError::input(format!(
                        "repair run: {other:?} cannot be occupied"
                    )));
                }
            }
        }
        self.steps.clear();
        self.stage = Stage::Applied(batch);
        Ok(())
    }

    /// The hydration is over: how many downloads failed, at `now_iso`.
    pub fn on_hydrated(&mut self, failures: u64, now_iso: &str) -> CoreResult<()> {
        self.expect(&Stage::AwaitHydrate, "event \"hydrated\"")?;
        self.hydration_failures = failures;
        self.finished_iso = now_iso.to_string();
        self.stage = Stage::AwaitDedupeWalk;
        Ok(())
    }

    /// What the repair did; an error before the run is done.
    pub fn result(&self) -> CoreResult<RepairResult> {
        let (Stage::Finished, Some(plan)) = (&self.stage, &self.plan) else {
            return Err(CoreError::input(format!(
                "repair run: result before the run is done (at {:?})",
                self.stage
            )));
        };
        Ok(RepairResult {
            plan: plan.clone(),
            applied: self.request.apply,
            resumed: self.resumed,
            left_trees: self.left_trees.clone(),
            deduped_backups: self.deduped_backups,
            refused: self.refused.clone(),
            complete: self.complete,
        })
    }
}

/// The journal's text: `{"status", <when>: <time>, "plan": <summary>}`, pretty, one line break
/// at the end.
fn journal_body(status: &str, when: &str, time: &str, plan: Option<RepairSummary>) -> String {
    let mut body = serde_json::Map::new();
    body.insert("status".into(), status.into());
    body.insert(when.into(), time.into());
    body.insert(
        "plan".into(),
        serde_json::to_value(plan).unwrap_or(serde_json::Value::Null),
    );
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(body))
        .unwrap_or_else(|_| String::from("{}"));
    text + "\n"
}
