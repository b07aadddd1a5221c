//! Conflict copies: where a cache keeps its own version of a file that changed both here and in
//! the bucket since it last synced, and how a person settles it.
//!
//! A pull that meets such a file puts the bucket's version in place and keeps this cache's
//! version aside under [`CONFLICTS_DIR`], a folder at the cache root that never syncs (like the
//! repair's backups). A copy is named by its content (`logs/app.conflict-<12 hex>.log`), so the
//! same version kept twice is one file and two different versions never overwrite each other.
//! `s3sync resolve --keep mine` puts the newest copy back and pushes it; `--keep theirs` drops
//! the copies. Nothing here touches a file system: the shim lists the folder and executes.

use std::collections::BTreeMap;
use tsify_next::Tsify;

use serde::{Deserialize, Serialize};

use crate::codes::GuardCode;
use crate::error::{CoreError, CoreResult};
use crate::model::paths::{CachePlace, ForeignNamespaces, PathModel};
use crate::safety::Verdict;
use crate::wire::listing::LocalFile;

/// The folder (at the cache root) where conflict copies are kept. Never synced.
pub const CONFLICTS_DIR: &str = ".s3sync-conflicts";

/// What sits between a copy's stem and its extension: `.conflict-` and 12 hex digits.
const MARK: &str = ".conflict-";

/// Hex digits of the content hash kept in a copy's name (48 bits: two versions of one file
/// colliding is not a practical concern, and the name stays readable).
const TAG_LEN: usize = 12;

/// The cache path of the conflict copy of `cache_path` whose content hashes to `sha256_hex`.
///
/// The extension stays last so the copy opens with the same program as the file.
pub fn conflict_copy_path(cache_path: &str, sha256_hex: &str) -> CoreResult<String> {
    let tag = sha256_hex.get(..TAG_LEN).filter(|t| {
        t.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    let Some(tag) = tag else {
        return Err(CoreError::input(format!(
            "conflict copy of {cache_path:?}: {sha256_hex:?} is not a lowercase sha-256 hex digest"
        )));
    };
    if cache_path.is_empty() || cache_path.ends_with('/') {
        return Err(CoreError::input(format!(
            "conflict copy of {cache_path:?}: not a file path"
        )));
    }
    let (folder, name) = match cache_path.rsplit_once('/') {
        Some((folder, name)) => (format!("{folder}/"), name),
        None => (String::new(), cache_path),
    };
    // A leading dot is part of the stem (`.env` has no extension).
    let (stem, extension) = match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    };
    Ok(format!(
        "{CONFLICTS_DIR}/{folder}{stem}{MARK}{tag}{extension}"
    ))
}

/// The cache path a conflict copy belongs to, or `None` when `copy_path` is not a copy's name.
pub fn original_of_copy(copy_path: &str) -> Option<String> {
    let inside = copy_path.strip_prefix(CONFLICTS_DIR)?.strip_prefix('/')?;
    let (folder, name) = match inside.rsplit_once('/') {
        Some((folder, name)) => (format!("{folder}/"), name),
        None => (String::new(), inside),
    };
    let at = name.rfind(MARK)?;
    let (stem, rest) = name.split_at(at);
    let rest = &rest[MARK.len()..];
    let tag = rest.get(..TAG_LEN)?;
    let extension = &rest[TAG_LEN..];
    let is_tag = tag
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if stem.is_empty() || !is_tag || !(extension.is_empty() || extension.starts_with('.')) {
        return None;
    }
    Some(format!("{folder}{stem}{extension}"))
}

/// Which side a person keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// This cache's version (the newest conflict copy) goes back in place and is pushed.
    Mine,
    /// The bucket's version stays; the copies go.
    Theirs,
}

impl Keep {
    /// Parses `mine` or `theirs`.
    pub fn parse(text: &str) -> CoreResult<Keep> {
        match text {
            "mine" => Ok(Keep::Mine),
            "theirs" => Ok(Keep::Theirs),
            other => Err(CoreError::input(format!(
                "keep {other:?}: say mine or theirs"
            ))),
        }
    }
}

/// One file `resolve` settles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ResolveFile {
    /// The index key.
    pub rel: String,
    /// The file's cache path.
    pub cache_path: String,
    /// Keep mine: the copy to put back in place before the push (the newest).
    pub restore_from: Option<String>,
    /// Every conflict copy of the file: removed once the kept version is in the bucket (keep
    /// mine) or at once (keep theirs).
    pub copies: Vec<String>,
}

