//! A simulated bucket for one catalog export, and a driver that answers each action of the
//! run the way the shim does (`exportCatalog` in `js/extension/catalog.ts`): the server honours
//! each write's condition, a writer may slip in between the HEAD and the write, and a write may
//! land with its answer lost; the driver makes no decision of its own.

#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::runs::catalog_export::events::CatalogExportEvent;
use s3sync_core::runs::catalog_export::machine::{
    CatalogExportAction, CatalogExportRequest, CatalogExportResult, CatalogExportRun,
};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::shard_write::machine::PutCondition;

/// One object as the simulation keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Export {
    /// Its content hash.
    pub sha256: String,
    /// Its size.
    pub size: u64,
    /// Its ETag (none: the server sent none).
    #[serde(default)]
    pub etag: Option<String>,
}

/// The bucket and the sidecar as the export meets them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportWorld {
    /// The export in the bucket now.
    #[serde(default)]
    pub object: Option<Export>,
    /// The last export's hash the sidecar records.
    #[serde(default)]
    pub sidecar_hash: Option<String>,
    /// Another writer's export, put between our HEAD and our write.
    #[serde(default)]
    pub racing_writer: Option<Export>,
    /// Our write lands but its answer is lost, and the retry's condition then fails.
    #[serde(default)]
    pub answer_lost: bool,
    /// Requests made, in order.
    #[serde(skip)]
    pub requests: Vec<String>,
}

/// What a simulated export did: the actions (as JSON), and the result or the error's code.
#[derive(Debug, Clone)]
pub struct ExportDriven {
    /// The actions, as the shim sees them.
    pub actions: Vec<Value>,
    /// The result, or the stopping error's code and message.
    pub outcome: Result<CatalogExportResult, (String, String)>,
}

/// Runs an export of `request` in `world`, as the shim does.
pub fn export_catalog(world: &mut ExportWorld, request: CatalogExportRequest) -> ExportDriven {
    let ours = Export {
        sha256: request.sha256.clone(),
        size: request.size,
        etag: Some("\"ours\"".to_string()),
    };
    let mut actions = Vec::new();
    let mut run = match CatalogExportRun::new(request) {
        Ok(run) => run,
        Err(e) => {
            return ExportDriven {
                actions,
                outcome: Err(code(&e)),
            }
        }
    };
    let outcome = (|| loop {
        let action = Machine::poll(&mut run, &mut ()).map_err(|e| code(&e))?;
        actions.push(serde_json::to_value(&action).unwrap());
        let event = match action {
            CatalogExportAction::Done => return Machine::result(&run).map_err(|e| code(&e)),
            CatalogExportAction::ReadSidecar => CatalogExportEvent::Sidecar {
                bytes: world.sidecar_hash.as_ref().map(|hash| {
                    format!(
                        r#"{{"version":2,"remoteIndexETag":"e1","lastVerifiedAt":"2026-12-01T00:00:00.000Z","localDirty":false,"dirtyPaths":[],"bulkInvalidated":false,"lazyPullActive":false,"lastCatalogHash":"{hash}"}}"#
                    )
                        .into_bytes()
                        .into()
                }),
            },
            CatalogExportAction::Head { key } => {
                world.requests.push(format!("HEAD {key}"));
                let seen = world.object.clone();
                // Another writer slips in right after our HEAD.
                if let Some(theirs) = world.racing_writer.take() {
                    world.object = Some(theirs);
                }
                CatalogExportEvent::Head {
                    exists: seen.is_some(),
                    size: seen.as_ref().map(|o| o.size),
                    etag: seen.and_then(|o| o.etag),
                }
            }
            CatalogExportAction::Put { key, condition } => {
                world.requests.push(format!("PUT {key}"));
                let holds = match (&condition, &world.object) {
                    (PutCondition::Any, _) => true,
                    (PutCondition::Absent, current) => current.is_none(),
                    (PutCondition::Match { etag }, Some(current)) => {
                        current.etag.as_deref() == Some(etag.as_str())
                    }
                    (PutCondition::Match { .. }, None) => false,
                };
                if holds {
                    world.object = Some(ours.clone());
                }
                // A lost answer: the write landed, the retry's condition fails on our own copy.
                let written = holds && !world.answer_lost;
                CatalogExportEvent::Put { written }
            }
            CatalogExportAction::VerifyOwn { key, sha256, size } => {
                world.requests.push(format!("VERIFY {key}"));
                let ours = world
                    .object
                    .as_ref()
                    .is_some_and(|o| o.sha256 == sha256 && o.size == size);
                CatalogExportEvent::Verified { ours }
            }
            CatalogExportAction::Remember { sha256 } => {
                world.sidecar_hash = Some(sha256);
                CatalogExportEvent::Remembered
            }
        };
        Machine::handle(&mut run, &mut (), event).map_err(|e| code(&e))?;
    })();
    ExportDriven { actions, outcome }
}

fn code(error: &s3sync_core::CoreError) -> (String, String) {
    (error.code().to_string(), error.to_string())
}
