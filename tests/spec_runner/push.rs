//! Spec-style push fixtures: every JSON file under `tests/specs/push/` is one case.
//!
//! A spec holds `description`, `namespace` (string or null), optional `prefix`, `index` (an index
//! document), `local` (`[[path, size, mtimeMs|null], ...]`, the cache walk), `tombstones`
//! (`markDirty` paths, normalised with `safety::normalize_tombstone` as the shim does; paths that
//! cannot be evidence are dropped), `hashes` (`{cachePath: sha256}`, the answer to an earlier
//! plan's `needsHash`), `options` (`{deleteMissing, maxDeletes, maxDeletePercent,
//! allowCatalogShrink, walkErrors, listingErrors, lazyPullActive}`, defaults when absent) and
//! `expected`: the push plan as `serde_json::to_value(plan)` gives it, or a subset of it.
//! Objects in `expected` match when every field they name matches (so an upload may name just
//! `rel` and `reason`, a verdict just its `code`); arrays and scalars must match exactly.
//!
//! The runner drives `session::Session` the way the shim does (index bytes in, local listing
//! buffer in), checks the invariants every push plan has whatever the spec says, and fails
//! naming every spec that disagrees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::model::paths::{is_internal, is_never_synced};
use s3sync_core::runs::push::plan::PushInput;
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::safety::{
    covering_tombstone, normalize_tombstone, DeletePolicy, RunFacts, DEFAULT_MAX_DELETES,
    DEFAULT_MAX_DELETE_PERCENT,
};
use s3sync_core::wire::listing::encode_local;

use crate::spec_diff::differences;

/// The fields of the plan a spec may name.
const PLAN_FIELDS: &[&str] = &[
    "summary",
    "needsHash",
    "uploads",
    "deletes",
    "withheld",
    "missing",
    "behind",
    "mtimeUpdates",
    "blocked",
    "prune",
    "layout",
];

/// The verdicts that withhold every delete.
const DELETE_GUARDS: &[&str] = &[
    "mixed-layout",
    "namespace-tree-missing",
    "delete-cap",
    "lazy-hydration",
    "sidecar-unreadable",
    "symlink-in-path",
    "walk-error",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    namespace: Option<String>,
    #[serde(default)]
    prefix: String,
    index: Value,
    /// The local index (what the cache last synced), when the spec has one.
    #[serde(default)]
    base: Option<Value>,
    local: Vec<(String, u64, Option<i64>)>,
    #[serde(default)]
    tombstones: Vec<String>,
    #[serde(default)]
    hashes: BTreeMap<String, String>,
    #[serde(default)]
    options: SpecOptions,
    expected: serde_json::Map<String, Value>,
}

/// The shim's push options (`js/core/mod.ts` `PushOptions`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpecOptions {
    #[serde(default)]
    delete_missing: bool,
    max_deletes: Option<u64>,
    max_delete_percent: Option<f64>,
    #[serde(default)]
    allow_catalog_shrink: bool,
    #[serde(default)]
    walk_errors: u64,
    #[serde(default)]
    listing_errors: u64,
    #[serde(default)]
    lazy_pull_active: bool,
    #[serde(default)]
    sidecar_unreadable: bool,
    #[serde(default)]
    symlinked_folders: u64,
}

impl SpecOptions {
    fn policy(&self) -> DeletePolicy {
        DeletePolicy {
            delete_missing: self.delete_missing,
            max_deletes: self.max_deletes.unwrap_or(DEFAULT_MAX_DELETES),
            max_delete_percent: self
                .max_delete_percent
                .unwrap_or(DEFAULT_MAX_DELETE_PERCENT),
            allow_catalog_shrink: self.allow_catalog_shrink,
        }
    }

    fn facts(&self) -> RunFacts {
        RunFacts {
            walk_errors: self.walk_errors,
            listing_errors: self.listing_errors,
            lazy_pull_active: self.lazy_pull_active,
            sidecar_unreadable: self.sidecar_unreadable,
            symlinked_folders: self.symlinked_folders,
        }
    }
}

