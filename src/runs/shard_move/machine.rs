//! [`ShardMoveRun`]: the one-time move of the bound tree's index to the v2 shard-first layout
//! (swamp core's `migrateMonolithToShards`).
//!
//! Idempotent: a repo already on v2 is left as it is and its meta reported. Otherwise the index
//! (the monolith, or, when there is none, the index rebuilt from a listing, not published) is
//! cut into shards and written by the shard-set write at `commitSeq` 1. When there was a
//! monolith, that write rewrites it marked as moved between the shards and the meta, `If-Match`
//! the copy the shards were cut from: a v1 writer that published since has changes the shards
//! lack, so the meta is then not written, and a cache that synced against the monolith sees its
//! ETag move. A move whose meta was not published lost to another writer: when the repo is on
//! v2 now (another move got there first), that set is reported; otherwise nothing was published
//! and the move is a `publish-conflict` (the shards written are listed nowhere).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::runs::shard_write::machine::MonolithMark;

/// The v2 set a read found (see `IndexReadRun`, purpose `shards`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ShardSetFound {
    /// The partitions the meta lists, in its order.
    pub partitions: Vec<String>,
    /// The meta's commit sequence.
    pub commit_seq: u64,
}

/// The next thing the shim must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ShardMoveAction {
    /// Read the index as a move to shards does (`IndexReadRun`, purpose `shards`); answer
    /// `shardsRead` with the v2 set, or without one when the repo is not on v2.
    ReadShards,
    /// Load the index into the session as a sync does, rebuilding it from a listing when
    /// there is none, without publishing the rebuild; answer `loaded` with whether a monolith
    /// exists and its ETag.
    LoadIndex,
    /// Write the session's index as a v2 shard set (`ShardWriteRun` with this `commitSeq` and
    /// `markMonolith`); answer `written`.
    WriteShards {
        /// The meta's commit sequence.
        commit_seq: u64,
        /// The monolith to rewrite marked as moved, over the copy read (none: there is none).
        #[tsify(optional)]
        #[serde(skip_serializing_if = "Option::is_none")]
        mark_monolith: Option<MonolithMark>,
    },
    /// The move is over: read `result`.
    Done,
}

/// What the move did (swamp core's `MigrateIndexResult`, and whether this run moved it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ShardMoveResult {
    /// The meta's version after the move (2).
    pub version: u32,
    /// The partitions the meta lists.
    pub partitions: Vec<String>,
    /// The meta's commit sequence.
    pub commit_seq: u64,
    /// True when this run wrote the set; false when the repo was on v2 already, or another
    /// move published first.
    pub moved: bool,
}

/// Where the move stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    ReadCurrent,
    Load,
    Write,
    ReadTheirs,
    Done,
}

/// A move of the bound tree's index to shards.
#[derive(Debug, Clone)]
pub struct ShardMoveRun {
    now_iso: String,
    stage: Stage,
    mark: Option<MonolithMark>,
    result: Option<ShardMoveResult>,
}

/// The commit sequence of a first v2 set.
const FIRST_COMMIT: u64 = 1;

impl ShardMoveRun {
    /// A move at `now_iso` (ISO 8601, recorded in the monolith marked as moved).
    pub fn new(now_iso: String) -> ShardMoveRun {
        ShardMoveRun {
            now_iso,
            stage: Stage::ReadCurrent,
            mark: None,
            result: None,
        }
    }

    /// The next action.
    pub fn poll(&self) -> ShardMoveAction {
        match self.stage {
            Stage::ReadCurrent | Stage::ReadTheirs => ShardMoveAction::ReadShards,
            Stage::Load => ShardMoveAction::LoadIndex,
            Stage::Write => ShardMoveAction::WriteShards {
                commit_seq: FIRST_COMMIT,
                mark_monolith: self.mark.clone(),
            },
            Stage::Done => ShardMoveAction::Done,
        }
    }

    fn expect(&self, stages: &[Stage], what: &str) -> CoreResult<()> {
        if !stages.contains(&self.stage) {
            return Err(CoreError::input(format!(
                "a {what} event came while the move to shards was not waiting for one"
            )));
        }
        Ok(())
    }

    fn report(&mut self, set: ShardSetFound, moved: bool) {
        self.stage = Stage::Done;
        self.result = Some(ShardMoveResult {
            version: 2,
            partitions: set.partitions,
            commit_seq: set.commit_seq,
            moved,
        });
    }

    /// `shardsRead`: the v2 set the read found, if any.
    pub fn on_shards_read(&mut self, v2: Option<ShardSetFound>) -> CoreResult<()> {
        self.expect(&[Stage::ReadCurrent, Stage::ReadTheirs], "shardsRead")?;
        match (v2, self.stage) {
            (Some(set), _) => {
                self.report(set, false);
                Ok(())
            }
            (None, Stage::ReadCurrent) => {
                self.stage = Stage::Load;
                Ok(())
            }
            (None, _) => Err(CoreError::PublishConflict {
                what: "another writer changed the index while it was moved to shards; nothing was published (the shards written are listed nowhere)".to_string(),
            }),
        }
    }

    /// `loaded`: the session holds the index; whether it came from a monolith, and that
    /// copy's ETag.
    pub fn on_loaded(&mut self, monolith: bool, etag: Option<String>) -> CoreResult<()> {
        self.expect(&[Stage::Load], "loaded")?;
        self.mark = monolith.then(|| MonolithMark {
            etag,
            now_iso: self.now_iso.clone(),
        });
        self.stage = Stage::Write;
        Ok(())
    }

    /// `written`: whether the meta was published, and the partitions written.
    pub fn on_written(&mut self, published: bool, partitions: Vec<String>) -> CoreResult<()> {
        self.expect(&[Stage::Write], "written")?;
        if published {
            self.report(
                ShardSetFound {
                    partitions,
                    commit_seq: FIRST_COMMIT,
                },
                true,
            );
        } else {
            // Another move that published its meta first moved the same index: report it.
            self.stage = Stage::ReadTheirs;
        }
        Ok(())
    }

    /// What the move did (an error before it is over).
    pub fn result(&self) -> CoreResult<ShardMoveResult> {
        self.result
            .clone()
            .ok_or_else(|| CoreError::input("the move to shards is not over"))
    }
}
