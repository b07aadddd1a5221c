//! A version pointer (`data/**/latest`) changed on two clones merges to the higher version:
//! the bucket's comes down with no copy when it is not lower, ours stays and goes up with the
//! next push when it is higher, and only bytes that are not a version number are a conflict.
//! The version files themselves keep today's rule (a clash only when one number differs).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::model::file_class::{merge_pointer, pointer_version, PointerMerge};

#[path = "common/sim.rs"]
mod sim;
use sim::{push_plain, run_pull, Bucket, Cache, PullFaults, INDEX_KEY, NS};

const LATEST: &str = "data/command/m1/log/latest";

fn raw(version: u32) -> String {
    format!("data/command/m1/log/{version}/raw")
}

#[test]
fn a_pointer_is_a_decimal_version_number_and_nothing_else() {
    for (bytes, version) in [
        (&b"3"[..], Some(3)),
        (b"12\n", Some(12)),
        (b"  7 \r\n", Some(7)),
        (b"007", Some(7)),
        (b"18446744073709551615", None), // 20 digits: no version swamp writes
        (b"9999999999999999999", Some(9_999_999_999_999_999_999)),
        (b"", None),
        (b" \n", None),
        (b"-1", None),
        (b"+1", None),
        (b"1.0", None),
        (b"3/", None),
        (b"\xd9\xa3", None), // an Arabic-Indic three: a digit, not an ASCII one
        (b"\xff\xfe", None),
        (b"1 2", None),
    ] {
        assert_eq!(pointer_version(bytes), version, "{bytes:?}");
    }
}

#[test]
fn the_higher_version_wins_and_a_tie_is_the_buckets() {
    assert_eq!(merge_pointer(b"4", b"3"), PointerMerge::Local);
    assert_eq!(merge_pointer(b"3", b"4"), PointerMerge::Bucket);
    assert_eq!(merge_pointer(b"10", b"9\n"), PointerMerge::Local);
    assert_eq!(merge_pointer(b"3\n", b"3"), PointerMerge::Bucket);
    assert_eq!(merge_pointer(b"three", b"3"), PointerMerge::Conflict);
    assert_eq!(merge_pointer(b"3", b""), PointerMerge::Conflict);
}

/// Two clones synced at version 1 of one data.
fn synced_at_one() -> (Bucket, Cache, Cache) {
    let mut bucket = Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new());
    let mut a = Cache::default();
    a.edit(&raw(1), b"first");
    a.edit(LATEST, b"1");
    push_plain(&mut bucket, &mut a);
    let mut b = Cache::default();
    run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(b.data(LATEST), Some(&b"1"[..]));
    (bucket, a, b)
}

fn conflict_copies(cache: &Cache) -> Vec<&String> {
    cache
        .files
        .keys()
        .filter(|p| p.contains(".s3sync-conflicts"))
        .collect()
}

#[test]
fn a_higher_pointer_in_the_bucket_comes_down_with_no_copy_and_no_conflict() {
    let (mut bucket, mut a, mut b) = synced_at_one();
    // A writes versions 2 and 3; B, meanwhile, its own version 2.
    a.edit(&raw(2), b"a-two");
    a.edit(&raw(3), b"a-three");
    a.edit(LATEST, b"3");
    push_plain(&mut bucket, &mut a);
    b.edit(&raw(2), b"b-two");
    b.edit(LATEST, b"2");

    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(b.data(LATEST), Some(&b"3"[..]));
    assert!(pulled.kept_pointers.is_empty());
    // The clash of version 2 is a conflict as before (both kept); the pointer is not.
    assert_eq!(pulled.conflicts, [raw(2)]);
    assert_eq!(b.data(&raw(2)), Some(&b"a-two"[..]));
    let copies = conflict_copies(&b);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(copies[0].contains("/2/raw"), "{copies:?}");
    // Nothing left to push: B's base holds the pointer it wrote down.
    let pushed = push_plain(&mut bucket, &mut b);
    assert!(pushed.uploaded.is_empty(), "{:?}", pushed.uploaded);
}

/// Strips what an index rebuilt from a listing lacks (`sha256`, `localMtime`) from every entry,
/// each dated by its object's (newer) last write: then nothing but this cache's own record can
/// tell that its pointer changed.
fn as_rebuilt(bucket: &mut Bucket) {
    let mut index: serde_json::Value =
        serde_json::from_slice(&bucket.objects[INDEX_KEY].0).unwrap();
    for entry in index["entries"].as_object_mut().unwrap().values_mut() {
        let entry = entry.as_object_mut().unwrap();
        entry.remove("sha256");
        entry.remove("localMtime");
        entry.insert("lastModified".into(), "2026-12-02T08:00:00.000Z".into());
    }
    bucket.put(INDEX_KEY, serde_json::to_vec(&index).unwrap());
}

