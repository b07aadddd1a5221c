//! Spec-style rebuild fixtures: every JSON file under `tests/specs/rebuild/` is one index rebuilt
//! from bucket listing pages (`runs::rebuild::plan::RebuildBuilder`), the second seed's repair.
//!
//! A spec holds `description`, `namespace` (string or null), optional `prefix`, `pages` (listing
//! pages, keys relative to the prefix: `[[[key, size, etag|null, lastModified|null], ...], ...]`),
//! optional `now` (dates an object listed without one) and `expected`: `rels` (the kept rels, in
//! index order, exactly), `entries` (per rel, the fields `size`, `lastModified`, `sha256` it
//! names) and `report` (the report as `serde_json::to_value(report)` gives it, or a subset). Each
//! page goes through the buffer format, as from the shim. Whatever a spec says, every report is
//! checked to add up: each object seen is kept or skipped for exactly one reason.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::rebuild::plan::RebuildBuilder;
use s3sync_core::wire::listing::{decode_remote, encode_remote};

use crate::spec_diff::{judge, read_spec};

/// The default `now` of a spec.
const NOW: &str = "2026-08-07T10:00:00.000Z";

type Row = (String, u64, Option<String>, Option<String>);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    namespace: Option<String>,
    #[serde(default)]
    prefix: String,
    pages: Vec<Vec<Row>>,
    #[serde(default)]
    now: Option<String>,
    expected: serde_json::Map<String, Value>,
}

/// The report's counts add up: every object seen is kept or skipped for one reason, the bytes
/// are the kept entries', and the examples never outnumber the refusals.
fn adds_up(report: &Value, kept_bytes: u64, kept: usize, out: &mut Vec<String>) {
    let count = |field: &str| report[field].as_u64().unwrap_or(u64::MAX / 16);
    let skipped: u64 = [
        "skippedInternal",
        "skippedForeign",
        "skippedOutsideNamespace",
        "skippedUnsafe",
        "skippedFolderMarkers",
        "skippedDuplicate",
    ]
    .iter()
    .map(|f| count(f))
    .sum();
    if count("objectsSeen") != count("kept") + skipped {
        out.push(format!(
            "invariant: {} objects seen, {} kept + {skipped} skipped",
            count("objectsSeen"),
            count("kept")
        ));
    }
    if count("kept") != kept as u64 || count("bytesKept") != kept_bytes {
        out.push(format!(
            "invariant: the report keeps {} objects of {} bytes, the index {kept} of {kept_bytes}",
            count("kept"),
            count("bytesKept")
        ));
    }
    let examples = report["unsafeExamples"].as_array().map_or(0, Vec::len) as u64;
    if examples > count("skippedUnsafe") || examples > 20 {
        out.push(format!(
            "invariant: {examples} unsafe examples for {} refusals",
            count("skippedUnsafe")
        ));
    }
}

/// Runs one spec file; `Err` says every way the rebuild disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(path, &["rels", "entries", "report"])?;
    let model = PathModel::new(spec.namespace.as_deref(), &spec.prefix)
        .map_err(|e| format!("binding refused: {e}"))?;
    let now = spec.now.clone().unwrap_or_else(|| NOW.to_string());
    let mut builder = RebuildBuilder::new(model, now.clone());
    for page in &spec.pages {
        let buffer = encode_remote(page.iter().map(|(key, size, etag, modified)| {
            (key.as_str(), *size, etag.as_deref(), modified.as_deref())
        }));
        let decoded = decode_remote(&buffer).map_err(|e| format!("page refused: {e}"))?;
        builder.add_page(&decoded);
    }
    let (index, report) = builder.finish(Some(now));
    let rels: Vec<&String> = index.entries.keys().collect();
    let entries: serde_json::Map<String, Value> = index
        .entries
        .iter()
        .map(|(rel, e)| {
            let entry =
                json!({"size": e.size, "lastModified": e.last_modified, "sha256": e.sha256});
            (rel.clone(), entry)
        })
        .collect();
    let actual = json!({
        "rels": rels,
        "entries": entries,
        "report": serde_json::to_value(&report).map_err(|e| e.to_string())?,
    });
    let bytes = index.entries.values().map(|e| e.size).sum();
    judge(
        &spec.description,
        "rebuild",
        &spec.expected,
        &actual,
        |out| adds_up(&actual["report"], bytes, index.entries.len(), out),
    )
}
