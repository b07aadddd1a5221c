//! The push diff: what to upload, what may be deleted (and on what evidence), what is merely
//! missing, and which guards withhold what.
//!
//! Content comparison follows the extension (size, then mtime, then sha256), in two steps so no
//! file is hashed needlessly: [`plan_push`] returns the rels whose hash it needs, the shim hashes
//! just those, and [`plan_push`] runs again with the hashes.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use tsify_next::Tsify;

use serde::{Deserialize, Serialize};

use crate::codes::{GuardCode, RefusalCode};
use crate::index::{same_version, stat_matches, Entries, Index, IndexEntry};
use crate::model::file_class::is_derived;
use crate::model::layout::{LayoutFindings, PayloadFile, Survey};
use crate::model::paths::{is_internal, is_never_synced, PathModel};
use crate::model::time::{format_iso_millis, parse_iso_millis};
use crate::runs::pull::plan::{MtimeUpdate, RefusedEntry, Transfer};
use crate::safety::conflicts::CONFLICTS_DIR;
use crate::safety::deletions;
use crate::safety::object_condition::ExpectedVersion;
use crate::safety::{
    catalog_shrinks, covering_tombstone, delete_verdicts, DeletePolicy, Evidence, GuardInput,
    RunFacts, Verdict, CATALOG_EXPORT,
};

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

/// What the comparison of one local file with its entry concluded.
enum Compared {
    /// Changed here and remotely since the base: neither side is overwritten.
    Conflict,
    Unchanged,
    Upload(UploadReason),
    NeedsHash,
    HashMatched,
}

