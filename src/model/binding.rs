//! Which tree a run without a namespace may act on.
//!
//! A cache swamp created for a namespaced datastore keeps everything under `{cache}/{ns}/`, with
//! the marker `{ns}/.namespace.json` beside it, and nothing of its own at the cache root. A run
//! bound to the root (solo) on such a cache sees the namespace folder as another repository's,
//! walks nothing, reads the local index (bare rels of the namespace) as the root's, and replaced
//! it: the next sync of the namespace then met false conflicts and re-uploaded files another
//! clone had deleted. Swamp core makes exactly such calls (`pushChanged()` and `markDirty()`
//! without a namespace after minting an access token, in `serve` and in device authorisation),
//! and a person does the same with the CLI and no `--namespace`.
//!
//! So before a run binds to the root, the cache's top level is looked at (the shim lists it and
//! says which folders hold a marker): a cache with payload at its root, or with no marker folder,
//! is a solo cache; one with marker folders and no root payload is namespaced, and a solo run on
//! it is never made. What happens instead depends on who asked ([`UnnamedCaller`]).

use serde::Deserialize;
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{is_internal, Namespace, NEVER_SYNCED_TREES};

/// One entry of the cache folder's top level, as the shim found it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct TopLevelEntry {
    /// Its name (one segment).
    pub name: String,
    /// A folder holding a `.namespace.json` marker file.
    #[serde(default)]
    pub marker: bool,
}

/// Who runs without a namespace, which decides what a namespaced cache leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum UnnamedCaller {
    /// The sync service under swamp core. Core always knows its repository's namespace (it is
    /// in the datastore config) and forgets to pass it on a few calls; the cache it created for
    /// that namespace names it. So one marker folder binds the service to it; several refuse.
    Service,
    /// The CLI: a person who left out `--namespace`. Guessing would act on a namespace nobody
    /// named, so any marker folder refuses, naming what to pass.
    Cli,
}

/// True for a top-level name that is bookkeeping or never syncs (the local index, the sidecar
/// and its journal, conflict copies, repair backups, temp files, locks, catalog databases,
/// `secrets`): such names say nothing about which layout the cache holds.
fn is_bookkeeping(name: &str) -> bool {
    // `is_internal` covers the index, the sidecar and its journal, locks, `_index`, `_control`
    // and catalog databases.
    is_internal(name)
        || NEVER_SYNCED_TREES.contains(&name)
        || name.starts_with(".s3sync-")
        || name == ".locks"
}

/// Decides the namespace of a run that was given none, from the cache's top level.
///
/// Returns `None` (solo) when the cache shows no namespace folder, or holds payload at its root
/// (a solo cache that also keeps another repository's folder, which the solo layout reports and
/// never touches). Otherwise the cache is namespaced: the service binds to its one namespace;
/// several, or any for the CLI, refuse with `namespace-required`, and nothing is read or written.
pub fn bind_unnamed(
    entries: &[TopLevelEntry],
    caller: UnnamedCaller,
) -> CoreResult<Option<String>> {
    let root_payload = entries
        .iter()
        .any(|e| !e.marker && !is_bookkeeping(&e.name));
    let mut namespaces: Vec<String> = entries
        .iter()
        .filter(|e| e.marker && Namespace::parse(&e.name).is_ok())
        .map(|e| e.name.clone())
        .collect();
    if namespaces.is_empty() || root_payload {
        return Ok(None);
    }
    namespaces.sort();
    match (caller, namespaces.as_slice()) {
        (UnnamedCaller::Service, [only]) => Ok(Some(only.clone())),
        _ => Err(CoreError::NamespaceRequired { namespaces }),
    }
}
