//! What a push run decides around its per-file plan: withholding deletes nobody confirmed,
//! whether a saved plan still holds, and what the run records in the sidecar when it ends.
//!
//! These were the shim's decisions; here they are plain functions of the plan and the facts the
//! shim reports (counts, the ETag it published, the time), so each is tested natively and the
//! shim only carries values between the core and the bucket.

use serde::Deserialize;
use serde_json::Value;
use tsify_next::Tsify;

use crate::codes::GuardCode;
use crate::error::{CoreError, CoreResult};
use crate::runs::push::plan::PushPlan;
use crate::safety::Verdict;
use crate::state::sync_state::{PushStanding, SyncState};

/// The `kind` of a plan saved by `s3sync plan --out`.
pub const SAVED_PLAN_KIND: &str = "s3sync-push-plan";

/// Moves every delete of `plan` to `withheld` because nobody confirmed them, and says so with
/// the `confirmation-required` verdict. A plan without deletes is left as it is.
pub fn withhold_unconfirmed_deletes(plan: &mut PushPlan) {
    if plan.deletes.is_empty() {
        return;
    }
    plan.withheld.append(&mut plan.deletes);
    plan.summary.withheld_deletes = plan.withheld.len() as u64;
    plan.summary.delete = 0;
    plan.blocked.push(Verdict {
        code: GuardCode::ConfirmationRequired,
        message: format!(
            "{} deletes were not confirmed; review them with `s3sync plan`, then push with --yes",
            plan.withheld.len()
        ),
    });
}

/// A plan saved by `s3sync plan --out`, as far as the staleness check reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedPlan {
    kind: String,
    remote_index_etag: Option<String>,
    listing_digest: String,
    plan: SavedPlanBody,
}

/// The parts of a saved plan that must still hold: what it uploads and what it deletes.
#[derive(Debug, Deserialize)]
struct SavedPlanBody {
    uploads: Vec<SavedUpload>,
    deletes: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct SavedUpload {
    rel: String,
}

/// Checks that a saved plan (`saved`, the JSON of `s3sync plan --out`) is the plan a push would
/// run now: made from the same remote index (`remote_index_etag`) and the same cache walk
/// (`listing_digest`), uploading the same files and deleting the same objects on the same
/// evidence. A person approved exactly that plan, so anything else is `plan-stale`; a file that
/// is no saved plan is `invalid-input`.
pub fn check_saved_plan(
    saved: &[u8],
    plan: &PushPlan,
    remote_index_etag: Option<&str>,
    listing_digest: &str,
) -> CoreResult<()> {
    let saved: SavedPlan = serde_json::from_slice(saved)
        .map_err(|e| CoreError::input(format!("not a saved s3sync plan: {e}")))?;
    if saved.kind != SAVED_PLAN_KIND {
        return Err(CoreError::input(format!(
            "not a saved s3sync plan (kind {:?})",
            saved.kind
        )));
    }
    let deletes_now = serde_json::to_value(&plan.deletes)
        .map_err(|e| CoreError::input(format!("plan deletes: {e}")))?;
    let same = saved.remote_index_etag.as_deref() == remote_index_etag
        && saved.listing_digest == listing_digest
        && Value::Array(saved.plan.deletes) == deletes_now
        && saved
            .plan
            .uploads
            .iter()
            .map(|u| u.rel.as_str())
            .eq(plan.uploads.iter().map(|u| u.transfer.rel.as_str()));
    if same {
        Ok(())
    } else {
        Err(CoreError::PlanStale)
    }
}

/// What the shim reports when a push's requests are done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct PushEnd {
    /// Uploads and deletes that failed.
    pub failures: u64,
    /// Files uploaded.
    pub uploaded: u64,
    /// Objects deleted.
    pub deleted: u64,
    /// The sidecar said a metadata-only pull left files remote when the push began.
    pub lazy_pull_active: bool,
    /// The ETag of the index now in the bucket (the one published, or the one read).
    #[serde(default)]
    pub etag: Option<String>,
    /// The v2 `commitSeq` now in the bucket, for a v2 repo.
    #[serde(default)]
    pub commit_seq: Option<u64>,
    /// When the push ended (ISO-8601).
    pub now_iso: String,
    /// The seal of the push's walk, recorded when the push leaves the cache verified.
    #[serde(default)]
    pub seal: Option<crate::state::seal::StatSeal>,
}

