//! A same-size edit is seen through the base, whatever the remote entry records. An index rebuilt
//! from a listing names neither a hash nor a local mtime; once such an entry was pulled, the base
//! (this cache's own record of the file it left) is the only evidence that the file changed
//! since, and a push must act on it. Swamp's `latest` markers are one-byte files edited in place,
//! so a same-size edit of one is the ordinary case, not a corner.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::runs::pull::plan::{PullOptions, PullOutcome};
use s3sync_core::runs::push::plan::{PushInput, PushPlan, UploadReason};
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::wire::listing::encode_local;

const MODIFIED: &str = "2026-08-01T12:00:00.000Z";
/// The mtime the pull recorded for the file it wrote.
const PULLED: &str = "2026-08-01T12:00:05.512Z";
const PULLED_MS: i64 = 1_785_585_605_512;
/// The mtime after `printf 3 > data/latest`.
const EDITED_MS: i64 = PULLED_MS + 7_000;
const SHA_TWO: &str = "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35";
const SHA_THREE: &str = "4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce";
const LATEST: &str = "data/m/1/latest";

/// A remote index whose one entry came from a rebuild: size and upload time only.
fn rebuilt_remote() -> String {
    format!(
        r#"{{"version":1,"entries":{{"{LATEST}":{{"key":"{LATEST}","size":1,"lastModified":"{MODIFIED}"}}}}}}"#
    )
}

