//! A push with nothing to do sends nothing: the stat seal a verified push leaves in the sidecar
//! lets the next push end after its walk, and any write since (an unmarked one, a same-size
//! rewrite that kept its mtime, a new or removed file) takes the normal path.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use s3sync_core::runs::push::machine::PushRunRequest;
use s3sync_core::state::seal::{is_racy, racy_window_ms, RACY_FINE_MS, RACY_MS, RACY_TRUNCATED_MS};
use s3sync_core::state::sync_state::SyncState;

#[path = "common/sim.rs"]
mod sim;
use sim::{push_plain, run_pull, run_push, Bucket, Cache, PullFaults, PushFaults, NS};

fn index_reads(bucket: &Bucket) -> u64 {
    bucket.requests.get("push-get-index").copied().unwrap_or(0)
}

fn synced() -> (Bucket, Cache) {
    let mut bucket = Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new());
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    cache.edit("data/b.json", b"bb");
    let first = push_plain(&mut bucket, &mut cache);
    assert!(!first.sealed);
    assert_eq!(first.uploaded.len(), 2);
    let sidecar = SyncState::parse(&cache.files[".datastore-sync-state.json"].0).unwrap();
    assert!(sidecar.seal.is_some(), "a verified push seals the cache");
    (bucket, cache)
}

#[test]
fn a_push_of_an_untouched_sealed_cache_makes_no_request() {
    let (mut bucket, mut cache) = synced();
    let before = index_reads(&bucket);
    let noop = push_plain(&mut bucket, &mut cache);
    assert!(noop.sealed);
    assert!(noop.uploaded.is_empty() && !noop.published);
    assert_eq!(index_reads(&bucket), before, "not even the index was read");
    assert_eq!(noop.plan.summary.unchanged, 2);
    // And again: the seal stays.
    assert!(push_plain(&mut bucket, &mut cache).sealed);
}

#[test]
fn an_unmarked_write_breaks_the_seal_and_is_pushed() {
    let (mut bucket, mut cache) = synced();
    cache.edit("data/a.json", b"A2");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, ["data/a.json"]);
    assert!(
        push_plain(&mut bucket, &mut cache).sealed,
        "sealed again once verified"
    );
}

#[test]
fn a_same_size_rewrite_that_kept_its_mtime_breaks_the_seal() {
    let (mut bucket, mut cache) = synced();
    cache.rewrite_keeping_mtime("data/b.json", b"BB");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(
        !pushed.sealed,
        "the change time moved: the normal path runs"
    );
    // ...which hashes the file (its change time is newer than the seal) and uploads the edit.
    assert_eq!(pushed.uploaded, ["data/b.json"]);
    assert_eq!(bucket.objects[&format!("{NS}/data/b.json")].0, b"BB");
}

#[test]
fn a_new_file_a_tombstone_or_a_pull_each_take_the_normal_path() {
    let (mut bucket, mut cache) = synced();
    cache.edit("data/c.json", b"c");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, ["data/c.json"]);
    cache.delete_marked("data/c.json");
    let deleted = run_push(
        &mut bucket,
        &mut cache,
        PushRunRequest::default(),
        &PushFaults::default(),
    )
    .unwrap();
    assert!(!deleted.sealed, "a tombstone waits");
    assert_eq!(deleted.deleted, ["data/c.json"]);
    // Another cache pushes; this one pulls it: the pulled file breaks the seal.
    let mut other = Cache::default();
    run_pull(&mut bucket, &mut other, &PullFaults::default(), false);
    other.edit("data/d.json", b"d");
    push_plain(&mut bucket, &mut other);
    run_pull(&mut bucket, &mut cache, &PullFaults::default(), false);
    assert!(cache.data("data/d.json").is_some());
    assert!(!push_plain(&mut bucket, &mut cache).sealed);
    assert!(bucket.objects.contains_key(&format!("{NS}/data/d.json")));
}

