//! What a cache listing says about the cache's layout.
//!
//! The survey classifies every file of a walk once, through the path model, so pull, push and
//! doctor all see the same thing: payload of the bound tree, the seed bug's root-layout copies,
//! other namespaces' folders, bookkeeping that must never travel, and paths that are unsafe.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasher;
use tsify_next::Tsify;

use serde::Serialize;

use crate::model::paths::{
    foreign_namespaces_in, is_internal, PathHash, PathModel, PlaceRef, RelRef, NAMESPACE_MARKER,
};
use crate::wire::listing::LocalFile;

/// How many example paths a survey keeps per finding (counts are always complete).
const EXAMPLES_KEPT: usize = 20;

/// A local payload file of the bound tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalStat {
    /// Size in bytes.
    pub size: u64,
    /// Modification time in epoch milliseconds, when known.
    pub mtime_ms: Option<i64>,
}

/// A local payload file of the bound tree, borrowed from the listing buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadFile<'a> {
    /// Size in bytes.
    pub size: u64,
    /// Modification time in epoch milliseconds, when known.
    pub mtime_ms: Option<i64>,
    /// The cache-relative path as walked: always [`PathModel::cache_path`] of its rel (the rel
    /// is this path with the namespace folder cut off), kept so plans need not build it again.
    pub cache_path: &'a str,
    /// Its position in the walk (below [`Survey::walked`]), so a plan can mark the files it
    /// has met in a flat table instead of a second map.
    pub slot: usize,
    /// Its rel (the cache path without the namespace folder), checked by the survey as
    /// [`PathModel::rel_ref`] checks, so plans need not check it again.
    pub rel: RelRef<'a>,
}

/// The payload files of a walk by rel.
///
/// The cache walker lists files in byte order of their paths, so the files usually arrive
/// sorted by rel, and the plans, which visit index keys in the same order, meet them with a
/// [`PayloadCursor`]: one pass over both lists, no look-ups. At 10^6 files a look-up cost three
/// cache misses (its table slot, the file, the rel's bytes) and was the largest item of a pull
/// plan. A walk in any other order (another walker, names whose UTF-16 and UTF-8 orders differ,
/// a rel walked twice) is kept in a hash table of positions (4 bytes a slot) as well, which
/// look-ups then search (a sorted walk's look-ups search the list itself): the order decides
/// only how files are found, never which.
#[derive(Clone)]
pub struct Payload<'a> {
    files: Vec<PayloadFile<'a>>,
    /// Whether `files` is in strictly ascending rel order.
    sorted: bool,
    /// Positions by rel, built once the walk's order breaks (none while `sorted`).
    by_rel: Option<hashbrown::HashTable<u32>>,
    hasher: PathHash,
}

impl Default for Payload<'_> {
    fn default() -> Self {
        Payload::with_capacity(0)
    }
}

impl std::fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.files).finish()
    }
}

