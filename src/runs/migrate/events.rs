//! What the shim reports to a migrate ([`MigrateEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::migrate::machine::{HeadFound, MigrateAction, MigrateResult, MigrateRun};

/// What happened, answering the migrate's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum MigrateEvent {
    /// `get`: the object as read (no bytes: absent), with its ETag: the namespace's
    /// `_index/_meta.json` (its ETag is not needed), the solo index, the namespace's index,
    /// and the namespace's index again after the copies.
    Got {
        /// Its bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `listAll`: the whole bucket (`key\0size\0etag\0lastModified\0` records).
    Listing {
        /// The records.
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
    },
    /// `head`: what the HEADs that answered found.
    Heads {
        /// One per key that answered.
        heads: Vec<HeadFound>,
    },
    /// `copy`: how many copies landed.
    Copied {
        /// Copies that landed.
        copied: u64,
    },
    /// `publish`: whether it landed (false stops the run with `publish-conflict`).
    Published {
        /// Whether the write landed.
        published: bool,
    },
    /// `delete`: how many originals went.
    Deleted {
        /// Originals removed.
        removed: u64,
    },
}

impl Machine for MigrateRun {
    type Context = ();
    type Action = MigrateAction;
    type Event = MigrateEvent;
    type Reply = ();
    type Output = MigrateResult;

    fn poll(&mut self, _: &mut ()) -> CoreResult<MigrateAction> {
        MigrateRun::poll(self)
    }

    fn handle(&mut self, _: &mut (), event: MigrateEvent) -> CoreResult<()> {
        match event {
            MigrateEvent::Got { bytes, etag } => self.on_got(bytes.map(|b| b.0), etag),
            MigrateEvent::Listing { listing } => self.on_listing(&listing),
            MigrateEvent::Heads { heads } => self.on_heads(&heads),
            MigrateEvent::Copied { copied } => self.on_copied(copied),
            MigrateEvent::Published { published } => self.on_published(published),
            MigrateEvent::Deleted { removed } => self.on_deleted(removed),
        }
    }

    fn result(&self) -> CoreResult<MigrateResult> {
        MigrateRun::result(self)
    }
}
