//! What a cache listing says about the cache's layout.
//!
//! The survey classifies every file of a walk once, through the path model, so pull, push and
//! doctor all see the same thing: payload of the bound tree, the seed bug's root-layout copies,
//! other namespaces' folders, bookkeeping that must never travel, and paths that are unsafe.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::listing::LocalFile;
use crate::paths::{
    foreign_namespaces_in, is_internal, PathHash, PathModel, PlaceRef, NAMESPACE_MARKER,
};

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
}

/// The classified cache. Payload rels borrow from the listing buffer: a walk of 10^6 files
/// costs no allocation per file.
#[derive(Debug, Clone, Default)]
pub struct Survey<'a> {
    /// Payload of the bound tree by rel.
    pub payload: HashMap<&'a str, PayloadFile<'a>, PathHash>,
    /// Files in the walk (every [`PayloadFile::slot`] is below it).
    pub walked: usize,
    /// Namespaced mode: files of data trees at the cache root, by the rel they would have in
    /// the namespace folder.
    pub root_layout: HashMap<String, LocalStat>,
    /// What a person needs to know about the layout.
    pub findings: LayoutFindings,
}

/// The findings of a survey, as reported to people and scripts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    let mut out = Survey::default();
    out.payload.reserve(files.len());
    out.walked = files.len();
    let mut root_trees = BTreeSet::new();
    let mut foreign_dirs = BTreeSet::new();
    for (slot, file) in files.iter().enumerate() {
        let stat = LocalStat {
            size: file.size,
            mtime_ms: file.mtime_ms,
        };
        match model.place_of(file.path, &foreign) {
            PlaceRef::Payload(rel) => {
                out.payload.insert(
                    rel,
                    PayloadFile {
                        size: file.size,
                        mtime_ms: file.mtime_ms,
                        cache_path: file.path,
                        slot,
                    },
                );
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
