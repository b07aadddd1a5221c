//! Rebuilding an index from a bucket listing, one page at a time.
//!
//! Used only when the remote index is a 404 (the second seed: a bucket with data and no index).
//! Every listed key goes through the path model; internal files, other namespaces' folders and
//! unsafe keys are counted and skipped, never indexed, so nothing the rebuild indexes can make a
//! later pull write outside the cache.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Serialize;

use crate::bytes::text::ShortText;
use crate::codes::{EntryRefusal, RefusalCode};
use crate::error::{CoreError, CoreResult, PathRefusal};
use crate::index::{Index, IndexEntry};
use crate::model::paths::{
    find_collisions, find_file_folder_conflicts, is_internal, is_never_synced, Collision,
    PathModel, NAMESPACE_MARKER,
};
use crate::wire::listing::RemoteListed;

/// How many refused keys a report names (the counts are always complete).
const EXAMPLES_KEPT: usize = 20;

/// A key the rebuild refused, with the stable code of the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct RefusedKey {
    /// The key as listed (relative to the prefix).
    pub key: String,
    /// Stable code, e.g. `path-dot-segment`.
    pub code: RefusalCode,
}

/// What a rebuild saw, kept and skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct RebuildReport {
    /// Objects in the listing.
    pub objects_seen: u64,
    /// Objects that became index entries.
    pub kept: u64,
    /// Bytes of the kept objects.
    pub bytes_kept: u64,
    /// Skipped as internal files (index, locks, `_index/`, markers, catalog databases) or as
    /// never-synced folders (`secrets/`).
    pub skipped_internal: u64,
    /// Skipped because they sit in another namespace's folder (solo mode).
    pub skipped_foreign: u64,
    /// Skipped because they are outside the bound namespace (namespaced mode).
    pub skipped_outside_namespace: u64,
    /// Refused as unsafe (path rules, sizes out of range).
    pub skipped_unsafe: u64,
    /// Skipped as folder markers: zero-byte keys ending in `/`, which the S3 console (and
    /// other tools) create for a "folder". They hold no file, so there is nothing to index.
    pub skipped_folder_markers: u64,
    /// Listed again under a key already kept (a repeated page or a server listing a key
    /// twice); the later listing wins, and the index holds one entry.
    pub skipped_duplicate: u64,
    /// Up to 20 of the unsafe keys, with their reason.
    pub unsafe_examples: Vec<RefusedKey>,
    /// Folders found to belong to other namespaces (solo mode).
    pub foreign_namespaces: Vec<String>,
    /// Kept rels that cannot coexist in one cache folder (reported; the pull refuses them).
    pub collisions: Vec<Collision>,
}

/// Streaming index builder: feed listing pages with [`RebuildBuilder::add_page`], then
/// [`RebuildBuilder::finish`].
#[derive(Debug)]
pub struct RebuildBuilder {
    model: PathModel,
    now_iso: String,
    /// Kept entries by rel.
    kept: BTreeMap<String, IndexEntry>,
    /// Solo mode: top-level folders with a marker. Entries under them are dropped at the end,
    /// because a marker can sort after the folder's other keys (`other/-x` < `other/.namespace.json`).
    foreign: BTreeSet<String>,
    report: RebuildReport,
}

/// True for a folder marker: a key ending in `/` with no bytes. A key ending in `/` that holds
/// data is not one: it stays refused (`path-trailing-slash`), since its bytes would be lost.
fn is_folder_marker(listed: &RemoteListed<'_>) -> bool {
    listed.key.ends_with('/') && listed.checked().is_ok_and(|object| object.size == 0)
}

impl RebuildBuilder {
    /// A builder for `model`. `now_iso` stands in for objects listed without a date, as the
    /// extension does.
    pub fn new(model: PathModel, now_iso: String) -> RebuildBuilder {
        RebuildBuilder {
            model,
            now_iso,
            kept: BTreeMap::new(),
            foreign: BTreeSet::new(),
            report: RebuildReport::default(),
        }
    }