/// Compares one local file with the remote entry and with the base (what this cache last
/// synced, from the local index).
///
/// - Unchanged since the base (same size and the mtime recorded when it last matched):
///   nothing of ours to upload, whatever the remote holds now; a newer remote version is the
///   pull's to bring, never to be overwritten by a stale copy. Only a file marked dirty since
///   (`dirty`) is hashed against the base's SHA-256: a same-size rewrite within one mtime tick
///   is invisible to stat on coarse file systems.
/// - Otherwise, against the remote entry: a size change uploads; the remote's recorded mtime
///   is trusted only where no SHA-256 is recorded (it may be another machine's mtime), else the
///   file is hashed (the extension's rule since its #1307).
fn compare(
    entry: Option<&IndexEntry>,
    has_base: bool,
    base: Option<&IndexEntry>,
    size: u64,
    mtime: Option<i64>,
    hash: Option<&String>,
    dirty: bool,
) -> Compared {
    if let Some(base) = base.filter(|b| stat_matches(b, size, mtime)) {
        match (&base.sha256, dirty) {
            (_, false) => return Compared::Unchanged,
            (Some(expected), true) => {
                return match hash {
                    None => Compared::NeedsHash,
                    Some(actual) if expected.eq_ignore_ascii_case(actual) => Compared::HashMatched,
                    Some(_) => Compared::Upload(UploadReason::ContentChanged),
                }
            }
            // Marked dirty and nothing recorded to hash against: judge it by the remote entry.
            (None, true) => {}
        }
    }
    let Some(entry) = entry else {
        return Compared::Upload(UploadReason::New);
    };
    // Never synced here (the base has no entry), yet the remote holds it: unless the bytes
    // are the same, another cache made it too, and ours must not overwrite theirs.
    if has_base && base.is_none() {
        return match (&entry.sha256, hash) {
            (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                Compared::HashMatched
            }
            (Some(_), None) if entry.size == size => Compared::NeedsHash,
            (None, _) if entry.size == size => Compared::Unchanged,
            _ => Compared::Conflict,
        };
    }
    // Changed here since the base, and the remote moved on from it too: a conflict, unless
    // both sides hold the same bytes (then the remote entry just needs our mtime).
    if base.is_some_and(|b| !same_version(b, entry) && !stat_matches(b, size, mtime)) {
        return match (&entry.sha256, hash) {
            (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                Compared::HashMatched
            }
            (Some(_), None) if entry.size == size => Compared::NeedsHash,
            _ => Compared::Conflict,
        };
    }
    if entry.size != size {
        return Compared::Upload(UploadReason::SizeChanged);
    }
    // The remote still holds the base's version, and this cache's own record of the file it
    // left (the base's `localMtime`) no longer matches its stat: the file was written here since.
    // That is evidence of a local change whatever the remote entry recorded; an entry rebuilt
    // from a listing records neither a hash nor an mtime, and trusting its silence kept a
    // same-size edit (swamp's one-byte `latest` markers) from ever being pushed.
    if let Some(b) = base.filter(|b| b.local_mtime.is_some() && same_version(b, entry)) {
        if !stat_matches(b, size, mtime) {
            return match (b.sha256.as_ref().or(entry.sha256.as_ref()), hash) {
                (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                    Compared::HashMatched
                }
                (Some(_), Some(_)) => Compared::Upload(UploadReason::ContentChanged),
                (Some(_), None) => Compared::NeedsHash,
                // Nothing recorded to hash against: the bytes may be the same, but re-sending
                // them costs one upload where missing an edit loses it.
                (None, _) => Compared::Upload(UploadReason::MtimeChanged),
            };
        }
    }
    let recorded = entry.local_mtime.as_deref().and_then(parse_iso_millis);
    if recorded.is_some() && recorded == mtime && entry.sha256.is_none() {
        // Same size and the recorded mtime, nothing to hash against: unchanged (the rclone
        // default).
        return Compared::Unchanged;
    }
    match (&entry.sha256, hash) {
        (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
            Compared::HashMatched
        }
        (Some(_), Some(_)) => Compared::Upload(UploadReason::ContentChanged),
        (Some(_), None) => Compared::NeedsHash,
        // Nothing recorded to compare against: the extension leaves such a file alone.
        (None, _) if recorded.is_none() => Compared::Unchanged,
        (None, _) => Compared::Upload(UploadReason::MtimeChanged),
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
    plan.summary.delete = plan.deletes.len() as u64;
    plan.summary.withheld_deletes = plan.withheld.len() as u64;
    plan.summary.missing = plan.missing.len() as u64;
    plan.summary.not_pulled = plan.not_pulled.len() as u64;
    plan.summary.refused = plan.refused.len() as u64;
    plan
}

/// A local payload file with the remote and base entries of its rel.
#[derive(Clone, Copy)]
struct Local<'s, 'a> {
    rel: &'s str,
    file: &'s PayloadFile<'a>,
    remote: Option<&'s IndexEntry>,
    base: Option<&'s IndexEntry>,
}

/// The keys of two sorted maps in order, each with its entry in either map.
fn joined<'m>(
    remote: &'m Entries,
    base: &'m Entries,
) -> impl Iterator<Item = (&'m String, Option<&'m IndexEntry>, Option<&'m IndexEntry>)> {
    let mut r = remote.iter().peekable();
    let mut b = base.iter().peekable();
    std::iter::from_fn(move || match (r.peek(), b.peek()) {
        (None, None) => None,
        (Some(_), None) => r.next().map(|(k, e)| (k, Some(e), None)),
        (None, Some(_)) => b.next().map(|(k, e)| (k, None, Some(e))),
        (Some((rk, _)), Some((bk, _))) => match rk.cmp(bk) {
            Ordering::Less => r.next().map(|(k, e)| (k, Some(e), None)),
            Ordering::Greater => b.next().map(|(k, e)| (k, None, Some(e))),
            Ordering::Equal => {
                let (k, e) = r.next()?;
                let (_, be) = b.next()?;
                Some((k, Some(e), Some(be)))
            }
        },
    })
}

