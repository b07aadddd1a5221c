//! What a server honours of conditional requests, remembered in the sidecar between runs: only
//! for the store it was probed on, only a server that honours writes, only for a day, and only
//! in a sidecar that exists.

use s3sync_core::state::server_verdict::{
    field_of, recalled, remembered, ServerVerdict, VERDICT_TTL_MS,
};

const STORE: &str = "http://127.0.0.1:9000/bucket/prefix";
const T0: i64 = 1_760_000_000_000;

fn sidecar() -> Vec<u8> {
    br#"{"version":2,"remoteIndexETag":"e1","lastVerifiedAt":"2026-12-01T00:00:00.000Z",
    "localDirty":false,"dirtyPaths":["ns/a"],"bulkInvalidated":false,"lazyPullActive":false,
    "somethingElse":{"kept":true}}"#
        .to_vec()
}

fn verdict(deletes: Option<bool>) -> ServerVerdict {
    ServerVerdict {
        store: STORE.to_string(),
        writes: true,
        deletes,
        probed_at_ms: T0,
    }
}

#[test]
fn a_remembered_verdict_is_recalled_for_its_store_within_the_day() {
    let written = remembered(Some(&sidecar()), &verdict(Some(false))).unwrap();
    assert_eq!(
        recalled(Some(&written), STORE, T0 + 1_000),
        Some(verdict(Some(false)))
    );
    assert_eq!(
        recalled(Some(&written), STORE, T0 + VERDICT_TTL_MS - 1),
        Some(verdict(Some(false)))
    );
    // Expired, from the future (a clock set back), or another store: probe again.
    assert_eq!(recalled(Some(&written), STORE, T0 + VERDICT_TTL_MS), None);
    assert_eq!(recalled(Some(&written), STORE, T0 - 1), None);
    assert_eq!(
        recalled(Some(&written), "http://other/bucket/prefix", T0),
        None
    );
    assert_eq!(recalled(Some(&written), "", T0), None);
    // The rest of the sidecar is kept, the extension's fields and unknown ones alike.
    let text = String::from_utf8(written.clone()).unwrap();
    assert!(text.contains("\"dirtyPaths\""), "{text}");
    assert!(text.contains("\"somethingElse\""), "{text}");
    assert_eq!(field_of(&written).unwrap()["writes"], true);
}

#[test]
fn only_a_server_that_honours_writes_is_remembered_and_only_in_a_sidecar_that_exists() {
    let ignoring = ServerVerdict {
        writes: false,
        ..verdict(None)
    };
    assert_eq!(remembered(Some(&sidecar()), &ignoring), None);
    assert_eq!(remembered(None, &verdict(None)), None);
    assert_eq!(remembered(Some(b"not json"), &verdict(None)), None);
    // Written by hand with writes false, or unreadable: not recalled.
    let mut state: serde_json::Value = serde_json::from_slice(&sidecar()).unwrap();
    state["s3syncServer"] = serde_json::json!({"store": STORE, "writes": false, "probedAtMs": T0});
    let hand = serde_json::to_vec(&state).unwrap();
    assert_eq!(recalled(Some(&hand), STORE, T0), None);
    state["s3syncServer"] = serde_json::json!("yes");
    let odd = serde_json::to_vec(&state).unwrap();
    assert_eq!(recalled(Some(&odd), STORE, T0), None);
    assert_eq!(recalled(None, STORE, T0), None);
}

#[test]
fn a_verdict_without_the_delete_probe_says_so() {
    let written = remembered(Some(&sidecar()), &verdict(None)).unwrap();
    assert_eq!(recalled(Some(&written), STORE, T0).unwrap().deletes, None);
}
