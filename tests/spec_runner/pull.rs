//! Spec-style pull fixtures: every JSON file under `tests/specs/pull/` is one case.
//!
//! A spec holds `description`, `namespace` (string or null), optional `prefix`, `index` (an index
//! document), `local` (`[[path, size, mtimeMs|null], ...]`, the cache walk), `options`
//! (`{metadataOnly, caseInsensitive}`) and `expected`: the pull plan as
//! `serde_json::to_value(plan)` gives it, or a subset of it. Objects in `expected` match when
//! every field they name matches (so `summary` or `layout` may name a few fields); arrays and
//! scalars must match exactly. The runner drives `session::Session` the way the shim does
//! (index bytes in, local listing buffer in) and fails naming every spec that disagrees.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::runs::pull::plan::PullOptions;
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::wire::listing::encode_local;

use crate::spec_diff::differences;

/// The fields of the plan a spec may name.
const PLAN_FIELDS: &[&str] = &[
    "summary",
    "downloads",
    "mtimeUpdates",
    "lazyFolders",
    "refused",
    "prune",
    "layout",
    "conflicts",
    "localChanges",
    "setAside",
    "deletedRemotely",
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
    options: Value,
    expected: serde_json::Map<String, Value>,
}

/// Properties every pull plan has, whatever the spec says.
fn invariants(spec: &Spec, plan: &Value, out: &mut Vec<String>) {
    let downloads = plan["downloads"].as_array().cloned().unwrap_or_default();
    let mut bytes = 0;
    for t in &downloads {
        let rel = t["rel"].as_str().unwrap_or_default();
        let remote = t["remoteKey"].as_str().unwrap_or_default();
        let cache = t["cachePath"].as_str().unwrap_or_default();
        bytes += t["size"].as_u64().unwrap_or_default();
        if remote != cache {
            out.push(format!(
                "invariant: remoteKey {remote:?} != cachePath {cache:?}"
            ));
        }
        let want = match &spec.namespace {
            Some(ns) => format!("{ns}/{rel}"),
            None => rel.to_string(),
        };
        if cache != want {
            out.push(format!("invariant: cachePath {cache:?} should be {want:?}"));
        }
    }
    let summary = &plan["summary"];
    let counts = [
        ("download", downloads.len()),
        ("refused", plan["refused"].as_array().map_or(0, Vec::len)),
        ("pruned", plan["prune"].as_array().map_or(0, Vec::len)),
    ];
    for (field, len) in counts {
        if summary[field].as_u64() != Some(len as u64) {
            out.push(format!(
                "invariant: summary.{field} {} != {len} listed",
                summary[field]
            ));
        }
    }
    if summary["downloadBytes"].as_u64() != Some(bytes) {
        out.push(format!(
            "invariant: summary.downloadBytes {} != {bytes}",
            summary["downloadBytes"]
        ));
    }
    // Every entry of the index is accounted for exactly once.
    let entries = spec.index["entries"].as_object().map_or(0, |e| e.len()) as u64;
    // Files the base kept from being overwritten are accounted for by their lists; a conflict
    // set aside is also a download, so it is counted there, not twice.
    let kept_by_base: u64 = ["conflicts", "localChanges"]
        .iter()
        .map(|f| plan[*f].as_array().map_or(0, Vec::len) as u64)
        .sum::<u64>()
        - plan["setAside"].as_array().map_or(0, Vec::len) as u64;
    let accounted: u64 = ["download", "upToDate", "lazy", "refused", "pruned"]
        .iter()
        .map(|f| summary[*f].as_u64().unwrap_or_default())
        .sum::<u64>()
        + kept_by_base;
    if accounted != entries {
        out.push(format!(
            "invariant: {entries} entries, but the summary accounts for {accounted}"
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
    let options: PullOptions = if spec.options.is_null() {
        PullOptions::default()
    } else {
        serde_json::from_value(spec.options.clone()).map_err(|e| format!("options: {e}"))?
    };

    let mut session =
        Session::new(spec.namespace.as_deref(), &spec.prefix).map_err(|e| e.to_string())?;
    let index_bytes = serde_json::to_vec(&spec.index).unwrap();
    let loaded = session
        .load_index(&index_bytes)
        .map_err(|e| format!("load_index: {e}"))?;
    if let Some(base) = &spec.base {
        let base_bytes = serde_json::to_vec(base).unwrap();
        if session.load_base(base_bytes.clone()) != BaseLoad::Loaded {
            return Err("the spec's base is no loadable index".into());
        }
    }
    let listing = encode_local(
        spec.local
            .iter()
            .map(|(path, size, mtime)| (path.as_str(), *size, *mtime)),
    );
    let plan = session
        .plan_pull(&listing, &options)
        .map_err(|e| format!("plan_pull: {e}"))?;
    let plan = serde_json::to_value(plan).unwrap();

    let mut out = Vec::new();
    if loaded.entries != spec.index["entries"].as_object().map_or(0, |e| e.len()) as u64 {
        out.push(format!("load_index counted {} entries", loaded.entries));
    }
    differences(
        "expected",
        &Value::Object(spec.expected.clone()),
        &plan,
        &mut out,
    );
    invariants(&spec, &plan, &mut out);
    if out.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n    {}\n    full plan: {}",
            spec.description,
            out.join("\n    "),
            serde_json::to_string(&plan).unwrap()
        ))
    }
}

/// The runner itself: a wrong expectation is reported, naming the field.
#[test]
fn runner_reports_differences() {
    let mut out = Vec::new();
    differences(
        "expected",
        &serde_json::json!({"summary": {"download": 2}, "prune": []}),
        &serde_json::json!({"summary": {"download": 1, "lazy": 0}, "prune": ["x"]}),
        &mut out,
    );
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(
        out.iter().any(|d| d.contains("expected.summary.download:")),
        "{out:?}"
    );
    assert!(out.iter().any(|d| d.contains("expected.prune:")), "{out:?}");
    let mut out = Vec::new();
    differences(
        "expected",
        &serde_json::json!({"layout": {"rootLayoutTrees": ["data"]}}),
        &serde_json::json!({"layout": {"rootLayoutTrees": ["data"], "payloadFiles": 3}}),
        &mut out,
    );
    assert!(out.is_empty(), "a subset of an object matches: {out:?}");
}
