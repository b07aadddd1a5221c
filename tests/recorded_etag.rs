//! A replacement goes `If-Match` the ETag recorded with the version it replaces, with no HEAD
//! first: the entry of each version this core writes records the ETag the server answered
//! (`s3syncEtag`). The server compares it with what it holds, so a stale one costs a HEAD after
//! the refusal and never lets a write through; an entry with none takes the HEAD as before.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::index::Index;
use s3sync_core::safety::object_condition::{recorded_etag, ETAG_FIELD};

#[path = "common/sim.rs"]
mod sim;
use sim::{push_plain, run_pull, Bucket, Cache, PullFaults, INDEX_KEY, NS};

fn heads(bucket: &Bucket) -> u64 {
    bucket.requests.get("head-object").copied().unwrap_or(0)
}

fn entry_etag(bucket: &Bucket, rel: &str) -> Option<String> {
    let index = Index::parse(&bucket.objects[INDEX_KEY].0).unwrap();
    recorded_etag(index.entries.get(rel).expect("an entry"))
}

fn pushed_once() -> (Bucket, Cache) {
    let mut bucket = Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new());
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"v1");
    assert_eq!(
        push_plain(&mut bucket, &mut cache).uploaded,
        ["data/a.json"]
    );
    (bucket, cache)
}

#[test]
fn each_upload_records_its_etag_and_the_next_replacement_sends_no_head() {
    let (mut bucket, mut cache) = pushed_once();
    let key = format!("{NS}/data/a.json");
    assert_eq!(
        entry_etag(&bucket, "data/a.json"),
        Some(bucket.objects[&key].1.clone())
    );
    cache.edit("data/a.json", b"v2");
    let before = heads(&bucket);
    assert_eq!(
        push_plain(&mut bucket, &mut cache).uploaded,
        ["data/a.json"]
    );
    assert_eq!(
        heads(&bucket),
        before,
        "If-Match the recorded ETag, no HEAD"
    );
    assert_eq!(bucket.objects[&key].0, b"v2");
    // The entry names the new version's ETag, never the old one's.
    assert_eq!(
        entry_etag(&bucket, "data/a.json"),
        Some(bucket.objects[&key].1.clone())
    );
}

#[test]
fn a_stale_recorded_etag_is_refused_by_the_server_and_judged_from_a_head() {
    let (mut bucket, mut cache) = pushed_once();
    // Another writer replaced the object and died before publishing its index: the entry still
    // names our version and its ETag, which the object no longer has.
    let key = format!("{NS}/data/a.json");
    bucket.put(&key, b"theirs".to_vec());
    cache.edit("data/a.json", b"mine");
    let before = heads(&bucket);
    let pushed = push_plain(&mut bucket, &mut cache);
    // The If-Match of the recorded ETag is refused, the HEAD finds another version: nothing
    // is overwritten, and ours stays in the cache.
    assert!(pushed.uploaded.is_empty());
    assert_eq!(
        heads(&bucket),
        before + 1,
        "judged from a HEAD after the refusal"
    );
    assert_eq!(bucket.objects[&key].0, b"theirs", "nothing overwritten");
    assert_eq!(cache.data("data/a.json"), Some(&b"mine"[..]));
}

#[test]
fn an_entry_without_a_recorded_etag_takes_the_head() {
    let (mut bucket, mut cache) = pushed_once();
    // An entry another writer made (the extension records no ETag).
    let mut index: serde_json::Value =
        serde_json::from_slice(&bucket.objects[INDEX_KEY].0).unwrap();
    index["entries"]["data/a.json"]
        .as_object_mut()
        .unwrap()
        .remove(ETAG_FIELD);
    bucket.put(INDEX_KEY, serde_json::to_vec(&index).unwrap());
    run_pull(&mut bucket, &mut cache, &PullFaults::default(), false);
    cache.edit("data/a.json", b"v2");
    let before = heads(&bucket);
    assert_eq!(
        push_plain(&mut bucket, &mut cache).uploaded,
        ["data/a.json"]
    );
    assert_eq!(heads(&bucket), before + 1);
}
