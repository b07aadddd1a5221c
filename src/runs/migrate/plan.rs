//! The remote side of a solo → namespaced migrate: which solo-layout objects to copy to their
//! namespaced keys, which namespaced keys already hold something else (a conflict), which copies
//! still need an entry in the namespace's index, and which originals may then be removed.
//!
//! Server-side copies only, and only to a key that is absent: a namespaced object that exists is
//! never overwritten. It either is proven byte-identical to its original (same size and the same
//! content ETag, or the same SHA-256 in both indexes) or it is a `conflict`, kept as it is with
//! its original beside it, for a person to resolve. An original is removable only once its copy
//! is proven identical *and* named, at its size, by the namespace's index: an unindexed copy is
//! invisible to every pull, so removing its original would lose the file. Keys that belong to
//! another namespace, bookkeeping and anything outside the data trees are never touched.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::{Deserialize, Serialize};

use crate::codes::GuardCode;
use crate::index::{Index, IndexEntry};
use crate::model::paths::{is_internal, PathModel, DATA_TREES, NAMESPACE_MARKER};
use crate::state::sync_state::{is_trusted_etag, unquote_etag};
use crate::wire::listing::RemoteListed;

/// What a HEAD of a key the listing gave no ETag for found.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct HeadFound {
    /// The key.
    pub key: String,
    /// False when it is gone (it then leaves the listing).
    pub exists: bool,
    /// Its size, when sent.
    #[serde(default)]
    pub size: Option<u64>,
    /// Its ETag, when sent.
    #[serde(default)]
    pub etag: Option<String>,
}

/// The stable code of a namespaced key that holds something other than its solo original.
pub const CONFLICT: GuardCode = GuardCode::Conflict;

/// One object of the solo layout and its namespaced copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MigrateItem {
    /// The rel (also the solo key).
    pub rel: String,
    /// The namespaced key.
    pub to: String,
    /// Size of the original.
    pub size: u64,
    /// The original's ETag as listed: its removal is conditional on it.
    pub etag: Option<String>,
}

/// Why a namespaced key is a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "kebab-case")]
pub enum ConflictReason {
    /// The namespaced object has another size than the original.
    SizeDiffers,
    /// Same size, but content ETags (or recorded hashes) differ.
    ContentDiffers,
    /// Same size, and nothing on both sides proves the content equal (a multipart or missing
    /// ETag, no hash in both indexes): overwriting could lose the namespaced bytes.
    Unproven,
    /// The namespace's index names another object at this key than the original (or than the
    /// copy there): peers pull what the index names, so the original cannot stand in for it.
    IndexDiffers,
}

/// A namespaced key that holds (or, by its index, names) something other than the original.
/// Neither side is changed; the original is never removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MigrateConflict {
    /// Always [`CONFLICT`].
    #[tsify(type = "\"conflict\"")]
    pub code: GuardCode,
    /// The rel (also the solo key).
    pub rel: String,
    /// The namespaced key.
    pub to: String,
    /// Size of the solo original.
    pub size: u64,
    /// Size of the namespaced object, when one is listed.
    pub existing_size: Option<u64>,
    /// Size the namespace's index records for the rel, when it names it.
    pub indexed_size: Option<u64>,
    /// Why it is a conflict.
    pub reason: ConflictReason,
    /// What differs, naming both keys.
    pub message: String,
}

/// Where a new namespace index entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "kebab-case")]
pub enum IndexSource {
    /// The solo index's entry (it matches the listed size, so its hash and dates carry over).
    SoloIndex,
    /// Built from the listing of the copy, as a rebuild does (no solo entry, or a stale one).
    Listing,
}

/// A verified copy that the namespace's index does not name yet.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MigrateIndexItem {
    /// The rel to index.
    pub rel: String,
    /// Where its entry comes from.
    pub from: IndexSource,
    /// The entry to add (not serialized: the session adds it, the shim only counts).
    #[serde(skip)]
    pub entry: IndexEntry,
}

/// Counts of a migrate plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MigrateSummary {
    /// Solo-layout objects found.
    pub solo_objects: u64,
    /// Copies still to make (the namespaced key is absent).
    pub to_copy: u64,
    /// Copies present and proven identical to their originals.
    pub verified: u64,
    /// Namespaced keys holding or naming something else: kept, originals kept.
    pub conflicts: u64,
    /// Verified copies the namespace's index does not name yet.
    pub to_index: u64,
    /// Originals whose copy is verified and indexed: removable with the flag.
    pub removable: u64,
    /// Keys passed over (other namespaces, bookkeeping, unsafe, outside the data trees).
    pub passed_over: u64,
}

