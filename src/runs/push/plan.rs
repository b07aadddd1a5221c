//! The push diff: what to upload, what may be deleted (and on what evidence), what is merely
//! missing, and which guards withhold what.
//!
//! Content comparison follows the extension (size, then mtime, then sha256), in two steps so no
//! file is hashed needlessly: [`plan_push`] returns the rels whose hash it needs, the shim hashes
//! just those, and [`plan_push`] runs again with the hashes.

use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::Serialize;

use crate::codes::{GuardCode, RefusalCode};
use crate::index::{same_version, stat_matches, Entries, Index};
use crate::model::file_class::is_derived;
use crate::model::layout::{LayoutFindings, Survey};
use crate::model::paths::{is_internal, is_never_synced, PathModel};
use crate::model::time::format_iso_millis;
use crate::runs::pull::plan::{MtimeUpdate, RefusedEntry, Transfer};
use crate::safety::object_condition::ExpectedVersion;
use crate::safety::{
    catalog_shrinks, covering_tombstone, delete_verdicts, DeletePolicy, Evidence, GuardInput,
    RunFacts, Verdict, CATALOG_EXPORT,
};

pub use super::changes::{apply_changes, changed_by_others, push_changes, PushChanges, Uploaded};
use super::compare::{compare, Compared};
pub use super::guards::{conflict_verdict, unsafe_local_verdict};
use super::guards::{in_foreign_folder, refuse_file_folder_clashes};
use super::order::{in_rel_order, joined, Local};

/// Why a file is uploaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "kebab-case")]
pub enum UploadReason {
    /// The index has no entry for it.
    New,
    /// Its size differs from the entry's.
    SizeChanged,
    /// Its hash differs from the entry's.
    ContentChanged,
    /// Its mtime differs and the entry has no hash to compare.
    MtimeChanged,
}

/// One upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Upload {
    /// The transfer, with all three names.
    #[serde(flatten)]
    pub transfer: Transfer,
    /// Why.
    pub reason: UploadReason,
    /// The version the upload replaces, as the index read names it; `None`: a new key, written
    /// create-only (see [`crate::safety::object_condition`]).
    pub expected: Option<ExpectedVersion>,
}

/// One delete and its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct Delete {
    /// Index key.
    pub rel: String,
    /// Remote key relative to the prefix.
    pub remote_key: String,
    /// Why the delete is allowed.
    pub evidence: Evidence,
    /// The version the delete removes, as the index read names it: the object is deleted only
    /// while the bucket still holds it (see [`crate::safety::object_condition`]).
    pub expected: ExpectedVersion,
}

/// Counts of a push plan (the CLI contract's `summary`, minus `download`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct PushSummary {
    /// Files to upload.
    pub upload: u64,
    /// Of those, files the index does not name (the rest replace an entry): swamp's preview
    /// counts them as new, the others as changed.
    pub upload_new: u64,
    /// Bytes to upload.
    pub upload_bytes: u64,
    /// Objects to delete (after the guards).
    pub delete: u64,
    /// Deletes the evidence supported but a guard withheld.
    pub withheld_deletes: u64,
    /// Index entries absent locally without evidence (reported, never deleted).
    pub missing: u64,
    /// Index entries another cache added that this one has never synced nor holds (a pull
    /// brings them; nothing to push or delete).
    pub not_pulled: u64,
    /// Files unchanged.
    pub unchanged: u64,
    /// Files held back by a guard (the catalog export).
    pub held_back: u64,
    /// Index entries whose keys break the path rules (kept in the index, never acted on).
    pub refused: u64,
}