/// Every payload file of `survey` in rel order: `locals` (the files the index or the base
/// names, in rel order, each marked in `met`) with the others (new here) merged in. A walk in
/// rel order already is that order: the files are taken as walked, each met one from `locals`
/// (the next there must be its own), with no string compared. Any other walk is sorted and
/// merged.
fn in_rel_order<'s, 'a>(
    survey: &'s Survey<'a>,
    locals: Vec<Local<'s, 'a>>,
    met: &[bool],
) -> Vec<Local<'s, 'a>> {
    let new_here = |(rel, file): (&'a str, &'s PayloadFile<'a>)| Local {
        rel,
        file,
        remote: None,
        base: None,
    };
    if survey.payload.in_rel_order() {
        let mut out = Vec::with_capacity(survey.payload.len());
        let mut known = locals.iter().peekable();
        let mut taken = true;
        for (rel, file) in survey.payload.iter() {
            if !met[file.slot] {
                out.push(new_here((rel, file)));
            } else if let Some(local) = known.next_if(|l| l.file.slot == file.slot) {
                out.push(*local);
            } else {
                taken = false;
                break;
            }
        }
        if taken && known.next().is_none() {
            return out;
        }
    }
    let mut new_files: Vec<Local<'_, '_>> = survey
        .payload
        .iter()
        .filter(|(_, file)| !met[file.slot])
        .map(new_here)
        .collect();
    new_files.sort_unstable_by(|a, b| a.rel.cmp(b.rel));
    merge_sorted(locals, new_files)
}

/// Two lists sorted by rel (with no rel in both) as one sorted list.
fn merge_sorted<'s, 'a>(left: Vec<Local<'s, 'a>>, right: Vec<Local<'s, 'a>>) -> Vec<Local<'s, 'a>> {
    if right.is_empty() {
        return left;
    }
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        let take_left = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => a.rel < b.rel,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_left { l.next() } else { r.next() };
        out.extend(next);
    }
    out
}

/// Takes out of the plan every upload that would put a file where the index has a folder
/// (`logs/x` while `logs/x/y` is indexed) or a folder where it has a file (`logs/x/y` while
/// `logs/x` is indexed): the bucket holds both, but no cache can, so every later pull would
/// fail on one of them. Reported with the `path-conflict` verdict.
fn refuse_file_folder_clashes(index: &Index, plan: &mut PushPlan) {
    let clashes = folder_clashes(index, &plan.uploads);
    if clashes.iter().all(Option::is_none) {
        return;
    }
    let mut refused = Vec::new();
    let mut clash = clashes.into_iter();
    plan.uploads.retain(|upload| match clash.next().flatten() {
        Some(other) => {
            refused.push(format!("{} (the bucket has {other})", upload.transfer.rel));
            false
        }
        None => true,
    });
    if refused.is_empty() {
        return;
    }
    plan.summary.upload_bytes = plan.uploads.iter().map(|u| u.transfer.size).sum();
    let shown = refused
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = refused.len().saturating_sub(5);
    plan.blocked.push(Verdict {
        code: GuardCode::PathConflict,
        message: format!(
            "{} local files were not uploaded: each is a file where the bucket's index has a folder, or the reverse ({shown}{}); no file system holds both, so every pull would fail on one. Rename yours, or delete the bucket's (`s3sync mark-deleted`, then push) first",
            refused.len(),
            if more > 0 { format!(" and {more} more") } else { String::new() },
        ),
    });
}

