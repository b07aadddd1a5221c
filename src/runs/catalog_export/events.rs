//! What the shim reports to a catalog export ([`CatalogExportEvent`]), and the run as a
//! [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::catalog_export::machine::{
    CatalogExportAction, CatalogExportResult, CatalogExportRun,
};
use crate::runs::machine::Machine;

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum CatalogExportEvent {
    /// `readSidecar`: its bytes; none when there is no sidecar.
    Sidecar {
        /// The sidecar file's bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
    },
    /// `head`: what is at the key.
    Head {
        /// An object is there.
        exists: bool,
        /// Its size.
        #[serde(default)]
        #[tsify(optional)]
        size: Option<u64>,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `put`: whether the write landed.
    Put {
        /// False when its condition failed.
        written: bool,
    },
    /// `verifyOwn`: whether the object holds exactly the export's bytes.
    Verified {
        /// Our bytes are there.
        ours: bool,
    },
    /// `remember`: done (kept, or not: either way the upload stands).
    Remembered,
}

impl Machine for CatalogExportRun {
    type Context = ();
    type Action = CatalogExportAction;
    type Event = CatalogExportEvent;
    type Reply = ();
    type Output = CatalogExportResult;

    fn poll(&mut self, _: &mut ()) -> CoreResult<CatalogExportAction> {
        CatalogExportRun::poll(self)
    }

    fn handle(&mut self, _: &mut (), event: CatalogExportEvent) -> CoreResult<()> {
        match event {
            CatalogExportEvent::Sidecar { bytes } => {
                self.on_sidecar(bytes.as_ref().map(|b| &b.0[..]))
            }
            CatalogExportEvent::Head { exists, size, etag } => self.on_head(exists, size, etag),
            CatalogExportEvent::Put { written } => self.on_put(written),
            CatalogExportEvent::Verified { ours } => self.on_verified(ours),
            CatalogExportEvent::Remembered => self.on_remembered(),
        }
    }

    fn result(&self) -> CoreResult<CatalogExportResult> {
        CatalogExportRun::result(self)
    }
}
