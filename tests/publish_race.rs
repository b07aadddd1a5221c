//! After a lost publish race: retry with a growing, jittered pause, give up after the last
//! attempt, and refuse impossible inputs. Native only: proptest does not build for
//! wasm32-unknown-unknown (the export's hostile input is tested through WASM in
//! `tests/unit/wasm_exports_test.ts`).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use s3sync_core::runs::push::race::{after_lost_race, RaceStep, PUBLISH_ATTEMPTS, RACE_PAUSE_MS};

#[test]
fn the_first_losses_retry_and_the_last_gives_up() {
    for lost in 1..PUBLISH_ATTEMPTS {
        assert!(
            matches!(after_lost_race(lost, 0.5).unwrap(), RaceStep::Retry { .. }),
            "attempt {lost}"
        );
    }
    assert_eq!(
        after_lost_race(PUBLISH_ATTEMPTS, 0.5).unwrap(),
        RaceStep::GiveUp {
            attempts: PUBLISH_ATTEMPTS
        }
    );
    // A caller that kept counting past the end is still told to stop.
    assert_eq!(
        after_lost_race(PUBLISH_ATTEMPTS + 5, 0.0).unwrap(),
        RaceStep::GiveUp {
            attempts: PUBLISH_ATTEMPTS
        }
    );
}

#[test]
fn the_pause_grows_with_each_loss_and_scales_with_the_jitter() {
    assert_eq!(
        after_lost_race(1, 0.0).unwrap(),
        RaceStep::Retry { pause_ms: 0 }
    );
    assert_eq!(
        after_lost_race(1, 0.5).unwrap(),
        RaceStep::Retry { pause_ms: 25 }
    );
    assert_eq!(
        after_lost_race(4, 0.5).unwrap(),
        RaceStep::Retry { pause_ms: 100 }
    );
}

#[test]
fn impossible_inputs_are_refused_with_a_code() {
    for (lost, jitter) in [
        (0, 0.5),
        (1, 1.0),
        (1, -0.1),
        (1, f64::NAN),
        (1, f64::INFINITY),
    ] {
        let error = after_lost_race(lost, jitter).unwrap_err();
        assert_eq!(error.code(), "invalid-input", "{lost} {jitter}");
    }
}

proptest! {
    /// Every pause stays under the bound of its attempt, and a larger jitter never pauses less.
    #[test]
    fn pauses_are_bounded_and_monotone_in_the_jitter(
        lost in 1..PUBLISH_ATTEMPTS,
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
    ) {
        let pause = |jitter| match after_lost_race(lost, jitter).unwrap() {
            RaceStep::Retry { pause_ms } => pause_ms,
            RaceStep::GiveUp { .. } => panic!("attempt {lost} gave up"),
        };
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(pause(low) <= pause(high));
        prop_assert!(f64::from(pause(high)) < RACE_PAUSE_MS * f64::from(lost));
    }
}