impl<'a> Payload<'a> {
    fn with_capacity(n: usize) -> Payload<'a> {
        Payload {
            files: Vec::with_capacity(n),
            sorted: true,
            by_rel: None,
            hasher: PathHash::default(),
        }
    }

    /// Adds a file; a rel walked twice keeps its last file (at the first one's position), as a
    /// map insert would.
    fn insert(&mut self, file: PayloadFile<'a>) {
        if self.sorted {
            match self.files.last() {
                // The order breaks here: from now on the table keeps the positions.
                Some(last) if last.rel.as_str() >= file.rel.as_str() => self.sorted = false,
                _ => {
                    self.files.push(file);
                    return;
                }
            }
        }
        let mut table = self.by_rel.take().unwrap_or_else(|| self.table_of_files());
        let hash = self.hasher.hash_one(file.rel.as_str());
        let files = &self.files;
        match table.find(hash, |&at| files[at as usize].rel == file.rel) {
            Some(&at) => self.files[at as usize] = file,
            None => {
                let at = position(self.files.len());
                self.files.push(file);
                let files = &self.files;
                table.insert_unique(hash, at, |&i| {
                    self.hasher.hash_one(files[i as usize].rel.as_str())
                });
            }
        }
        self.by_rel = Some(table);
    }

    /// A table of the positions of `files`, which hold no rel twice.
    fn table_of_files(&self) -> hashbrown::HashTable<u32> {
        let mut table = hashbrown::HashTable::with_capacity(self.files.capacity());
        for (at, file) in self.files.iter().enumerate() {
            let hash = self.hasher.hash_one(file.rel.as_str());
            table.insert_unique(hash, position(at), |&i| {
                self.hasher.hash_one(self.files[i as usize].rel.as_str())
            });
        }
        table
    }

    /// The file of `rel`, if walked.
    /// Callers asking in ascending order should use a [`Payload::cursor`].
    pub fn get(&self, rel: &str) -> Option<&PayloadFile<'a>> {
        match &self.by_rel {
            Some(table) => {
                let hash = self.hasher.hash_one(rel);
                table
                    .find(hash, |&at| self.files[at as usize].rel.as_str() == rel)
                    .map(|&at| &self.files[at as usize])
            }
            // Sorted (or empty): no table was needed.
            None => search_sorted(&self.files, rel),
        }
    }

    /// Whether `rel` was walked.
    pub fn contains_key(&self, rel: &str) -> bool {
        self.get(rel).is_some()
    }

    /// Whether the files are in strictly ascending rel order (the walker's order), so that
    /// [`Payload::iter`] yields them sorted.
    pub fn in_rel_order(&self) -> bool {
        self.sorted
    }

    /// A cursor for finding files by rels asked in ascending order.
    pub fn cursor(&self) -> PayloadCursor<'_, 'a> {
        PayloadCursor {
            payload: self,
            next: 0,
        }
    }

    /// Payload files counted once per rel.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the walk found no payload.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The rels, in walk order.
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.files.iter().map(|f| f.rel.as_str())
    }

    /// The rels with their files, in walk order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &PayloadFile<'a>)> + '_ {
        self.files.iter().map(|f| (f.rel.as_str(), f))
    }
}

/// A position in the files list (a walk of over 4 * 10^9 files cannot reach here: its
/// listing buffer would exceed what one process holds).
fn position(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// The file of `rel` in `files`, which are in strictly ascending rel order.
fn search_sorted<'f, 'a>(files: &'f [PayloadFile<'a>], rel: &str) -> Option<&'f PayloadFile<'a>> {
    files
        .binary_search_by(|f| f.rel.as_str().cmp(rel))
        .ok()
        .map(|at| &files[at])
}

/// Finds payload files by rel for a caller that asks in ascending rel order (the plans walk
/// the sorted index): over a sorted walk it steps forward through the files, else it searches
/// the table. Asked out of order it stays correct (it searches the files behind it), only
/// slower.
pub struct PayloadCursor<'p, 'a> {
    payload: &'p Payload<'a>,
    /// Every file before this position has a rel below the last rel asked for.
    next: usize,
}

impl<'p, 'a> PayloadCursor<'p, 'a> {
    /// The file of `rel`, if walked.
    pub fn find(&mut self, rel: &str) -> Option<&'p PayloadFile<'a>> {
        let payload = self.payload;
        if !payload.sorted {
            return payload.get(rel);
        }
        let files = &payload.files;
        if self.next > 0 && files[self.next - 1].rel.as_str() >= rel {
            // Asked again or out of order: the files behind the cursor are sorted too.
            return search_sorted(&files[..self.next], rel);
        }
        while let Some(file) = files.get(self.next) {
            match file.rel.as_str().cmp(rel) {
                std::cmp::Ordering::Less => self.next += 1,
                std::cmp::Ordering::Equal => {
                    self.next += 1;
                    return Some(file);
                }
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }
}

/// The classified cache. Payload rels borrow from the listing buffer: a walk of 10^6 files
/// costs no allocation per file.
#[derive(Debug, Clone, Default)]
pub struct Survey<'a> {
    /// Payload of the bound tree by rel.
    pub payload: Payload<'a>,
    /// Files in the walk (every [`PayloadFile::slot`] is below it).
    pub walked: usize,
    /// Namespaced mode: files of data trees at the cache root, by the rel they would have in
    /// the namespace folder.
    pub root_layout: HashMap<String, LocalStat>,
    /// What a person needs to know about the layout.
    pub findings: LayoutFindings,
}

/// The findings of a survey, as reported to people and scripts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct LayoutFindings {
    /// Files of the bound tree.
    pub payload_files: u64,
    /// Root-level data trees present in namespaced mode (the seed bug's layout).
    pub root_layout_trees: Vec<String>,
    /// Files inside those trees.
    pub root_layout_files: u64,
    /// Folders of other namespaces in the cache.
    pub foreign_namespace_dirs: Vec<String>,
    /// Internal files inside the bound tree that must never travel (e.g. `<ns>/_index/...`).
    pub internal_in_tree: Vec<String>,
    /// Files whose paths break the path rules (never synced).
    pub unsafe_paths: Vec<String>,
    /// Count of unsafe paths (the list above keeps at most 20).
    pub unsafe_count: u64,
}

