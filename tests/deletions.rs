//! Deletes reach every clone, on evidence: a push that deletes records the version it deleted
//! in the index it publishes; another clone's pull removes its copy only when the record names
//! the version it holds, or one written over it, and the copy is unchanged. Everything else is
//! kept, as before.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::index::{Index, IndexEntry};
use s3sync_core::runs::push::machine::PushRunRequest;
use s3sync_core::safety::deletions::{
    deletion_of, prune_deletions, record_deletion, DeletionRecord, DELETIONS_FIELD,
    MAX_DELETION_RECORDS,
};

#[path = "common/sim.rs"]
mod sim;
use sim::{push_plain, run_pull, run_push, Bucket, Cache, PullFaults, PushFaults, INDEX_KEY, NS};

fn confirmed() -> PushFaults {
    PushFaults {
        confirm: true,
        ..PushFaults::default()
    }
}

fn ask() -> PushRunRequest {
    PushRunRequest {
        ask_confirmation: true,
        ..PushRunRequest::default()
    }
}

/// Two clones that both hold `data/m/1/raw` and `data/m/2/raw`, synced.
fn two_clones() -> (Bucket, Cache, Cache) {
    let mut bucket = Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new());
    let mut a = Cache::default();
    a.edit("data/m/1/raw", b"one");
    a.edit("data/m/2/raw", b"two");
    push_plain(&mut bucket, &mut a);
    let mut b = Cache::default();
    run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(b.data("data/m/1/raw").is_some());
    (bucket, a, b)
}

#[test]
fn a_confirmed_delete_reaches_a_clone_that_holds_the_same_version() {
    let (mut bucket, mut a, mut b) = two_clones();
    a.delete_marked("data/m/1/raw");
    let pushed = run_push(&mut bucket, &mut a, ask(), &confirmed()).unwrap();
    assert_eq!(pushed.deleted, ["data/m/1/raw"]);
    let index = Index::parse(&bucket.objects[INDEX_KEY].0).unwrap();
    let record = deletion_of(&index, "data/m/1/raw").expect("a deletion record");
    assert_eq!(record.size, 3);
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(pulled.removed, ["data/m/1/raw"]);
    assert!(b.data("data/m/1/raw").is_none());
    assert!(b.data("data/m/2/raw").is_some());
    // Gone from B's base too: B's next push neither re-uploads nor deletes anything.
    let again = push_plain(&mut bucket, &mut b);
    assert!(again.uploaded.is_empty() && again.deleted.is_empty());
    assert!(!bucket.objects.contains_key(&format!("{NS}/data/m/1/raw")));
}

#[test]
fn a_copy_changed_here_outlives_the_delete() {
    let (mut bucket, mut a, mut b) = two_clones();
    a.delete_marked("data/m/1/raw");
    run_push(&mut bucket, &mut a, ask(), &confirmed()).unwrap();
    b.edit("data/m/1/raw", b"edited on b");
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.removed.is_empty());
    assert_eq!(b.data("data/m/1/raw"), Some(&b"edited on b"[..]));
    // B's edit goes up as a new file: an edit outlives a delete, as everywhere else.
    let pushed = push_plain(&mut bucket, &mut b);
    assert_eq!(pushed.uploaded, ["data/m/1/raw"]);
    let index = Index::parse(&bucket.objects[INDEX_KEY].0).unwrap();
    assert!(
        deletion_of(&index, "data/m/1/raw").is_none(),
        "the record is forgotten"
    );
}

#[test]
fn without_a_record_a_vanished_entry_is_kept() {
    // A writer that records nothing (the extension) removed the entry: the clone keeps its copy.
    let (mut bucket, _a, mut b) = two_clones();
    let mut index = Index::parse(&bucket.objects[INDEX_KEY].0).unwrap();
    index.entries.remove("data/m/1/raw");
    bucket.put(INDEX_KEY, index.to_compact_json());
    bucket.objects.remove(&format!("{NS}/data/m/1/raw"));
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.removed.is_empty());
    assert!(b.data("data/m/1/raw").is_some());
}

#[test]
fn a_record_of_another_version_removes_nothing() {
    let (mut bucket, _a, mut b) = two_clones();
    let mut index = Index::parse(&bucket.objects[INDEX_KEY].0).unwrap();
    let mut other = index.entries.remove("data/m/1/raw").unwrap();
    other.size += 1;
    other.sha256 = None;
    record_deletion(
        &mut index,
        "data/m/1/raw",
        &other,
        "2026-11-02T00:00:00.000Z",
    );
    bucket.put(INDEX_KEY, index.to_compact_json());
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.removed.is_empty());
    assert!(b.data("data/m/1/raw").is_some());
}

