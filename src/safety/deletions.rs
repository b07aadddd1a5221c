//! Deletion records: how a delete pushed from one clone reaches every other, on evidence.
//!
//! A pull used to keep a file the bucket's index no longer named (another clone may have
//! deleted it by mistake, or the index may have lost it), so a deliberate delete never reached
//! other clones, and a later `touch` there uploaded the file again. Now a push that deletes
//! records, in the index it publishes, which version it deleted and when ([`DELETIONS_FIELD`], a
//! top-level field the extension's readers ignore and its writers keep, as they keep every
//! unknown field). A pull removes a local file only when such a record names the version this
//! cache last synced, or a later one written over it, and the file is unchanged since; anything
//! else is kept and reported.
//! A peer that writes no records (the extension) changes nothing here.
//!
//! Records are kept for [`DELETION_WINDOW_DAYS`] days (and at most [`MAX_DELETION_RECORDS`]),
//! pruned at each publish: a clone that has not pulled for longer keeps its copy, as before.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::index::{Index, IndexEntry};
use crate::model::time::parse_iso_millis;

/// The index's top-level field holding the deletion records, by rel.
pub const DELETIONS_FIELD: &str = "s3syncDeleted";

/// How long a deletion record is kept, in days.
pub const DELETION_WINDOW_DAYS: i64 = 30;

/// The most records kept (the newest win): a mass delete must not grow the index without bound.
pub const MAX_DELETION_RECORDS: usize = 50_000;

const DAY_MS: i64 = 86_400_000;

/// The version a push deleted, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionRecord {
    /// Size of the deleted version.
    pub size: u64,
    /// Its SHA-256, when the index recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its `lastModified`, as the index recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// When the push deleted it (ISO-8601).
    pub deleted_at: String,
}

impl DeletionRecord {
    /// The record of deleting `entry` at `at`.
    pub fn of(entry: &IndexEntry, at: &str) -> DeletionRecord {
        DeletionRecord {
            size: entry.size,
            sha256: entry.sha256.clone(),
            last_modified: entry.last_modified.as_deref().map(str::to_string),
            deleted_at: at.to_string(),
        }
    }

    /// True when the delete this record describes removed the version `base` describes or one
    /// that replaced it: [`DeletionRecord::names`] it, or the deleted version was written after
    /// it (both `lastModified` readable, the record's later). A key's versions in the bucket
    /// follow one another (every write is conditional on the one before), so a clone that last
    /// synced an older version, and has not changed it since, holds what the deleting clone
    /// deleted on top of: the delete reaches it too (before, such a clone kept the file forever,
    /// and its pushes never found the cache sealed again).
    pub fn supersedes(&self, base: &IndexEntry) -> bool {
        if self.names(base) {
            return true;
        }
        let deleted = self.last_modified.as_deref().and_then(parse_iso_millis);
        let synced = base.last_modified.as_deref().and_then(parse_iso_millis);
        matches!((deleted, synced), (Some(deleted), Some(synced)) if deleted > synced)
    }

    /// True when this record names exactly the version `base` describes: the same hash when
    /// both have one, else the same size and `lastModified` (both present).
    pub fn names(&self, base: &IndexEntry) -> bool {
        if self.size != base.size {
            return false;
        }
        match (&self.sha256, &base.sha256) {
            (Some(a), Some(b)) => a == b,
            _ => {
                let base_modified = base.last_modified.as_deref();
                self.last_modified.is_some() && self.last_modified.as_deref() == base_modified
            }
        }
    }
}

