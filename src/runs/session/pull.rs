//! The session's side of a pull: the plan, what it applied, how it ends (the pruned index, the
//! sidecar, the warnings) and the local index it leaves.

use std::collections::BTreeSet;

use crate::error::{CoreError, CoreResult};
use crate::model::layout::survey;
use crate::runs::pull::plan::{
    apply_pull, plan_pull, PullApplied, PullOptions, PullOutcome, PullPlan,
};
use crate::runs::pull::run::{self as pull_run, PullEnd};
use crate::safety::Verdict;
use crate::wire::listing::decode_local;

use super::Session;

impl Session {
    /// Plans a pull against a local listing buffer and keeps the plan for [`Session::apply_pull`].
    pub fn plan_pull(&mut self, listing: &[u8], options: &PullOptions) -> CoreResult<&PullPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let plan = plan_pull(
            &self.model,
            self.index()?,
            self.base.as_ref(),
            &surveyed,
            options,
        );
        Ok(self.pull.insert(plan))
    }

    /// Records what happened to the last pull plan's downloads.
    pub fn apply_pull(&mut self, outcome: &PullOutcome) -> CoreResult<PullApplied> {
        let plan = self
            .pull
            .take()
            .ok_or_else(|| CoreError::input("apply_pull without a pull plan"))?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        // A pointer kept over the bucket's version settled like a download: the local index
        // records the bucket's version as seen (see `PullOutcome::kept_pointers`).
        let downloaded: BTreeSet<&str> = outcome
            .downloaded
            .iter()
            .map(|(rel, _)| rel.as_str())
            .chain(outcome.kept_pointers.iter().map(String::as_str))
            .collect();
        // A conflict whose bucket version arrived (this cache's kept aside, or identical) is
        // synced to the remote entry; one left as it was keeps its base entry.
        self.kept_after_pull = plan
            .conflicts
            .iter()
            .filter(|rel| !downloaded.contains(rel.as_str()))
            .chain(&plan.local_changes)
            .chain(&plan.deleted_remotely)
            // A removal that did not happen (the file changed since the plan) keeps its base.
            .chain(
                plan.removals
                    .iter()
                    .map(|r| &r.rel)
                    .filter(|rel| !outcome.removed.contains(rel)),
            )
            .cloned()
            .collect();
        // A download that neither arrived nor was gone (it failed) leaves the file as it was.
        let arrived: BTreeSet<&str> = outcome
            .downloaded
            .iter()
            .map(|(rel, _)| rel.as_str())
            .chain(outcome.not_found.iter().map(String::as_str))
            .chain(outcome.kept_pointers.iter().map(String::as_str))
            .collect();
        self.untouched_after_pull = plan
            .untouched
            .iter()
            .chain(
                plan.downloads
                    .iter()
                    .map(|t| &t.rel)
                    .filter(|rel| !arrived.contains(rel.as_str())),
            )
            .cloned()
            .collect();
        self.pulled_hashes = outcome.hashes.iter().cloned().collect();
        let mut applied = apply_pull(index, &plan, outcome);
        applied.attention = pull_run::pull_attention(&plan, self.rebuilt.as_ref());
        self.pulled = Some((applied.clone(), plan.summary.lazy > 0));
        Ok(applied)
    }

    /// True when the last pull's changes to the index (pruned entries, corrected sizes) must be
    /// published over the index read (see [`pull_run::publishes_pruned_index`]).
    pub fn pull_publishes_pruned_index(&self, index_exists: bool) -> CoreResult<bool> {
        let (applied, _) = self.last_pull()?;
        Ok(pull_run::publishes_pruned_index(
            applied,
            index_exists,
            self.meta.is_some(),
        ))
    }

    /// The sidecar the last pull leaves, or `None` to leave it alone (see
    /// [`pull_run::sidecar_after_pull`]).
    pub fn sidecar_after_pull(
        &self,
        sidecar: Option<&[u8]>,
        end: &PullEnd,
    ) -> CoreResult<Option<Vec<u8>>> {
        let (applied, lazy_left) = self.last_pull()?;
        Ok(pull_run::sidecar_after_pull(
            sidecar,
            applied,
            *lazy_left,
            self.meta.is_some(),
            end,
        ))
    }

    /// What a person must know about the pull just applied (see
    /// [`pull_run::pull_warnings`]).
    pub fn pull_warnings(&self) -> CoreResult<Vec<Verdict>> {
        Ok(pull_run::pull_warnings(&self.last_pull()?.0))
    }

    fn last_pull(&self) -> CoreResult<&(PullApplied, bool)> {
        self.pulled
            .as_ref()
            .ok_or_else(|| CoreError::input("a pull's end before apply_pull"))
    }

    /// The local index to write after a pull: the remote index with this cache's mtimes, except
    /// that files the pull left alone because they changed here (`local_changes`, `conflicts`),
    /// that the remote no longer names while this cache still holds them (`deleted_remotely`),
    /// or that it did not fetch (out of scope, refused, failed) keep their base entries, so the
    /// next push judges them against what this cache synced.
    pub fn local_index_after_pull(&self) -> CoreResult<Vec<u8>> {
        let mut local = self.index()?.clone();
        // What this pull wrote, where the index records no hash: this cache's own knowledge of
        // the bytes it left, kept in its base only (the remote entry is the writer's to make).
        // An entry that names a hash keeps it: a mismatch there is the index's to settle.
        for (rel, sha256) in &self.pulled_hashes {
            if let Some(entry) = local.entries.get_mut(rel) {
                if entry.sha256.is_none() {
                    entry.sha256 = Some(sha256.clone());
                }
            }
        }
        let base_entry = |rel: &String| self.base.as_ref().and_then(|b| b.entries.get(rel));
        // Left alone: what the base said, or nothing (a file this cache never synced must not
        // pass for the remote's version: the next push would upload it over that version).
        for rel in &self.kept_after_pull {
            match base_entry(rel) {
                Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                None => local.entries.remove(rel),
            };
        }
        // Not fetched: what the base said, or nothing (the remote's entry would claim this
        // cache holds a version it never downloaded).
        for rel in &self.untouched_after_pull {
            match base_entry(rel) {
                Some(entry) => local.entries.insert(rel.clone(), entry.clone()),
                None => local.entries.remove(rel),
            };
        }
        Ok(self.local_json(local))
    }
}