#[test]
fn records_name_a_version_by_hash_or_by_size_and_date() {
    let entry = |size, sha: Option<&str>, modified: Option<&str>| IndexEntry {
        size,
        sha256: sha.map(str::to_string),
        last_modified: modified.map(Into::into),
        ..IndexEntry::default()
    };
    let at = "2026-11-02T00:00:00.000Z";
    let hashed = DeletionRecord::of(&entry(3, Some("aa"), Some(at)), at);
    assert!(hashed.names(&entry(3, Some("aa"), None)));
    assert!(!hashed.names(&entry(3, Some("bb"), Some(at))));
    assert!(!hashed.names(&entry(4, Some("aa"), Some(at))));
    let dated = DeletionRecord::of(&entry(3, None, Some(at)), at);
    assert!(dated.names(&entry(3, None, Some(at))));
    assert!(!dated.names(&entry(3, None, Some("2026-11-03T00:00:00.000Z"))));
    let bare = DeletionRecord::of(&entry(3, None, None), at);
    assert!(
        !bare.names(&entry(3, None, None)),
        "size alone proves nothing"
    );
}

#[test]
fn records_expire_after_the_window_and_are_capped() {
    let mut index = Index::default();
    let entry = IndexEntry {
        size: 1,
        ..IndexEntry::default()
    };
    record_deletion(&mut index, "old", &entry, "2026-09-01T00:00:00.000Z");
    record_deletion(&mut index, "new", &entry, "2026-11-30T00:00:00.000Z");
    prune_deletions(&mut index, "2026-12-04T00:00:00.000Z");
    assert!(deletion_of(&index, "old").is_none());
    assert!(deletion_of(&index, "new").is_some());
    prune_deletions(&mut index, "2027-06-01T00:00:00.000Z");
    assert!(
        !index.extra.contains_key(DELETIONS_FIELD),
        "an empty field is dropped"
    );
    for i in 0..MAX_DELETION_RECORDS + 10 {
        let at = format!("2026-12-01T00:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        record_deletion(&mut index, &format!("f{i}"), &entry, &at);
    }
    prune_deletions(&mut index, "2026-12-04T00:00:00.000Z");
    let kept = index.extra[DELETIONS_FIELD].as_object().unwrap().len();
    assert_eq!(kept, MAX_DELETION_RECORDS);
}

/// Two clones holding version one of `data/m/1/raw`; A then writes version two (pushed a day
/// later) and deletes it (a day after that): B never saw two.
fn a_later_version_deleted() -> (Bucket, Cache) {
    let (mut bucket, mut a, b) = two_clones();
    a.edit("data/m/1/raw", b"one, then two");
    let later = PushFaults {
        at: Some("2026-12-02T00:00:00.000Z"),
        ..PushFaults::default()
    };
    let pushed = run_push(&mut bucket, &mut a, PushRunRequest::default(), &later).unwrap();
    assert_eq!(pushed.uploaded, ["data/m/1/raw"]);
    a.delete_marked("data/m/1/raw");
    let deleting = PushFaults {
        at: Some("2026-12-03T00:00:00.000Z"),
        ..confirmed()
    };
    let deleted = run_push(&mut bucket, &mut a, ask(), &deleting).unwrap();
    assert_eq!(deleted.deleted, ["data/m/1/raw"]);
    (bucket, b)
}

#[test]
fn a_delete_of_a_later_version_reaches_a_clone_that_still_holds_an_older_one() {
    let (mut bucket, mut b) = a_later_version_deleted();
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert_eq!(pulled.removed, ["data/m/1/raw"], "its copy of one goes too");
    assert!(b.data("data/m/1/raw").is_none());
    assert!(b.data("data/m/2/raw").is_some());
    // Nothing left behind: B's next push neither uploads nor deletes, and is sealed after.
    let again = push_plain(&mut bucket, &mut b);
    assert!(again.uploaded.is_empty() && again.deleted.is_empty());
    assert!(
        push_plain(&mut bucket, &mut b).sealed,
        "the cache seals again"
    );
}

#[test]
fn an_older_copy_edited_here_outlives_the_delete_of_a_later_version() {
    let (mut bucket, mut b) = a_later_version_deleted();
    b.edit("data/m/1/raw", b"one, edited on b");
    let pulled = run_pull(&mut bucket, &mut b, &PullFaults::default(), false);
    assert!(pulled.removed.is_empty());
    assert_eq!(b.data("data/m/1/raw"), Some(&b"one, edited on b"[..]));
}

#[test]
fn a_record_supersedes_the_version_it_names_and_older_ones_only() {
    let entry = |size, modified: &str| IndexEntry {
        size,
        last_modified: Some(modified.into()),
        ..IndexEntry::default()
    };
    let deleted = DeletionRecord::of(
        &entry(5, "2026-11-02T00:00:00.000Z"),
        "2026-11-03T00:00:00.000Z",
    );
    assert!(
        deleted.supersedes(&entry(5, "2026-11-02T00:00:00.000Z")),
        "the same"
    );
    assert!(
        deleted.supersedes(&entry(9, "2026-11-01T00:00:00.000Z")),
        "an older one"
    );
    assert!(
        !deleted.supersedes(&entry(9, "2026-11-04T00:00:00.000Z")),
        "a newer one"
    );
    assert!(!deleted.supersedes(&IndexEntry {
        size: 9,
        ..IndexEntry::default()
    }));
    assert!(!deleted.supersedes(&entry(9, "not a date")));
}
