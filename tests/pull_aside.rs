//! What a pull keeps aside before the bucket's version replaces a local file
//! (`runs::pull::aside`): only this cache's own change, once, never over other bytes.

use s3sync_core::runs::pull::aside::{judge_aside, AsideStep, CopyFound, FileContent};

fn copy(size: u64, sha: Option<&str>) -> CopyFound {
    CopyFound {
        size,
        sha256: sha.map(|s| s.repeat(64)),
    }
}

fn file(size: u64, sha: &str) -> FileContent {
    FileContent {
        size,
        sha256: sha.repeat(64),
    }
}

#[test]
fn only_this_caches_own_change_is_kept() {
    let theirs = file(3, "b");
    let mine = file(4, "a");
    // No local file, the bucket's bytes already, or the version this cache last synced.
    assert_eq!(
        judge_aside(None, Some(&theirs), None, None),
        AsideStep::Nothing
    );
    assert_eq!(
        judge_aside(Some(&theirs), Some(&theirs), None, None),
        AsideStep::Nothing
    );
    let base = "a".repeat(64);
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), Some(&base), None),
        AsideStep::Nothing
    );
    // A change of ours: copied.
    let other_base = "c".repeat(64);
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), Some(&other_base), None),
        AsideStep::Copy
    );
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), None, None),
        AsideStep::Copy
    );
}

#[test]
fn a_copy_is_reused_only_when_it_holds_the_same_bytes_and_never_written_over() {
    let theirs = file(3, "b");
    let mine = file(4, "a");
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), None, Some(&copy(4, Some("a")))),
        AsideStep::Reuse
    );
    // Same size, other bytes (a copy edited by hand, a file planted at the name): the size
    // alone never vouches for a copy, and the file there is not written over.
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), None, Some(&copy(4, Some("d")))),
        AsideStep::Occupied
    );
    // Another size: not read at all, and not written over either.
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), None, Some(&copy(5, None))),
        AsideStep::Occupied
    );
    // Same size, not read: nothing vouches for it.
    assert_eq!(
        judge_aside(Some(&mine), Some(&theirs), None, Some(&copy(4, None))),
        AsideStep::Occupied
    );
    // Nothing of ours to keep: the copy's name does not matter.
    assert_eq!(
        judge_aside(Some(&theirs), Some(&theirs), None, Some(&copy(5, None))),
        AsideStep::Nothing
    );
}

#[test]
fn the_same_hash_at_another_size_is_not_the_bucket_version() {
    // Content is size and hash together: a local file that only shares the hash string with
    // the incoming one (impossible for SHA-256, possible for a hostile caller) is kept.
    let theirs = file(3, "b");
    let odd = file(9, "b");
    assert_eq!(
        judge_aside(Some(&odd), Some(&theirs), None, None),
        AsideStep::Copy
    );
}
