//! The doctor reports every symlinked folder the walk found, each with the stable code
//! `symlink-in-path` (the code pulls, pushes and repairs refuse such paths with) and its fix.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::model::layout::survey;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::repair::plan::{diagnose, DoctorFacts};
use s3sync_core::wire::listing::LocalFile;

#[test]
fn each_symlinked_folder_is_one_problem_naming_the_link_and_the_fix() {
    let model = PathModel::new(Some("prod"), "").unwrap();
    let files = [LocalFile {
        path: "prod/data/a/b/m1/state/1/raw",
        size: 3,
        mtime_ms: Some(1),
    }];
    let surveyed = survey(&model, &files);
    let facts = DoctorFacts {
        symlinked_folders: vec!["prod/logs".into(), ".s3sync-repair".into()],
        ..DoctorFacts::default()
    };
    let problems = diagnose(&model, &surveyed, None, facts);
    let linked: Vec<_> = problems
        .iter()
        .filter(|p| p.code == "symlink-in-path")
        .collect();
    assert_eq!(linked.len(), 2, "{problems:?}");
    for (problem, link) in linked.iter().zip(["prod/logs", ".s3sync-repair"]) {
        assert!(problem.message.starts_with(link), "{}", problem.message);
        assert!(
            problem.message.contains("real folder"),
            "{}",
            problem.message
        );
        assert!(!problem.message.chars().next().unwrap().is_uppercase());
    }
}

#[test]
fn a_cache_without_links_has_no_such_problem() {
    let model = PathModel::new(Some("prod"), "").unwrap();
    let surveyed = survey(&model, &[]);
    let problems = diagnose(&model, &surveyed, None, DoctorFacts::default());
    assert!(problems.iter().all(|p| p.code != "symlink-in-path"));
}
