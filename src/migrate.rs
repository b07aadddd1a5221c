//! The remote side of a solo → namespaced migrate: which solo-layout objects to copy to their
//! namespaced keys, which copies are verified, and which originals may then be removed.
//!
//! Server-side copies only; an original is removable only once its copy is verified (same size
//! and, where both sides have a content ETag, the same ETag) and only when the user asked. Keys
//! that belong to another namespace, bookkeeping and anything outside the data trees are never
//! touched.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::listing::RemoteListed;
use crate::paths::{is_internal, PathModel, DATA_TREES, NAMESPACE_MARKER};
use crate::sync_state::{is_trusted_etag, unquote_etag};

/// One object of the solo layout and its namespaced copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrateItem {
    /// The rel (also the solo key).
    pub rel: String,
    /// The namespaced key.
    pub to: String,
    /// Size of the original.
    pub size: u64,
}

/// Counts of a migrate plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrateSummary {
    /// Solo-layout objects found.
    pub solo_objects: u64,
    /// Copies still to make.
    pub to_copy: u64,
    /// Copies present and verified.
    pub verified: u64,
    /// Keys passed over (other namespaces, bookkeeping, unsafe, outside the data trees).
    pub passed_over: u64,
}

/// The migrate plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigratePlan {
    /// Counts.
    pub summary: MigrateSummary,
    /// Objects to copy (no verified copy yet).
    pub copy: Vec<MigrateItem>,
    /// Objects whose copy exists and matches: their originals may be removed (with the flag).
    pub verified: Vec<MigrateItem>,
}

fn same_object(a: &RemoteListed<'_>, b: &RemoteListed<'_>) -> bool {
    if a.size != b.size {
        return false;
    }
    match (a.etag, b.etag) {
        // A content ETag on both sides must match; a multipart or missing one proves nothing
        // either way, and the size match stands.
        (Some(x), Some(y)) if is_trusted_etag(x) && is_trusted_etag(y) => {
            unquote_etag(x) == unquote_etag(y)
        }
        _ => true,
    }
}

/// Plans the migrate from a listing of the whole bucket (keys relative to the prefix).
pub fn plan_migrate(model: &PathModel, listing: &[RemoteListed<'_>]) -> MigratePlan {
    let mut plan = MigratePlan::default();
    let Some(ns) = model.namespace() else {
        return plan;
    };
    let foreign: std::collections::BTreeSet<&str> = listing
        .iter()
        .filter_map(|o| o.key.strip_suffix(NAMESPACE_MARKER)?.strip_suffix('/'))
        .filter(|folder| !folder.contains('/'))
        .collect();
    let by_key: BTreeMap<&str, &RemoteListed<'_>> = listing.iter().map(|o| (o.key, o)).collect();
    for object in listing {
        let first = object.key.split('/').next().unwrap_or("");
        if first == ns.as_str() {
            continue;
        }
        let solo_payload = DATA_TREES.contains(&first)
            && !foreign.contains(first)
            && !is_internal(object.key)
            && model.rel(object.key).is_ok();
        if !solo_payload {
            plan.summary.passed_over += 1;
            continue;
        }
        let Ok(size) = object.size.parse::<u64>() else {
            plan.summary.passed_over += 1;
            continue;
        };
        plan.summary.solo_objects += 1;
        let to = model.under_binding(object.key);
        let item = MigrateItem {
            rel: object.key.to_string(),
            to: to.clone(),
            size,
        };
        match by_key.get(to.as_str()) {
            Some(copy) if same_object(object, copy) => plan.verified.push(item),
            _ => plan.copy.push(item),
        }
    }
    plan.summary.to_copy = plan.copy.len() as u64;
    plan.summary.verified = plan.verified.len() as u64;
    plan
}