#[test]
fn a_change_close_to_the_sealing_walk_is_not_trusted_within_each_times_window() {
    let walked = 100_000;
    // Whole-second times (FAT, HFS+, Deno's change times): two seconds.
    assert_eq!(racy_window_ms(98_000), RACY_MS);
    assert!(!is_racy(Some(97_000), Some(97_000), walked));
    assert!(is_racy(Some(98_000), Some(97_000), walked));
    assert!(is_racy(Some(97_000), Some(98_000), walked));
    // Times with a fraction (ext4, APFS, NTFS, exFAT): a tenth of a second each.
    assert_eq!(racy_window_ms(98_123), RACY_FINE_MS);
    assert!(!is_racy(
        Some(walked - RACY_FINE_MS - 1),
        Some(99_123),
        walked
    ));
    assert!(is_racy(Some(walked - RACY_FINE_MS), Some(99_123), walked));
    assert!(is_racy(Some(walked + 1), Some(99_123), walked));
    // A sub-second mtime put back by a rewrite does not hide a whole-second change time in
    // the window (Deno reports change times in whole seconds).
    assert!(is_racy(Some(99_281), Some(99_000), walked));
    // A whole-second change time beside an mtime with a fraction was cut to its second (the
    // clock is fine): racy through the second after it and a tenth, no longer.
    let old_mtime = 90_123;
    assert!(is_racy(Some(old_mtime), Some(99_000), walked));
    assert!(!is_racy(Some(old_mtime), Some(98_000), walked));
    assert!(is_racy(
        Some(old_mtime),
        Some(99_000),
        99_000 + RACY_TRUNCATED_MS
    ));
    assert!(!is_racy(
        Some(old_mtime),
        Some(99_000),
        99_001 + RACY_TRUNCATED_MS
    ));
    // Beside a whole-second mtime, the same change time keeps the two-second window.
    assert!(is_racy(Some(90_000), Some(98_000), walked));
    // A missing time: racy.
    assert!(is_racy(None, Some(1), walked));
    assert!(is_racy(Some(1_123), None, walked));
    // Times before 1970 are still judged by their fraction.
    assert_eq!(racy_window_ms(-1_500), RACY_FINE_MS);
    assert_eq!(racy_window_ms(-2_000), RACY_MS);
}

/// A cache whose last push ran right after it wrote `data/a.json` (swamp core's shape: a
/// command writes, then pushes): the seal's walk is within the racy window of that write.
fn sealed_in_a_hurry() -> (Bucket, Cache) {
    let (mut bucket, mut cache) = synced();
    cache.hurried = true;
    cache.edit("data/a.json", b"A");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert_eq!(pushed.uploaded, ["data/a.json"]);
    cache.hurried = false;
    (bucket, cache)
}

#[test]
fn a_file_written_close_to_the_seal_is_hashed_and_the_push_still_sends_nothing() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    let before = index_reads(&bucket);
    let noop = push_plain(&mut bucket, &mut cache);
    assert!(noop.sealed, "its bytes are the ones last synced");
    assert_eq!(
        noop.seal_hashed,
        [format!("{NS}/data/a.json")],
        "only that file"
    );
    assert_eq!(index_reads(&bucket), before, "no request");
    assert_eq!(noop.plan.summary.unchanged, 2);
    assert!(noop.seal_refreshed, "the verified walk became the seal's");
    // The next push's walk is far from the refreshed seal: nothing hashed, nothing sent.
    let next = push_plain(&mut bucket, &mut cache);
    assert!(next.sealed);
    assert!(next.seal_hashed.is_empty(), "{:?}", next.seal_hashed);
    assert!(!next.seal_refreshed, "nothing to refresh");
    assert_eq!(index_reads(&bucket), before, "still no request");
}

#[test]
fn a_push_still_in_a_hurry_hashes_again_until_its_walk_is_clear_of_the_write() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    // Each push right after the last: the refreshed seal is still within the write's window.
    cache.hurried = true;
    let first = push_plain(&mut bucket, &mut cache);
    let second = push_plain(&mut bucket, &mut cache);
    assert!(first.sealed && second.sealed);
    assert_eq!(second.seal_hashed, [format!("{NS}/data/a.json")]);
    cache.hurried = false;
    let clear = push_plain(&mut bucket, &mut cache);
    let settled = push_plain(&mut bucket, &mut cache);
    assert!(clear.sealed && settled.sealed);
    assert!(settled.seal_hashed.is_empty(), "{:?}", settled.seal_hashed);
}

#[test]
fn after_a_refresh_a_rewrite_that_kept_its_mtime_is_still_pushed() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    assert!(push_plain(&mut bucket, &mut cache).seal_refreshed);
    // `cp -p`: same size, the old mtime put back; only the change time and inode tell.
    cache.rewrite_keeping_mtime("data/a.json", b"Q");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, ["data/a.json"]);
    assert_eq!(bucket.objects[&format!("{NS}/data/a.json")].0, b"Q");
}

