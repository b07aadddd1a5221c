//! Paths, names and bindings: what a datastore is, for the shim.

use serde::Serialize;
use tsify_next::Tsify;
use wasm_bindgen::prelude::*;

use crate::model::paths::{find_collisions, partition_key, Namespace, PathModel};

use super::convert::*;

/// Every stable code the core uses, by kind: `{guard, problem, refusal, error}` (sorted). The
/// shim's own lists are checked against these, so the two sides cannot drift.
#[wasm_bindgen(js_name = codeLists, unchecked_return_type = "CodeLists")]
pub fn code_lists() -> Result<JsValue, JsValue> {
    to_js(&crate::codes::code_lists())
}

/// The namespace a run given none acts on, from the cache's top level (`[{name, marker}]`):
/// null for solo, the one namespace a service's cache proves, or a `namespace-required` error
/// (see `binding::bind_unnamed`).
#[wasm_bindgen(js_name = bindUnnamed)]
pub fn bind_unnamed(
    #[wasm_bindgen(unchecked_param_type = "TopLevelEntry[]")] entries: JsValue,
    #[wasm_bindgen(unchecked_param_type = "UnnamedCaller")] caller: JsValue,
) -> Result<Option<String>, JsValue> {
    let entries: Vec<crate::model::binding::TopLevelEntry> = from_js(entries, "entries")?;
    let caller: crate::model::binding::UnnamedCaller = from_js(caller, "caller")?;
    crate::model::binding::bind_unnamed(&entries, caller).map_err(to_js_error)
}

/// The path model of a namespace (empty or absent: solo) and a bucket prefix.
fn path_model(namespace: Option<String>, prefix: Option<String>) -> Result<PathModel, JsValue> {
    let namespace = namespace.filter(|n| !n.is_empty());
    PathModel::new(namespace.as_deref(), prefix.as_deref().unwrap_or("")).map_err(to_js_error)
}

/// The three names of a rel (an index key) under a namespace (empty or absent: solo) and a
/// bucket prefix: `{rel, indexKey, remoteKey, cachePath}`.
#[wasm_bindgen(js_name = mapRel, unchecked_return_type = "FileNames")]
pub fn map_rel(
    rel: &str,
    namespace: Option<String>,
    prefix: Option<String>,
) -> Result<JsValue, JsValue> {
    let model = path_model(namespace, prefix)?;
    let rel = model.rel(rel).map_err(to_js_error)?;
    to_js(&model.names(&rel))
}

/// The three names of a file a caller (swamp core) names by its cache path (`<ns>/<rel>`) or
/// its bare rel: `{rel, indexKey, remoteKey, cachePath}`.
#[wasm_bindgen(js_name = mapCallerPath, unchecked_return_type = "FileNames")]
pub fn map_caller_path(
    path: &str,
    namespace: Option<String>,
    prefix: Option<String>,
) -> Result<JsValue, JsValue> {
    let model = path_model(namespace, prefix)?;
    let rel = model.rel_from_caller_path(path).map_err(to_js_error)?;
    to_js(&model.names(&rel))
}

/// The folders a scoped sync of `models` (`[{modelType, modelId}]`) covers.
#[wasm_bindgen(js_name = scopeForModels)]
pub fn scope_for_models(
    #[wasm_bindgen(unchecked_param_type = "{ modelType: string; modelId: string }[]")]
    models: JsValue,
) -> Result<Vec<String>, JsValue> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Model {
        model_type: String,
        model_id: String,
    }
    let models: Vec<Model> = from_js(models, "models")?;
    Ok(crate::model::paths::model_scope(
        models
            .iter()
            .map(|m| (m.model_type.as_str(), m.model_id.as_str())),
    ))
}

/// The rel of a remote key (relative to the prefix); throws `key-outside-namespace` or a path
/// code.
#[wasm_bindgen(js_name = relFromRemoteKey)]
pub fn rel_from_remote_key(key: &str, namespace: Option<String>) -> Result<String, JsValue> {
    let model = path_model(namespace, None)?;
    Ok(model
        .rel_from_remote_key(key)
        .map_err(to_js_error)?
        .into_string())
}

