//! Spec-style migrate fixtures: every JSON file under `tests/specs/migrate/` is one case of the
//! remote half of a solo → namespaced migrate (`runs::migrate::plan::plan_migrate`).
//!
//! A spec holds `description`, `namespace`, optional `prefix`, `listing` (one listing of the
//! whole bucket, keys relative to the prefix: `[[key, size, etag|null, lastModified|null], ...]`),
//! `soloIndex` and `namespaceIndex` (index documents, or null when the bucket has none), optional
//! `now` (dates an entry built from a copy listed without one), and `expected`: the plan as
//! `serde_json::to_value(plan)` gives it, or a subset of it (objects match on the fields they
//! name; arrays and scalars exactly). The listing goes through the buffer format, as from the
//! shim. Whatever a spec says, every plan is checked against the migrate's safety invariants.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use s3sync_core::index::Index;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::migrate::plan::{plan_migrate, MigrateInputs};
use s3sync_core::wire::listing::{decode_remote, encode_remote};

use crate::spec_diff::{judge, read_spec};

/// The default `now` of a spec.
const NOW: &str = "2026-08-07T10:00:00.000Z";

/// The fields of the plan a spec may name.
const PLAN_FIELDS: &[&str] = &[
    "summary",
    "copy",
    "verified",
    "conflicts",
    "toIndex",
    "removable",
    "needsEtag",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Spec {
    description: String,
    namespace: String,
    #[serde(default)]
    prefix: String,
    listing: Vec<(String, u64, Option<String>, Option<String>)>,
    solo_index: Option<Value>,
    namespace_index: Option<Value>,
    #[serde(default)]
    now: Option<String>,
    expected: serde_json::Map<String, Value>,
}

/// The rels of one list of the plan.
fn rels_of(plan: &Value, field: &str) -> Vec<String> {
    plan[field]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["rel"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Properties every migrate plan has, whatever the spec says: an original is removable only
/// when its copy is verified; a rel is copied, verified or a conflict, never two of them; a
/// copy goes to the rel under the namespace; the counts are the lists' lengths.
fn invariants(spec: &Spec, plan: &Value, out: &mut Vec<String>) {
    let verified: BTreeSet<String> = rels_of(plan, "verified").into_iter().collect();
    for rel in rels_of(plan, "removable") {
        if !verified.contains(&rel) {
            out.push(format!(
                "invariant: {rel:?} is removable but its copy is not verified"
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for field in ["copy", "verified", "conflicts"] {
        for rel in rels_of(plan, field) {
            if !seen.insert(rel.clone()) {
                out.push(format!(
                    "invariant: {rel:?} is in `{field}` and in another list"
                ));
            }
        }
    }
    let prefix = format!("{}/", spec.namespace);
    for item in plan["copy"].as_array().into_iter().flatten() {
        let (rel, to) = (item["rel"].as_str(), item["to"].as_str());
        if let (Some(rel), Some(to)) = (rel, to) {
            if to != format!("{prefix}{rel}") {
                out.push(format!(
                    "invariant: {rel:?} is copied to {to:?}, not under {prefix}"
                ));
            }
        }
    }
    let counts = [
        ("toCopy", "copy"),
        ("verified", "verified"),
        ("conflicts", "conflicts"),
        ("toIndex", "toIndex"),
        ("removable", "removable"),
    ];
    for (count, list) in counts {
        let want = plan[list].as_array().map_or(0, Vec::len) as u64;
        if plan["summary"][count].as_u64() != Some(want) {
            out.push(format!(
                "invariant: summary.{count} is {} but `{list}` has {want}",
                plan["summary"][count]
            ));
        }
    }
}

/// Runs one spec file; `Err` says every way the plan disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(path, PLAN_FIELDS)?;
    let model = PathModel::new(Some(&spec.namespace), &spec.prefix)
        .map_err(|e| format!("namespace refused: {e}"))?;
    let buffer = encode_remote(spec.listing.iter().map(|(key, size, etag, modified)| {
        (key.as_str(), *size, etag.as_deref(), modified.as_deref())
    }));
    let listing = decode_remote(&buffer).map_err(|e| format!("listing refused: {e}"))?;
    let parse = |doc: &Option<Value>, name: &str| -> Result<Option<Index>, String> {
        doc.as_ref()
            .map(|doc| {
                let bytes = serde_json::to_vec(doc).map_err(|e| e.to_string())?;
                Index::parse(&bytes).map_err(|e| format!("{name} refused: {e}"))
            })
            .transpose()
    };
    let solo = parse(&spec.solo_index, "soloIndex")?;
    let ns = parse(&spec.namespace_index, "namespaceIndex")?;
    let plan = plan_migrate(
        &model,
        MigrateInputs {
            listing: &listing,
            solo_index: solo.as_ref(),
            ns_index: ns.as_ref(),
            now_iso: spec.now.as_deref().unwrap_or(NOW),
        },
    );
    let actual = serde_json::to_value(&plan).map_err(|e| e.to_string())?;
    judge(&spec.description, "plan", &spec.expected, &actual, |out| {
        invariants(&spec, &actual, out)
    })
}
