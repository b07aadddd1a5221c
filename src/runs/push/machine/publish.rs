//! The push run's last steps: the two-phase commit, the re-read after a lost race, the publish,
//! the deletes only the published index allows, and the local records.

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{INDEX_FILE, SYNC_STATE_FILE};
use crate::runs::push::run::PushEnd;
use crate::runs::session::Session;

use super::{PushAction, PushRun, UploadBatch};

impl PushRun {
    /// Continues a prepared push: the deferred replacements are uploaded first (now under the
    /// caller's lock), then the index is re-read and the changes re-applied, since others may
    /// have published since the prepare.
    pub fn commit(&mut self, session: &Session) -> CoreResult<()> {
        if self.ended_on_seal {
            // The prepare ended on the seal: nothing to commit, and the run stays done.
            return Ok(());
        }
        self.expect("event \"commit\"", |p| matches!(p, PushAction::Prepared))?;
        if self.prepared_uploads.is_some() {
            self.pending = PushAction::Upload {
                batch: UploadBatch::Replacements,
            };
            return Ok(());
        }
        self.commit_next(session, true)
    }

    pub(super) fn commit_next(&mut self, session: &Session, reread: bool) -> CoreResult<()> {
        self.committing = true;
        self.pending = if self.must_publish && reread {
            PushAction::Rebase
        } else if self.must_publish {
            self.publish_action()
        } else {
            self.after_publish(session)?
        };
        Ok(())
    }

    /// The index was re-read and this push's changes re-applied; `etag` is what the publish
    /// must match (v1; `None`: create-only).
    pub fn on_rebased(&mut self, etag: Option<String>) -> CoreResult<()> {
        self.expect("event \"rebased\"", |p| matches!(p, PushAction::Rebase))?;
        if !self.v2 {
            self.index_etag = etag;
        }
        self.pending = self.publish_action();
        Ok(())
    }

    /// The publish landed: the index's new ETag (v1) or meta ETag and `commit_seq` (v2).
    pub fn on_published(
        &mut self,
        session: &Session,
        etag: Option<String>,
        commit_seq: Option<u64>,
    ) -> CoreResult<()> {
        self.expect("event \"published\"", |p| {
            matches!(p, PushAction::Publish { .. })
        })?;
        self.published = true;
        self.index_etag = etag;
        if commit_seq.is_some() {
            self.commit_seq = commit_seq;
        }
        self.pending = self.after_publish(session)?;
        Ok(())
    }

    fn publish_action(&self) -> PushAction {
        PushAction::Publish {
            v2: self.v2,
            if_match: self.index_etag.clone().filter(|_| !self.v2),
            // v1 writers keep per-partition shards beside the monolith.
            mirror: !self.v2,
        }
    }

    /// What follows the publish (or its absence): the deletes, then the local records.
    fn after_publish(&mut self, session: &Session) -> CoreResult<PushAction> {
        if self.deletes_confirmed {
            // The published index no longer names these; a rel another writer re-uploaded while
            // we merged keeps its entry, so its object stays.
            let applying = session.deletes_still_applying()?;
            let rels: Vec<String> = session
                .push_plan()?
                .deletes
                .iter()
                .map(|d| d.rel.clone())
                .filter(|rel| applying.contains(rel))
                .collect();
            if !rels.is_empty() {
                return Ok(PushAction::Delete { rels });
            }
        }
        Ok(PushAction::WriteLocalIndex {
            path: INDEX_FILE.to_string(),
        })
    }

    /// The deletes: how many went, how many failed, and which were left because the bucket
    /// held another version than the one the delete was decided against (conflicts).
    pub fn on_deleted(
        &mut self,
        session: &mut Session,
        deleted: u64,
        failures: u64,
        lost: &[String],
    ) -> CoreResult<()> {
        self.expect("event \"deleted\"", |p| {
            matches!(p, PushAction::Delete { .. })
        })?;
        self.deleted = deleted;
        self.failures += failures;
        session.add_push_conflicts(lost.iter().cloned())?;
        self.pending = PushAction::WriteLocalIndex {
            path: INDEX_FILE.to_string(),
        };
        Ok(())
    }

    /// The write asked for (local index, sidecar) is done. After the local index, the
    /// sidecar is read again (`sidecar_now`: another process may have marked files dirty
    /// meanwhile) and what it records decided.
    pub fn on_written(
        &mut self,
        session: &Session,
        sidecar_now: Option<Vec<u8>>,
        now_iso: &str,
    ) -> CoreResult<()> {
        match &self.pending {
            PushAction::WriteLocalIndex { .. } => {
                let end = PushEnd {
                    failures: self.failures,
                    uploaded: self.uploaded,
                    deleted: self.deleted,
                    lazy_pull_active: self.lazy_pull_active,
                    etag: self.index_etag.clone(),
                    commit_seq: self.commit_seq.filter(|_| self.v2),
                    now_iso: now_iso.to_string(),
                    seal: self.sealing.clone(),
                };
                self.sidecar_after = session.sidecar_after_push(sidecar_now.as_deref(), &end)?;
                self.pending = if self.sidecar_after.is_some() {
                    PushAction::WriteSidecar {
                        path: SYNC_STATE_FILE.to_string(),
                    }
                } else {
                    PushAction::Done
                };
            }
            PushAction::WriteSidecar { .. } => {
                self.sidecar_after = None;
                self.pending = PushAction::Done;
            }
            other => {
                return Err(CoreError::input(format!(
                    "push run: event \"written\" out of order (waiting for {other:?})"
                )))
            }
        }
        Ok(())
    }
}