/// The push plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct PushPlan {
    /// Counts.
    pub summary: PushSummary,
    /// When non-empty, hash these cache paths' files and plan again; nothing else is final.
    pub needs_hash: Vec<String>,
    /// Uploads, sorted by rel.
    pub uploads: Vec<Upload>,
    /// Deletes that may go (empty whenever a verdict withholds deletes).
    pub deletes: Vec<Delete>,
    /// Deletes the evidence supported but a guard withheld.
    pub withheld: Vec<Delete>,
    /// Index entries absent locally without evidence, that this cache synced (or, with no base
    /// at all, may have synced): absence is not deletion, so they are reported and kept.
    pub missing: Vec<String>,
    /// Index entries absent locally that the base does not name: another cache added them after
    /// this one last synced them, or a scoped pull left them out. Not `missing`: nothing here
    /// was deleted, so they are neither warned about nor keep the cache from being sealed; a
    /// pull brings them.
    pub not_pulled: Vec<String>,
    /// Index entries whose keys break the path rules, with the refusal's code, as a pull
    /// reports them: they name no local file, so they are never uploaded, deleted or dropped
    /// (the published index keeps them as read). Also counted in `missing`, as before.
    pub refused: Vec<RefusedEntry>,
    /// `localMtime` values to record for files whose hash matched.
    pub mtime_updates: Vec<MtimeUpdate>,
    /// Guards that fired.
    pub blocked: Vec<Verdict>,
    /// Internal entries dropped from the index.
    pub prune: Vec<String>,
    /// Files unchanged here since the base whose remote version moved on (another cache pushed
    /// a newer one, or removed it): never uploaded, left for the pull to bring. Their base
    /// entries stay in the local index (see `local_index_after_push`).
    pub behind: Vec<String>,
    /// Files changed here and remotely since the base: not uploaded (the newer remote version
    /// is never overwritten), reported with the `conflict` verdict; their base entries stay.
    pub conflicts: Vec<String>,
    /// Derived files (see [`crate::model::file_class`]) changed here while another writer replaced
    /// them in the bucket: not uploaded and no conflict (swamp regenerates them); also `behind`,
    /// so the next pull brings the bucket's version in place of ours.
    pub superseded: Vec<String>,
    /// Layout findings of the walk.
    pub layout: LayoutFindings,
}

impl PushPlan {
    /// Leaves the derived file `rel` to the version another writer put in the bucket (see
    /// [`PushPlan::superseded`]).
    pub fn supersede(&mut self, rel: &str) {
        if !self.superseded.iter().any(|r| r == rel) {
            self.superseded.push(rel.to_string());
            self.superseded.sort();
        }
        if !self.behind.iter().any(|r| r == rel) {
            self.behind.push(rel.to_string());
            self.behind.sort();
        }
    }
}

/// Inputs of a push plan beyond the index and the walk.
#[derive(Debug, Clone, Default)]
pub struct PushInput {
    /// Cache-relative tombstones (normalised with `safety::normalize_tombstone`).
    pub tombstones: BTreeSet<String>,
    /// SHA-256 (lowercase hex) of files the previous step asked for, by cache path.
    pub hashes: BTreeMap<String, String>,
    /// Delete settings.
    pub policy: DeletePolicy,
    /// Run facts.
    pub facts: RunFacts,
    /// Each walked file's change time and inode (`[ctime, ino, …]` in walk order), when known.
    pub changes: Vec<f64>,
    /// The sidecar's seal was made by a walk begun at this time: a file whose change time is
    /// not older than that less its racy window ([`crate::state::seal::is_racy`]) was written since (or
    /// too close to tell), so a size and mtime equal to the base's do not clear it: it is
    /// hashed, as a `markDirty`'d file is. This catches a same-size rewrite that restored its
    /// mtime.
    pub sealed_at_ms: Option<i64>,
}

impl PushInput {
    /// True when the walked file at `slot` (mtime `mtime_ms`) changed since the seal's walk, or
    /// too close before it (see [`PushInput::sealed_at_ms`]).
    fn changed_since_seal(&self, slot: usize, mtime_ms: Option<i64>) -> bool {
        let Some(sealed_at) = self.sealed_at_ms else {
            return false;
        };
        self.changes.get(slot * 2).is_some_and(|ctime| {
            let ctime = ctime.is_finite().then_some(*ctime as i64);
            crate::state::seal::is_racy(mtime_ms, ctime, sealed_at)
        })
    }
}