fn records_mut(index: &mut Index) -> Option<&mut Map<String, Value>> {
    let field = index
        .extra
        .entry(DELETIONS_FIELD.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !field.is_object() {
        // Not ours to read (another tool used the name): replaced, since a record we cannot
        // read proves nothing and can remove nothing.
        *field = Value::Object(Map::new());
    }
    field.as_object_mut()
}

/// Records that `rel`, at the version `entry`, was deleted at `at`.
pub fn record_deletion(index: &mut Index, rel: &str, entry: &IndexEntry, at: &str) {
    if let Some(records) = records_mut(index) {
        if let Ok(value) = serde_json::to_value(DeletionRecord::of(entry, at)) {
            records.insert(rel.to_string(), value);
        }
    }
}

/// Forgets the record of `rel` (it was written again).
pub fn forget_deletion(index: &mut Index, rel: &str) {
    if let Some(Value::Object(records)) = index.extra.get_mut(DELETIONS_FIELD) {
        records.remove(rel);
    }
}

/// The record of `rel`, if the index holds a readable one.
pub fn deletion_of(index: &Index, rel: &str) -> Option<DeletionRecord> {
    let value = index.extra.get(DELETIONS_FIELD)?.as_object()?.get(rel)?;
    serde_json::from_value(value.clone()).ok()
}

/// Drops records older than the window before `now` (unreadable ones too), then the oldest
/// beyond [`MAX_DELETION_RECORDS`]; removes the field when none is left.
pub fn prune_deletions(index: &mut Index, now: &str) {
    let Some(now_ms) = parse_iso_millis(now) else {
        return;
    };
    let oldest_kept = now_ms - DELETION_WINDOW_DAYS * DAY_MS;
    let Some(Value::Object(records)) = index.extra.get_mut(DELETIONS_FIELD) else {
        return;
    };
    let mut dated: Vec<(i64, String)> = Vec::with_capacity(records.len());
    records.retain(|rel, value| {
        let at = value
            .get("deletedAt")
            .and_then(Value::as_str)
            .and_then(parse_iso_millis);
        match at {
            Some(at) if at >= oldest_kept => {
                dated.push((at, rel.clone()));
                true
            }
            _ => false,
        }
    });
    if dated.len() > MAX_DELETION_RECORDS {
        dated.sort();
        for (_, rel) in &dated[..dated.len() - MAX_DELETION_RECORDS] {
            records.remove(rel);
        }
    }
    if records.is_empty() {
        index.extra.remove(DELETIONS_FIELD);
    }
}

/// Takes the deletion records a v2 shard carries (its top-level [`DELETIONS_FIELD`]) into the
/// assembled `index`, returning their rels. A shard's field that is not an object is not ours to
/// read and is ignored; a rel recorded by two shards keeps the first record read.
pub fn adopt_shard_records(index: &mut Index, shard_extra: &Map<String, Value>) -> Vec<String> {
    let Some(Value::Object(records)) = shard_extra.get(DELETIONS_FIELD) else {
        return Vec::new();
    };
    let mut adopted = Vec::new();
    if let Some(into) = records_mut(index) {
        for (rel, record) in records {
            if !into.contains_key(rel) {
                into.insert(rel.clone(), record.clone());
                adopted.push(rel.clone());
            }
        }
    }
    if index
        .extra
        .get(DELETIONS_FIELD)
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        index.extra.remove(DELETIONS_FIELD);
    }
    adopted
}

/// The rels `index` holds deletion records for.
pub fn recorded_rels(index: &Index) -> Vec<String> {
    index
        .extra
        .get(DELETIONS_FIELD)
        .and_then(Value::as_object)
        .map(|records| records.keys().cloned().collect())
        .unwrap_or_default()
}

/// The top-level fields of a v2 shard holding the records of `rels` (none when no rel has one):
/// each shard carries the records of its own partition, as it carries its entries.
pub fn shard_records(index: &Index, rels: &[String]) -> Map<String, Value> {
    let mut extra = Map::new();
    let Some(Value::Object(records)) = index.extra.get(DELETIONS_FIELD) else {
        return extra;
    };
    let picked: Map<String, Value> = rels
        .iter()
        .filter_map(|rel| records.get(rel).map(|r| (rel.clone(), r.clone())))
        .collect();
    if !picked.is_empty() {
        extra.insert(DELETIONS_FIELD.to_string(), Value::Object(picked));
    }
    extra
}
