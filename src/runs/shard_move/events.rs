//! What the shim reports to a move to shards ([`ShardMoveEvent`]), and the run as a
//! [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::shard_move::machine::{
    ShardMoveAction, ShardMoveResult, ShardMoveRun, ShardSetFound,
};

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ShardMoveEvent {
    /// `readShards`: the v2 set found; none when the repo is not on v2.
    ShardsRead {
        /// The set.
        #[serde(default)]
        #[tsify(optional)]
        v2: Option<ShardSetFound>,
    },
    /// `loadIndex`: the session holds the index.
    Loaded {
        /// It came from the monolith (false: rebuilt from a listing, there was none).
        monolith: bool,
        /// The monolith's ETag as read.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `writeShards`: the shard-set write is over.
    Written {
        /// The meta was published.
        published: bool,
        /// The partitions written.
        partitions: Vec<String>,
    },
}

impl Machine for ShardMoveRun {
    type Context = ();
    type Action = ShardMoveAction;
    type Event = ShardMoveEvent;
    type Reply = ();
    type Output = ShardMoveResult;

    fn poll(&mut self, _: &mut ()) -> CoreResult<ShardMoveAction> {
        Ok(ShardMoveRun::poll(self))
    }

    fn handle(&mut self, _: &mut (), event: ShardMoveEvent) -> CoreResult<()> {
        match event {
            ShardMoveEvent::ShardsRead { v2 } => self.on_shards_read(v2),
            ShardMoveEvent::Loaded { monolith, etag } => self.on_loaded(monolith, etag),
            ShardMoveEvent::Written {
                published,
                partitions,
            } => self.on_written(published, partitions),
        }
    }

    fn result(&self) -> CoreResult<ShardMoveResult> {
        ShardMoveRun::result(self)
    }
}