/// Plans a push of the cache described by `survey` against the remote `index`, with `base`
/// (the local index: what this cache last synced) deciding what changed locally.
pub fn plan_push(
    model: &PathModel,
    index: &Index,
    base: Option<&Index>,
    survey: &Survey,
    input: &PushInput,
) -> PushPlan {
    let mut plan = PushPlan {
        layout: survey.findings.clone(),
        ..PushPlan::default()
    };
    // One walk over the index and the base together (both sorted): each key's remote and base
    // entries without a look-up, and each key's local file from the survey. Keys with a local
    // file are compared below in rel order; keys without one are delete candidates or missing.
    let mut locals: Vec<Local<'_, '_>> = Vec::with_capacity(survey.payload.len());
    let mut met = vec![false; survey.walked];
    let mut candidates = Vec::new();
    let mut absent_conflicts = Vec::new();
    let empty = Entries::new();
    let base_entries = base.map_or(&empty, |b| &b.entries);
    // The joined keys come in ascending order, as the cursor wants them.
    let mut local_files = survey.payload.cursor();
    for (key, remote, base_entry) in joined(&index.entries, base_entries) {
        if remote.is_some() && is_internal(key) {
            plan.prune.push(key.clone());
            continue;
        }
        if let Some(file) = local_files.find(key.as_str()) {
            met[file.slot] = true;
            locals.push(Local {
                rel: key.as_str(),
                file,
                remote,
                base: base_entry,
            });
            continue;
        }
        let Some(remote_entry) = remote else {
            continue;
        };
        if is_never_synced(key) {
            continue;
        }
        // An entry whose key breaks the path rules cannot name a local file: never evidence.
        let rel = match model.rel(key) {
            Ok(rel) => rel,
            Err(error) => {
                plan.refused.push(RefusedEntry {
                    rel: key.clone(),
                    code: RefusalCode::of_error(&error),
                });
                plan.missing.push(key.clone());
                continue;
            }
        };
        let cache_path = model.cache_path(&rel);
        // Solo, an entry inside another namespace's folder (one holding a `.namespace.json`
        // here) belongs to that namespace: the walk does not count its files as payload, so
        // without this check they looked absent, and a tombstone (or `--delete-missing`) deleted
        // the other namespace's object while its file sat in the cache. Such entries are
        // neither missing nor deletable, like never-synced ones. Found by the push_plan fuzz
        // target.
        if in_foreign_folder(&cache_path, &survey.findings.foreign_namespace_dirs) {
            continue;
        }
        let evidence = match covering_tombstone(&input.tombstones, &cache_path) {
            Some(path) => Evidence::Tombstone { path: path.clone() },
            None if input.policy.delete_missing => Evidence::DeleteMissing,
            // The base names every file this cache synced: an entry it does not name was never
            // here, so its absence says nothing (a peer's new file, a scoped pull's leftover).
            None if base.is_some() && base_entry.is_none() => {
                plan.not_pulled.push(key.clone());
                continue;
            }
            None => {
                plan.missing.push(key.clone());
                continue;
            }
        };
        if base.is_some() {
            match base_entry {
                // Never here at the last sync (another cache added it, say under a folder
                // tombstoned here): this cache cannot have deleted it.
                None => {
                    plan.missing.push(key.clone());
                    continue;
                }
                // Deleted here, but changed remotely since: the newer version is not ours to
                // delete.
                Some(b) if !same_version(b, remote_entry) => {
                    absent_conflicts.push(key.clone());
                    continue;
                }
                Some(_) => {}
            }
        }
        candidates.push(Delete {
            rel: key.clone(),
            remote_key: model.remote_key(&rel),
            evidence,
            expected: ExpectedVersion::of(remote_entry),
        });
    }
    // Every payload file in rel order: the ones the index names (`locals`, met in key order)
    // with the new ones merged in.
    let in_order = in_rel_order(survey, locals, &met);

    for Local {
        rel: rel_text,
        file: stat,
        remote: entry,
        base: base_entry,
    } in in_order
    {
        // Every local is a walked payload file, whose rel the survey checked (a key joined to
        // one is the same string); checking it again here cost ~6 % of a 10^6 WASM push.
        let rel = stat.rel;
        debug_assert_eq!(rel.as_str(), rel_text);
        // The walked path is the cache path of its rel (see `PayloadFile::cache_path`).
        let cache_path = stat.cache_path;
        debug_assert_eq!(cache_path, model.under_binding(rel.as_str()));
        let dirty = covering_tombstone(&input.tombstones, cache_path).is_some()
            || input.changed_since_seal(stat.slot, stat.mtime_ms);
        let compared = compare(
            entry,
            base.is_some(),
            base_entry,
            stat.size,
            stat.mtime_ms,
            input.hashes.get(cache_path),
            dirty,
        );
        if let Some(b) = base_entry {
            let kept = matches!(compared, Compared::Unchanged | Compared::HashMatched)
                && stat_matches(b, stat.size, stat.mtime_ms);
            if kept && entry.is_none_or(|r| !same_version(r, b)) {
                plan.behind.push(rel_text.to_string());
            }
        }
        match compared {
            Compared::Conflict if is_derived(rel_text) => plan.supersede(rel_text),
            Compared::Conflict => plan.conflicts.push(rel_text.to_string()),
            Compared::Unchanged => plan.summary.unchanged += 1,
            Compared::HashMatched => {
                plan.summary.unchanged += 1;
                if let Some(mtime) = stat.mtime_ms {
                    plan.mtime_updates.push(MtimeUpdate {
                        rel: rel_text.to_string(),
                        local_mtime: format_iso_millis(mtime),
                    });
                }
            }
            Compared::NeedsHash => plan.needs_hash.push(cache_path.to_string()),
            Compared::Upload(reason) => {
                let remote_size = entry.map_or(0, |e| e.size);
                if rel_text == CATALOG_EXPORT
                    && entry.is_some()
                    && !input.policy.allow_catalog_shrink
                    && catalog_shrinks(stat.size, remote_size)
                {
                    plan.summary.held_back += 1;
                    plan.blocked.push(Verdict {
                        code: GuardCode::CatalogShrink,
                        message: format!(
                            "{cache_path} would replace a remote copy of {remote_size} bytes with {} bytes; \
                             it is held back (restore the catalog, or pass --allow-catalog-shrink if the removal is intended)",
                            stat.size
                        ),
                    });
                    continue;
                }
                plan.summary.upload_bytes += stat.size;
                plan.uploads.push(Upload {
                    transfer: Transfer {
                        rel: rel_text.to_string(),
                        // The walked path is the rel's cache path and its remote key (the two
                        // are one string, see `PathModel::cache_path`): copied, not rebuilt.
                        remote_key: cache_path.to_string(),
                        cache_path: cache_path.to_string(),
                        size: stat.size,
                    },
                    reason,
                    expected: entry.map(ExpectedVersion::of),
                });
            }
        }
    }

    refuse_file_folder_clashes(index, &mut plan);
    plan.conflicts.extend(absent_conflicts);

    let verdicts = delete_verdicts(&GuardInput {
        model,
        // Bookkeeping entries (the seed bug's `<ns>/_index/...`) are not datastore files: an
        // index of nothing else counts as empty for the guards.
        // Every internal entry was pruned above, so the rest is the count.
        index_entries: (index.entries.len() - plan.prune.len()) as u64,
        payload_files: survey.payload.len() as u64,
        root_layout_trees: &survey.findings.root_layout_trees,
        root_layout_files: survey.findings.root_layout_files,
        deletes: candidates.len() as u64,
        facts: input.facts,
        policy: input.policy,
    });
    if verdicts.is_empty() {
        plan.deletes = candidates;
    } else {
        plan.withheld = candidates;
        plan.blocked.extend(verdicts);
    }
    if !plan.conflicts.is_empty() {
        plan.blocked.push(conflict_verdict(&plan.conflicts));
    }
    if let Some(verdict) = unsafe_local_verdict(&survey.findings) {
        plan.blocked.push(verdict);
    }
    plan.summary.upload = plan.uploads.len() as u64;
    plan.summary.upload_new = plan
        .uploads
        .iter()
        .filter(|u| u.reason == UploadReason::New)
        .count() as u64;
    plan.summary.delete = plan.deletes.len() as u64;
    plan.summary.withheld_deletes = plan.withheld.len() as u64;
    plan.summary.missing = plan.missing.len() as u64;
    plan.summary.not_pulled = plan.not_pulled.len() as u64;
    plan.summary.refused = plan.refused.len() as u64;
    plan
}