/// The migrate plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct MigratePlan {
    /// Counts.
    pub summary: MigrateSummary,
    /// Objects to copy (their namespaced key is absent).
    pub copy: Vec<MigrateItem>,
    /// Objects whose copy exists and is proven identical.
    pub verified: Vec<MigrateItem>,
    /// Namespaced keys that are not the original's copy: never overwritten, originals kept.
    pub conflicts: Vec<MigrateConflict>,
    /// Verified copies to add to the namespace's index.
    pub to_index: Vec<MigrateIndexItem>,
    /// Verified copies the namespace's index names at their size: these originals (only these)
    /// may be removed.
    pub removable: Vec<MigrateItem>,
    /// Keys of unproven pairs listed without an ETag (some S3-compatible servers list none, but
    /// send one on HEAD): the shim HEADs them and plans again with what it learned, so a copy
    /// is proven by evidence, never assumed from its size.
    pub needs_etag: Vec<String>,
}

/// What a migrate is planned from.
#[derive(Debug, Clone, Copy)]
pub struct MigrateInputs<'a> {
    /// One listing of the whole bucket (keys relative to the prefix).
    pub listing: &'a [RemoteListed<'a>],
    /// The solo index, when the bucket has one.
    pub solo_index: Option<&'a Index>,
    /// The namespace's index, when it has one.
    pub ns_index: Option<&'a Index>,
    /// Dates an entry built from a copy listed without a date (as a rebuild does).
    pub now_iso: &'a str,
}

/// What the evidence says about an existing namespaced object against its original.
enum Evidence {
    Same,
    Differs(ConflictReason),
}

