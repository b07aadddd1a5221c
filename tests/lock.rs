//! The lock's decisions, with time as a value.

use s3sync_core::state::lock::{
    assess, check_ttl, heartbeat_interval_ms, wait_decision, LockBody, LockState, WaitDecision,
    DEFAULT_TTL_MS, MAX_TTL_MS,
};

fn body(nonce: &str, ttl_ms: u64) -> Vec<u8> {
    LockBody {
        holder: "me@host".into(),
        hostname: "host".into(),
        pid: 7,
        acquired_at: "2026-11-29T12:00:00.000Z".into(),
        ttl_ms,
        nonce: nonce.into(),
    }
    .to_json()
}

#[test]
fn no_object_is_free_and_our_nonce_is_ours() {
    assert_eq!(assess(None, None, "n", 0), LockState::Free);
    assert_eq!(
        assess(Some(&body("n", 30_000)), Some(0), "n", 99_999),
        LockState::Ours
    );
}

#[test]
fn a_lease_is_live_up_to_its_ttl_and_stale_after() {
    let lock = body("theirs", 30_000);
    match assess(Some(&lock), Some(1_000), "mine", 31_000) {
        LockState::Held {
            age_ms,
            expires_in_ms,
            pid,
            ..
        } => {
            assert_eq!((age_ms, expires_in_ms, pid), (30_000, 0, 7));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        assess(Some(&lock), Some(1_000), "mine", 31_001),
        LockState::Stale { age_ms: 30_001, .. }
    ));
}

#[test]
fn an_unreadable_lock_is_held_with_the_default_lease_and_never_stale_without_a_date() {
    let junk = b"not json";
    assert!(matches!(
        assess(Some(junk), Some(0), "mine", DEFAULT_TTL_MS as i64),
        LockState::Held { .. }
    ));
    assert!(matches!(
        assess(Some(junk), Some(0), "mine", DEFAULT_TTL_MS as i64 + 1),
        LockState::Stale { .. }
    ));
    assert!(matches!(
        assess(Some(&body("theirs", 1)), None, "mine", i64::MAX),
        LockState::Held { .. }
    ));
}

#[test]
fn a_clock_that_runs_backwards_never_makes_a_lock_stale() {
    assert!(matches!(
        assess(Some(&body("theirs", 1_000)), Some(50_000), "mine", 0),
        LockState::Held { age_ms: 0, .. }
    ));
}

#[test]
fn waiting_retries_until_the_deadline_and_never_oversleeps_it() {
    assert_eq!(
        wait_decision(0, 0, 60_000, 1_000),
        WaitDecision::Retry { delay_ms: 1_000 }
    );
    assert_eq!(
        wait_decision(0, 59_500, 60_000, 1_000),
        WaitDecision::Retry { delay_ms: 500 }
    );
    assert_eq!(
        wait_decision(0, 60_000, 60_000, 1_000),
        WaitDecision::GiveUp
    );
    assert_eq!(wait_decision(0, 0, 0, 1_000), WaitDecision::GiveUp);
}

#[test]
fn the_heartbeat_is_a_third_of_the_lease() {
    assert_eq!(heartbeat_interval_ms(30_000), 10_000);
    assert_eq!(heartbeat_interval_ms(0), 1);
}

#[test]
fn the_body_round_trips_in_the_extensions_shape() {
    let bytes = body("abc", 30_000);
    let text = String::from_utf8(bytes.clone()).unwrap();
    for field in [
        "\"holder\"",
        "\"hostname\"",
        "\"pid\"",
        "\"acquiredAt\"",
        "\"ttlMs\"",
        "\"nonce\"",
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }
    assert_eq!(LockBody::parse(&bytes).unwrap().nonce, "abc");
}

#[test]
fn a_lease_longer_than_an_hour_is_capped_at_an_hour() {
    for asked in [MAX_TTL_MS + 1, 1_000_000_000_000_000, u64::MAX] {
        let lock = body("theirs", asked);
        match assess(Some(&lock), Some(0), "mine", 1_000) {
            LockState::Held {
                expires_in_ms,
                ttl_capped,
                ..
            } => {
                assert_eq!(expires_in_ms, MAX_TTL_MS - 1_000, "asked {asked}");
                assert!(ttl_capped);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            assess(Some(&lock), Some(0), "mine", MAX_TTL_MS as i64 + 1),
            LockState::Stale {
                ttl_capped: true,
                ..
            }
        ));
    }
    // A lease of exactly an hour is honoured as asked.
    assert!(matches!(
        assess(Some(&body("theirs", MAX_TTL_MS)), Some(0), "mine", 1),
        LockState::Held {
            ttl_capped: false,
            ..
        }
    ));
}

#[test]
fn a_lease_we_are_asked_to_take_must_be_within_an_hour() {
    assert_eq!(check_ttl(30_000).unwrap(), 30_000);
    assert_eq!(check_ttl(MAX_TTL_MS).unwrap(), MAX_TTL_MS);
    for bad in [0, MAX_TTL_MS + 1, u64::MAX] {
        assert_eq!(check_ttl(bad).unwrap_err().code(), "invalid-input");
    }
}