/// For each upload (sorted by rel), the index key it clashes with, if any: the longest key
/// that is a folder of it (`a` for `a/b`), else the first key inside it as a folder (`a/b` for
/// `a`).
///
/// One walk over the index keys and the uploads merged in order, instead of a look-up per
/// folder of every upload. In sorted order the strings starting with `p` follow `p` in one
/// run, so a stack of the keys that are string prefixes of the current string holds every key
/// that may be its folder (each of a different length: found by length at each `/` cut), and
/// likewise a stack of uploads finds, for each key, the uploads that are its folders; the
/// first such key met is the smallest, the one a range look-up from `{rel}/` finds.
fn folder_clashes(index: &Index, uploads: &[Upload]) -> Vec<Option<String>> {
    let mut found: Vec<Option<String>> = vec![None; uploads.len()];
    if uploads.is_empty() {
        return found;
    }
    let mut keys = index.entries.keys().map(String::as_str).peekable();
    let mut next_upload = 0;
    let mut open_keys: Vec<&str> = Vec::new();
    let mut open_uploads: Vec<(&str, usize)> = Vec::new();
    let mut inside: Vec<Option<&str>> = vec![None; uploads.len()];
    loop {
        let upload = uploads.get(next_upload).map(|u| u.transfer.rel.as_str());
        let take_key = match (keys.peek(), upload) {
            (Some(key), Some(rel)) => *key <= rel,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let current = if take_key { keys.next() } else { upload };
        let Some(current) = current else { break };
        while open_keys.last().is_some_and(|k| !current.starts_with(k)) {
            open_keys.pop();
        }
        while open_uploads
            .last()
            .is_some_and(|(u, _)| !current.starts_with(u))
        {
            open_uploads.pop();
        }
        if take_key {
            if !open_uploads.is_empty() {
                for (cut, _) in current.match_indices('/') {
                    if let Ok(at) = open_uploads.binary_search_by_key(&cut, |(u, _)| u.len()) {
                        let slot = &mut inside[open_uploads[at].1];
                        if slot.is_none() {
                            *slot = Some(current);
                        }
                    }
                }
            }
            open_keys.push(current);
        } else {
            if !open_keys.is_empty() {
                found[next_upload] = current.rmatch_indices('/').find_map(|(cut, _)| {
                    open_keys
                        .binary_search_by_key(&cut, |k| k.len())
                        .ok()
                        .map(|at| open_keys[at].to_string())
                });
            }
            open_uploads.push((current, next_upload));
            next_upload += 1;
        }
    }
    for (slot, inner) in found.iter_mut().zip(inside) {
        if slot.is_none() {
            *slot = inner.map(str::to_string);
        }
    }
    found
}

/// The `unsafe-local-paths` verdict: local files whose names no bucket key may carry (or no
/// other cache could hold), so the push did not upload them. Reported, never skipped silently.
pub fn unsafe_local_verdict(findings: &LayoutFindings) -> Option<Verdict> {
    if findings.unsafe_count == 0 {
        return None;
    }
    let shown = findings
        .unsafe_paths
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>();
    let more = findings.unsafe_count.saturating_sub(shown.len() as u64);
    Some(Verdict {
        code: GuardCode::UnsafeLocalPaths,
        message: format!(
            "{} local files were not uploaded: their names break the path rules (windows device names, backslashes, control characters, drive letters, names over 255 bytes, keys over 1024 bytes) ({}{}); rename them (`s3sync doctor` names each rule)",
            findings.unsafe_count,
            shown.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() },
        ),
    })
}

/// The `conflict` verdict: which files changed on both sides, and how a person settles each.
pub fn conflict_verdict(conflicts: &[String]) -> Verdict {
    let shown: Vec<&str> = conflicts.iter().take(5).map(String::as_str).collect();
    let more = conflicts.len().saturating_sub(shown.len());
    Verdict {
        code: GuardCode::Conflict,
        message: format!(
            "{} files changed here and in the bucket since this cache last synced them ({}{}): yours were not uploaded, the bucket's not overwritten. \
             `s3sync resolve --keep mine <path>` pushes yours over it; `s3sync resolve --keep theirs <path>` takes the bucket's (a pull takes it too, keeping yours in {CONFLICTS_DIR}/)",
            conflicts.len(),
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() },
        ),
    }
}

/// True when the cache path lies inside one of `foreign`, the top-level folders of other
/// namespaces. Namespaced, a cache path starts with the bound namespace, which is never foreign.
fn in_foreign_folder(cache_path: &str, foreign: &[String]) -> bool {
    match cache_path.split_once('/') {
        Some((first, _)) => foreign.iter().any(|f| f == first),
        None => false,
    }
}

/// One uploaded file, as the shim reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Uploaded {
    /// Index key.
    pub rel: String,
    /// Bytes uploaded.
    pub size: u64,
    /// Local mtime (epoch ms) read after the upload; absent when unknown.
    #[tsify(optional)]
    pub mtime_ms: Option<i64>,
    /// SHA-256 of the bytes uploaded.
    pub sha256: String,
    /// The ETag the server answered the write with, when it sent one: recorded in the entry
    /// ([`crate::safety::object_condition::ETAG_FIELD`]) so the next replacement can go `If-Match` it
    /// without a HEAD first.
    #[serde(default)]
    #[tsify(optional)]
    pub etag: Option<String>,
}

