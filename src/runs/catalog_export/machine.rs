//! [`CatalogExportRun`]: one upload of a namespace's catalog export.
//!
//! The export is derived (swamp core regenerates it before every push), so its upload is
//! skipped when the sidecar says the last one had the same hash (the extension remembers it the
//! same way, across processes). It is held back with `catalog-shrink` when it would replace a
//! much larger remote copy (an emptied catalog), as the push guard does for the same file, unless
//! the caller allows the shrink. The write is conditional on the copy a HEAD just saw, like every
//! write to the bucket: create-only when there is none, `If-Match` its ETag when there is one,
//! and, with the extension's client (no `If-Match`), right after that HEAD. A condition that
//! failed may have been our own earlier attempt whose answer was lost: the bucket holding our
//! bytes is success; anything else is another writer's copy, which stays, and the call fails with
//! `conflict` having written nothing (the next export sends it again, judged against the new
//! copy).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::PathModel;
use crate::runs::shard_write::machine::PutCondition;
use crate::safety::{catalog_shrinks, CATALOG_EXPORT};
use crate::state::sync_state::SyncState;

/// What the shim asks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct CatalogExportRequest {
    /// The namespace whose export this is.
    pub namespace: String,
    /// The export's size in bytes.
    pub size: u64,
    /// Its SHA-256 (hex).
    pub sha256: String,
    /// The client can send `If-Match` (false for the extension's client).
    pub conditional_client: bool,
    /// Skip an export the sidecar says was the last one sent, and remember this one there
    /// (the service; absent: neither).
    #[serde(default)]
    #[tsify(optional)]
    pub remember: Option<bool>,
    /// Send it even when it would replace a much larger remote copy (absent: no).
    #[serde(default)]
    #[tsify(optional)]
    pub allow_shrink: Option<bool>,
}

/// The next thing the shim must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum CatalogExportAction {
    /// Read the sidecar file as it is; answer `sidecar` (no bytes when there is none).
    ReadSidecar,
    /// HEAD `key`, retrying transient failures; answer `head`.
    Head {
        /// The export's key, relative to the prefix.
        key: String,
    },
    /// Write the export at `key` on `condition` (retrying transient failures); answer `put`
    /// with whether it landed (a failed condition, on any attempt, is a write that did not).
    Put {
        /// The key.
        key: String,
        /// What the write is conditional on (`any`: the extension's client, right after the
        /// HEAD).
        condition: PutCondition,
    },
    /// Say whether the object at `key` holds exactly the export's bytes (`sha256`, `size`), as
    /// the core judges a lost condition; answer `verified`.
    VerifyOwn {
        /// The key.
        key: String,
        /// The export's SHA-256.
        sha256: String,
        /// Its size.
        size: u64,
    },
    /// Keep `sha256` in the sidecar as the last export's hash (in the cache's queue); answer
    /// `remembered`.
    Remember {
        /// The hash to keep.
        sha256: String,
    },
    /// Over: read `result`.
    Done,
}

/// What the upload did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct CatalogExportResult {
    /// The bucket holds the export now (false: skipped, the last export had the same hash).
    pub uploaded: bool,
}

/// Where the upload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Sidecar,
    Head,
    Put,
    Verify,
    Remember,
    Done,
}

/// One upload of a catalog export.
#[derive(Debug, Clone)]
pub struct CatalogExportRun {
    request: CatalogExportRequest,
    key: String,
    stage: Stage,
    condition: Option<PutCondition>,
    uploaded: bool,
}

impl CatalogExportRun {
    /// An upload for `request` (its key relative to the client's prefix).
    ///
    /// # Errors
    ///
    /// A namespace the path rules refuse (nothing is requested).
    pub fn new(request: CatalogExportRequest) -> CoreResult<CatalogExportRun> {
        let model = PathModel::new(Some(&request.namespace), "")?;
        let key = model.names(&model.rel(CATALOG_EXPORT)?).remote_key;
        let stage = match request.remember {
            Some(true) => Stage::Sidecar,
            _ => Stage::Head,
        };
        Ok(CatalogExportRun {
            request,
            key,
            stage,
            condition: None,
            uploaded: false,
        })
    }

