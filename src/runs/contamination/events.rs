//! What the shim reports to a contamination repair ([`ContaminationEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::contamination::machine::{
    ContaminationAction, ContaminationRun, ContaminationSummary,
};
use crate::runs::machine::Machine;
use crate::runs::migrate::machine::HeadFound;

/// What happened, answering the contamination repair's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ContaminationEvent {
    /// `listAll`: the whole bucket (`key\0size\0etag\0lastModified\0` records).
    Listing {
        /// The records.
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
    },
    /// `head`: what the HEADs found.
    Heads {
        /// One per key asked.
        heads: Vec<HeadFound>,
    },
    /// `get`: the bound index as read (no bytes: there is none), with its ETag.
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
    /// `publish`: whether it landed (false stops the run with `publish-conflict`).
    Published {
        /// Whether the write landed.
        published: bool,
    },
    /// `delete`: how many objects went, and the keys whose conditional delete found another
    /// version.
    Deleted {
        /// Objects deleted.
        deleted: u64,
        /// Keys kept: changed since the listing.
        changed: Vec<String>,
    },
}

impl Machine for ContaminationRun {
    type Context = ();
    type Action = ContaminationAction;
    type Event = ContaminationEvent;
    type Reply = ();
    type Output = ContaminationSummary;

    fn poll(&mut self, _: &mut ()) -> CoreResult<ContaminationAction> {
        Ok(ContaminationRun::poll(self))
    }

    fn handle(&mut self, _: &mut (), event: ContaminationEvent) -> CoreResult<()> {
        match event {
            ContaminationEvent::Listing { listing } => self.on_listing(&listing),
            ContaminationEvent::Heads { heads } => self.on_heads(&heads),
            ContaminationEvent::Got { bytes, etag } => self.on_index(bytes.as_deref(), etag),
            ContaminationEvent::Published { published } => self.on_published(published),
            ContaminationEvent::Deleted { deleted, changed } => self.on_deleted(deleted, &changed),
        }
    }

    fn result(&self) -> CoreResult<ContaminationSummary> {
        ContaminationRun::result(self)
    }
}