/// The sidecar a push leaves (`None`: write nothing), given the sidecar as it is now, the final
/// plan, the tombstones the plan was made with, and how the run ended.
///
/// - Tombstones are consumed only when no delete they support was withheld: a withheld delete
///   still needs its evidence for the push that will make it.
/// - The sidecar vouches for the cache (verified against `etag`, so the next pull may take the
///   fast path) only when nothing failed, no guard fired and no indexed file is missing, behind
///   the bucket, not yet pulled or left remote by a lazy pull.
/// - When only files behind the bucket or not yet pulled keep it from that, everything local
///   was sent: the cache is clean and sealed (the next push may send nothing) but tied to no
///   index ETag (the next pull does its work). A scoped pull leaves such a cache behind on
///   every push; marking it dirty cost each later push a read of the index.
/// - Otherwise it is marked dirty.
/// - A push that changed nothing, proved nothing and consumed nothing, in a cache without a
///   sidecar, records nothing: an absent sidecar already means "not verified".
pub fn sidecar_after_push(
    sidecar: Option<&[u8]>,
    plan: &PushPlan,
    tombstones: &[String],
    end: &PushEnd,
) -> Option<Vec<u8>> {
    let consumed: &[String] = if plan.withheld.is_empty() {
        tombstones
    } else {
        &[]
    };
    let sent_all = end.failures == 0
        && plan.blocked.is_empty()
        && plan.missing.is_empty()
        && !end.lazy_pull_active;
    let in_line = sent_all && plan.behind.is_empty() && plan.not_pulled.is_empty();
    let standing = match (in_line, sent_all) {
        (true, _) => PushStanding::InLine,
        (false, true) => PushStanding::SentAll,
        (false, false) => PushStanding::Unsent,
    };
    // A seal is worth a sidecar (the next push sends nothing); a cache that is merely behind
    // the bucket, with no seal to record, has nothing an absent sidecar does not say already.
    let nothing_to_record = sidecar.is_none()
        && (standing == PushStanding::Unsent
            || (standing == PushStanding::SentAll && end.seal.is_none()))
        && consumed.is_empty()
        && end.uploaded == 0
        && end.deleted == 0;
    if nothing_to_record {
        return None;
    }
    let mut state = SyncState::for_update(sidecar);
    state.record_push(standing, end.etag.as_deref(), &end.now_iso, consumed);
    // Only a cache with nothing left to send is sealed: the seal says "a push has nothing to
    // send here".
    state.seal = if sent_all { end.seal.clone() } else { None };
    if let Some(seq) = end.commit_seq {
        state.commit_seq = Some(seq);
    }
    Some(state.to_json())
}

/// How many paths a warning names (the plan lists them all).
const WARNING_EXAMPLES: usize = 5;

/// What a person must know about a push plan even when nothing was withheld (the guards that
/// withheld something are in `blocked` already): root-level data trees beside the namespace
/// folder, which is where files "missing" here usually are (`mixed-layout`); indexed files
/// absent here and kept in the bucket for want of evidence (`missing-not-deleted`); index
/// entries skipped as unsafe (`refused-entries`). Each says what to run next. A quiet guard
/// left the first seed's user with "200 missing (not deleted)" and nothing else.
pub fn push_warnings(plan: &PushPlan) -> Vec<Verdict> {
    let mut warnings = Vec::new();
    let layout = &plan.layout;
    let mixed = !layout.root_layout_trees.is_empty();
    let said = |code: GuardCode| plan.blocked.iter().any(|v| v.code == code);
    if mixed {
        // The guard that withheld deletes for it says so already.
        if said(GuardCode::MixedLayout) {
            return refused_warning(plan, warnings);
        }
        warnings.push(Verdict {
            code: GuardCode::MixedLayout,
            message: format!(
                "{} files sit in root-level data trees ({}) beside the namespace folder{}; \
                 `s3sync doctor` shows them and `s3sync repair --apply` moves them into the \
                 namespace folder",
                layout.root_layout_files,
                layout.root_layout_trees.join(", "),
                if plan.missing.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", which is likely where the {} files missing from it are",
                        plan.missing.len()
                    )
                }
            ),
        });
    } else if !plan.missing.is_empty() {
        warnings.push(Verdict {
            code: GuardCode::MissingNotDeleted,
            message: format!(
                "{} indexed files are absent here and were not deleted in the bucket (absence is \
                 not deletion): {}; `s3sync pull` brings them back; to delete them, \
                 `s3sync mark-deleted <path>` records the evidence a push needs",
                plan.missing.len(),
                examples(&plan.missing)
            ),
        });
    }
    refused_warning(plan, warnings)
}