#[test]
fn a_mark_that_lands_before_the_refresh_keeps_the_old_seal_and_the_next_push_plans() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    let sidecar = ".datastore-sync-state.json";
    let old_seal = SyncState::parse(&cache.files[sidecar].0).unwrap().seal;
    let faults = PushFaults {
        // Swamp core's `markDirty` of a file it is about to remove, from another process.
        before_refresh: Some(|cache: &mut Cache| {
            let path = ".datastore-sync-state.json";
            let mut state = SyncState::parse(&cache.files[path].0).unwrap();
            state.record_dirty(Some(&format!("{NS}/data/b.json")));
            cache.write(path, state.to_json());
        }),
        ..PushFaults::default()
    };
    let noop = run_push(&mut bucket, &mut cache, PushRunRequest::default(), &faults).unwrap();
    assert!(noop.sealed, "this push had verified its walk");
    assert!(
        !noop.seal_refreshed,
        "the mark is the next push's to act on"
    );
    let after = SyncState::parse(&cache.files[sidecar].0).unwrap();
    assert_eq!(after.seal, old_seal, "the seal is as it was");
    assert!(
        after.local_dirty && !after.tombstones.is_empty(),
        "the mark is kept"
    );
    let before = index_reads(&bucket);
    let next = push_plain(&mut bucket, &mut cache);
    assert!(!next.sealed, "a marked cache never ends on the seal");
    assert!(
        index_reads(&bucket) > before,
        "it planned against the bucket"
    );
}

#[test]
fn a_change_within_the_same_tick_as_the_sealing_walk_is_still_pushed() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    // Rewritten within the tick of the write the seal saw: the digest cannot tell.
    cache.rewrite_within_tick("data/a.json", b"Z");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed, "its bytes are not the ones last synced");
    assert_eq!(pushed.seal_hashed, [format!("{NS}/data/a.json")]);
    assert_eq!(pushed.uploaded, ["data/a.json"]);
    assert_eq!(bucket.objects[&format!("{NS}/data/a.json")].0, b"Z");
}

#[test]
fn a_base_without_a_hash_takes_the_normal_path() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    // The local index lost its hashes (a rebuilt index records none): nothing to compare with.
    let path = cache
        .files
        .keys()
        .find(|p| p.ends_with(".datastore-index.json"))
        .cloned()
        .expect("a local index");
    let (local, mtime) = cache.files[&path].clone();
    let mut json: serde_json::Value = serde_json::from_slice(&local).unwrap();
    for entry in json["entries"].as_object_mut().unwrap().values_mut() {
        entry.as_object_mut().unwrap().remove("sha256");
    }
    cache
        .files
        .insert(path, (serde_json::to_vec(&json).unwrap(), mtime));
    let before = index_reads(&bucket);
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert!(
        index_reads(&bucket) > before,
        "the normal path reads the index"
    );
    assert!(pushed.uploaded.is_empty(), "and finds nothing to send");
}

#[test]
fn a_two_phase_push_of_a_sealed_cache_prepares_and_commits_nothing() {
    let two_phase = || PushRunRequest {
        two_phase: true,
        ..PushRunRequest::default()
    };
    let (mut bucket, mut cache) = synced();
    let before = index_reads(&bucket);
    let noop = run_push(&mut bucket, &mut cache, two_phase(), &PushFaults::default()).unwrap();
    assert!(noop.sealed && !noop.published && noop.uploaded.is_empty());
    assert_eq!(index_reads(&bucket), before, "no request");
    // A write since takes the two-phase path as before.
    cache.edit("data/a.json", b"A2");
    let pushed = run_push(&mut bucket, &mut cache, two_phase(), &PushFaults::default()).unwrap();
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, ["data/a.json"]);
    assert!(pushed.published);
}

fn preview() -> PushRunRequest {
    PushRunRequest {
        dry_run: true,
        preview: true,
        ..PushRunRequest::default()
    }
}

#[test]
fn a_preview_of_a_sealed_cache_counts_nothing_without_a_request() {
    // Swamp core previews before `datastore sync --push` without `--yes`, then pushes when the
    // preview counts 0: on a sealed cache both end after their walk.
    let (mut bucket, mut cache) = synced();
    let before = index_reads(&bucket);
    let previewed = run_push(&mut bucket, &mut cache, preview(), &PushFaults::default()).unwrap();
    assert!(previewed.sealed);
    assert!(previewed.plan.uploads.is_empty() && previewed.plan.deletes.is_empty());
    assert_eq!(index_reads(&bucket), before, "not even the index was read");
    // A plain dry run (a person reads the whole plan) still plans against the bucket.
    let dry = PushRunRequest {
        dry_run: true,
        ..PushRunRequest::default()
    };
    let planned = run_push(&mut bucket, &mut cache, dry, &PushFaults::default()).unwrap();
    assert!(!planned.sealed);
    assert_eq!(index_reads(&bucket), before + 1);
}

