//! What a service does with each `markDirty` call (`state::dirty_calls`): a repeat is skipped
//! while the sidecar is as we left it, tombstones go to the journal once our rewrite asks the
//! extension to walk everything, and a sidecar someone else rewrote forgets what was recorded.

use s3sync_core::state::dirty_calls::{DirtyCalls, DirtyStep};

#[test]
fn a_repeat_is_skipped_only_while_the_sidecar_is_as_we_left_it() {
    let mut calls = DirtyCalls::new();
    assert_eq!(calls.step(Some("ns/a"), true), DirtyStep::Rewrite);
    calls.recorded(Some("ns/a"), true, false);
    assert_eq!(calls.step(Some("ns/a"), true), DirtyStep::Skip);
    // A walk of everything is its own call.
    assert_eq!(calls.step(None, true), DirtyStep::Rewrite);
    calls.recorded(None, true, false);
    assert_eq!(calls.step(None, true), DirtyStep::Skip);
    // Someone else rewrote the sidecar: everything is recorded again.
    assert_eq!(calls.step(Some("ns/a"), false), DirtyStep::Rewrite);
    calls.recorded(Some("ns/a"), true, false);
    assert_eq!(calls.step(None, true), DirtyStep::Rewrite);
}

#[test]
fn tombstones_are_journalled_once_our_rewrite_walks_everything() {
    let mut calls = DirtyCalls::new();
    calls.recorded(Some("ns/a"), true, false);
    assert_eq!(calls.step(Some("ns/b"), true), DirtyStep::Rewrite);
    calls.recorded(Some("ns/b"), true, true);
    assert_eq!(calls.step(Some("ns/c"), true), DirtyStep::Journal);
    // A journal line leaves what the sidecar asks as it was.
    calls.recorded(Some("ns/c"), false, false);
    assert_eq!(calls.step(Some("ns/d"), true), DirtyStep::Journal);
    // A walk of everything is never a journal line; a changed sidecar is rewritten.
    assert_eq!(calls.step(None, true), DirtyStep::Rewrite);
    assert_eq!(calls.step(Some("ns/e"), false), DirtyStep::Rewrite);
}

#[test]
fn a_sync_forgets_what_was_recorded() {
    let mut calls = DirtyCalls::new();
    calls.recorded(Some("ns/a"), true, false);
    calls.forget();
    assert_eq!(calls.step(Some("ns/a"), true), DirtyStep::Rewrite);
}
