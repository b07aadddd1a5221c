//! What the shim reports to a rebuild ([`RebuildEvent`]), and the rebuild as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::rebuild::machine::{RebuildAction, RebuildResult, RebuildRun};
use crate::runs::session::Session;

/// What happened, answering the rebuild's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RebuildEvent {
    /// `get`: the index object as read (no bytes: there is none), with its ETag.
    Got {
        /// The object's bytes; absent when there is none.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `list`: one page (`key\0size\0etag\0lastModified\0` records); keys holding a NUL come
    /// separately in `unencodable` and are refused.
    Page {
        /// The page's records.
        #[tsify(type = "Uint8Array")]
        page: Bytes,
        /// Keys the records cannot carry.
        unencodable: Vec<String>,
    },
    /// `list`: the listing is complete; the rebuilt index becomes the session's.
    Listed,
    /// `listTopFolders`: the first segments of one page of the bucket's top level.
    TopFolders {
        /// The segments.
        folders: Vec<String>,
    },
    /// `publish` / `publishShards`: whether it landed (false: another writer's index got
    /// there first), and its new ETag.
    Published {
        /// Whether the write landed.
        published: bool,
        /// The new ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
}

impl Machine for RebuildRun {
    type Context = Session;
    type Action = RebuildAction;
    type Event = RebuildEvent;
    type Reply = ();
    type Output = RebuildResult;

    fn poll(&mut self, session: &mut Session) -> CoreResult<RebuildAction> {
        RebuildRun::poll(self, session)
    }

    fn handle(&mut self, session: &mut Session, event: RebuildEvent) -> CoreResult<()> {
        match event {
            RebuildEvent::Got { bytes, etag } => self.on_got(session, bytes.as_deref(), etag),
            RebuildEvent::Page { page, unencodable } => self.on_page(session, &page, &unencodable),
            RebuildEvent::Listed => self.on_listed(session),
            RebuildEvent::TopFolders { folders } => self.on_top_folders(session, &folders),
            RebuildEvent::Published { published, etag } => self.on_published(published, etag),
        }
    }

    fn result(&self) -> CoreResult<RebuildResult> {
        self.outcome()
    }
}
