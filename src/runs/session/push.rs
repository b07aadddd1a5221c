//! The session's side of a push: the plan, the withheld deletes and the saved-plan check, what
//! the push recorded, the re-merge after a lost race, and the local index it leaves.

use std::collections::BTreeSet;

use crate::codes::GuardCode;
use crate::error::{CoreError, CoreResult};
use crate::index::{carry_local_mtimes, same_version, Index};
use crate::model::layout::survey;
use crate::runs::push::plan::{
    apply_changes, changed_by_others, conflict_verdict, plan_push, push_changes, PushInput,
    PushPlan, Uploaded,
};
use crate::runs::push::run::{self as push_run, PushEnd};
use crate::safety::Verdict;
use crate::wire::listing::decode_local;

use super::Session;

impl Session {
    /// What a person must know about the last push plan (see [`push_run::push_warnings`]).
    pub fn push_warnings(&self) -> CoreResult<Vec<Verdict>> {
        Ok(push_run::push_warnings(self.push_plan()?))
    }

    /// Keeps `plan` as this session's push plan: a push that ended on its seal plans nothing.
    pub fn set_push_plan(&mut self, plan: PushPlan) {
        self.push = Some(plan);
    }

    /// Plans a push against a local listing buffer and keeps the plan for
    /// [`Session::record_push`].
    pub fn plan_push(&mut self, listing: &[u8], input: &PushInput) -> CoreResult<&PushPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let plan = plan_push(
            &self.model,
            self.index()?,
            self.base.as_ref(),
            &surveyed,
            input,
        );
        self.push_tombstones = input.tombstones.iter().cloned().collect();
        Ok(self.push.insert(plan))
    }

    /// The last push plan.
    pub fn push_plan(&self) -> CoreResult<&PushPlan> {
        self.push
            .as_ref()
            .ok_or_else(|| CoreError::input("no push plan in this session"))
    }

    /// Withholds the last push plan's deletes because nobody confirmed them (see
    /// [`push_run::withhold_unconfirmed_deletes`]); returns the plan as it now stands.
    pub fn withhold_unconfirmed_deletes(&mut self) -> CoreResult<&PushPlan> {
        let plan = self.push_plan_mut()?;
        push_run::withhold_unconfirmed_deletes(plan);
        Ok(plan)
    }

    /// Checks a saved plan against the last push plan (see [`push_run::check_saved_plan`]).
    pub fn check_saved_plan(
        &self,
        saved: &[u8],
        remote_index_etag: Option<&str>,
        listing_digest: &str,
    ) -> CoreResult<()> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("check_saved_plan without a push plan"))?;
        push_run::check_saved_plan(saved, plan, remote_index_etag, listing_digest)
    }

    /// The sidecar the last push leaves, or `None` to write nothing (see
    /// [`push_run::sidecar_after_push`]).
    pub fn sidecar_after_push(
        &self,
        sidecar: Option<&[u8]>,
        end: &PushEnd,
    ) -> CoreResult<Option<Vec<u8>>> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("sidecar_after_push without a push plan"))?;
        Ok(push_run::sidecar_after_push(
            sidecar,
            plan,
            &self.push_tombstones,
            end,
        ))
    }

    fn push_plan_mut(&mut self) -> CoreResult<&mut PushPlan> {
        self.push
            .as_mut()
            .ok_or_else(|| CoreError::input("no push plan in this session"))
    }

    /// Records the uploads of the last push plan (and, when confirmed, its deletes) in the index, and
    /// keeps the changes for [`Session::rebase_push`]. Returns true when the remote index must
    /// be written.
    pub fn record_push(
        &mut self,
        uploaded: &[Uploaded],
        now_iso: &str,
        deletes_confirmed: bool,
    ) -> CoreResult<bool> {
        let plan = self
            .push
            .as_ref()
            .ok_or_else(|| CoreError::input("record_push without a push plan"))?;
        let mut changes = push_changes(self.index()?, plan, uploaded, now_iso);
        if !deletes_confirmed {
            changes.deletes.clear();
        }
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // Over the index the plan was made from, nothing is refused.
        apply_changes(index, &changes);
        let touches = changes.touches_remote();
        self.changes = Some(changes);
        Ok(touches)
    }

    /// After a conditional publish lost a race: takes the newer remote index and re-applies this
    /// push's changes to it.
    pub fn rebase_push(&mut self, newer: &[u8]) -> CoreResult<()> {
        if self.changes.is_none() {
            return Err(CoreError::input("rebase_push before record_push"));
        }
        let newer = Index::parse_limited(newer, self.entry_limit)?;
        self.remerge(newer)
    }

    /// Re-applies this push's changes over `newer` (the index another writer published while
    /// this push ran) against what the push read, and folds what that writer changed into the
    /// plan, so the push reports it and the local records never claim it:
    ///
    /// - an upload whose entry the other writer changed since the read is a `conflict` (see
    ///   [`apply_changes`]): its entry is the other writer's, and this cache keeps its base entry;
    /// - any other entry the other writer changed is `behind`: this cache never saw that version,
    ///   so its local index keeps the base entry (or none), the sidecar does not vouch for the
    ///   cache, and the next pull brings it. Recording the published entry there instead made the
    ///   next push read this cache's old copy as an edit and upload it over the newer one.
    pub(super) fn remerge(&mut self, mut newer: Index) -> CoreResult<()> {
        let changes = self
            .changes
            .as_ref()
            .ok_or_else(|| CoreError::input("rebase_push before record_push"))?;
        let ours: BTreeSet<&str> = changes
            .upserts
            .keys()
            .chain(changes.deletes.keys())
            .chain(&changes.prune)
            .map(String::as_str)
            .collect();
        let previous = self
            .index
            .as_ref()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // Verified mtimes are not ours to claim: a file whose version another writer changed
        // since the hash matched is behind like any other (`same_version` ignores the mtime).
        let foreign = changed_by_others(previous, &newer, &ours);
        let refused = apply_changes(&mut newer, changes);
        self.index = Some(newer);
        let plan = self.push_plan_mut()?;
        for rel in foreign {
            if !plan.behind.contains(&rel) {
                plan.behind.push(rel);
            }
        }
        plan.behind.sort();
        self.add_push_conflicts(refused)
    }

    /// Records files this push found changed in the bucket as it wrote: uploads and deletes
    /// whose condition failed (another writer's version is there), or uploads a re-merge
    /// refused. They join the plan's conflicts, with the one `conflict` verdict naming them all,
    /// so the push reports them and the local index keeps their base entries.
    pub fn add_push_conflicts(&mut self, rels: impl IntoIterator<Item = String>) -> CoreResult<()> {
        let plan = self.push_plan_mut()?;
        let before = plan.conflicts.len();
        for rel in rels {
            if crate::model::file_class::is_derived(&rel) {
                // Another writer's derived file is as good as ours: swamp regenerates it.
                plan.supersede(&rel);
                continue;
            }
            if !plan.conflicts.contains(&rel) {
                plan.conflicts.push(rel);
            }
        }
        if plan.conflicts.len() != before {
            plan.conflicts.sort();
            plan.blocked.retain(|v| v.code != GuardCode::Conflict);
            plan.blocked.push(conflict_verdict(&plan.conflicts));
        }
        Ok(())
    }

    /// The local index to write after a push: the published index, except that a file this
    /// cache still holds in its base version while the remote moved on (the plan's `behind`),
    /// changed on both sides (`conflicts`), or does not hold (`missing`, `withheld`) keeps its
    /// base entry, or none. Writing the remote's entry there would make the next push read the
    /// local copy as a change of that version and upload it over the newer one.
    pub fn local_index_after_push(&self) -> CoreResult<Vec<u8>> {
        let mut local = self.index()?.clone();
        if let Some(base) = &self.base {
            // The published entry of a file this push did not change carries the `localMtime`
            // of whichever cache uploaded it. This cache's stat of its own copy is in the base
            // entry of the same version: keep it, or the next run would read this cache's
            // untouched copy as an edit (a spurious conflict when the remote moves on).
            carry_local_mtimes(&mut local, base);
        }
        if let Some(changes) = &self.changes {
            // A file whose hash this push verified against the version it read (same bytes, a
            // new mtime) takes the mtime verified, not the base's older one the carry put back:
            // else every later run would see that stat as an edit, and a pull, once the remote
            // moved on, would call the untouched file a conflict.
            for (rel, mtime) in &changes.mtimes {
                let verified = changes.read.get(rel).and_then(Option::as_ref);
                if let (Some(entry), Some(read)) = (local.entries.get_mut(rel), verified) {
                    if same_version(entry, read) {
                        entry.local_mtime = Some(mtime.as_str().into());
                    }
                }
            }
        }
        if let Some(plan) = &self.push {
            // Not uploaded: what the base said, or nothing. A conflict this cache never synced
            // (made here while another cache pushed the same path) recorded with the remote's
            // entry would read as "changed here, remote unchanged" next time, and go up over it.
            // So would a file this cache does not hold (missing, not pulled, or its delete withheld) and
            // never synced: a file made at that path later would pass for an edit of a version
            // this cache never saw.
            for rel in plan
                .behind
                .iter()
                .chain(&plan.conflicts)
                .chain(&plan.missing)
                .chain(&plan.not_pulled)
                .chain(plan.withheld.iter().map(|d| &d.rel))
            {
                match self.base.as_ref().and_then(|b| b.entries.get(rel)) {
                    Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                    None => local.entries.remove(rel),
                };
            }
        }
        Ok(self.local_json(local))
    }
}