/// `warnings` with the refused entries' warning added, unless a verdict says so already.
fn refused_warning(plan: &PushPlan, mut warnings: Vec<Verdict>) -> Vec<Verdict> {
    let said = plan
        .blocked
        .iter()
        .any(|v| v.code == GuardCode::RefusedEntries);
    if !plan.refused.is_empty() && !said {
        let rels: Vec<String> = plan.refused.iter().map(|r| r.rel.clone()).collect();
        warnings.push(Verdict {
            code: GuardCode::RefusedEntries,
            message: format!(
                "{} index entries have keys that cannot be safe cache paths; skipped and kept in \
                 the index: {}; `s3sync doctor` names the fix",
                rels.len(),
                examples(&rels)
            ),
        });
    }
    warnings
}

/// The first few of `paths`, each as a JSON string (control characters stay visible), and how
/// many more.
fn examples(paths: &[String]) -> String {
    let named: Vec<String> = paths
        .iter()
        .take(WARNING_EXAMPLES)
        .map(|p| serde_json::to_string(p).unwrap_or_else(|_| format!("{p:?}")))
        .collect();
    let more = paths.len().saturating_sub(WARNING_EXAMPLES);
    if more == 0 {
        named.join(", ")
    } else {
        format!("{} and {more} more", named.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::push::plan::{Delete, PushSummary};
    use crate::safety::Evidence;
    use crate::state::seal::StatSeal;

    fn delete(rel: &str) -> Delete {
        Delete {
            rel: rel.to_string(),
            remote_key: rel.to_string(),
            evidence: Evidence::Tombstone {
                path: rel.to_string(),
            },
            expected: crate::safety::object_condition::ExpectedVersion {
                size: 1,
                sha256: None,
                etag: None,
            },
        }
    }

    fn plan_with_deletes(rels: &[&str]) -> PushPlan {
        PushPlan {
            summary: PushSummary {
                delete: rels.len() as u64,
                ..PushSummary::default()
            },
            deletes: rels.iter().map(|r| delete(r)).collect(),
            ..PushPlan::default()
        }
    }

    fn end(failures: u64, uploaded: u64) -> PushEnd {
        PushEnd {
            failures,
            uploaded,
            etag: Some("\"abc\"".into()),
            now_iso: "2026-12-01T00:00:00.000Z".into(),
            ..PushEnd::default()
        }
    }

    fn state(bytes: &[u8]) -> SyncState {
        SyncState::parse(bytes).expect("a sidecar we wrote parses")
    }

    #[test]
    fn unconfirmed_deletes_are_withheld_with_a_verdict() {
        let mut plan = plan_with_deletes(&["a", "b"]);
        withhold_unconfirmed_deletes(&mut plan);
        assert!(plan.deletes.is_empty());
        assert_eq!(plan.withheld.len(), 2);
        assert_eq!(plan.summary.delete, 0);
        assert_eq!(plan.summary.withheld_deletes, 2);
        assert_eq!(plan.blocked.len(), 1);
        assert_eq!(plan.blocked[0].code, GuardCode::ConfirmationRequired);
        assert!(plan.blocked[0]
            .message
            .contains("2 deletes were not confirmed"));
    }

    #[test]
    fn a_plan_without_deletes_needs_no_confirmation() {
        let mut plan = PushPlan::default();
        withhold_unconfirmed_deletes(&mut plan);
        assert!(plan.blocked.is_empty());
    }

    fn saved(etag: Option<&str>, digest: &str, plan: &PushPlan) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "kind": SAVED_PLAN_KIND,
            "remoteIndexEtag": etag,
            "listingDigest": digest,
            "plan": plan,
        }))
        .unwrap()
    }

    #[test]
    fn a_saved_plan_holds_only_while_index_walk_and_changes_are_the_same() {
        let plan = plan_with_deletes(&["a"]);
        let file = saved(Some("e1"), "d1", &plan);
        assert_eq!(check_saved_plan(&file, &plan, Some("e1"), "d1"), Ok(()));
        assert_eq!(
            check_saved_plan(&file, &plan, Some("e2"), "d1"),
            Err(CoreError::PlanStale)
        );
        assert_eq!(
            check_saved_plan(&file, &plan, None, "d1"),
            Err(CoreError::PlanStale)
        );
        assert_eq!(
            check_saved_plan(&file, &plan, Some("e1"), "d2"),
            Err(CoreError::PlanStale)
        );
        let other = plan_with_deletes(&["b"]);
        assert_eq!(
            check_saved_plan(&file, &other, Some("e1"), "d1"),
            Err(CoreError::PlanStale)
        );
        // Same rel, other evidence: a person approved the delete for another reason.
        let mut missing = plan_with_deletes(&["a"]);
        missing.deletes[0].evidence = Evidence::DeleteMissing;
        assert_eq!(
            check_saved_plan(&file, &missing, Some("e1"), "d1"),
            Err(CoreError::PlanStale)
        );
    }

    #[test]
    fn a_file_that_is_no_saved_plan_is_invalid_input() {
        let plan = PushPlan::default();
        for junk in [&b"{}"[..], b"[]", b"not json", b"{\"kind\":\"other\",\"listingDigest\":\"d\",\"plan\":{\"uploads\":[],\"deletes\":[]}}"] {
            let error = check_saved_plan(junk, &plan, None, "d").unwrap_err();
            assert_eq!(error.code(), "invalid-input", "{junk:?}");
        }
    }

    #[test]
    fn a_clean_push_vouches_and_consumes_its_tombstones() {
        let plan = plan_with_deletes(&["a"]);
        let tombstones = vec!["a".to_string()];
        let before = {
            let mut s = SyncState::fresh();
            s.record_dirty(Some("a"));
            s.to_json()
        };
        let after = sidecar_after_push(Some(&before), &plan, &tombstones, &end(0, 0)).unwrap();
        let after = state(&after);
        assert!(after.tombstones.is_empty());
        assert!(!after.local_dirty);
        assert_eq!(after.remote_index_etag, "abc");
    }

    #[test]
    fn withheld_deletes_keep_their_evidence_and_the_cache_unverified() {
        let mut plan = plan_with_deletes(&["a"]);
        withhold_unconfirmed_deletes(&mut plan);
        let tombstones = vec!["a".to_string()];
        let before = {
            let mut s = SyncState::fresh();
            s.record_dirty(Some("a"));
            s.to_json()
        };
        let after =
            state(&sidecar_after_push(Some(&before), &plan, &tombstones, &end(0, 0)).unwrap());
        assert_eq!(after.tombstones, vec!["a".to_string()]);
        assert!(after.local_dirty);
        assert_eq!(after.remote_index_etag, "");
    }

    fn sealed(end: PushEnd) -> PushEnd {
        PushEnd {
            seal: Some(StatSeal {
                digest: "d".into(),
                walked_at_ms: 1,
            }),
            ..end
        }
    }

    #[test]
    fn failures_missing_and_lazy_each_leave_the_cache_dirty_and_unsealed() {
        let clean = PushPlan::default();
        let mut missing = PushPlan::default();
        missing.missing.push("m".into());
        let lazy = PushEnd {
            lazy_pull_active: true,
            ..end(0, 1)
        };
        let cases: [(&PushPlan, PushEnd); 3] = [
            (&clean, sealed(end(1, 1))),
            (&missing, sealed(end(0, 1))),
            (&clean, sealed(lazy)),
        ];
        for (plan, end) in cases {
            let after = state(&sidecar_after_push(Some(b"{}"), plan, &[], &end).unwrap());
            assert!(after.local_dirty, "{end:?}");
            assert_eq!(after.remote_index_etag, "");
            assert_eq!(after.seal, None, "{end:?}");
        }
    }

    #[test]
    fn a_cache_behind_the_bucket_that_sent_everything_is_sealed_but_not_vouched_for() {
        // A scoped pull leaves the peer's files unpulled (`not_pulled`); a peer's edit of a file
        // unchanged here leaves it `behind`. Either way nothing here is unsent: the next push may
        // end on the seal, but the next pull must not take the fast path.
        let mut behind = PushPlan::default();
        behind.behind.push("b".into());
        let mut not_pulled = PushPlan::default();
        not_pulled.not_pulled.push("n".into());
        let was_verified = {
            let mut s = SyncState::fresh();
            s.mark_synced(Some("\"old\""), "2026-11-01T00:00:00.000Z");
            s.record_dirty(Some("n"));
            s.to_json()
        };
        for plan in [&behind, &not_pulled] {
            let after = sidecar_after_push(Some(&was_verified), plan, &[], &sealed(end(0, 1)));
            let after = state(&after.unwrap());
            assert!(!after.local_dirty, "{plan:?}");
            assert!(after.dirty_paths.is_empty(), "{plan:?}");
            assert_eq!(after.remote_index_etag, "", "no pull fast path: {plan:?}");
            assert_eq!(after.seal.map(|s| s.digest), Some("d".to_string()));
        }
    }

    #[test]
    fn a_push_that_did_nothing_in_a_cache_without_sidecar_records_nothing() {
        let mut behind = PushPlan::default();
        behind.behind.push("b".into());
        assert_eq!(sidecar_after_push(None, &behind, &[], &end(0, 0)), None);
        // Unless it has a seal to record: the next push may then send nothing.
        assert!(sidecar_after_push(None, &behind, &[], &sealed(end(0, 0))).is_some());
        // But one that uploaded records that the cache is not verified.
        assert!(sidecar_after_push(None, &behind, &[], &end(0, 1)).is_some());
        // And a clean one records the verification.
        assert!(sidecar_after_push(None, &PushPlan::default(), &[], &end(0, 0)).is_some());
    }

    #[test]
    fn the_commit_seq_seen_is_recorded() {
        let with_seq = PushEnd {
            commit_seq: Some(7),
            ..end(0, 1)
        };
        let after = state(&sidecar_after_push(None, &PushPlan::default(), &[], &with_seq).unwrap());
        assert_eq!(after.commit_seq, Some(7));
    }

    fn codes(warnings: &[Verdict]) -> Vec<&'static str> {
        warnings.iter().map(|w| w.code.as_str()).collect()
    }

    #[test]
    fn a_mixed_layout_is_told_with_the_missing_files_even_when_nothing_was_withheld() {
        let mut plan = PushPlan::default();
        plan.layout.root_layout_trees = vec!["data".into(), "outputs".into()];
        plan.layout.root_layout_files = 200;
        plan.missing = (0..200).map(|i| format!("data/m{i}.yaml")).collect();
        let warnings = push_warnings(&plan);
        assert_eq!(codes(&warnings), ["mixed-layout"]);
        let message = &warnings[0].message;
        assert!(message.contains("200 files sit in root-level data trees (data, outputs)"));
        assert!(message.contains("the 200 files missing"), "{message}");
        assert!(message.contains("s3sync repair --apply"), "{message}");
        // Said once: a guard that withheld deletes for it already says so.
        plan.blocked.push(Verdict {
            code: GuardCode::MixedLayout,
            message: "deletes withheld".into(),
        });
        assert!(push_warnings(&plan).is_empty());
    }

    #[test]
    fn files_missing_without_evidence_are_told_with_examples_and_the_way_to_delete_them() {
        let mut plan = PushPlan::default();
        assert!(push_warnings(&plan).is_empty(), "a clean plan says nothing");
        plan.missing = (0..7).map(|i| format!("data/m{i}.yaml")).collect();
        let warnings = push_warnings(&plan);
        assert_eq!(codes(&warnings), ["missing-not-deleted"]);
        let message = &warnings[0].message;
        assert!(
            message.starts_with("7 indexed files are absent here"),
            "{message}"
        );
        assert!(message.contains("\"data/m0.yaml\"") && message.contains("and 2 more"));
        assert!(message.contains("s3sync mark-deleted"), "{message}");
    }

    #[test]
    fn refused_entries_are_told_with_their_keys_quoted() {
        let plan = PushPlan {
            refused: vec![crate::runs::pull::plan::RefusedEntry {
                rel: "evil/\u{1b}[2J".into(),
                code: crate::codes::RefusalCode::Path(crate::error::PathRefusal::ControlCharacter),
            }],
            ..PushPlan::default()
        };
        let warnings = push_warnings(&plan);
        assert_eq!(codes(&warnings), ["refused-entries"]);
        assert!(
            warnings[0].message.contains("\\u001b[2J"),
            "{}",
            warnings[0].message
        );
    }
}
