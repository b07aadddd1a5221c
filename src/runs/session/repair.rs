//! The session's side of `doctor` and `repair`: the problems a listing shows, and the repair
//! plan for them.

use std::collections::BTreeMap;

use crate::codes::ProblemCode;
use crate::error::CoreResult;
use crate::model::layout::survey;
use crate::runs::repair::plan::{diagnose, plan_repair, DoctorFacts, Problem, RepairPlan};
use crate::safety::conflicts::{files_in_conflict, CONFLICTS_DIR};
use crate::wire::listing::decode_local;

use super::Session;

impl Session {
    /// Diagnoses the cache in `listing` (against the loaded index, if any).
    pub fn diagnose(&self, listing: &[u8], facts: DoctorFacts) -> CoreResult<Vec<Problem>> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        let mut problems = diagnose(&self.model, &surveyed, self.index.as_ref(), facts);
        let conflicted = files_in_conflict(&self.model, &files);
        if !conflicted.is_empty() {
            problems.push(Problem {
                code: ProblemCode::ConflictCopies,
                message: format!(
                    "{} files changed here and in the bucket have your version kept in {CONFLICTS_DIR}/ (e.g. {}); settle each with `s3sync resolve --keep mine <path>` (puts yours back and pushes it) or `--keep theirs`",
                    conflicted.len(),
                    conflicted.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        Ok(problems)
    }

    /// Plans a layout repair of the cache in `listing` against the loaded index.
    pub fn plan_repair(
        &self,
        listing: &[u8],
        hashes: &BTreeMap<String, String>,
    ) -> CoreResult<RepairPlan> {
        let files = decode_local(listing)?;
        let surveyed = survey(&self.model, &files);
        Ok(plan_repair(
            &self.model,
            &surveyed,
            &files,
            self.index()?,
            hashes,
        ))
    }
}