/// What `resolve` does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ResolvePlan {
    /// The files to settle.
    pub files: Vec<ResolveFile>,
    /// Asked-for files that have no conflict copy (nothing to settle).
    pub unknown: Vec<String>,
}

/// Every conflict copy in `copies` (a walk of [`CONFLICTS_DIR`]), grouped by the cache path it
/// belongs to, newest first (then by name, so the choice is stable).
fn copies_by_original<'a>(copies: &'a [LocalFile<'a>]) -> BTreeMap<String, Vec<&'a LocalFile<'a>>> {
    let mut grouped: BTreeMap<String, Vec<&LocalFile>> = BTreeMap::new();
    for copy in copies {
        if let Some(original) = original_of_copy(copy.path) {
            grouped.entry(original).or_default().push(copy);
        }
    }
    for list in grouped.values_mut() {
        list.sort_by(|a, b| b.mtime_ms.cmp(&a.mtime_ms).then(a.path.cmp(b.path)));
    }
    grouped
}

/// The files (index keys) that have conflict copies in `copies`.
pub fn files_in_conflict(model: &PathModel, copies: &[LocalFile<'_>]) -> Vec<String> {
    copies_by_original(copies)
        .keys()
        .filter_map(|cache_path| {
            match model.classify_cache_path(cache_path, &ForeignNamespaces::new()) {
                CachePlace::Payload(rel) => Some(rel.into_string()),
                _ => None,
            }
        })
        .collect()
}

/// Plans `resolve`: for each of `rels` (index keys; every file with a copy when empty), which
/// copy goes back (keep mine: the newest) and which copies go.
pub fn plan_resolve(
    model: &PathModel,
    keep: Keep,
    rels: &[String],
    copies: &[LocalFile<'_>],
) -> CoreResult<ResolvePlan> {
    let grouped = copies_by_original(copies);
    let wanted: Vec<String> = if rels.is_empty() {
        files_in_conflict(model, copies)
    } else {
        rels.to_vec()
    };
    let mut plan = ResolvePlan::default();
    for rel in wanted {
        let cache_path = model.cache_path(&model.rel(&rel)?);
        let Some(list) = grouped.get(&cache_path) else {
            plan.unknown.push(rel);
            continue;
        };
        plan.files.push(ResolveFile {
            rel,
            cache_path,
            restore_from: (keep == Keep::Mine).then(|| list[0].path.to_string()),
            copies: list.iter().map(|copy| copy.path.to_string()).collect(),
        });
    }
    Ok(plan)
}

/// A conflict a pull met, and where this cache's version went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct KeptAside {
    /// The index key.
    pub rel: String,
    /// The conflict copy holding this cache's version.
    pub copy: String,
}

/// The `conflict` verdict of a pull: which files changed on both sides, where this cache's
/// versions are kept, and the commands that settle them. `unsettled` are conflicts the pull
/// left exactly as they were (deleted here while the bucket changed them, or a download that
/// failed).
pub fn pull_conflict_verdict(aside: &[KeptAside], unsettled: &[String]) -> Option<Verdict> {
    if aside.is_empty() && unsettled.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !aside.is_empty() {
        parts.push(format!(
            "{} files changed here and in the bucket since this cache last synced them: the bucket's version is now in place and yours is kept in {CONFLICTS_DIR}/ ({})",
            aside.len(),
            examples(aside.iter().map(|a| format!("{} -> {}", a.rel, a.copy))),
        ));
    }
    if !unsettled.is_empty() {
        parts.push(format!(
            "{} files changed on both sides were left as they are ({})",
            unsettled.len(),
            examples(unsettled.iter().cloned()),
        ));
    }
    Some(Verdict {
        code: GuardCode::Conflict,
        message: format!(
            "{}. `s3sync resolve --keep mine <path>` puts yours back and pushes it; `s3sync resolve --keep theirs <path>` keeps the bucket's and drops your copy",
            parts.join("; ")
        ),
    })
}

/// The first five of `items`, comma-separated, and how many more there are.
fn examples(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    let shown = all.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    match all.len().saturating_sub(5) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}
