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
    /// `readMeta`: the namespace's `_index/_meta.json` as read (no bytes: none).
    Meta {
        /// Its bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
    },
    /// `readIndexes`: the solo index and the namespace's as read (no bytes: absent), with
    /// their ETags.
    Indexes {
        /// The solo index.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        solo: Option<Bytes>,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        solo_etag: Option<String>,
        /// The namespace's index.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        namespace: Option<Bytes>,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        namespace_etag: Option<String>,
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
    /// `readNamespaceIndex`: the namespace's index after the copies (no bytes: absent).
    NamespaceIndex {
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
            MigrateEvent::Meta { bytes } => self.on_meta(bytes.as_deref()),
            MigrateEvent::Indexes {
                solo,
                solo_etag,
                namespace,
                namespace_etag,
            } => self.on_indexes(
                solo.map(|b| b.0),
                solo_etag,
                namespace.map(|b| b.0),
                namespace_etag,
            ),
            MigrateEvent::Listing { listing } => self.on_listing(&listing),
            MigrateEvent::Heads { heads } => self.on_heads(&heads),
            MigrateEvent::Copied { copied } => self.on_copied(copied),
            MigrateEvent::NamespaceIndex { bytes, etag } => {
                self.on_namespace_index(bytes.map(|b| b.0), etag)
            }
            MigrateEvent::Published { published } => self.on_published(published),
            MigrateEvent::Deleted { removed } => self.on_deleted(removed),
        }
    }

    fn result(&self) -> CoreResult<MigrateResult> {
        MigrateRun::result(self)
    }
}