    /// Adds one listing page.
    pub fn add_page(&mut self, page: &[RemoteListed<'_>]) {
        for object in page {
            self.add(object);
        }
    }

    fn add(&mut self, listed: &RemoteListed<'_>) {
        self.report.objects_seen += 1;
        let key = listed.key;
        if self.model.namespace().is_none() {
            if let Some(folder) = key
                .strip_suffix(NAMESPACE_MARKER)
                .and_then(|k| k.strip_suffix('/'))
            {
                if !folder.is_empty() && !folder.contains('/') {
                    self.foreign.insert(folder.to_string());
                }
            }
        }
        if is_folder_marker(listed) {
            self.report.skipped_folder_markers += 1;
            return;
        }
        let rel = match self.model.rel_from_remote_key(key) {
            Ok(rel) => rel,
            Err(CoreError::KeyOutsideNamespace { .. }) => {
                self.report.skipped_outside_namespace += 1;
                return;
            }
            Err(error) => return self.refuse(key, RefusalCode::of_error(&error)),
        };
        if is_internal(rel.as_str()) || is_never_synced(rel.as_str()) {
            self.report.skipped_internal += 1;
            return;
        }
        let object = match listed.checked() {
            Ok(object) => object,
            Err(error) => return self.refuse(key, RefusalCode::of_error(&error)),
        };
        let entry = IndexEntry {
            size: object.size,
            last_modified: Some(
                object
                    .last_modified
                    .map_or_else(|| self.now_iso.as_str().into(), ShortText::from),
            ),
            ..IndexEntry::default()
        };
        // Counted, so that every object seen is accounted for: before this, a key listed twice
        // was seen twice but kept once, and the report did not add up (found by the
        // listing_rebuild fuzz target).
        if self.kept.insert(rel.into_string(), entry).is_some() {
            self.report.skipped_duplicate += 1;
        }
    }

    /// How many entries the rebuild keeps so far.
    pub fn kept_len(&self) -> usize {
        self.kept.len()
    }

    /// Counts an object whose key cannot even be carried in a listing buffer (it holds a NUL)
    /// as seen and refused: such a key can never be a safe path.
    pub fn add_unencodable(&mut self, key: &str) {
        self.report.objects_seen += 1;
        self.refuse(key, PathRefusal::ControlCharacter.into());
    }

    fn refuse(&mut self, key: &str, code: RefusalCode) {
        self.report.skipped_unsafe += 1;
        if self.report.unsafe_examples.len() < EXAMPLES_KEPT {
            self.report.unsafe_examples.push(RefusedKey {
                key: key.to_string(),
                code,
            });
        }
    }

    /// Finishes the rebuild: drops entries of foreign folders, reports collisions, and returns
    /// the index with its report.
    pub fn finish(mut self, last_pulled: Option<String>) -> (Index, RebuildReport) {
        if !self.foreign.is_empty() {
            let foreign = &self.foreign;
            let before = self.kept.len();
            self.kept.retain(|rel, _| {
                let first = rel.split('/').next().unwrap_or("");
                !(rel.contains('/') && foreign.contains(first))
            });
            self.report.skipped_foreign += (before - self.kept.len()) as u64;
        }
        self.report.foreign_namespaces = std::mem::take(&mut self.foreign).into_iter().collect();
        // A file where another key needs a folder (`logs/x` and `logs/x/y`): the bucket holds
        // both, no cache can, so indexing them would make every pull fail. Both are refused
        // (which one a person meant is theirs to say) and stay in the bucket, named.
        let clashing: BTreeSet<String> =
            find_file_folder_conflicts(self.kept.keys().map(String::as_str))
                .into_iter()
                .flat_map(|c| c.paths)
                .collect();
        for rel in clashing {
            self.kept.remove(&rel);
            let key = self.model.under_binding(&rel);
            self.refuse(&key, EntryRefusal::PathConflict.into());
        }
        self.report.kept = self.kept.len() as u64;
        self.report.bytes_kept = self.kept.values().map(|e| e.size).sum();
        self.report.collisions = find_collisions(self.kept.keys().map(String::as_str));
        let index = Index {
            last_pulled,
            entries: self.kept.into(),
            extra: Default::default(),
        };
        (index, self.report)
    }
}
/// What the bucket holds where a rebuilt index would go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum ExistingIndex {
    /// No index.
    Absent,
    /// An index that parses.
    Valid,
    /// An index that exists but does not parse.
    Corrupt,
}

impl ExistingIndex {
    /// Judges the index object as read (`None`: there is none).
    pub fn of(bytes: Option<&[u8]>) -> ExistingIndex {
        match bytes {
            None => ExistingIndex::Absent,
            Some(bytes) if crate::index::Index::parse(bytes).is_ok() => ExistingIndex::Valid,
            Some(_) => ExistingIndex::Corrupt,
        }
    }
}

/// What `rebuild-index` does with what it rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum RebuildDecision {
    /// Only report (no `--apply`).
    DryRun,
    /// A valid index exists and `--force` was not given: it stays, since a rebuild from a
    /// listing loses what only the index knows (hashes, local mtimes).
    KeptExisting,
    /// Publish over what exists (conditionally on it; create-only when absent).
    Publish,
}

/// Decides what `rebuild-index` does: report only without `apply`; never replace a valid index
/// without `force`; otherwise publish (a missing or corrupt index has nothing to lose).
pub fn rebuild_step(apply: bool, force: bool, existing: ExistingIndex) -> RebuildDecision {
    match (apply, existing, force) {
        (false, _, _) => RebuildDecision::DryRun,
        (true, ExistingIndex::Valid, false) => RebuildDecision::KeptExisting,
        _ => RebuildDecision::Publish,
    }
}

/// The first kept rel that is another datastore's index (`{folder}/.datastore-index.json` or
/// `{folder}/_index/_meta.json`), as the error a rebuild stops with: the bound tree holds a
/// datastore written under a namespace or a longer prefix, and indexing its bookkeeping as
/// payload is how a root index came to name `prod/.datastore-index.json` as data.
pub fn nested_datastore(index: &Index) -> CoreResult<()> {
    for rel in index.entries.keys() {
        let folder = rel
            .strip_suffix("/.datastore-index.json")
            .or_else(|| rel.strip_suffix("/_index/_meta.json"));
        if let Some(folder) = folder {
            return Err(CoreError::NestedDatastore {
                key: rel.clone(),
                folder: folder.to_string(),
            });
        }
    }
    Ok(())
}