/// Classifies a cache-relative path: `{place, rel?, detail?}` with `place` one of `payload`,
/// `internal`, `root-layout`, `foreign-namespace`, `other`, `unsafe`.
#[wasm_bindgen(js_name = classifyCachePath, unchecked_return_type = "CachePlace")]
pub fn classify_cache_path(
    path: &str,
    namespace: Option<String>,
    foreign: Option<Vec<String>>,
) -> Result<JsValue, JsValue> {
    let model = path_model(namespace, None)?;
    let foreign = foreign.unwrap_or_default().into_iter().collect();
    use crate::model::paths::CachePlace as Found;
    /// Which part of the layout a path belongs to.
    #[derive(Serialize, Tsify)]
    #[serde(rename_all = "kebab-case")]
    #[tsify(missing_as_null, hashmap_as_object)]
    enum Place {
        /// A file of the bound tree.
        Payload,
        /// Bookkeeping that never syncs.
        Internal,
        /// A data tree at the cache root in namespaced mode.
        RootLayout,
        /// A folder of another namespace.
        ForeignNamespace,
        /// Anything else.
        Other,
        /// A path that breaks the path rules.
        Unsafe,
    }
    /// Where a cache-relative path sits relative to the bound layout.
    #[derive(Serialize, Tsify)]
    #[tsify(missing_as_null, hashmap_as_object)]
    struct CachePlace {
        /// The part of the layout.
        place: Place,
        /// The rel, for payload, internal and root-layout paths.
        #[serde(skip_serializing_if = "Option::is_none")]
        rel: Option<String>,
        /// The foreign namespace, or the refusal code of an unsafe path.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    }
    let at = |place, rel, detail| CachePlace { place, rel, detail };
    let place = match model.classify_cache_path(path, &foreign) {
        Found::Payload(rel) => at(Place::Payload, Some(rel.into_string()), None),
        Found::Internal(rel) => at(Place::Internal, Some(rel), None),
        Found::RootLayout(rel) => at(Place::RootLayout, Some(rel.into_string()), None),
        Found::ForeignNamespace(ns) => at(Place::ForeignNamespace, None, Some(ns)),
        Found::Other => at(Place::Other, None, None),
        Found::Unsafe(reason) => at(Place::Unsafe, None, Some(reason.code().to_string())),
    };
    to_js(&place)
}

/// Scans a listing of the whole bucket (the `encodeRemotePage` buffer) for objects of other
/// namespaces under `namespace`, with a verdict per object (only `redundant` ones may go).
#[wasm_bindgen(js_name = findContamination, unchecked_return_type = "ContaminationReport")]
pub fn find_contamination_js(namespace: &str, listing: &[u8]) -> Result<JsValue, JsValue> {
    let own = Namespace::parse(namespace).map_err(to_js_error)?;
    let objects = crate::wire::listing::decode_remote(listing)
        .and_then(|records| {
            records
                .iter()
                .map(|r| r.checked())
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(to_js_error)?;
    to_js(&crate::runs::contamination::plan::find_contamination(
        &own, &objects,
    ))
}

/// Text from the bucket made safe to show a person: control characters, DEL, C1 controls and
/// bidirectional overrides escaped (`\u{1b}`); `keepNewlines` keeps `\n` (a message of ours).
#[wasm_bindgen(js_name = printable)]
pub fn printable(text: &str, keep_newlines: bool) -> String {
    crate::bytes::printable::printable_keeping(text, keep_newlines)
}

/// The v2 shard partition of a rel, or `undefined`.
#[wasm_bindgen(js_name = partitionKey)]
pub fn partition_key_of(rel: &str) -> Option<String> {
    partition_key(rel)
}

/// Groups of paths that cannot coexist in one cache: `[{kind, paths}]`.
#[wasm_bindgen(js_name = findCollisions, unchecked_return_type = "Collision[]")]
pub fn find_collisions_of(paths: Vec<String>) -> Result<JsValue, JsValue> {
    to_js(&find_collisions(paths.iter().map(String::as_str)))
}

/// The names of the bookkeeping files at the cache root and of the solo lock key:
/// `{localIndex, sidecar, journal, journalTaken, soloLockKey}`, so the shim copies none of them.
#[wasm_bindgen(js_name = bookkeepingNames)]
pub fn bookkeeping_names() -> Result<JsValue, JsValue> {
    to_js(&crate::model::paths::BOOKKEEPING_NAMES)
}
