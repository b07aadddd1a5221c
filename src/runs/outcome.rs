//! What a pull's or a push's report becomes for the caller of the extension's sync service
//! (swamp core): the lines a person must be told, and the one error the call throws, if any.
//!
//! The service contract is the extension's: a call that did part of its work still does the
//! rest before it fails, a conflict and a withheld delete are errors, and a warning is told even
//! when the call succeeds. Which failure class wins, and which guard does not fail the call,
//! are decisions; the shim only prints the lines and throws the error this module names (with
//! the details it points at).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

/// A code and its message, as a report carries a warning or a withheld verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
pub struct Notice {
    /// Stable code.
    pub code: String,
    /// What happened and what to do.
    pub message: String,
}

/// One item a run could not carry out, as the report lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
pub struct ItemFailureFacts {
    /// Which item (a rel).
    pub item: String,
    /// Stable code of the failure class.
    pub code: String,
    /// What went wrong.
    pub message: String,
}

/// The facts of a finished run's report that decide its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ReportFacts {
    /// `pull` or `push`.
    pub run: OutcomeRun,
    /// The report's warnings.
    pub warnings: Vec<Notice>,
    /// Items that failed.
    pub failures: Vec<ItemFailureFacts>,
    /// What the push's guards withheld (empty for a pull).
    #[serde(default)]
    pub blocked: Vec<Notice>,
    /// The pull's conflict message, when this cache's versions were kept aside.
    #[serde(default)]
    pub conflict: Option<String>,
    /// Files downloaded (pull) or uploaded (push).
    pub moved: u64,
    /// Objects deleted (push).
    #[serde(default)]
    pub deleted: u64,
}

/// Which run a report is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum OutcomeRun {
    /// `pullChanged`.
    Pull,
    /// `pushChanged` and the two-phase commit.
    Push,
}

/// Which of the report's lists an error carries as its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum DetailsOf {
    /// The failed items.
    Failures,
    /// The pull's copies kept aside.
    KeptAside,
    /// The push's withheld verdicts.
    Blocked,
}

/// The error a call throws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
pub struct CallError {
    /// Stable code.
    pub code: String,
    /// The message.
    pub message: String,
    /// The report's list that goes with it.
    pub details: DetailsOf,
}

/// What a call answers: the lines to tell (in order), the error to throw after them (none: the
/// call returns `count`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null)]
pub struct CallOutcome {
    /// Lines a person must know, each ending in its code in brackets.
    pub warnings: Vec<String>,
    /// The error, when the call fails.
    pub error: Option<CallError>,
    /// What the call returns when it does not fail: files pulled, or files pushed and deleted.
    pub count: u64,
}

/// How many failures a message names before it stops.
const NAMED_FAILURES: usize = 3;

/// The guard whose withheld upload does not fail a push: the bucket's catalog export stays
/// (the guard holds), nothing of this cache is lost (swamp core regenerates the file before
/// every push), and failing made every push of a clone whose catalog is still empty fail.
const HELD_NOT_FAILED: &str = "catalog-shrink";

/// The outcome of a finished run's report (see the module's doc).
pub fn call_outcome(facts: &ReportFacts) -> CallOutcome {
    match facts.run {
        OutcomeRun::Pull => pull_outcome(facts),
        OutcomeRun::Push => push_outcome(facts),
    }
}

/// A pull: every warning told except a conflict (thrown, after the rest of the work); failures
/// first, a conflict second.
fn pull_outcome(facts: &ReportFacts) -> CallOutcome {
    let warnings = facts
        .warnings
        .iter()
        .filter(|w| w.code != "conflict")
        .map(line)
        .collect();
    let error = if !facts.failures.is_empty() {
        // Refusals at a symlinked folder, and a pull stopped on an index whose objects are not
        // there, keep their own codes so callers can tell them apart.
        let code = if facts.failures.iter().all(|f| f.code == "symlink-in-path") {
            "symlink-in-path"
        } else if facts.failures.iter().any(|f| f.code == "objects-missing") {
            "objects-missing"
        } else {
            "download-failed"
        };
        Some(failed(code, "pull", "from", &facts.failures))
    } else {
        facts.conflict.as_ref().map(|message| CallError {
            code: "conflict".to_string(),
            message: format!("{message} (pulled {} files)", facts.moved),
            details: DetailsOf::KeptAside,
        })
    };
    CallOutcome {
        warnings,
        error,
        count: facts.moved,
    }
}

/// A push: every warning told first; failures throw; a held catalog export is told, any other
/// withheld verdict throws.
fn push_outcome(facts: &ReportFacts) -> CallOutcome {
    let mut warnings: Vec<String> = facts.warnings.iter().map(line).collect();
    let error = if !facts.failures.is_empty() {
        Some(failed("upload-failed", "push", "to", &facts.failures))
    } else {
        warnings.extend(
            facts
                .blocked
                .iter()
                .filter(|v| v.code == HELD_NOT_FAILED)
                .map(line),
        );
        facts
            .blocked
            .iter()
            .find(|v| v.code != HELD_NOT_FAILED)
            .map(|guard| CallError {
                code: guard.code.clone(),
                message: format!("{} (pushed {} files first)", guard.message, facts.moved),
                details: DetailsOf::Blocked,
            })
    };
    CallOutcome {
        warnings,
        error,
        count: facts.moved + facts.deleted,
    }
}

/// A notice as a line: its message and its code in brackets.
fn line(notice: &Notice) -> String {
    format!("{} [{}]", notice.message, notice.code)
}

/// The error of a run with failed items, naming the first few.
fn failed(code: &str, verb: &str, direction: &str, failures: &[ItemFailureFacts]) -> CallError {
    let named: Vec<String> = failures
        .iter()
        .take(NAMED_FAILURES)
        .map(|f| format!("{}: {}", f.item, f.message))
        .collect();
    CallError {
        code: code.to_string(),
        message: format!(
            "Failed to {verb} {} file(s) {direction} S3: {}",
            failures.len(),
            named.join("; ")
        ),
        details: DetailsOf::Failures,
    }
}