/// A push's changes to the index, kept so they can be re-applied over a newer index when a
/// conditional publish loses a race.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushChanges {
    /// New or replaced entries.
    pub upserts: BTreeMap<String, IndexEntry>,
    /// Deleted rels, with the entry they deleted (a delete is re-applied only over that same
    /// entry, so a peer's newer upload of the same rel is never dropped).
    pub deletes: BTreeMap<String, IndexEntry>,
    /// `localMtime` updates of unchanged files.
    pub mtimes: BTreeMap<String, String>,
    /// Internal entries to drop.
    pub prune: BTreeSet<String>,
    /// The entry each upsert and mtime update was decided against (`None`: the index read had
    /// none): a re-merge applies one only over that same version.
    pub read: BTreeMap<String, Option<IndexEntry>>,
    /// When the push ran (ISO-8601): the time its deletion records carry (see
    /// [`crate::safety::deletions`]).
    pub at: Option<String>,
}

impl PushChanges {
    /// True when the remote index must be written.
    pub fn touches_remote(&self) -> bool {
        !self.upserts.is_empty() || !self.deletes.is_empty() || !self.prune.is_empty()
    }
}

/// Collects the changes a push made: uploads done, deletes decided (published before the
/// objects are removed), mtimes learned, internal entries pruned.
pub fn push_changes(
    index: &Index,
    plan: &PushPlan,
    uploaded: &[Uploaded],
    now_iso: &str,
) -> PushChanges {
    let mut changes = PushChanges {
        at: Some(now_iso.to_string()),
        ..PushChanges::default()
    };
    for up in uploaded {
        let read = index.entries.get(&up.rel);
        changes.read.insert(up.rel.clone(), read.cloned());
        let mut entry = IndexEntry {
            size: up.size,
            last_modified: Some(now_iso.into()),
            local_mtime: up.mtime_ms.map(|ms| format_iso_millis(ms).into()),
            sha256: Some(up.sha256.clone()),
            extra: read.and_then(|e| e.extra.clone()),
        };
        // The old version's ETag must never describe the new one.
        crate::safety::object_condition::record_etag(&mut entry, up.etag.as_deref());
        changes.upserts.insert(up.rel.clone(), entry);
    }
    for delete in &plan.deletes {
        if let Some(entry) = index.entries.get(&delete.rel) {
            changes.deletes.insert(delete.rel.clone(), entry.clone());
        }
    }
    for update in &plan.mtime_updates {
        changes
            .mtimes
            .insert(update.rel.clone(), update.local_mtime.clone());
        changes
            .read
            .insert(update.rel.clone(), index.entries.get(&update.rel).cloned());
    }
    changes.prune = plan.prune.iter().cloned().collect();
    changes
}

/// Applies `changes` to `index` (the one read, or a newer one after a lost race) and returns
/// the upserts it refused: rels another writer added or replaced since this push read them.
/// Such an upload is a conflict, never re-inserted over the other writer's version. An upload
/// whose entry another writer removed goes back in: an edit outlives a delete of the version it
/// edits (its object was written create-only once the old one was gone, see
/// `object_condition`). Over the index read nothing is refused.
///
/// An mtime update goes only onto the version it was verified against: on another writer's
/// version it would tell the next run that this cache holds bytes it never saw.
pub fn apply_changes(index: &mut Index, changes: &PushChanges) -> BTreeSet<String> {
    let unchanged_since_read = |index: &Index, rel: &String| {
        let read = changes.read.get(rel).and_then(Option::as_ref);
        match (index.entries.get(rel), read) {
            (None, None) => true,
            (Some(now), Some(read)) => same_version(now, read),
            _ => false,
        }
    };
    let mut refused = BTreeSet::new();
    for (rel, entry) in &changes.upserts {
        if unchanged_since_read(index, rel) || !index.entries.contains_key(rel) {
            index.entries.insert(rel.clone(), entry.clone());
            deletions::forget_deletion(index, rel);
        } else {
            refused.insert(rel.clone());
        }
    }
    for (rel, deleted) in &changes.deletes {
        let same = index.entries.get(rel).is_some_and(|current| {
            current.size == deleted.size && current.last_modified == deleted.last_modified
        });
        if same {
            index.entries.remove(rel);
            if let Some(at) = &changes.at {
                deletions::record_deletion(index, rel, deleted, at);
            }
        }
    }
    if let Some(at) = &changes.at {
        deletions::prune_deletions(index, at);
    }
    for (rel, mtime) in &changes.mtimes {
        if !unchanged_since_read(index, rel) {
            continue;
        }
        if let Some(entry) = index.entries.get_mut(rel) {
            entry.local_mtime = Some(mtime.as_str().into());
        }
    }
    for rel in &changes.prune {
        index.entries.remove(rel);
    }
    refused
}

