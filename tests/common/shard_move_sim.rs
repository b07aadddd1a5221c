//! A simulated repo for the move to shards, and a driver that answers each action of the run
//! the way the shim does (`migrateToShards` in `js/ops/shards.ts`): the reads and the shard-set
//! write are runs of their own, tested with them, so here each answers with what the repo holds;
//! the driver makes no decision of its own.

#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::shard_move::events::ShardMoveEvent;
use s3sync_core::runs::shard_move::machine::{
    ShardMoveAction, ShardMoveResult, ShardMoveRun, ShardSetFound,
};

/// The time a simulated move records.
pub const NOW: &str = "2026-12-01T00:00:00.000Z";

/// What the repo holds as the move meets it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShardRepo {
    /// The v2 set the first read finds (none: the repo is on v1, or has no index).
    #[serde(default)]
    pub v2: Option<ShardSetFound>,
    /// The monolith's ETag when there is one (`""`: one without an ETag); none: no monolith,
    /// the load rebuilds from a listing.
    #[serde(default)]
    pub monolith: Option<String>,
    /// The partitions the shard-set write cuts the index into.
    #[serde(default)]
    pub partitions: Vec<String>,
    /// The shard-set write publishes its meta (false: a condition failed, another writer got
    /// there first).
    #[serde(default = "yes")]
    pub publishes: bool,
    /// The v2 set a read finds after a write that did not publish.
    #[serde(default)]
    pub theirs: Option<ShardSetFound>,
}

fn yes() -> bool {
    true
}

/// What a simulated move did: the actions asked for (each as JSON), and the result or the
/// stopping error's code and message.
#[derive(Debug, Clone)]
pub struct ShardMoveDriven {
    /// The actions, as the shim sees them.
    pub actions: Vec<Value>,
    /// The result, or the stopping error's code and message.
    pub outcome: Result<ShardMoveResult, (String, String)>,
}

/// Runs a move over `repo`, as the shim does.
pub fn move_to_shards(repo: &ShardRepo) -> ShardMoveDriven {
    let mut run = ShardMoveRun::new(NOW.to_string());
    let mut actions = Vec::new();
    let mut reads = 0;
    let outcome = (|| loop {
        let action = Machine::poll(&mut run, &mut ()).map_err(|e| code(&e))?;
        actions.push(serde_json::to_value(&action).unwrap());
        let event = match action {
            ShardMoveAction::Done => return Machine::result(&run).map_err(|e| code(&e)),
            ShardMoveAction::ReadShards => {
                reads += 1;
                let v2 = match reads {
                    1 => repo.v2.clone(),
                    _ => repo.theirs.clone(),
                };
                ShardMoveEvent::ShardsRead { v2 }
            }
            ShardMoveAction::LoadIndex => ShardMoveEvent::Loaded {
                monolith: repo.monolith.is_some(),
                etag: repo.monolith.clone().filter(|e| !e.is_empty()),
            },
            ShardMoveAction::WriteShards { .. } => ShardMoveEvent::Written {
                published: repo.publishes,
                partitions: repo.partitions.clone(),
            },
        };
        Machine::handle(&mut run, &mut (), event).map_err(|e| code(&e))?;
    })();
    ShardMoveDriven { actions, outcome }
}

fn code(error: &s3sync_core::CoreError) -> (String, String) {
    (error.code().to_string(), error.to_string())
}
