//! Layout doctor and repair.
//!
//! The doctor turns a survey (and the index, when there is one) into problems with stable codes,
//! each naming the command that fixes it. The repair planner fixes the first seed's mixed
//! layout (and is also the solo → namespaced migrate): every root-level copy is either proven
//! redundant (byte-identical to its namespace-folder copy), moved into the namespace folder (the
//! only copy), or moved to a backup folder inside the cache that never syncs (a different copy
//! exists). It never deletes a byte that is not proven to exist elsewhere, and never touches the
//! bucket.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Serialize;

use crate::codes::ProblemCode;
use crate::index::Index;
use crate::model::layout::Survey;
use crate::model::paths::{
    find_collisions, is_lazy_skippable, is_never_synced, CollisionKind, PathModel, SYNC_STATE_FILE,
};
use crate::state::sync_state::SyncState;
use crate::wire::listing::LocalFile;

/// The folder (at the cache root) where repair keeps backups and its journal. Never synced.
pub const REPAIR_DIR: &str = ".s3sync-repair";

/// A problem the doctor found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// Stable code: `mixed-layout`, `foreign-namespace-dir`, `internal-file-in-tree`,
    /// `case-collision`, `index-drift`, `unsafe-path`, `unsafe-index-entry`, `index-path-conflict`,
    /// `sidecar-unreadable`, `symlink-in-path`. Typed in TypeScript as the shim's `ProblemCode`,
    /// which adds the problems the shim finds itself (`index-corrupt`, `walk-error`, ...).
    pub code: ProblemCode,
    /// What is wrong and the command that fixes it.
    pub message: String,
}

/// Inputs of the doctor beyond the survey.
#[derive(Debug, Clone, Default)]
pub struct DoctorFacts {
    /// A metadata-only pull left files remote (absent files are expected then).
    pub lazy_pull_active: bool,
    /// The sync-state sidecar exists but cannot be read (pushes then withhold deletes).
    pub sidecar_unreadable: bool,
    /// Cache-relative folders the walk found to be symlinks (to a folder, or dangling). The
    /// shim never follows them, never writes through them, and the survey cannot see beneath.
    pub symlinked_folders: Vec<String>,
}

impl DoctorFacts {
    /// The facts a raw sidecar file (or its absence) gives.
    pub fn from_sidecar(sidecar: Option<&[u8]>) -> DoctorFacts {
        let state = sidecar.map(SyncState::parse);
        DoctorFacts {
            lazy_pull_active: matches!(&state, Some(Some(s)) if s.lazy_pull_active),
            sidecar_unreadable: matches!(state, Some(None)),
            symlinked_folders: Vec::new(),
        }
    }
}

