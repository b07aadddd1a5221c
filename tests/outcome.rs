//! What a finished pull's or push's report answers the extension's caller
//! (`runs::outcome`): the lines told and the one error thrown.

use s3sync_core::runs::outcome::{
    call_outcome, DetailsOf, ItemFailureFacts, Notice, OutcomeRun, ReportFacts,
};

fn notice(code: &str, message: &str) -> Notice {
    Notice {
        code: code.into(),
        message: message.into(),
    }
}

fn failure(item: &str, code: &str) -> ItemFailureFacts {
    ItemFailureFacts {
        item: item.into(),
        code: code.into(),
        message: format!("{item} went wrong"),
    }
}

fn facts(run: OutcomeRun) -> ReportFacts {
    ReportFacts {
        run,
        warnings: vec![],
        failures: vec![],
        blocked: vec![],
        conflict: None,
        moved: 0,
        deleted: 0,
    }
}

#[test]
fn a_clean_pull_returns_its_downloads_and_tells_its_warnings_but_a_conflict() {
    let mut pull = facts(OutcomeRun::Pull);
    pull.moved = 7;
    pull.warnings = vec![
        notice("entries-pruned", "2 entries pruned"),
        notice("conflict", "told by the error instead"),
    ];
    let out = call_outcome(&pull);
    assert_eq!(out.warnings, vec!["2 entries pruned [entries-pruned]"]);
    assert_eq!(out.error, None);
    assert_eq!(out.count, 7);
}

#[test]
fn a_pull_with_failures_names_the_class_that_callers_tell_apart() {
    let mut pull = facts(OutcomeRun::Pull);
    pull.failures = vec![
        failure("a", "symlink-in-path"),
        failure("b", "symlink-in-path"),
    ];
    assert_eq!(call_outcome(&pull).error.unwrap().code, "symlink-in-path");

    pull.failures.push(failure("c", "objects-missing"));
    assert_eq!(call_outcome(&pull).error.unwrap().code, "objects-missing");

    pull.failures = (0..5)
        .map(|i| failure(&format!("f{i}"), "timeout"))
        .collect();
    // A conflict waits behind failures: they are the first thing to fix.
    pull.conflict = Some("kept aside".into());
    let error = call_outcome(&pull).error.unwrap();
    assert_eq!(error.code, "download-failed");
    assert_eq!(error.details, DetailsOf::Failures);
    assert!(error
        .message
        .starts_with("Failed to pull 5 file(s) from S3: f0: f0 went wrong;"));
    assert!(error.message.contains("f2: f2 went wrong") && !error.message.contains("f3"));
}

#[test]
fn a_pull_that_kept_this_caches_versions_aside_fails_after_the_rest_of_its_work() {
    let mut pull = facts(OutcomeRun::Pull);
    pull.moved = 3;
    pull.conflict = Some("1 file changed on both sides".into());
    let error = call_outcome(&pull).error.unwrap();
    assert_eq!(error.code, "conflict");
    assert_eq!(
        error.message,
        "1 file changed on both sides (pulled 3 files)"
    );
    assert_eq!(error.details, DetailsOf::KeptAside);
}

#[test]
fn a_push_counts_uploads_and_deletes_and_a_held_catalog_export_is_told_not_thrown() {
    let mut push = facts(OutcomeRun::Push);
    push.moved = 2;
    push.deleted = 1;
    push.warnings = vec![notice("mixed-layout", "files at the root")];
    push.blocked = vec![notice("catalog-shrink", "the export would shrink")];
    let out = call_outcome(&push);
    assert_eq!(
        out.warnings,
        vec![
            "files at the root [mixed-layout]",
            "the export would shrink [catalog-shrink]"
        ]
    );
    assert_eq!(out.error, None);
    assert_eq!(out.count, 3);
}

#[test]
fn a_push_withheld_by_any_other_guard_fails_naming_what_it_pushed_first() {
    let mut push = facts(OutcomeRun::Push);
    push.moved = 4;
    push.blocked = vec![
        notice("catalog-shrink", "the export would shrink"),
        notice("delete-cap", "12 deletes withheld"),
    ];
    let out = call_outcome(&push);
    let error = out.error.unwrap();
    assert_eq!(error.code, "delete-cap");
    assert_eq!(error.message, "12 deletes withheld (pushed 4 files first)");
    assert_eq!(error.details, DetailsOf::Blocked);
    assert_eq!(
        out.warnings,
        vec!["the export would shrink [catalog-shrink]"]
    );
}

#[test]
fn a_push_with_failures_fails_first_on_them_with_its_warnings_told() {
    let mut push = facts(OutcomeRun::Push);
    push.warnings = vec![notice("missing-not-deleted", "2 missing")];
    push.failures = vec![failure("a", "upload-failed")];
    push.blocked = vec![notice("delete-cap", "withheld")];
    let out = call_outcome(&push);
    let error = out.error.unwrap();
    assert_eq!(error.code, "upload-failed");
    assert_eq!(
        error.message,
        "Failed to push 1 file(s) to S3: a: a went wrong"
    );
    assert_eq!(out.warnings, vec!["2 missing [missing-not-deleted]"]);
}