#[test]
fn a_preview_after_a_write_counts_it_and_never_touches_the_seal() {
    let (mut bucket, mut cache) = sealed_in_a_hurry();
    let sidecar_before = cache.files[".datastore-sync-state.json"].0.clone();
    // The racy file is hashed and holds the synced bytes: the preview ends on the seal but,
    // writing nothing, does not refresh it.
    let previewed = run_push(&mut bucket, &mut cache, preview(), &PushFaults::default()).unwrap();
    assert!(previewed.sealed);
    assert!(!previewed.seal_refreshed, "a dry run writes nothing");
    assert_eq!(cache.files[".datastore-sync-state.json"].0, sidecar_before);
    // An unmarked write since: the preview plans and counts it; nothing is sent.
    cache.edit("data/b.json", b"B2");
    let previewed = run_push(&mut bucket, &mut cache, preview(), &PushFaults::default()).unwrap();
    assert!(!previewed.sealed);
    assert_eq!(previewed.plan.summary.upload, 1);
    assert!(previewed.uploaded.is_empty() && !previewed.published);
    assert_eq!(cache.files[".datastore-sync-state.json"].0, sidecar_before);
}

const EXPORT: &str = ".catalog-export.json";

/// A sealed cache holding swamp's catalog export beside its data, far from the seal's walk.
fn sealed_with_export() -> (Bucket, Cache) {
    let mut bucket = Bucket::with_datastore(&BTreeMap::new(), &BTreeMap::new());
    let mut cache = Cache::default();
    cache.edit("data/a.json", b"a");
    cache.edit(EXPORT, b"[1]");
    assert_eq!(push_plain(&mut bucket, &mut cache).uploaded.len(), 2);
    // A push with nothing to do far from the write: the seal is verified and stays.
    push_plain(&mut bucket, &mut cache);
    (bucket, cache)
}

fn export_path() -> String {
    format!("{NS}/{EXPORT}")
}

#[test]
fn a_catalog_export_rewritten_and_marked_with_the_same_bytes_leaves_the_push_on_the_seal() {
    // Swamp core rewrites and marks its export before every push of a namespaced clone.
    let (mut bucket, mut cache) = sealed_with_export();
    let before = index_reads(&bucket);
    cache.edit_marked(EXPORT, b"[1]");
    let noop = push_plain(&mut bucket, &mut cache);
    assert!(noop.sealed, "{:?}", noop.plan);
    assert_eq!(
        noop.seal_hashed,
        [export_path()],
        "only the export is hashed"
    );
    assert!(
        !noop.seal_refreshed,
        "nothing racy by time: no sidecar rewrite"
    );
    assert_eq!(index_reads(&bucket), before, "no request");
}

#[test]
fn a_catalog_export_with_new_bytes_is_pushed_marked_or_not() {
    let (mut bucket, mut cache) = sealed_with_export();
    cache.edit_marked(EXPORT, b"[1,2]");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, [EXPORT]);
    // Unmarked and same size, its stats no longer part of the digest: still hashed, still sent.
    push_plain(&mut bucket, &mut cache);
    cache.edit(EXPORT, b"[1,3]");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed);
    assert_eq!(pushed.uploaded, [EXPORT]);
    assert_eq!(bucket.objects[&export_path()].0, b"[1,3]");
}

#[test]
fn a_marked_export_that_is_gone_or_a_marked_data_file_takes_the_normal_path() {
    let (mut bucket, mut cache) = sealed_with_export();
    cache.delete_marked(EXPORT);
    let deleted = push_plain(&mut bucket, &mut cache);
    assert!(!deleted.sealed);
    assert_eq!(deleted.deleted, [EXPORT]);

    let (mut bucket, mut cache) = sealed_with_export();
    cache.edit_marked(EXPORT, b"[1]");
    cache.edit_marked("data/a.json", b"A");
    let pushed = push_plain(&mut bucket, &mut cache);
    assert!(!pushed.sealed, "a mark on a data file is not the export's");
    assert_eq!(pushed.uploaded, ["data/a.json"]);
}