/// Classifies every file of a cache walk.
pub fn survey<'a>(model: &PathModel, files: &[LocalFile<'a>]) -> Survey<'a> {
    let foreign = foreign_namespaces_in(files.iter().map(|f| f.path), model.namespace());
    let mut out = Survey {
        payload: Payload::with_capacity(files.len()),
        walked: files.len(),
        ..Survey::default()
    };
    let mut root_trees = BTreeSet::new();
    let mut foreign_dirs = BTreeSet::new();
    for (slot, file) in files.iter().enumerate() {
        let stat = LocalStat {
            size: file.size,
            mtime_ms: file.mtime_ms,
        };
        match model.place_of(file.path, &foreign) {
            PlaceRef::Payload(rel) => {
                out.payload.insert(PayloadFile {
                    size: file.size,
                    mtime_ms: file.mtime_ms,
                    cache_path: file.path,
                    slot,
                    rel,
                });
            }
            PlaceRef::RootLayout(rel) => {
                root_trees.insert(rel.split('/').next().unwrap_or("").to_string());
                out.root_layout.insert(rel.to_string(), stat);
            }
            PlaceRef::ForeignNamespace(ns) => {
                foreign_dirs.insert(ns.to_string());
            }
            PlaceRef::Internal(rel) => {
                // Namespaced, the root's own `.datastore-index.json` and sidecar also classify
                // as `Internal` with the same rel as a stray copy inside `<ns>/`; they live at
                // the cache root by design, so only files inside the bound tree are findings.
                if in_bound_tree(model, file.path) && is_stray_bookkeeping(model, rel) {
                    push_example(&mut out.findings.internal_in_tree, file.path);
                }
            }
            PlaceRef::Unsafe(_) => {
                out.findings.unsafe_count += 1;
                push_example(&mut out.findings.unsafe_paths, file.path);
            }
            PlaceRef::Other => {}
        }
    }
    out.findings.payload_files = out.payload.len() as u64;
    out.findings.root_layout_files = out.root_layout.len() as u64;
    out.findings.root_layout_trees = root_trees.into_iter().collect();
    out.findings.foreign_namespace_dirs = foreign_dirs.into_iter().collect();
    out
}

/// Bookkeeping that has no business inside the bound tree: a copy of the shard index or
/// control plane (what an out-of-band `aws s3 sync` of the namespace brings down, as in the first
/// seed), or, namespaced, a copy of the root's index or sidecar. Locks, markers and catalog
/// databases are legitimately local and are not findings.
fn is_stray_bookkeeping(model: &PathModel, rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or("");
    if first == "_index" || first == "_control" {
        return true;
    }
    model.namespace().is_some()
        && !rel.contains('/')
        && is_internal(rel)
        && rel != NAMESPACE_MARKER
        && !rel.starts_with("_catalog.db")
        && rel != ".lock"
}

/// True when a cache-relative path sits inside the bound tree (always, solo).
fn in_bound_tree(model: &PathModel, path: &str) -> bool {
    model.namespace().is_none_or(|ns| {
        path.strip_prefix(ns.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

fn push_example(list: &mut Vec<String>, path: &str) {
    if list.len() < EXAMPLES_KEPT {
        list.push(path.to_string());
    }
}
