//! What a pull run decides after its downloads: whether the index it pruned goes back to the
//! bucket, and whether the sidecar may vouch for the cache (the next pull's fast path).
//!
//! These were the shim's decisions; here they are plain functions of what the core applied and
//! the facts the shim reports, so each is tested natively.

use serde::Deserialize;
use tsify_next::Tsify;

use crate::codes::GuardCode;
use crate::runs::pull::plan::{PullApplied, PullPlan};
use crate::runs::rebuild::plan::RebuildReport;
use crate::safety::Verdict;
use crate::state::sync_state::SyncState;

/// How many examples a verdict names (the full lists are in the plan and the report).
const EXAMPLES: usize = 5;

/// What a pull leaves for a person beyond its conflicts: data trees at the cache root beside
/// the namespace folder (`mixed-layout`), bucket keys the rebuild could not index
/// (`unsafe-keys`), and index entries it did not download (`refused-entries`). Each names a few
/// examples and the next step.
pub fn pull_attention(plan: &PullPlan, rebuilt: Option<&RebuildReport>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let layout = &plan.layout;
    if !layout.root_layout_trees.is_empty() {
        verdicts.push(Verdict {
            code: GuardCode::MixedLayout,
            message: format!(
                "{} files sit in root-level data trees ({}) beside the namespace folder; run `s3sync doctor` to see them",
                layout.root_layout_files,
                layout.root_layout_trees.join(", ")
            ),
        });
    }
    if let Some(report) = rebuilt.filter(|r| r.skipped_unsafe > 0) {
        let examples: Vec<String> = report
            .unsafe_examples
            .iter()
            .take(EXAMPLES)
            .map(|u| format!("{} ({})", quoted(&u.key), u.code))
            .collect();
        verdicts.push(Verdict {
            code: GuardCode::UnsafeKeys,
            message: format!(
                "{} bucket keys cannot be safe cache paths and were not indexed: {}; rename them in the bucket",
                report.skipped_unsafe,
                examples.join(", ")
            ),
        });
    }
    if !plan.refused.is_empty() {
        let mut codes: Vec<String> = Vec::new();
        for refused in &plan.refused {
            let code = refused.code.to_string();
            if !codes.contains(&code) {
                codes.push(code);
            }
        }
        let examples: Vec<String> = plan
            .refused
            .iter()
            .take(EXAMPLES)
            .map(|r| quoted(&r.rel))
            .collect();
        verdicts.push(Verdict {
            code: GuardCode::RefusedEntries,
            message: format!(
                "{} index entries were not downloaded ({}): {}",
                plan.refused.len(),
                codes.join(", "),
                examples.join(", ")
            ),
        });
    }
    verdicts
}

/// What a person must know about a pull that was applied: the conflicts it set aside (their
/// copies), what needs a person (`attention`: refused entries, unsafe keys, a mixed layout),
/// and the index entries it removed because their objects are gone (`entries-pruned`). The
/// service tells each through its logger; the CLI prints them as warnings.
pub fn pull_warnings(applied: &PullApplied) -> Vec<Verdict> {
    let mut warnings: Vec<Verdict> = applied.conflict.iter().cloned().collect();
    warnings.extend(applied.attention.iter().cloned());
    if applied.removed > 0 {
        warnings.push(Verdict {
            code: GuardCode::EntriesPruned,
            message: format!(
                "{} index entries named objects that are gone (read twice) or bookkeeping; \
                 removed from the index, which goes back to the bucket when it is a v1 monolith",
                applied.removed
            ),
        });
    }
    warnings
}

/// Confirmed-missing objects in a row (each read twice, no download between them) after which a
/// pull stops reading: an index whose objects are not there does not describe this bucket (a
/// wrong prefix or endpoint, a lifecycle rule that removed the objects, a hostile index of
/// 300,000 entries that cost 900,000 GETs). A datastore that lost a few objects stays far below.
pub const MISSING_IN_A_ROW_LIMIT: u64 = 100;

/// True when `missing_in_a_row` confirmed-missing objects stop the pull: past `limit` (default
/// [`MISSING_IN_A_ROW_LIMIT`]; 0 never stops). The entry that trips it, and every one after it,
/// is a failure (`objects-missing`), not pruned: a run that stopped on doubt removes nothing more
/// from the shared index.
pub fn missing_breaker_open(missing_in_a_row: u64, limit: Option<u64>) -> bool {
    let limit = limit.unwrap_or(MISSING_IN_A_ROW_LIMIT);
    limit > 0 && missing_in_a_row > limit
}