fn strs(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn items(value: &Value) -> Vec<Value> {
    value.as_array().cloned().unwrap_or_default()
}

/// Properties every push plan has, whatever the spec says.
fn invariants(spec: &Spec, tombstones: &BTreeSet<String>, plan: &Value, out: &mut Vec<String>) {
    let under = |rel: &str| match &spec.namespace {
        Some(ns) => format!("{ns}/{rel}"),
        None => rel.to_string(),
    };
    let local: BTreeSet<&str> = spec.local.iter().map(|(p, _, _)| p.as_str()).collect();
    let uploads = items(&plan["uploads"]);
    let deletes = items(&plan["deletes"]);
    let withheld = items(&plan["withheld"]);
    let missing = strs(&plan["missing"]);
    let blocked: Vec<String> = items(&plan["blocked"])
        .iter()
        .map(|v| v["code"].as_str().unwrap_or_default().to_string())
        .collect();
    let summary = &plan["summary"];

    // Counts agree with the lists.
    let held_back = blocked.iter().filter(|c| *c == "catalog-shrink").count();
    let counts = [
        ("upload", uploads.len()),
        ("delete", deletes.len()),
        ("withheldDeletes", withheld.len()),
        ("missing", missing.len()),
        ("heldBack", held_back),
    ];
    for (field, len) in counts {
        if summary[field].as_u64() != Some(len as u64) {
            out.push(format!(
                "invariant: summary.{field} {} != {len} listed",
                summary[field]
            ));
        }
    }
    let bytes: u64 = uploads.iter().filter_map(|u| u["size"].as_u64()).sum();
    if summary["uploadBytes"].as_u64() != Some(bytes) {
        out.push(format!(
            "invariant: summary.uploadBytes {} != {bytes}",
            summary["uploadBytes"]
        ));
    }

    // Uploads come from the bound tree, with all three names agreeing.
    for upload in &uploads {
        let rel = upload["rel"].as_str().unwrap_or_default();
        let cache = upload["cachePath"].as_str().unwrap_or_default();
        let remote = upload["remoteKey"].as_str().unwrap_or_default();
        if cache != under(rel) || remote != cache {
            out.push(format!(
                "invariant: upload {rel:?} has cachePath {cache:?} and remoteKey {remote:?}"
            ));
        }
        if !local.contains(cache) {
            out.push(format!("invariant: upload {cache:?} is not in the walk"));
        }
        if is_internal(rel) || is_never_synced(rel) {
            out.push(format!("invariant: upload of {rel:?}, which never travels"));
        }
    }

    // Every delete, allowed or withheld, carries evidence that holds.
    for delete in deletes.iter().chain(&withheld) {
        let rel = delete["rel"].as_str().unwrap_or_default();
        let cache = under(rel);
        if delete["remoteKey"].as_str() != Some(cache.as_str()) {
            out.push(format!(
                "invariant: delete {rel:?} has remoteKey {}",
                delete["remoteKey"]
            ));
        }
        if local.contains(cache.as_str()) {
            out.push(format!(
                "invariant: delete {rel:?}, which is present locally"
            ));
        }
        if is_internal(rel) || is_never_synced(rel) {
            out.push(format!("invariant: delete of {rel:?}, which never travels"));
        }
        let evidence = &delete["evidence"];
        match evidence["kind"].as_str() {
            Some("tombstone") => {
                let path = evidence["path"].as_str().unwrap_or_default();
                if covering_tombstone(tombstones, &cache).map(String::as_str) != Some(path) {
                    out.push(format!(
                        "invariant: delete {rel:?} names tombstone {path:?}, which does not cover it"
                    ));
                }
            }
            Some("deleteMissing") if spec.options.delete_missing => {}
            _ => out.push(format!(
                "invariant: delete {rel:?} without valid evidence: {evidence}"
            )),
        }
    }

    // Guards: deletes go only when no guard fired, and nothing is withheld without a reason.
    let guarded = blocked.iter().any(|c| DELETE_GUARDS.contains(&c.as_str()));
    if guarded && !deletes.is_empty() {
        out.push(format!(
            "invariant: {} deletes despite {blocked:?}",
            deletes.len()
        ));
    }
    if !withheld.is_empty() && !guarded {
        out.push("invariant: deletes withheld without a guard".to_string());
    }
    if !deletes.is_empty() && !withheld.is_empty() {
        out.push("invariant: deletes both allowed and withheld".to_string());
    }
    if tombstones.is_empty() && !spec.options.delete_missing && !deletes.is_empty() {
        out.push("invariant: deletes without tombstones or --delete-missing".to_string());
    }

    // Every index entry is accounted for exactly once.
    let entries = spec.index["entries"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let never_synced = entries
        .keys()
        .filter(|k| !is_internal(k) && is_never_synced(k))
        .count();
    let changed = uploads.iter().filter(|u| u["reason"] != "new").count();
    let accounted = changed
        + summary["unchanged"].as_u64().unwrap_or_default() as usize
        + plan["needsHash"].as_array().map_or(0, Vec::len)
        + held_back
        + deletes.len()
        + withheld.len()
        + missing.len()
        + plan["prune"].as_array().map_or(0, Vec::len)
        + never_synced;
    if accounted != entries.len() {
        out.push(format!(
            "invariant: {} entries, but the plan accounts for {accounted}",
            entries.len()
        ));
    }
}

/// Runs one spec file; the error names every difference and broken invariant.
pub(crate) fn run(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let spec: Spec = serde_json::from_str(&text).map_err(|e| format!("bad spec file: {e}"))?;
    if spec.description.trim().is_empty() {
        return Err("the spec has no description".into());
    }
    for field in spec.expected.keys() {
        if !PLAN_FIELDS.contains(&field.as_str()) {
            return Err(format!("expected names unknown plan field {field:?}"));
        }
    }
    if spec.expected.is_empty() {
        return Err("the spec expects nothing".into());
    }

    let mut session =
        Session::new(spec.namespace.as_deref(), &spec.prefix).map_err(|e| e.to_string())?;
    let index_bytes = serde_json::to_vec(&spec.index).unwrap();
    session
        .load_index(&index_bytes)
        .map_err(|e| format!("load_index: {e}"))?;
    if let Some(base) = &spec.base {
        let base_bytes = serde_json::to_vec(base).unwrap();
        if session.load_base(base_bytes.clone()) != BaseLoad::Loaded {
            return Err("the spec's base is no readable index".into());
        }
    }
    let tombstones: BTreeSet<String> = spec
        .tombstones
        .iter()
        .filter_map(|t| normalize_tombstone(session.model(), t))
        .collect();
    let input = PushInput {
        tombstones: tombstones.clone(),
        hashes: spec.hashes.clone(),
        policy: spec.options.policy(),
        facts: spec.options.facts(),
        ..PushInput::default()
    };
    let listing = encode_local(
        spec.local
            .iter()
            .map(|(path, size, mtime)| (path.as_str(), *size, *mtime)),
    );
    let plan = session
        .plan_push(&listing, &input)
        .map_err(|e| format!("plan_push: {e}"))?;
    let plan = serde_json::to_value(plan).unwrap();

    let mut out = Vec::new();
    differences(
        "expected",
        &Value::Object(spec.expected.clone()),
        &plan,
        &mut out,
    );
    invariants(&spec, &tombstones, &plan, &mut out);
    if out.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n    {}\n    tombstones: {tombstones:?}\n    full plan: {}",
            spec.description,
            out.join("\n    "),
            serde_json::to_string(&plan).unwrap()
        ))
    }
}