/// The base a pull of that index left: the same entry with the mtime it recorded, and the hash
/// of what it wrote when `sha256` is given.
fn base_after_pull(sha256: Option<&str>) -> Vec<u8> {
    let hash = sha256
        .map(|h| format!(r#","sha256":"{h}""#))
        .unwrap_or_default();
    format!(
        r#"{{"version":1,"entries":{{"{LATEST}":{{"key":"{LATEST}","size":1,"lastModified":"{MODIFIED}","localMtime":"{PULLED}"{hash}}}}}}}"#
    )
    .into_bytes()
}

fn session(base: Vec<u8>) -> Session {
    let mut session = Session::new(None, "").unwrap();
    session.load_index(rebuilt_remote().as_bytes()).unwrap();
    assert_eq!(session.load_base(base), BaseLoad::Loaded);
    session
}

fn plan(session: &mut Session, mtime: i64, input: &PushInput) -> PushPlan {
    let listing = encode_local([(LATEST, 1, Some(mtime))]);
    session.plan_push(&listing, input).unwrap().clone()
}

fn uploads(plan: &PushPlan) -> Vec<(&str, UploadReason)> {
    plan.uploads
        .iter()
        .map(|u| (u.transfer.rel.as_str(), u.reason))
        .collect()
}

#[test]
fn a_same_size_edit_over_a_rebuilt_entry_is_uploaded() {
    let mut session = session(base_after_pull(None));
    let plan = plan(&mut session, EDITED_MS, &PushInput::default());
    assert_eq!(uploads(&plan), [(LATEST, UploadReason::MtimeChanged)]);
    assert_eq!(plan.summary.upload, 1);
    assert_eq!(plan.summary.upload_new, 0, "a replacement, not a new file");
}

#[test]
fn the_file_as_the_pull_left_it_is_not_uploaded() {
    let mut session = session(base_after_pull(None));
    let plan = plan(&mut session, PULLED_MS, &PushInput::default());
    assert!(plan.uploads.is_empty(), "{:?}", plan.uploads);
    assert!(plan.needs_hash.is_empty());
}

#[test]
fn with_the_pulled_hash_in_the_base_a_touch_is_hashed_and_not_uploaded() {
    let mut session = session(base_after_pull(Some(SHA_TWO)));
    let first = plan(&mut session, EDITED_MS, &PushInput::default());
    assert_eq!(first.needs_hash, [LATEST]);
    assert!(first.uploads.is_empty());
    // Same bytes (a touch): nothing to send, the new mtime recorded.
    let mut input = PushInput::default();
    input.hashes.insert(LATEST.into(), SHA_TWO.into());
    let touched = plan(&mut session, EDITED_MS, &input);
    assert!(touched.uploads.is_empty(), "{:?}", touched.uploads);
    assert_eq!(touched.mtime_updates.len(), 1);
    assert_eq!(touched.mtime_updates[0].rel, LATEST);
    // Other bytes of the same size: uploaded.
    input.hashes.insert(LATEST.into(), SHA_THREE.into());
    let edited = plan(&mut session, EDITED_MS, &input);
    assert_eq!(uploads(&edited), [(LATEST, UploadReason::ContentChanged)]);
}

#[test]
fn a_remote_that_moved_on_is_still_a_conflict_not_an_upload() {
    // Another cache replaced the file since this cache's base (another upload time, no hash):
    // the same-size local edit must not go up over it.
    let mut session = Session::new(None, "").unwrap();
    let newer = rebuilt_remote().replace(MODIFIED, "2026-08-02T08:00:00.000Z");
    session.load_index(newer.as_bytes()).unwrap();
    assert_eq!(session.load_base(base_after_pull(None)), BaseLoad::Loaded);
    let plan = plan(&mut session, EDITED_MS, &PushInput::default());
    assert!(plan.uploads.is_empty(), "{:?}", plan.uploads);
    assert_eq!(plan.conflicts, [LATEST]);
}

#[test]
fn a_pull_records_the_hash_of_what_it_wrote_where_the_index_has_none() {
    let mut session = Session::new(None, "").unwrap();
    session.load_index(rebuilt_remote().as_bytes()).unwrap();
    let pulling = session
        .plan_pull(
            &encode_local(Vec::<(&str, u64, Option<i64>)>::new()),
            &PullOptions::default(),
        )
        .unwrap();
    assert_eq!(pulling.downloads.len(), 1);
    session
        .apply_pull(&PullOutcome {
            downloaded: vec![(LATEST.into(), PULLED_MS)],
            sizes: vec![(LATEST.into(), 1)],
            hashes: vec![(LATEST.into(), SHA_TWO.into())],
            ..PullOutcome::default()
        })
        .unwrap();
    let local: serde_json::Value =
        serde_json::from_slice(&session.local_index_after_pull().unwrap()).unwrap();
    assert_eq!(local["entries"][LATEST]["sha256"], SHA_TWO);
    assert_eq!(local["entries"][LATEST]["localMtime"], PULLED);
    // Only the local record: the remote index is the writers' to make.
    let remote: serde_json::Value =
        serde_json::from_slice(&session.index_json(false).unwrap()).unwrap();
    assert!(remote["entries"][LATEST].get("sha256").is_none());
    // That base then tells a touch from an edit by hashing (see above).
    let mut next = Session::new(None, "").unwrap();
    next.load_index(rebuilt_remote().as_bytes()).unwrap();
    assert_eq!(
        next.load_base(session.local_index_after_pull().unwrap()),
        BaseLoad::Loaded
    );
    let first = plan(&mut next, EDITED_MS, &PushInput::default());
    assert_eq!(first.needs_hash, [LATEST]);
}

#[test]
fn a_hash_the_index_names_is_kept_over_the_one_written() {
    let mut session = Session::new(None, "").unwrap();
    let hashed = rebuilt_remote().replace(
        r#""size":1,"#,
        &format!(r#""size":1,"sha256":"{SHA_THREE}","#),
    );
    session.load_index(hashed.as_bytes()).unwrap();
    session
        .plan_pull(
            &encode_local(Vec::<(&str, u64, Option<i64>)>::new()),
            &PullOptions::default(),
        )
        .unwrap();
    session
        .apply_pull(&PullOutcome {
            downloaded: vec![(LATEST.into(), PULLED_MS)],
            sizes: vec![(LATEST.into(), 1)],
            hashes: vec![(LATEST.into(), SHA_TWO.into())],
            ..PullOutcome::default()
        })
        .unwrap();
    let local: serde_json::Value =
        serde_json::from_slice(&session.local_index_after_pull().unwrap()).unwrap();
    assert_eq!(local["entries"][LATEST]["sha256"], SHA_THREE);
}

#[test]
fn a_push_that_verified_a_touch_records_the_new_mtime_in_the_local_index() {
    // Swamp rewrites its catalog export with the same bytes before each push: the hash matches,
    // nothing goes up, and the local index must now hold the new mtime, or every later run
    // (and a pull once the bucket moves on) reads the untouched file as changed here.
    let mut session = session(base_after_pull(Some(SHA_TWO)));
    let mut input = PushInput::default();
    input.hashes.insert(LATEST.into(), SHA_TWO.into());
    let touched = plan(&mut session, EDITED_MS, &input);
    assert!(touched.uploads.is_empty());
    assert!(!session
        .record_push(&[], "2026-08-01T13:00:00.000Z", true)
        .unwrap());
    let local: serde_json::Value =
        serde_json::from_slice(&session.local_index_after_push().unwrap()).unwrap();
    assert_eq!(
        local["entries"][LATEST]["localMtime"],
        s3sync_core::model::time::format_iso_millis(EDITED_MS)
    );
}

#[test]
fn a_pull_names_the_base_hash_of_a_file_whose_stat_alone_moved() {
    // The bucket moved on; here only the mtime moved (same bytes as the base). The plan sets the
    // file aside with the base's hash beside it: the shim then keeps no copy and reports no
    // conflict when the local bytes are still those.
    let mut session = Session::new(None, "").unwrap();
    let newer = rebuilt_remote().replace(MODIFIED, "2026-08-02T08:00:00.000Z");
    session.load_index(newer.as_bytes()).unwrap();
    assert_eq!(
        session.load_base(base_after_pull(Some(SHA_TWO))),
        BaseLoad::Loaded
    );
    let listing = encode_local([(LATEST, 1, Some(EDITED_MS))]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    // A pointer (`latest`) merges by value, with the same base hash beside it: bytes still
    // the base's take the bucket's version whatever it names.
    assert_eq!(plan.pointers, [LATEST]);
    assert!(plan.set_aside.is_empty());
    assert_eq!(
        plan.base_hashes.get(LATEST).map(String::as_str),
        Some(SHA_TWO)
    );
    // Any other file is set aside.
    let other = "data/m/1/notes.txt";
    let mut session = Session::new(None, "").unwrap();
    session
        .load_index(newer.replace(LATEST, other).as_bytes())
        .unwrap();
    let base = String::from_utf8(base_after_pull(Some(SHA_TWO))).unwrap();
    assert_eq!(
        session.load_base(base.replace(LATEST, other).into_bytes()),
        BaseLoad::Loaded
    );
    let listing = encode_local([(other, 1, Some(EDITED_MS))]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    assert_eq!(plan.set_aside, [other]);
    assert_eq!(
        plan.base_hashes.get(other).map(String::as_str),
        Some(SHA_TWO)
    );
}

/// Another cache replaced a file with a folder (or a folder with a file): the local files in
/// the way of the bucket's shape are named, to be moved to their conflict copies first.
#[test]
fn a_pull_names_the_local_files_in_the_way_of_the_buckets_shape() {
    let remote = r#"{"version":1,"entries":{
        "logs/swap/inner.log":{"key":"logs/swap/inner.log","size":5,"lastModified":"2026-08-02T08:00:00.000Z"},
        "logs/was-folder":{"key":"logs/was-folder","size":4,"lastModified":"2026-08-02T08:00:00.000Z"},
        "logs/keep.log":{"key":"logs/keep.log","size":2,"lastModified":"2026-08-02T08:00:00.000Z"}}}"#;
    let mut session = Session::new(Some("prod"), "").unwrap();
    session.load_index(remote.as_bytes()).unwrap();
    let listing = encode_local([
        ("prod/logs/keep.log", 2, Some(PULLED_MS)),
        ("prod/logs/swap", 9, Some(PULLED_MS)),
        ("prod/logs/was-folder/a.log", 1, Some(PULLED_MS)),
        ("prod/logs/was-folder/deep/b.log", 1, Some(PULLED_MS)),
        ("prod/logs/was-folderish.log", 1, Some(PULLED_MS)),
    ]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap();
    let got: Vec<(&str, &str, &str)> = plan
        .in_the_way
        .iter()
        .map(|w| (w.rel.as_str(), w.cache_path.as_str(), w.clears.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("logs/swap", "prod/logs/swap", "prod/logs/swap"),
            (
                "logs/was-folder/a.log",
                "prod/logs/was-folder/a.log",
                "prod/logs/was-folder"
            ),
            (
                "logs/was-folder/deep/b.log",
                "prod/logs/was-folder/deep/b.log",
                "prod/logs/was-folder"
            ),
        ]
    );
    let downloads: Vec<&str> = plan.downloads.iter().map(|t| t.rel.as_str()).collect();
    assert!(downloads.contains(&"logs/swap/inner.log"));
    assert!(downloads.contains(&"logs/was-folder"));
}
