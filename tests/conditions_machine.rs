//! A push's conditions as a machine (`runs::conditions`): its decisions are covered by
//! `tests/specs/conditions/`; here, what a run refuses to be told out of turn, and that a
//! refusal is all a refused run ever answers.

use s3sync_core::runs::conditions::events::ConditionsEvent;
use s3sync_core::runs::conditions::machine::{
    ConditionsAction, ConditionsPurpose, ConditionsRequest, ConditionsRun,
};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::session::Session;

fn request() -> ConditionsRequest {
    ConditionsRequest {
        purpose: ConditionsPurpose::Push,
        conditional_client: true,
        allow_unconditional: None,
        deleting: Some(true),
        store: None,
        known_writes: None,
        known_deletes: None,
    }
}

#[test]
fn an_event_out_of_turn_is_invalid_input_and_changes_nothing() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    let mut run = ConditionsRun::new(request(), 0).unwrap();
    let first = Machine::poll(&mut run, &mut session).unwrap();
    assert!(matches!(first, ConditionsAction::ProbeWrites { .. }));
    for event in [
        ConditionsEvent::Sidecar { bytes: None },
        ConditionsEvent::DeletesProbed {
            refused: true,
            exists: true,
        },
        ConditionsEvent::Remembered,
    ] {
        let error = Machine::handle(&mut run, &mut session, event).unwrap_err();
        assert_eq!(error.code(), "invalid-input");
    }
    assert_eq!(Machine::poll(&mut run, &mut session).unwrap(), first);
    assert_eq!(Machine::result(&run).unwrap_err().code(), "invalid-input");
}

#[test]
fn a_refused_push_stays_refused_and_names_the_waiver() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    let mut run = ConditionsRun::new(request(), 0).unwrap();
    Machine::poll(&mut run, &mut session).unwrap();
    let refused = Machine::handle(
        &mut run,
        &mut session,
        ConditionsEvent::WritesProbed {
            created: true,
            again: true,
            wrong_match: true,
        },
    )
    .unwrap_err();
    assert_eq!(refused.code(), "conditional-writes-unsupported");
    assert!(refused.to_string().contains("--allow-unconditional"));
    // A caller that swallowed the error can read no decision out of the run: "no conditions"
    // would mean the user waived them.
    for _ in 0..2 {
        let again = Machine::poll(&mut run, &mut session).unwrap_err();
        assert_eq!(again.code(), "conditional-writes-unsupported");
        let result = Machine::result(&run).unwrap_err();
        assert_eq!(result.code(), "conditional-writes-unsupported");
    }
}

#[test]
fn the_probe_objects_live_in_the_bound_trees_control_folder() {
    for (namespace, folder) in [(Some("ns"), "ns/_control/"), (None, "_control/")] {
        let mut session = Session::new(namespace, "").unwrap();
        let mut run = ConditionsRun::new(request(), 0).unwrap();
        match Machine::poll(&mut run, &mut session).unwrap() {
            ConditionsAction::ProbeWrites { key_prefix, .. } => {
                assert_eq!(key_prefix, format!("{folder}s3sync-probe-"));
            }
            other => panic!("expected a write probe, got {other:?}"),
        }
    }
}