/// The runner's invariants catch a plan that breaks the safety model, so a green run means
/// something.
#[test]
fn invariants_catch_an_unsafe_plan() {
    let spec: Spec = serde_json::from_value(serde_json::json!({
        "description": "hand-made",
        "namespace": "ns",
        "index": {"version": 1, "entries": {
            "files/a": {"key": "files/a", "size": 1},
            "files/b": {"key": "files/b", "size": 1}
        }},
        "local": [["ns/files/a", 1, null], ["data/x/y", 1, null]],
        "expected": {"summary": {}}
    }))
    .unwrap();
    let plan = serde_json::json!({
        "summary": {"upload": 1, "uploadBytes": 1, "delete": 2, "withheldDeletes": 0,
                    "missing": 0, "unchanged": 0, "heldBack": 0},
        "needsHash": [],
        "uploads": [{"rel": "x/y", "remoteKey": "x/y", "cachePath": "data/x/y", "size": 1,
                     "reason": "new"}],
        "deletes": [
            {"rel": "files/a", "remoteKey": "ns/files/a", "evidence": {"kind": "deleteMissing"}},
            {"rel": "files/b", "remoteKey": "ns/files/b",
             "evidence": {"kind": "tombstone", "path": "ns/files"}}
        ],
        "withheld": [],
        "missing": [],
        "mtimeUpdates": [],
        "blocked": [{"code": "mixed-layout", "message": "m"}],
        "prune": []
    });
    let mut out = Vec::new();
    invariants(&spec, &BTreeSet::new(), &plan, &mut out);
    for needle in [
        "upload \"x/y\" has cachePath",
        "delete \"files/a\", which is present locally",
        "delete \"files/a\" without valid evidence",
        "names tombstone \"ns/files\", which does not cover it",
        "2 deletes despite",
        "deletes without tombstones",
    ] {
        assert!(
            out.iter().any(|line| line.contains(needle)),
            "{needle:?} not reported: {out:#?}"
        );
    }
}
