//! What a pull run decides after its downloads: whether the index it pruned goes back to the
//! bucket, and whether the sidecar may vouch for the cache (the next pull's fast path).
//!
//! These were the shim's decisions; here they are plain functions of what the core applied and
//! the facts the shim reports, so each is tested natively.

use serde::Deserialize;

use crate::pull::PullApplied;
use crate::sync_state::SyncState;

/// What the shim reports when a pull's requests are done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullEnd {
    /// Downloads (and folder creations) that failed.
    pub failures: u64,
    /// The pruned index was published back to the bucket.
    pub index_published: bool,
    /// Only some folders were pulled (a scoped pull).
    pub scoped: bool,
    /// The ETag of the index now in the bucket (the one read, or our pruned copy).
    pub etag: Option<String>,
    /// The v2 `commitSeq` read, for a v2 repo.
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
/// published; a v2 repo, which records no monolith ETag, has no fast path to mislead).
/// `lazy_left` records that a metadata-only pull left files remote.
pub fn sidecar_after_pull(
    sidecar: Option<&[u8]>,
    applied: &PullApplied,
    lazy_left: bool,
    v2: bool,
    end: &PullEnd,
) -> Option<Vec<u8>> {
    let complete = end.failures == 0
        && applied.unsettled_conflicts.is_empty()
        && (!index_changed(applied) || end.index_published || v2)
        && !end.scoped;
    if !complete {
        return None;
    }
    let mut state = SyncState::for_update(sidecar);
    state.mark_synced(if v2 { None } else { end.etag.as_deref() }, &end.now_iso);
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
        // A v2 repo publishes no pruned monolith, and records no ETag to fast-path on.
        let v2 = sidecar_after_pull(None, &pruned(), false, true, &end()).unwrap();
        assert_eq!(SyncState::parse(&v2).unwrap().remote_index_etag, "");
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
}
