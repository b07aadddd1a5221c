//! What the shim reports to a resolve ([`ResolveEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::resolve::machine::{ResolveAction, ResolvePushed, ResolveResult, ResolveRun};

/// What happened, answering the resolve's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ResolveEvent {
    /// `pull`: the pull is over; the items that failed.
    Pulled {
        /// Rels whose pull failed.
        failed: Vec<String>,
    },
    /// `walk`: the cache walk (a local listing buffer, `encodeLocalListing`).
    Walk {
        /// The listing.
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
    },
    /// `restore`: the rels whose copy was put back in place.
    Restored {
        /// The rels.
        rels: Vec<String>,
    },
    /// `push`: what the push did.
    Pushed(ResolvePushed),
    /// `removeCopies`: the copies removed.
    Removed {
        /// Their cache paths.
        removed: Vec<String>,
    },
}

impl Machine for ResolveRun {
    type Context = ();
    type Action = ResolveAction;
    type Event = ResolveEvent;
    type Reply = ();
    type Output = ResolveResult;

    fn poll(&mut self, _: &mut ()) -> CoreResult<ResolveAction> {
        Ok(ResolveRun::poll(self))
    }

    fn handle(&mut self, _: &mut (), event: ResolveEvent) -> CoreResult<()> {
        match event {
            ResolveEvent::Pulled { failed } => self.on_pulled(&failed),
            ResolveEvent::Walk { listing } => self.on_walk(&listing),
            ResolveEvent::Restored { rels } => self.on_restored(&rels),
            ResolveEvent::Pushed(pushed) => self.on_pushed(&pushed),
            ResolveEvent::Removed { removed } => self.on_removed(removed),
        }
    }

    fn result(&self) -> CoreResult<ResolveResult> {
        ResolveRun::result(self)
    }
}