/// Compares an original with the object at its namespaced key. Size first; then content
/// ETags when both are content hashes; then the SHA-256 both indexes record when each entry
/// describes the listed object (same size). Anything less is not proof.
fn compare(
    original: (&RemoteListed<'_>, u64, Option<&IndexEntry>),
    existing: (&RemoteListed<'_>, u64, Option<&IndexEntry>),
) -> Evidence {
    let (a, a_size, a_entry) = original;
    let (b, b_size, b_entry) = existing;
    if a_size != b_size {
        return Evidence::Differs(ConflictReason::SizeDiffers);
    }
    if let (Some(x), Some(y)) = (a.etag, b.etag) {
        if is_trusted_etag(x) && is_trusted_etag(y) {
            return if unquote_etag(x) == unquote_etag(y) {
                Evidence::Same
            } else {
                Evidence::Differs(ConflictReason::ContentDiffers)
            };
        }
    }
    match (
        recorded_hash(a_entry, a_size),
        recorded_hash(b_entry, b_size),
    ) {
        (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => Evidence::Same,
        (Some(_), Some(_)) => Evidence::Differs(ConflictReason::ContentDiffers),
        _ => Evidence::Differs(ConflictReason::Unproven),
    }
}

/// The SHA-256 an index records for an object, when its entry describes the listed size.
fn recorded_hash(entry: Option<&IndexEntry>, size: u64) -> Option<&str> {
    entry
        .filter(|e| e.size == size)
        .and_then(|e| e.sha256.as_deref())
}

/// True when the namespace index entry can describe the original's bytes: same size, and no
/// recorded hash that contradicts the solo one (a hash only on the namespace side is unproven).
fn index_agrees(ns_entry: &IndexEntry, size: u64, solo_entry: Option<&IndexEntry>) -> bool {
    if ns_entry.size != size {
        return false;
    }
    match (
        ns_entry.sha256.as_deref(),
        solo_entry.and_then(|e| e.sha256.as_deref()),
    ) {
        (None, _) => true,
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        (Some(_), None) => false,
    }
}

fn conflict_message(
    item: &MigrateItem,
    reason: ConflictReason,
    existing_size: Option<u64>,
    indexed_size: Option<u64>,
) -> String {
    let (to, rel, size) = (&item.to, &item.rel, item.size);
    match reason {
        ConflictReason::SizeDiffers => format!(
            "{to} differs from the solo copy {rel} ({} B there, {size} B in the solo copy)",
            existing_size.unwrap_or_default()
        ),
        ConflictReason::ContentDiffers => {
            format!("{to} differs from the solo copy {rel} (both {size} B, different content)")
        }
        ConflictReason::Unproven => format!(
            "{to} may differ from the solo copy {rel} (both {size} B, but no content ETag or \
             hash on both sides proves them equal)"
        ),
        ConflictReason::IndexDiffers => format!(
            "{to} differs from the solo copy {rel} (the namespace's index names a {} B object \
             there, the solo copy has {size} B)",
            indexed_size.unwrap_or_default()
        ),
    }
}

/// The entry a verified copy gets in the namespace's index: the solo index's when it describes
/// the same bytes (same size), else one built from the copy's listing, as a rebuild builds it.
fn entry_for(
    copy: &RemoteListed<'_>,
    size: u64,
    solo_entry: Option<&IndexEntry>,
    now_iso: &str,
) -> (IndexSource, IndexEntry) {
    match solo_entry.filter(|e| e.size == size) {
        Some(entry) => (IndexSource::SoloIndex, entry.clone()),
        None => (
            IndexSource::Listing,
            IndexEntry {
                size,
                last_modified: Some(copy.last_modified.unwrap_or(now_iso).into()),
                ..IndexEntry::default()
            },
        ),
    }
}

/// Plans the migrate into `model`'s namespace. A model without a namespace plans nothing.
pub fn plan_migrate(model: &PathModel, inputs: MigrateInputs<'_>) -> MigratePlan {
    let mut plan = MigratePlan::default();
    let Some(ns) = model.namespace() else {
        return plan;
    };
    let listing = inputs.listing;
    let foreign: BTreeSet<&str> = listing
        .iter()
        .filter_map(|o| o.key.strip_suffix(NAMESPACE_MARKER)?.strip_suffix('/'))
        .filter(|folder| !folder.contains('/'))
        .collect();
    let by_key: BTreeMap<&str, &RemoteListed<'_>> = listing.iter().map(|o| (o.key, o)).collect();
    let solo_entry = |rel: &str| inputs.solo_index.and_then(|i| i.entries.get(rel));
    let ns_entry = |rel: &str| inputs.ns_index.and_then(|i| i.entries.get(rel));
    for object in listing {
        let first = object.key.split('/').next().unwrap_or("");
        if first == ns.as_str() {
            continue;
        }
        let solo_payload = DATA_TREES.contains(&first)
            && !foreign.contains(first)
            && !is_internal(object.key)
            && model.rel(object.key).is_ok();
        let size = object.size.parse::<u64>().ok();
        let (true, Some(size)) = (solo_payload, size) else {
            plan.summary.passed_over += 1;
            continue;
        };
        plan.summary.solo_objects += 1;
        let rel = object.key;
        let item = MigrateItem {
            rel: rel.to_string(),
            to: model.under_binding(rel),
            size,
            etag: object.etag.map(str::to_string),
        };
        let indexed = ns_entry(rel);
        let copy = by_key.get(item.to.as_str()).map(|copy| {
            let copy_size = copy.size.parse::<u64>().ok();
            (*copy, copy_size)
        });
        let (reason, existing_size) = match copy {
            // Absent: copy, unless the namespace's index names another object there.
            None => match indexed {
                Some(entry) if !index_agrees(entry, size, solo_entry(rel)) => {
                    (ConflictReason::IndexDiffers, None)
                }
                _ => {
                    plan.copy.push(item);
                    continue;
                }
            },
            Some((_, None)) => (ConflictReason::Unproven, None),
            Some((copy, Some(copy_size))) => {
                match compare((object, size, solo_entry(rel)), (copy, copy_size, indexed)) {
                    Evidence::Differs(ConflictReason::Unproven) => {
                        let unlisted = [object, copy].into_iter().filter(|o| o.etag.is_none());
                        plan.needs_etag.extend(unlisted.map(|o| o.key.to_string()));
                        (ConflictReason::Unproven, Some(copy_size))
                    }
                    Evidence::Differs(reason) => (reason, Some(copy_size)),
                    Evidence::Same => match indexed {
                        None => {
                            let (from, entry) =
                                entry_for(copy, copy_size, solo_entry(rel), inputs.now_iso);
                            plan.to_index.push(MigrateIndexItem {
                                rel: rel.to_string(),
                                from,
                                entry,
                            });
                            plan.verified.push(item);
                            continue;
                        }
                        Some(entry) if index_agrees(entry, size, solo_entry(rel)) => {
                            plan.removable.push(item.clone());
                            plan.verified.push(item);
                            continue;
                        }
                        Some(_) => (ConflictReason::IndexDiffers, Some(copy_size)),
                    },
                }
            }
        };
        let indexed_size = indexed.map(|e| e.size);
        plan.conflicts.push(MigrateConflict {
            code: CONFLICT,
            message: conflict_message(&item, reason, existing_size, indexed_size),
            rel: item.rel,
            to: item.to,
            size: item.size,
            existing_size,
            indexed_size,
            reason,
        });
    }
    let count = |n: usize| n as u64;
    plan.summary.to_copy = count(plan.copy.len());
    plan.summary.verified = count(plan.verified.len());
    plan.summary.conflicts = count(plan.conflicts.len());
    plan.summary.to_index = count(plan.to_index.len());
    plan.summary.removable = count(plan.removable.len());
    plan
}