#[test]
fn a_higher_pointer_here_stays_and_the_next_push_takes_it_up() {
    for rebuilt in [false, true] {
        a_higher_pointer_here_is_pushed(rebuilt);
    }
}

fn a_higher_pointer_here_is_pushed(rebuilt: bool) {
    let (mut bucket, mut a, mut b) = synced_at_one();
    a.edit(&raw(2), b"a-two");
    a.edit(LATEST, b"2");
    push_plain(&mut bucket, &mut a);
    if rebuilt {
        as_rebuilt(&mut bucket);
    }
    // B wrote two versions from the same base: its 2 clashes with A's, its 3 is new.
    b.edit(&raw(2), b"b-two");
    b.edit(&raw(3), b"b-three");
    b.edit(LATEST, b"3");

    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(pulled.kept_pointers, [LATEST]);
    assert_eq!(
        b.data(LATEST),
        Some(&b"3"[..]),
        "ours names the higher version"
    );
    assert_eq!(pulled.conflicts, [raw(2)]);
    assert!(conflict_copies(&b).iter().all(|p| !p.contains("latest")));

    // The pointer is a change on top of the bucket's version: pushed with no conflict.
    let pushed = push_plain(&mut bucket, &mut b);
    assert!(
        pushed.plan.conflicts.is_empty(),
        "{:?}",
        pushed.plan.conflicts
    );
    assert!(
        pushed.uploaded.contains(&LATEST.to_string()),
        "{:?}",
        pushed.uploaded
    );
    assert!(pushed.uploaded.contains(&raw(3)), "{:?}", pushed.uploaded);
    let remote = &bucket.objects[&format!("{NS}/{LATEST}")].0;
    assert_eq!(remote.as_slice(), b"3");

    // A catches up: the pointer and B's version 3 arrive, and nothing is a conflict.
    let caught_up = run_pull(&mut bucket, &mut a, &PullFaults::default(), false);
    assert!(caught_up.conflicts.is_empty(), "{:?}", caught_up.conflicts);
    assert_eq!(a.data(LATEST), Some(&b"3"[..]));
    assert_eq!(a.data(&raw(3)), Some(&b"b-three"[..]));
}

#[test]
fn a_kept_pointer_goes_up_alone_and_then_the_push_after_sends_nothing() {
    let (mut bucket, mut a, mut b) = synced_at_one();
    // A moves to version 2 while B points at a version 5 it has not written yet.
    a.edit(LATEST, b"2");
    a.edit(&raw(2), b"a-two");
    push_plain(&mut bucket, &mut a);
    b.edit(LATEST, b"5");
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(pulled.kept_pointers, [LATEST]);
    // The pull wrote version 2's file; a later push finds the pointer changed and uploads it,
    // and after it the seal holds: the push after that sends nothing.
    let pushed = push_plain(&mut bucket, &mut b);
    assert_eq!(pushed.uploaded, [LATEST]);
    let again = push_plain(&mut bucket, &mut b);
    assert!(again.uploaded.is_empty());
}

#[test]
fn a_pointer_that_is_no_version_number_is_a_conflict_as_before() {
    let (mut bucket, mut a, mut b) = synced_at_one();
    a.edit(LATEST, b"two");
    push_plain(&mut bucket, &mut a);
    b.edit(LATEST, b"3");
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.kept_pointers.is_empty());
    assert_eq!(b.data(LATEST), Some(&b"two"[..]), "the bucket's comes down");
    let copies = conflict_copies(&b);
    assert_eq!(copies.len(), 1, "ours is kept aside: {copies:?}");
    assert_eq!(b.files[copies[0]].0, b"3");
}

#[test]
fn a_pointer_only_touched_here_takes_the_buckets_even_when_lower() {
    let (mut bucket, mut a, mut b) = synced_at_one();
    // A writes version 2, then (a deleted version, say) points back at 1.
    a.edit(&raw(2), b"a-two");
    a.edit(LATEST, b"2");
    push_plain(&mut bucket, &mut a);
    run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    a.edit(LATEST, b"1");
    push_plain(&mut bucket, &mut a);
    // B rewrote its pointer with the bytes it had: no change of B's, so no higher number wins.
    b.edit(LATEST, b"2");
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.kept_pointers.is_empty());
    assert_eq!(b.data(LATEST), Some(&b"1"[..]));
    assert!(conflict_copies(&b).is_empty());
}
