//! The sync-state sidecar and the lock decisions. Input: a 41-byte header (five little-endian
//! integers for the lock clock, then a flags byte), then fields (0xFF): the sidecar JSON, the
//! lock body, then `markDirty` paths. A sidecar that parses must survive every update and its own JSON; the lock
//! decisions must be consistent for any clock, including one that runs backwards.
#![no_main]

use fuzz_support::{byte, header, text, u64_at};
use libfuzzer_sys::fuzz_target;
use s3sync_core::state::lock::{
    assess, heartbeat_interval_ms, wait_decision, LockBody, LockState, WaitDecision, DEFAULT_TTL_MS,
};
use s3sync_core::state::sync_state::{is_trusted_etag, unquote_etag, SyncState, DIRTY_PATHS_CAP};

fuzz_target!(|data: &[u8]| {
    let (nums, parts) = header(data, 41);
    let sidecar = parts[0];
    let body = parts.get(1).copied();
    let paths: Vec<String> = parts.iter().skip(2).map(|p| text(p).into_owned()).collect();
    let flags = byte(nums, 40);

    if let Some(mut state) = SyncState::parse(sidecar) {
        assert!(state.version == 1 || state.version == 2);
        round_trip(&state);
        let dirty_before = state.dirty_paths.len();
        let overflowed_before = state.dirty_paths_overflowed;
        for (i, path) in paths.iter().enumerate() {
            let with_path = (flags >> (i % 8)) & 1 == 0;
            state.record_dirty(with_path.then_some(path.as_str()));
            assert_eq!(state.version, 2);
            assert!(state.local_dirty);
            if with_path {
                assert!(
                    state.tombstones.iter().any(|t| t == path),
                    "tombstone {path:?} lost"
                );
                assert!(
                    state.bulk_invalidated || state.dirty_paths.iter().any(|p| p == path),
                    "{path:?} is neither a dirty path nor covered by a bulk walk"
                );
            } else {
                assert!(state.bulk_invalidated);
            }
            assert!(state.dirty_paths.len() <= DIRTY_PATHS_CAP.max(dirty_before));
            // This core never sets the flag that makes the extension delete every absent file.
            assert_eq!(state.dirty_paths_overflowed, overflowed_before);
        }
        if !paths.is_empty() {
            round_trip(&state);
        }
        // Tombstones are uncapped: every path given is kept, however many.
        for (i, path) in paths.iter().enumerate() {
            if (flags >> (i % 8)) & 1 == 0 {
                assert!(state.tombstones.contains(path));
            }
        }
        let consumed: Vec<String> = paths.iter().take(2).cloned().collect();
        state.consume_tombstones(&consumed);
        assert!(consumed.iter().all(|c| !state.tombstones.contains(c)));

        let etag = body.map(|b| text(b).into_owned());
        state.mark_synced(etag.as_deref(), "2026-08-01T12:00:00.000Z");
        assert!(!state.local_dirty && state.dirty_paths.is_empty() && !state.bulk_invalidated);
        round_trip(&state);
        let noop = state.pull_is_noop(etag.as_deref(), flags & 1 != 0, flags & 2 != 0);
        if noop {
            let head = unquote_etag(etag.as_deref().unwrap_or_default());
            assert!(is_trusted_etag(head) && state.remote_index_etag == head);
            assert!(flags & 1 != 0, "no-op without a local index");
        }
    }

    // The lock: any body, any clock.
    let last_modified = (flags & 4 != 0).then(|| u64_at(nums, 0) as i64);
    let now = u64_at(nums, 8) as i64;
    let nonce = "our-nonce";
    let parsed = body.and_then(LockBody::parse);
    if let Some(lock) = &parsed {
        let again = LockBody::parse(&lock.to_json()).expect("a lock body reads back");
        assert_eq!(&again, lock);
    }
    match assess(body, last_modified, nonce, now) {
        LockState::Free => assert!(body.is_none()),
        LockState::Ours => assert_eq!(parsed.map(|b| b.nonce), Some(nonce.to_string())),
        LockState::Held {
            age_ms,
            expires_in_ms,
            ..
        } => {
            let ttl = parsed.as_ref().map_or(DEFAULT_TTL_MS, |b| b.ttl_ms);
            assert!(age_ms <= ttl);
            assert_eq!(age_ms + expires_in_ms, ttl);
            if last_modified.is_none() {
                assert_eq!(age_ms, 0, "a lock of unknown age is taken as fresh");
            }
        }
        LockState::Stale { age_ms, .. } => {
            let ttl = parsed.as_ref().map_or(DEFAULT_TTL_MS, |b| b.ttl_ms);
            assert!(age_ms > ttl);
            assert!(
                last_modified.is_some(),
                "stale without a last-modified time"
            );
        }
    }
    let started = u64_at(nums, 16) as i64;
    let max_wait = u64_at(nums, 24);
    let retry = u64_at(nums, 32);
    match wait_decision(started, now, max_wait, retry) {
        WaitDecision::Retry { delay_ms } => {
            let waited = now.saturating_sub(started).max(0) as u64;
            assert!(waited < max_wait);
            assert!(delay_ms >= 1);
            assert!(delay_ms <= retry.max(1));
            assert!(
                delay_ms <= (max_wait - waited).max(1),
                "a retry past the deadline"
            );
        }
        WaitDecision::GiveUp => {
            let waited = now.saturating_sub(started).max(0) as u64;
            assert!(waited >= max_wait);
        }
    }
    let beat = heartbeat_interval_ms(retry);
    assert!(beat >= 1 && (retry < 3 || beat <= retry / 3 + 1));
});

fn round_trip(state: &SyncState) {
    let json = state.to_json();
    let again = SyncState::parse(&json).unwrap_or_else(|| {
        panic!(
            "sidecar json does not read back: {}",
            String::from_utf8_lossy(&json)
        )
    });
    assert_eq!(&again, state, "sidecar round trip changed it");
}
