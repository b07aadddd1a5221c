//! What the shim reports to an index read ([`IndexReadEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::index_read::machine::{IndexReadAction, IndexReadResult, IndexReadRun};
use crate::runs::machine::Machine;
use crate::runs::session::Session;

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum IndexReadEvent {
    /// `get`: the object, with its ETag; no bytes when there is none (a 404).
    Got {
        /// Its bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
        /// Its ETag, when the server sent one.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `getShards`: one shard read.
    Shard {
        /// Its partition.
        partition: String,
        /// Its bytes.
        #[tsify(type = "Uint8Array")]
        bytes: Bytes,
        /// Its ETag, when the server sent one.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `getShards`: every shard was asked for; `failed` of them could not be read.
    ShardsRead {
        /// How many could not be read.
        failed: u64,
        /// Why the first of them could not.
        #[serde(default)]
        #[tsify(optional)]
        first: Option<String>,
    },
    /// `rebuild`: the rebuild ran; the session holds its index.
    Rebuilt,
}

impl Machine for IndexReadRun {
    type Context = Session;
    type Action = IndexReadAction;
    type Event = IndexReadEvent;
    type Reply = ();
    type Output = IndexReadResult;

    fn poll(&mut self, session: &mut Session) -> CoreResult<IndexReadAction> {
        IndexReadRun::poll(self, session)
    }

    fn handle(&mut self, session: &mut Session, event: IndexReadEvent) -> CoreResult<()> {
        match event {
            IndexReadEvent::Got { bytes, etag } => match bytes {
                Some(bytes) => self.on_got(session, bytes.0, etag),
                None => self.on_absent(),
            },
            IndexReadEvent::Shard {
                partition,
                bytes,
                etag,
            } => self.on_shard(partition, bytes.0, etag),
            IndexReadEvent::ShardsRead { failed, first } => {
                self.on_shards_read(session, failed, first)
            }
            IndexReadEvent::Rebuilt => self.on_rebuilt(),
        }
    }

    fn result(&self) -> CoreResult<IndexReadResult> {
        IndexReadRun::result(self)
    }
}