/// A name as a JSON string, so control characters and quotes in it stay visible.
fn quoted(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_else(|_| format!("{name:?}"))
}

/// What the shim reports when a pull's requests are done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct PullEnd {
    /// Downloads (and folder creations) that failed.
    pub failures: u64,
    /// The pruned index was published back to the bucket.
    pub index_published: bool,
    /// Only some folders were pulled (a scoped pull).
    pub scoped: bool,
    /// The ETag of the index now in the bucket (the one read, or our pruned copy).
    #[serde(default)]
    pub etag: Option<String>,
    /// The v2 `commitSeq` read, for a v2 repo.
    #[serde(default)]
    pub commit_seq: Option<u64>,
    /// When the pull ended (ISO-8601).
    pub now_iso: String,
}

/// True when the pull changed the index it read (entries pruned because their objects are
/// gone or internal, sizes corrected from the objects) and that index is a v1 monolith that
/// exists in the bucket: the pruned copy is then published, conditionally, over the one read.
/// A rebuilt index that was not published, and a v2 shard set, are left as they are.
pub fn publishes_pruned_index(applied: &PullApplied, index_exists: bool, v2: bool) -> bool {
    index_changed(applied) && index_exists && !v2
}

fn index_changed(applied: &PullApplied) -> bool {
    applied.removed > 0 || !applied.sizes_corrected.is_empty()
}