/// Diagnoses the cache described by `survey` against `index` (when known).
pub fn diagnose(
    model: &PathModel,
    survey: &Survey,
    index: Option<&Index>,
    facts: DoctorFacts,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    // One problem per link, each with its own fix: a link can lead anywhere, so pulls, pushes
    // and repairs refuse every write through it, and what lies beneath is never synced.
    for link in &facts.symlinked_folders {
        problems.push(problem(
            ProblemCode::SymlinkInPath,
            format!(
                "{link} is a symlink to a folder (or to nothing); s3sync never follows it or writes through it, so nothing beneath it is pulled, pushed or repaired, and pushes withhold deletes: replace it with a real folder (move its files into a new folder, remove the link), then `s3sync pull`"
            ),
        ));
    }
    let f = &survey.findings;
    let ns = model.namespace().map(|n| n.as_str().to_string());
    if let Some(ns) = &ns {
        if !f.root_layout_trees.is_empty() {
            problems.push(problem(
                ProblemCode::MixedLayout,
                format!(
                    "{} files sit in root-level data trees ({}) beside the namespace folder {ns}/; pushes withhold deletes until it is fixed: run `s3sync repair` to see the plan, `s3sync repair --apply` to fix it",
                    f.root_layout_files,
                    f.root_layout_trees.join(", ")
                ),
            ));
        }
    }
    if !f.foreign_namespace_dirs.is_empty() {
        problems.push(problem(
            ProblemCode::ForeignNamespaceDir,
            format!(
                "folders of other namespaces sit in this cache ({}); they never sync here: `s3sync repair --apply` moves them to {REPAIR_DIR}/backup/",
                f.foreign_namespace_dirs.join(", ")
            ),
        ));
    }
    if !f.internal_in_tree.is_empty() {
        problems.push(problem(
            ProblemCode::InternalFileInTree,
            format!(
                "bookkeeping files sit inside the synced tree and must never travel (e.g. {}); `s3sync repair --apply` moves them to {REPAIR_DIR}/backup/",
                f.internal_in_tree.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if f.unsafe_count > 0 {
        problems.push(problem(
            ProblemCode::UnsafePath,
            format!(
                "{} files have names the datastore cannot sync (e.g. {}); rename or remove them by hand",
                f.unsafe_count,
                f.unsafe_paths.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if facts.sidecar_unreadable {
        problems.push(problem(
            ProblemCode::SidecarUnreadable,
            format!("the sync-state file {SYNC_STATE_FILE} cannot be read, so pushes withhold deletes; run `s3sync pull` to rewrite it"),
        ));
    }
    for collision in find_collisions(survey.payload.keys()) {
        if collision.kind == CollisionKind::CaseFold {
            problems.push(problem(
                ProblemCode::CaseCollision,
                format!(
                    "{} differ only in case or unicode form and cannot coexist on macOS or windows; rename one by hand, then `s3sync push`",
                    collision.paths.join(" and ")
                ),
            ));
        }
    }
    if let Some(index) = index {
        // Entries whose keys break the path rules (in the monolith or in a shard): pull and
        // push skip them with these codes and keep them in the index, so only a person can
        // settle them.
        let refused: Vec<String> = index
            .entries
            .keys()
            .filter(|rel| !crate::model::paths::is_internal(rel))
            .filter_map(|rel| {
                let error = model.rel(rel).err()?;
                Some(format!("{rel:?} [{}]", error.code()))
            })
            .collect();
        if !refused.is_empty() {
            problems.push(problem(
                ProblemCode::UnsafeIndexEntry,
                format!(
                    "{} index entries have keys that cannot be safe cache paths (e.g. {}); pull and push skip them and keep them in the index: rename or remove their objects, then `s3sync rebuild-index --apply --force`",
                    refused.len(),
                    refused.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let unholdable = index_entries_no_cache_can_hold(model, index, &mut problems);
        // The index keys come in ascending order, as the cursor wants them.
        let mut walked = survey.payload.cursor();
        let missing = index
            .entries
            .keys()
            .filter(|rel| {
                !unholdable.contains(rel.as_str())
                    && walked.find(rel.as_str()).is_none()
                    && model.rel(rel).is_ok()
                    && !crate::model::paths::is_internal(rel)
                    && !is_never_synced(rel)
                    && (!facts.lazy_pull_active || !is_lazy_skippable(rel))
            })
            .count();
        // Local files the index does not name yet are pending work, not a problem: `push`
        // uploads them. Indexed files that are absent are.
        if missing > 0 && f.root_layout_trees.is_empty() {
            problems.push(problem(
                ProblemCode::IndexDrift,
                format!("{missing} indexed files are absent from the cache; run `s3sync pull` to fetch them, or `s3sync mark-deleted` for files deleted on purpose (review with `s3sync plan`)"),
            ));
        }
    }
    problems
}

/// Index entries no cache can hold: keys that break the path rules (reported above as
/// `unsafe-index-entry`), and files where another key needs a folder (reported here with the
/// fix that works; a pull cannot, it skips them). Returns both, so they do not also count as
/// files a pull would fetch.
fn index_entries_no_cache_can_hold<'a>(
    model: &PathModel,
    index: &'a Index,
    problems: &mut Vec<Problem>,
) -> BTreeSet<&'a str> {
    let refused: Vec<(&str, &str)> = index
        .entries
        .keys()
        .filter_map(|rel| model.rel(rel).err().map(|e| (rel.as_str(), e.code())))
        .collect();
    let mut clashing = BTreeSet::new();
    for collision in find_collisions(index.entries.keys().map(String::as_str)) {
        if collision.kind != CollisionKind::FileFolder {
            continue;
        }
        problems.push(problem(
            ProblemCode::IndexPathConflict,
            format!(
                "the bucket's index names {}: a file where the other needs a folder, which no file system holds, so pulls skip both; rename or remove one of them in the bucket, then `s3sync rebuild-index --apply --force`",
                collision.paths.join(" and ")
            ),
        ));
        for path in collision.paths {
            if let Some((key, _)) = index.entries.get_key_value(&path) {
                clashing.insert(key.as_str());
            }
        }
    }
    clashing.extend(refused.iter().map(|(rel, _)| *rel));
    clashing
}

fn problem(code: ProblemCode, message: String) -> Problem {
    Problem { code, message }
}

/// A file move inside the cache (both paths cache-relative).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    /// Where the file is.
    pub from: String,
    /// Where it goes.
    pub to: String,
}

/// A root-level copy proven redundant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Redundant {
    /// The copy to remove.
    pub path: String,
    /// The byte-identical copy that stays.
    pub same_as: String,
}

/// Counts of a repair plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct RepairSummary {
    /// Root-level files moved into the namespace folder (the only copy).
    pub move_into_namespace: u64,
    /// Root-level files removed as byte-identical to their namespace copy.
    pub remove_redundant: u64,
    /// Files moved to the backup folder (a different copy is kept).
    pub backup: u64,
    /// Of those, root-level copies whose equality with the remote copy could not be proven
    /// (same size, but the index records no hash): they may well be identical.
    pub unproven: u64,
}

/// The repair plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct RepairPlan {
    /// Counts.
    pub summary: RepairSummary,
    /// When non-empty, hash these cache paths and plan again; nothing else is final.
    pub needs_hash: Vec<String>,
    /// Root-level files that are the only copy: moved into the namespace folder.
    pub move_into_namespace: Vec<Move>,
    /// Root-level copies byte-identical to the namespace copy: removed.
    pub remove_redundant: Vec<Redundant>,
    /// Copies that differ from the kept one, foreign folders and stray bookkeeping: moved to
    /// the backup folder.
    pub backup: Vec<Move>,
    /// Root-level data trees to remove once empty (they must be removed, not left empty).
    pub remove_trees: Vec<String>,
}

impl RepairPlan {
    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.needs_hash.is_empty()
            && self.move_into_namespace.is_empty()
            && self.remove_redundant.is_empty()
            && self.backup.is_empty()
            && self.remove_trees.is_empty()
    }
}

/// Plans the repair of the layout in `files` (the raw walk; backups already present are read
/// from it so new ones never overwrite them) against the remote `index`. `hashes` holds SHA-256
/// by cache path for the files an earlier call listed in `needs_hash`.
///
/// For each root-level file (namespaced mode):
/// - a namespace-folder copy exists: byte-identical → the root copy is redundant (removed);
///   different → the root copy goes to the backup folder;
/// - no namespace copy, the index names it with the same size and SHA-256 → it *is* the remote
///   content: moved into the namespace folder (saving a download);
/// - no namespace copy, the index names it but it differs or cannot be proven equal (no hash
///   recorded) → backup; the hydration that follows fetches the remote copy;
/// - no namespace copy and not in the index → local work, the only copy: moved into the
///   namespace folder.
pub fn plan_repair(
    model: &PathModel,
    survey: &Survey,
    files: &[LocalFile<'_>],
    index: &Index,
    hashes: &BTreeMap<String, String>,
) -> RepairPlan {
    let mut plan = RepairPlan::default();
    let mut taken: BTreeSet<String> = files
        .iter()
        .filter(|f| f.path.starts_with(REPAIR_DIR))
        .map(|f| f.path.to_string())
        .collect();
    let mut backup_target = |path: &str| -> String {
        let base = format!("{REPAIR_DIR}/backup/{path}");
        let mut candidate = base.clone();
        let mut n = 1;
        while taken.contains(&candidate) {
            candidate = format!("{base}.{n}");
            n += 1;
        }
        taken.insert(candidate.clone());
        candidate
    };
    if model.namespace().is_some() {
        let mut root: Vec<(&String, _)> = survey.root_layout.iter().collect();
        root.sort_by(|a, b| a.0.cmp(b.0));
        let mut walked = survey.payload.cursor();
        for (rel_text, root_stat) in root {
            let Ok(rel) = model.rel(rel_text) else {
                continue;
            };
            let root_path = rel_text.clone();
            let ns_path = model.cache_path(&rel);
            let mut to_backup = false;
            match walked.find(rel_text.as_str()) {
                Some(ns_stat) if ns_stat.size != root_stat.size => to_backup = true,
                Some(_) => match (hashes.get(&root_path), hashes.get(&ns_path)) {
                    (Some(a), Some(b)) if a == b => plan.remove_redundant.push(Redundant {
                        path: root_path.clone(),
                        same_as: ns_path.clone(),
                    }),
                    (Some(_), Some(_)) => to_backup = true,
                    _ => {
                        plan.needs_hash.push(root_path.clone());
                        plan.needs_hash.push(ns_path.clone());
                    }
                },
                None => match index.entries.get(rel_text) {
                    None => plan.move_into_namespace.push(Move {
                        from: root_path.clone(),
                        to: ns_path.clone(),
                    }),
                    Some(entry) if entry.size != root_stat.size => to_backup = true,
                    Some(entry) => match (&entry.sha256, hashes.get(&root_path)) {
                        (Some(remote), Some(local)) if remote.eq_ignore_ascii_case(local) => {
                            plan.move_into_namespace.push(Move {
                                from: root_path.clone(),
                                to: ns_path.clone(),
                            })
                        }
                        (Some(_), None) => plan.needs_hash.push(root_path.clone()),
                        // No hash recorded to prove it equal: kept aside, and said so.
                        (None, _) => {
                            to_backup = true;
                            plan.summary.unproven += 1;
                        }
                        _ => to_backup = true,
                    },
                },
            }
            if to_backup {
                let to = backup_target(&root_path);
                plan.backup.push(Move {
                    from: root_path,
                    to,
                });
            }
        }
        plan.remove_trees = survey.findings.root_layout_trees.clone();
    }
    let foreign = &survey.findings.foreign_namespace_dirs;
    let ns_prefix = model.namespace().map(|ns| format!("{}/", ns.as_str()));
    for file in files {
        let first = file.path.split('/').next().unwrap_or("");
        let stray_internal = survey
            .findings
            .internal_in_tree
            .iter()
            .any(|p| p == file.path);
        let in_foreign = file.path.contains('/') && foreign.iter().any(|f| f == first);
        let bound = ns_prefix
            .as_deref()
            .is_none_or(|p| !file.path.starts_with(p));
        if stray_internal || (in_foreign && bound) {
            let to = backup_target(file.path);
            plan.backup.push(Move {
                from: file.path.to_string(),
                to,
            });
        }
    }
    plan.summary = RepairSummary {
        move_into_namespace: plan.move_into_namespace.len() as u64,
        remove_redundant: plan.remove_redundant.len() as u64,
        backup: plan.backup.len() as u64,
        unproven: plan.summary.unproven,
    };
    plan
}

/// Backups proven byte-identical to the namespace copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
#[tsify(missing_as_null, hashmap_as_object)]
pub struct BackupDedupe {
    /// When non-empty, hash these cache paths and plan again.
    pub needs_hash: Vec<String>,
    /// Backups that may be removed, with the copy that stays.
    pub redundant: Vec<Redundant>,
}

/// After the hydration that ends a repair: backups that turned out byte-identical to the
/// namespace copy the hydration brought down (the index recorded no hash, so they could not be
/// proven equal before). Removing them loses nothing; what stays in the backup folder really
/// differs. Returns the paths still needing a hash, and the backups proven redundant.
pub fn plan_backup_dedupe(
    model: &PathModel,
    files: &[LocalFile<'_>],
    hashes: &BTreeMap<String, String>,
) -> BackupDedupe {
    let sizes: BTreeMap<&str, u64> = files.iter().map(|f| (f.path, f.size)).collect();
    let prefix = format!("{REPAIR_DIR}/backup/");
    let mut needs_hash = Vec::new();
    let mut redundant = Vec::new();
    for file in files {
        let Some(rest) = file.path.strip_prefix(&prefix) else {
            continue;
        };
        // `<rel>` or `<rel>.<n>` when an earlier backup already held that name.
        let rel = match rest.rsplit_once('.') {
            Some((base, n))
                if !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit())
                    && sizes.contains_key(format!("{prefix}{base}").as_str()) =>
            {
                base
            }
            _ => rest,
        };
        let Ok(rel) = model.rel(rel) else {
            continue;
        };
        let ns_path = model.cache_path(&rel);
        if sizes.get(ns_path.as_str()) != Some(&file.size) {
            continue;
        }
        match (hashes.get(file.path), hashes.get(&ns_path)) {
            (Some(a), Some(b)) if a == b => redundant.push(Redundant {
                path: file.path.to_string(),
                same_as: ns_path,
            }),
            (Some(_), Some(_)) => {}
            _ => {
                needs_hash.push(file.path.to_string());
                needs_hash.push(ns_path);
            }
        }
    }
    BackupDedupe {
        needs_hash,
        redundant,
    }
}
