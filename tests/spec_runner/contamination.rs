//! Spec-style contamination fixtures: every JSON file under `tests/specs/contamination/` is one
//! scan of a bucket listing for objects of other namespaces under the bound one
//! (`runs::contamination::plan::find_contamination`).
//!
//! A spec holds `description`, `namespace` (the bound one), `listing` (the whole bucket, keys
//! relative to the prefix: `[[key, size, etag|null, lastModified|null], ...]`) and `expected`:
//! the report as `serde_json::to_value(report)` gives it, or a subset of it (objects match on the
//! fields they name; arrays and scalars exactly). The listing goes through the buffer format, as
//! from the shim. Whatever a spec says, every report is checked against the scan's invariants,
//! recomputed here from the listing itself.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::model::paths::Namespace;
use s3sync_core::runs::contamination::plan::find_contamination;
use s3sync_core::wire::listing::{decode_remote, encode_remote};

use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    namespace: String,
    listing: Vec<(String, u64, Option<String>, Option<String>)>,
    expected: serde_json::Map<String, Value>,
}

/// An ETag that is a content hash: quoted hex, not multipart (`-N`), not empty.
fn content_hash(etag: Option<&str>) -> Option<&str> {
    let etag = etag?.trim_matches('"');
    (!etag.is_empty() && !etag.contains('-')).then_some(etag)
}

/// Properties every report has, whatever the spec says: every object sits under the bound
/// namespace; `redundant` only when the listing holds its home copy at the same size with the
/// same content hash (the one verdict that lets a repair delete); the per-namespace counts add
/// up to the objects.
fn invariants(spec: &Spec, report: &Value, out: &mut Vec<String>) {
    let listed: BTreeMap<&str, (u64, Option<&str>)> = spec
        .listing
        .iter()
        .map(|(key, size, etag, _)| (key.as_str(), (*size, etag.as_deref())))
        .collect();
    let own = format!("{}/", spec.namespace);
    let objects = report["objects"].as_array().cloned().unwrap_or_default();
    for object in &objects {
        let key = object["key"].as_str().unwrap_or_default();
        if !key.starts_with(&own) {
            out.push(format!("invariant: {key:?} is not under {own}"));
        }
        if object["verdict"] != "redundant" {
            continue;
        }
        let home = object["homeKey"].as_str().unwrap_or_default();
        let proven = match (listed.get(key), listed.get(home)) {
            (Some((size, etag)), Some((home_size, home_etag))) => {
                size == home_size
                    && content_hash(*etag).is_some()
                    && content_hash(*etag) == content_hash(*home_etag)
            }
            _ => false,
        };
        if !proven {
            out.push(format!(
                "invariant: {key:?} is redundant without a home copy {home:?} of the same size and content hash"
            ));
        }
    }
    let counted: u64 = report["foreignNamespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["objectCount"].as_u64())
        .sum();
    if counted != objects.len() as u64 {
        out.push(format!(
            "invariant: the namespaces count {counted} objects, the report lists {}",
            objects.len()
        ));
    }
}

/// Runs one spec file; `Err` says every way the report disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(path, &["foreignNamespaces", "objects"])?;
    let own = Namespace::parse(&spec.namespace).map_err(|e| format!("namespace refused: {e}"))?;
    let buffer = encode_remote(spec.listing.iter().map(|(key, size, etag, modified)| {
        (key.as_str(), *size, etag.as_deref(), modified.as_deref())
    }));
    let decoded = decode_remote(&buffer).map_err(|e| format!("listing refused: {e}"))?;
    let objects = decoded
        .iter()
        .map(|r| r.checked())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("listing refused: {e}"))?;
    let report = find_contamination(&own, &objects);
    let actual = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    judge(
        &spec.description,
        "report",
        &spec.expected,
        &actual,
        |out| invariants(&spec, &actual, out),
    )
}