/// The sidecar a pull leaves (`None`: leave it as it is). It vouches for the cache only when
/// every planned file arrived, every conflict was settled, the whole tree was pulled, and the
/// bucket holds the index the cache now matches (the one read, or our pruned copy once
/// published). On a v2 repo the ETag recorded is `_index/_meta.json`'s, which every commit
/// rewrites; a v2 pull never publishes, so one that pruned entries records none (no fast path
/// then: the bucket's shards still name what this cache dropped).
/// `lazy_left` records that a metadata-only pull left files remote. A pull that refused index
/// entries vouches for nothing either: the cache does not hold what the index names, so the next
/// pull plans again and reports them again, until they are fixed (a fast path would report them
/// once, then exit 0 in silence). Unsafe keys a rebuild skipped are not in the index it
/// published, and a mixed layout leaves the bound tree as the index says: those still vouch.
pub fn sidecar_after_pull(
    sidecar: Option<&[u8]>,
    applied: &PullApplied,
    lazy_left: bool,
    v2: bool,
    end: &PullEnd,
) -> Option<Vec<u8>> {
    let complete = end.failures == 0
        && applied.unsettled_conflicts.is_empty()
        && !applied
            .attention
            .iter()
            .any(|verdict| verdict.code == GuardCode::RefusedEntries)
        && (!index_changed(applied) || end.index_published || v2)
        && !end.scoped;
    // A pointer kept over the bucket's version waits for the next push, which the seal of the
    // last one must not end early: the cache's files did not change, only what it synced did.
    let unseal = !applied.kept_pointers.is_empty();
    if !complete {
        // Otherwise left as it was: only a readable sidecar's seal is taken away.
        let mut state = sidecar.filter(|_| unseal).and_then(SyncState::parse)?;
        state.seal.take()?;
        return Some(state.to_json());
    }
    let mut state = SyncState::for_update(sidecar);
    if unseal {
        state.seal = None;
    }
    let matches_bucket = !v2 || !index_changed(applied);
    state.mark_synced(end.etag.as_deref().filter(|_| matches_bucket), &end.now_iso);
    // Set from this pull, so an unreadable sidecar's doubt is settled.
    state.lazy_pull_active = lazy_left;
    if let Some(seq) = end.commit_seq {
        state.commit_seq = Some(seq);
    }
    Some(state.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end() -> PullEnd {
        PullEnd {
            etag: Some("\"e1\"".into()),
            now_iso: "2026-12-01T00:00:00.000Z".into(),
            ..PullEnd::default()
        }
    }

    fn pruned() -> PullApplied {
        PullApplied {
            removed: 1,
            ..PullApplied::default()
        }
    }

    #[test]
    fn only_a_changed_existing_v1_index_is_published() {
        let corrected = PullApplied {
            sizes_corrected: vec!["a".into()],
            ..PullApplied::default()
        };
        assert!(publishes_pruned_index(&pruned(), true, false));
        assert!(publishes_pruned_index(&corrected, true, false));
        assert!(!publishes_pruned_index(
            &PullApplied::default(),
            true,
            false
        ));
        assert!(!publishes_pruned_index(&pruned(), false, false));
        assert!(!publishes_pruned_index(&pruned(), true, true));
    }

    #[test]
    fn a_complete_pull_vouches_with_the_etag_read() {
        let bytes = sidecar_after_pull(None, &PullApplied::default(), false, false, &end());
        let state = SyncState::parse(&bytes.unwrap()).unwrap();
        assert_eq!(state.remote_index_etag, "e1");
        assert!(!state.local_dirty);
        assert!(!state.lazy_pull_active);
    }

    #[test]
    fn a_kept_pointer_takes_the_seal_away_whether_or_not_the_pull_vouches() {
        let mut sealed = SyncState::fresh();
        sealed.seal = Some(crate::state::seal::StatSeal {
            digest: "d".into(),
            walked_at_ms: 5,
        });
        let sealed = sealed.to_json();
        let kept = PullApplied {
            kept_pointers: vec!["data/m/latest".into()],
            ..PullApplied::default()
        };
        let unseal = |end: &PullEnd| {
            let bytes = sidecar_after_pull(Some(&sealed), &kept, false, false, end);
            SyncState::parse(&bytes.expect("a sidecar")).unwrap()
        };
        assert_eq!(unseal(&end()).seal, None);
        let failed = PullEnd {
            failures: 1,
            ..end()
        };
        let state = unseal(&failed);
        assert_eq!(state.seal, None);
        // Not vouching: the rest is as it was.
        assert_ne!(state.remote_index_etag, "e1");
        // Nothing to take away: left alone.
        assert_eq!(sidecar_after_pull(None, &kept, false, false, &failed), None);
        let unsealed = SyncState::fresh().to_json();
        assert_eq!(
            sidecar_after_pull(Some(&unsealed), &kept, false, false, &failed),
            None
        );
        // A clean pull keeps the seal: nothing waits for a push.
        let clean =
            sidecar_after_pull(Some(&sealed), &PullApplied::default(), false, false, &end());
        assert!(SyncState::parse(&clean.unwrap()).unwrap().seal.is_some());
    }

    #[test]
    fn failures_unsettled_conflicts_scope_or_an_unpublished_prune_do_not_vouch() {
        let unsettled = PullApplied {
            unsettled_conflicts: vec!["c".into()],
            ..PullApplied::default()
        };
        let failed = PullEnd {
            failures: 1,
            ..end()
        };
        let scoped = PullEnd {
            scoped: true,
            ..end()
        };
        let clean = PullApplied::default();
        assert_eq!(
            sidecar_after_pull(None, &clean, false, false, &failed),
            None
        );
        assert_eq!(
            sidecar_after_pull(None, &unsettled, false, false, &end()),
            None
        );
        assert_eq!(
            sidecar_after_pull(None, &clean, false, false, &scoped),
            None
        );
        assert_eq!(
            sidecar_after_pull(None, &pruned(), false, false, &end()),
            None
        );
        let published = PullEnd {
            index_published: true,
            ..end()
        };
        assert!(sidecar_after_pull(None, &pruned(), false, false, &published).is_some());
        // A v2 pull publishes nothing: one that pruned records no ETag to fast-path on...
        let v2 = sidecar_after_pull(None, &pruned(), false, true, &end()).unwrap();
        assert_eq!(SyncState::parse(&v2).unwrap().remote_index_etag, "");
        // ...and a clean one records the meta's.
        let v2 = sidecar_after_pull(None, &clean, false, true, &end()).unwrap();
        assert_eq!(SyncState::parse(&v2).unwrap().remote_index_etag, "e1");
    }

    #[test]
    fn a_clean_pull_needs_no_attention() {
        assert!(pull_attention(&PullPlan::default(), None).is_empty());
        assert!(pull_attention(&PullPlan::default(), Some(&RebuildReport::default())).is_empty());
    }

    #[test]
    fn a_mixed_layout_unsafe_keys_and_refused_entries_are_each_named() {
        use crate::codes::{EntryRefusal, RefusalCode};
        use crate::error::PathRefusal;
        use crate::runs::pull::plan::RefusedEntry;
        use crate::runs::rebuild::plan::RefusedKey;
        let mut plan = PullPlan::default();
        plan.layout.root_layout_trees = vec!["data".into(), "logs".into()];
        plan.layout.root_layout_files = 3;
        plan.refused = (0..7)
            .map(|i| RefusedEntry {
                rel: format!("../r{i}"),
                code: if i == 6 {
                    RefusalCode::Entry(EntryRefusal::CaseCollision)
                } else {
                    RefusalCode::Path(PathRefusal::DotSegment)
                },
            })
            .collect();
        let rebuilt = RebuildReport {
            skipped_unsafe: 2,
            unsafe_examples: vec![RefusedKey {
                key: "a\nb".into(),
                code: RefusalCode::Path(PathRefusal::DotSegment),
            }],
            ..RebuildReport::default()
        };
        let verdicts = pull_attention(&plan, Some(&rebuilt));
        let codes: Vec<&str> = verdicts.iter().map(|v| v.code.as_str()).collect();
        assert_eq!(codes, ["mixed-layout", "unsafe-keys", "refused-entries"]);
        assert_eq!(
            verdicts[0].message,
            "3 files sit in root-level data trees (data, logs) beside the namespace folder; run `s3sync doctor` to see them"
        );
        assert!(verdicts[1]
            .message
            .starts_with("2 bucket keys cannot be safe cache paths"));
        assert!(verdicts[1].message.contains("\"a\\nb\" (path-dot-segment)"));
        // Seven refused, five named, each code once in the order first seen.
        assert!(verdicts[2].message.starts_with(
            "7 index entries were not downloaded (path-dot-segment, case-collision): "
        ));
        assert!(verdicts[2].message.contains("\"../r4\""));
        assert!(!verdicts[2].message.contains("\"../r5\""));
    }

    #[test]
    fn a_metadata_only_pull_records_that_files_stay_remote() {
        let lazy = sidecar_after_pull(None, &PullApplied::default(), true, false, &end()).unwrap();
        assert!(SyncState::parse(&lazy).unwrap().lazy_pull_active);
        // And a full pull after it settles the flag.
        let full =
            sidecar_after_pull(Some(&lazy), &PullApplied::default(), false, false, &end()).unwrap();
        assert!(!SyncState::parse(&full).unwrap().lazy_pull_active);
    }

    #[test]
    fn a_pull_that_refused_entries_does_not_vouch_so_the_next_one_says_so_again() {
        let refused = PullApplied {
            attention: vec![Verdict {
                code: GuardCode::RefusedEntries,
                message: "1 index entries were not downloaded".into(),
            }],
            ..PullApplied::default()
        };
        assert_eq!(
            sidecar_after_pull(None, &refused, false, false, &end()),
            None
        );
        let synced = sidecar_after_pull(None, &PullApplied::default(), false, false, &end())
            .expect("a clean pull vouches");
        let mixed = PullApplied {
            attention: vec![Verdict {
                code: GuardCode::MixedLayout,
                message: "root-level data trees".into(),
            }],
            ..PullApplied::default()
        };
        assert!(
            sidecar_after_pull(None, &mixed, false, false, &end()).is_some(),
            "the bound tree matches the index: it vouches"
        );
        let again = sidecar_after_pull(Some(&synced), &refused, false, false, &end());
        assert_eq!(again, None, "left as it was: no new vouching");
    }

    #[test]
    fn a_pull_tells_its_conflict_what_needs_a_person_and_the_entries_it_pruned() {
        assert!(pull_warnings(&PullApplied::default()).is_empty());
        let verdict = |code: GuardCode| Verdict {
            code,
            message: code.as_str().into(),
        };
        let applied = PullApplied {
            conflict: Some(verdict(GuardCode::Conflict)),
            attention: vec![verdict(GuardCode::RefusedEntries)],
            removed: 3,
            ..PullApplied::default()
        };
        let warnings = pull_warnings(&applied);
        let codes: Vec<&str> = warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["conflict", "refused-entries", "entries-pruned"]);
        assert!(warnings[2].message.starts_with("3 index entries"));
    }

    #[test]
    fn the_missing_breaker_opens_past_its_limit_and_never_at_zero() {
        assert!(!missing_breaker_open(MISSING_IN_A_ROW_LIMIT, None));
        assert!(missing_breaker_open(MISSING_IN_A_ROW_LIMIT + 1, None));
        assert!(!missing_breaker_open(3, Some(3)));
        assert!(missing_breaker_open(4, Some(3)));
        assert!(
            !missing_breaker_open(u64::MAX, Some(0)),
            "0: read every entry"
        );
    }
}