    /// The next action.
    pub fn poll(&self) -> CoreResult<CatalogExportAction> {
        Ok(match self.stage {
            Stage::Sidecar => CatalogExportAction::ReadSidecar,
            Stage::Head => CatalogExportAction::Head {
                key: self.key.clone(),
            },
            Stage::Put => CatalogExportAction::Put {
                key: self.key.clone(),
                condition: self
                    .condition
                    .clone()
                    .ok_or_else(|| CoreError::input("the catalog export has no condition"))?,
            },
            Stage::Verify => CatalogExportAction::VerifyOwn {
                key: self.key.clone(),
                sha256: self.request.sha256.clone(),
                size: self.request.size,
            },
            Stage::Remember => CatalogExportAction::Remember {
                sha256: self.request.sha256.clone(),
            },
            Stage::Done => CatalogExportAction::Done,
        })
    }

    fn expect(&self, stage: Stage, what: &str) -> CoreResult<()> {
        if self.stage != stage {
            return Err(CoreError::input(format!(
                "a {what} event came while the catalog export was not waiting for one"
            )));
        }
        Ok(())
    }

    /// `sidecar`: the sidecar as it is. The same hash as the last export's: nothing to send.
    pub fn on_sidecar(&mut self, bytes: Option<&[u8]>) -> CoreResult<()> {
        self.expect(Stage::Sidecar, "sidecar")?;
        let last = bytes
            .and_then(SyncState::parse)
            .and_then(|state| state.last_catalog_hash);
        self.stage = match last {
            Some(hash) if hash == self.request.sha256 => Stage::Done,
            _ => Stage::Head,
        };
        Ok(())
    }

    /// `head`: what is at the key now. A much larger copy is held back (`catalog-shrink`)
    /// unless allowed; otherwise the write is conditional on this copy.
    pub fn on_head(
        &mut self,
        exists: bool,
        size: Option<u64>,
        etag: Option<String>,
    ) -> CoreResult<()> {
        self.expect(Stage::Head, "head")?;
        let remote = size.unwrap_or(0);
        if exists
            && self.request.allow_shrink != Some(true)
            && catalog_shrinks(self.request.size, remote)
        {
            return Err(CoreError::CatalogShrink {
                detail: format!(
                    "the catalog export of {} ({} bytes) would replace a remote copy of {remote} bytes; it is held back (restore the catalog, or allow the shrink if the removal is intended)",
                    self.request.namespace, self.request.size
                ),
            });
        }
        self.condition = Some(match (exists, etag) {
            (false, _) => PutCondition::Absent,
            (true, Some(etag)) if self.request.conditional_client => PutCondition::Match { etag },
            // The extension's client (or a copy without an ETag): the HEAD just taken is all
            // there is.
            (true, _) => PutCondition::Any,
        });
        self.stage = Stage::Put;
        Ok(())
    }

    /// `put`: whether the write landed. A failed condition is checked against our own bytes.
    pub fn on_put(&mut self, written: bool) -> CoreResult<()> {
        self.expect(Stage::Put, "put")?;
        self.stage = if written {
            self.landed()
        } else {
            Stage::Verify
        };
        Ok(())
    }

    /// `verified`: whether the bucket holds exactly our bytes after a failed condition.
    pub fn on_verified(&mut self, ours: bool) -> CoreResult<()> {
        self.expect(Stage::Verify, "verified")?;
        if !ours {
            return Err(CoreError::ExportConflict {
                detail: format!(
                    "another writer put a catalog export of {} at {} while this one was sent; theirs stays and nothing was written (export again to replace it)",
                    self.request.namespace, self.key
                ),
            });
        }
        self.stage = self.landed();
        Ok(())
    }

    /// The export is in the bucket: remembered next when asked, else done.
    fn landed(&mut self) -> Stage {
        self.uploaded = true;
        match self.request.remember {
            Some(true) => Stage::Remember,
            _ => Stage::Done,
        }
    }

    /// `remembered`: the hash was kept (or could not be: the next export is sent again).
    pub fn on_remembered(&mut self) -> CoreResult<()> {
        self.expect(Stage::Remember, "remembered")?;
        self.stage = Stage::Done;
        Ok(())
    }

    /// What the upload did (an error before it is over).
    pub fn result(&self) -> CoreResult<CatalogExportResult> {
        match self.stage {
            Stage::Done => Ok(CatalogExportResult {
                uploaded: self.uploaded,
            }),
            _ => Err(CoreError::input("the catalog export is not over")),
        }
    }
}
