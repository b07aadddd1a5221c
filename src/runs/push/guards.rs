//! The push plan's guards beyond the delete guard: uploads that would put a file where the
//! index has a folder (or the other way round), unsafe local paths, conflicts, and files in
//! another namespace's folder.

use crate::codes::GuardCode;
use crate::index::Index;
use crate::model::layout::LayoutFindings;
use crate::safety::conflicts::CONFLICTS_DIR;
use crate::safety::Verdict;

use super::plan::{PushPlan, Upload};

/// Takes out of the plan every upload that would put a file where the index has a folder
/// (`logs/x` while `logs/x/y` is indexed) or a folder where it has a file (`logs/x/y` while
/// `logs/x` is indexed): the bucket holds both, but no cache can, so every later pull would
/// fail on one of them. Reported with the `path-conflict` verdict.
pub(super) fn refuse_file_folder_clashes(index: &Index, plan: &mut PushPlan) {
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
pub(super) fn folder_clashes(index: &Index, uploads: &[Upload]) -> Vec<Option<String>> {
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
pub(super) fn in_foreign_folder(cache_path: &str, foreign: &[String]) -> bool {
    match cache_path.split_once('/') {
        Some((first, _)) => foreign.iter().any(|f| f == first),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::IndexEntry;
    use crate::runs::pull::plan::Transfer;
    use crate::runs::push::plan::UploadReason;
    use std::collections::BTreeSet;

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
