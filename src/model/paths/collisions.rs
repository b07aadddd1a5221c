//! Paths that cannot live side by side in one cache: a file where another path needs a folder,
//! and names that fold to the same file on case-insensitive or normalising file systems.

use std::collections::HashMap;
use tsify_next::Tsify;

use unicode_normalization::UnicodeNormalization;

/// How two paths collide on a case-insensitive or normalising file system.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub enum CollisionKind {
    /// The paths differ only in case or Unicode normalisation (macOS, Windows).
    CaseFold,
    /// One path is a file where another needs a folder (`a` and `a/b`), on any file system.
    FileFolder,
}

/// A group of paths that cannot all exist in one cache.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Collision {
    /// The kind of clash.
    pub kind: CollisionKind,
    /// The clashing paths, sorted.
    pub paths: Vec<String>,
}

/// Finds files that sit where another path needs a folder (`a` and `a/b`), exactly as spelled:
/// the clashes every file system has. Borrowing only, so it stays cheap on 10^6 paths; use
/// [`find_collisions`] when the file system also folds case.
pub fn find_file_folder_conflicts<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<Collision> {
    let all: Vec<&'a str> = paths.into_iter().collect();
    let files: std::collections::HashSet<&str> = all.iter().copied().collect();
    let mut collisions = Vec::new();
    for path in &all {
        let mut prefix = *path;
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            if files.contains(prefix) {
                collisions.push(Collision {
                    kind: CollisionKind::FileFolder,
                    paths: vec![prefix.to_string(), path.to_string()],
                });
            }
        }
    }
    collisions.sort_by(|a, b| a.paths.cmp(&b.paths));
    collisions
}

/// [`find_file_folder_conflicts`] for paths given in ascending byte order without repeats (the
/// keys of an index): the same collisions, found in one pass with no hashing.
///
/// In sorted order every path that starts with `a` follows `a` in one run, so a stack of the
/// paths that are string prefixes of the current one holds every file that may be its folder;
/// each has a different length, so a `/` cut of the current path finds its file, if any, by
/// length. The stack is popped as soon as a path no longer starts with its top.
pub fn find_file_folder_conflicts_sorted<'a>(
    paths: impl IntoIterator<Item = &'a str>,
) -> Vec<Collision> {
    let mut open: Vec<&'a str> = Vec::new();
    let mut collisions = Vec::new();
    for path in paths {
        while open.last().is_some_and(|top| !path.starts_with(top)) {
            open.pop();
        }
        if !open.is_empty() {
            for (cut, _) in path.match_indices('/') {
                if let Ok(found) = open.binary_search_by_key(&cut, |p| p.len()) {
                    collisions.push(Collision {
                        kind: CollisionKind::FileFolder,
                        paths: vec![open[found].to_string(), path.to_string()],
                    });
                }
            }
        }
        open.push(path);
    }
    collisions.sort_by(|a, b| a.paths.cmp(&b.paths));
    collisions
}

/// The hasher of the planner's per-plan maps of borrowed paths (10^5–10^6 entries): foldhash,
/// several times faster than std's SipHash on short keys, seeded per map so that crafted keys
/// cannot be made to collide.
pub type PathHash = foldhash::fast::RandomState;

/// The key two paths share when a case-insensitive, normalisation-insensitive file system
/// (APFS, NTFS) would store them as one.
pub fn fold_key(path: &str) -> String {
    // Most paths are ASCII, where NFD is the identity and ASCII lowering is the whole fold: skip
    // the Unicode machinery (it dominated large plans).
    if path.is_ascii() {
        path.to_ascii_lowercase()
    } else {
        path.nfd().collect::<String>().to_lowercase()
    }
}

/// Finds paths that cannot coexist in one cache folder: groups equal under [`fold_key`], and
/// files that sit where another path needs a folder (exact or folded).
///
/// Callers refuse such paths instead of letting one silently overwrite another.
pub fn find_collisions<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<Collision> {
    let mut by_fold: HashMap<String, Vec<&'a str>> = HashMap::new();
    for path in paths {
        by_fold.entry(fold_key(path)).or_default().push(path);
    }
    let mut collisions = Vec::new();
    for group in by_fold.values() {
        if group.len() > 1 {
            let mut paths: Vec<String> = group.iter().map(|p| p.to_string()).collect();
            paths.sort();
            paths.dedup();
            if paths.len() > 1 {
                collisions.push(Collision {
                    kind: CollisionKind::CaseFold,
                    paths,
                });
            }
        }
    }
    // A folded file path that is also a folded folder prefix of another path.
    for (folded, group) in &by_fold {
        let mut prefix = folded.as_str();
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            if let Some(files) = by_fold.get(prefix) {
                let mut paths: Vec<String> = files.iter().map(|p| p.to_string()).collect();
                paths.extend(group.iter().map(|p| p.to_string()));
                paths.sort();
                paths.dedup();
                collisions.push(Collision {
                    kind: CollisionKind::FileFolder,
                    paths,
                });
            }
        }
    }
    // A hash map has no order: sort, so reports and plans are deterministic.
    collisions.sort_by(|a, b| {
        (a.kind == CollisionKind::FileFolder, &a.paths)
            .cmp(&(b.kind == CollisionKind::FileFolder, &b.paths))
    });
    collisions
}
