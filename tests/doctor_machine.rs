//! The doctor as a run, driven the way the shim drives it: which facts it asks for in what
//! order, what each becomes for a person (a problem or a note), and answers out of order
//! refused rather than obeyed.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/doctor_sim.rs"]
mod doctor_sim;

use doctor_sim::{doctor, Facts};
use s3sync_core::runs::doctor::events::DoctorEvent;
use s3sync_core::runs::doctor::machine::{DoctorFindings, DoctorRun};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;

const NOW: i64 = doctor_sim::NOW;
const HOUR: i64 = 3_600_000;

fn codes(findings: &DoctorFindings) -> Vec<&str> {
    findings.problems.iter().map(|p| p.code.as_str()).collect()
}

#[test]
fn a_healthy_cache_has_no_problem_and_no_temp_stat() {
    let mut session = Session::new(None, "").unwrap();
    let (asked, findings) = doctor(&mut session, &Facts::default()).unwrap();
    assert_eq!(asked, ["loadIndex", "walk", "readSidecar"]);
    assert_eq!(findings, DoctorFindings::default());
}

#[test]
fn an_unreadable_index_is_a_problem_with_its_fix_and_the_doctor_goes_on() {
    let mut session = Session::new(None, "").unwrap();
    let facts = Facts {
        index: Some(("index-corrupt".into(), "index is corrupt: not JSON".into())),
        walk_errors: vec!["EACCES: logs/".into()],
        symlinked_files: vec!["logs/link.log".into()],
        ..Facts::default()
    };
    let (_, findings) = doctor(&mut session, &facts).unwrap();
    assert_eq!(
        codes(&findings),
        ["index-corrupt", "walk-error", "symlinked-file"]
    );
    assert!(findings.problems[0]
        .message
        .ends_with("`s3sync rebuild-index --apply` replaces it from a listing"));
    assert!(findings.problems[1]
        .message
        .starts_with("1 errors reading the cache (e.g. EACCES: logs/)"));
    assert!(findings.problems[2].message.contains("never pushed"));
}

#[test]
fn temporary_files_an_hour_old_are_a_problem_and_newer_or_unknown_ones_a_note() {
    let mut session = Session::new(None, "").unwrap();
    let facts = Facts {
        temps: vec![
            ("logs/.s3sync-tmp-1".into(), Some(NOW - HOUR - 1)),
            ("logs/.s3sync-tmp-2".into(), Some(NOW - 1_000)),
            ("logs/.s3sync-tmp-3".into(), None),
        ],
        ..Facts::default()
    };
    let (asked, findings) = doctor(&mut session, &facts).unwrap();
    assert_eq!(asked, ["loadIndex", "walk", "statTemps", "readSidecar"]);
    assert_eq!(codes(&findings), ["leftover-temp-files"]);
    assert!(findings.problems[0]
        .message
        .starts_with("1 temporary files"));
    assert_eq!(findings.notes.len(), 1);
    assert_eq!(findings.notes[0].code.as_str(), "recent-temp-files");
    assert!(findings.notes[0].message.starts_with("2 temporary files"));
}

#[test]
fn an_unreadable_sidecar_is_the_surveys_problem() {
    let mut session = Session::new(None, "").unwrap();
    let facts = Facts {
        sidecar: Some(b"{ not json".to_vec()),
        ..Facts::default()
    };
    let (_, findings) = doctor(&mut session, &facts).unwrap();
    assert_eq!(codes(&findings), ["sidecar-unreadable"]);
}

#[test]
fn answers_out_of_order_or_out_of_bounds_are_refused() {
    let mut session = Session::new(None, "").unwrap();
    let mut run = DoctorRun::new();
    // Before any action.
    let early = Machine::handle(&mut run, &mut session, DoctorEvent::Index).unwrap_err();
    assert_eq!(early.code(), "invalid-input");
    Machine::poll(&mut run, &mut session).unwrap();
    // A code the run did not ask to be reported (another failure stops the doctor instead).
    let other = DoctorEvent::IndexUnreadable {
        code: "s3-error".into(),
        message: "boom".into(),
    };
    let refused = Machine::handle(&mut run, &mut session, other).unwrap_err();
    assert_eq!(refused.code(), "invalid-input");
    Machine::handle(&mut run, &mut session, DoctorEvent::Index).unwrap();
    Machine::handle(
        &mut run,
        &mut session,
        DoctorEvent::Walk {
            listing: encode_local([]).into(),
            walk_errors: vec![],
            symlinked_files: vec![],
            symlinked_folders: vec![],
            temp_files: vec!["a/.s3sync-tmp-1".into()],
        },
    )
    .unwrap();
    // Fewer mtimes than paths.
    let short = DoctorEvent::Temps {
        mtimes: vec![],
        now_ms: NOW,
    };
    assert_eq!(
        Machine::handle(&mut run, &mut session, short)
            .unwrap_err()
            .code(),
        "invalid-input"
    );
    assert_eq!(Machine::result(&run).unwrap_err().code(), "invalid-input");
}