/// The rels whose version differs between `before` and `after` (added, removed, or not
/// [`same_version`]), except those in `ours`: what another writer changed between two reads.
pub fn changed_by_others(before: &Index, after: &Index, ours: &BTreeSet<&str>) -> BTreeSet<String> {
    let mut changed = BTreeSet::new();
    for (rel, entry) in after.entries.iter() {
        if ours.contains(rel.as_str()) {
            continue;
        }
        if !before
            .entries
            .get(rel)
            .is_some_and(|old| same_version(old, entry))
        {
            changed.insert(rel.clone());
        }
    }
    for rel in before.entries.keys() {
        if !ours.contains(rel.as_str()) && !after.entries.contains_key(rel) {
            changed.insert(rel.clone());
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The look-up the one-pass [`folder_clashes`] replaced: the longest indexed folder of
    /// `rel`, else the first indexed key inside `rel/`.
    fn clash_by_lookups(index: &Index, rel: &str) -> Option<String> {
        let mut prefix = rel;
        while let Some(cut) = prefix.rfind('/') {
            prefix = &prefix[..cut];
            if index.entries.contains_key(prefix) {
                return Some(prefix.to_string());
            }
        }
        let folder = format!("{rel}/");
        index
            .entries
            .iter()
            .find(|(key, _)| **key >= folder)
            .filter(|(key, _)| key.starts_with(&folder))
            .map(|(key, _)| key.clone())
    }

    /// A small deterministic generator (a 64-bit LCG, high bits used).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, m: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % m
        }

        /// A path from a tiny alphabet (`a`, `b`; mostly `/`, sometimes `-` or `.` between),
        /// so that folders, prefixes and siblings sorting between a file and its folder are
        /// common.
        fn path(&mut self) -> String {
            let mut out = String::new();
            for depth in 0..=self.below(4) {
                if depth > 0 {
                    out.push(['/', '/', '/', '-', '.'][self.below(5) as usize]);
                }
                out.push(if self.below(2) == 0 { 'a' } else { 'b' });
                if self.below(4) == 0 {
                    out.push('a');
                }
            }
            out
        }
    }

    #[test]
    fn folder_clashes_match_the_lookups_they_replaced() {
        let mut rng = Lcg(15);
        let mut clashing = 0;
        for _ in 0..3_000 {
            let mut index = Index::default();
            for _ in 0..rng.below(25) {
                index.entries.insert(rng.path(), IndexEntry::default());
            }
            let rels: BTreeSet<String> = (0..rng.below(20)).map(|_| rng.path()).collect();
            let uploads: Vec<Upload> = rels
                .iter()
                .map(|rel| Upload {
                    transfer: Transfer {
                        rel: rel.clone(),
                        remote_key: rel.clone(),
                        cache_path: rel.clone(),
                        size: 1,
                    },
                    reason: UploadReason::New,
                    expected: None,
                })
                .collect();
            let want: Vec<Option<String>> = rels
                .iter()
                .map(|rel| clash_by_lookups(&index, rel))
                .collect();
            clashing += want.iter().flatten().count();
            assert_eq!(
                folder_clashes(&index, &uploads),
                want,
                "{rels:?} in {index:?}"
            );
        }
        assert!(clashing > 1_000, "only {clashing} clashes exercised");
    }
}
