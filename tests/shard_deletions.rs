//! Deletion records under the v2 shard layout. A shard carries the records of its own partition
//! beside its entries, so a delete pushed from one clone reaches the others when the bucket's
//! index lives in shards, as it does with the monolith. A partition left with no entries loses
//! its shard, as the extension expects, and its records move into `_meta.json`.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Map, Value};

use s3sync_core::index::{parse_shard_document, Index, ShardMeta};
use s3sync_core::runs::push::plan::{PushInput, Uploaded};
use s3sync_core::runs::session::{Session, ShardFormat};
use s3sync_core::safety::deletions::{deletion_of, DELETIONS_FIELD};
use s3sync_core::wire::listing::encode_local;

const OLD: &str = "2026-08-01T12:00:00.000Z";
const NOW: &str = "2026-08-08T09:30:00.000Z";
/// Past the 30-day window after [`NOW`].
const LATER: &str = "2026-09-20T09:30:00.000Z";
const MTIME: i64 = 1_785_585_600_512;
const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn shard_bytes(rels: &[&str], extra: Option<Value>) -> Vec<u8> {
    let mut entries = Map::new();
    for rel in rels {
        entries.insert(
            rel.to_string(),
            json!({"key": rel, "size": 3, "lastModified": OLD}),
        );
    }
    let mut doc = json!({"version": 1, "entries": entries});
    if let Some(Value::Object(extra)) = extra {
        doc.as_object_mut().unwrap().extend(extra);
    }
    serde_json::to_vec(&doc).unwrap()
}

fn meta(partitions: &[&str], commit_seq: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({"version": 2, "partitions": partitions, "commitSeq": commit_seq}))
        .unwrap()
}

fn load(shards: &[(String, Vec<u8>)], meta_bytes: &[u8]) -> Session {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.load_shards(meta_bytes, shards).unwrap();
    session
}

fn loaded(shards: &[(&str, &[&str])]) -> Session {
    let names: Vec<&str> = shards.iter().map(|(p, _)| *p).collect();
    let bytes: Vec<(String, Vec<u8>)> = shards
        .iter()
        .map(|(p, rels)| (p.to_string(), shard_bytes(rels, None)))
        .collect();
    load(&bytes, &meta(&names, 7))
}

fn listing(files: &[&str]) -> Vec<u8> {
    encode_local(files.iter().map(|f| (*f, 3u64, Some(MTIME))))
}

/// Pushes the delete of `gone` (tombstoned, confirmed) with `files` left in the cache.
fn push_delete(session: &mut Session, files: &[&str], gone: &str, now: &str) {
    let input = PushInput {
        tombstones: [format!("ns/{gone}")].into(),
        ..PushInput::default()
    };
    let plan = session.plan_push(&listing(files), &input).unwrap();
    let deletes: Vec<&str> = plan.deletes.iter().map(|d| d.rel.as_str()).collect();
    assert_eq!(
        deletes,
        [gone],
        "the tombstoned file is planned as a delete"
    );
    assert!(session.record_push(&[], now, true).unwrap());
}

/// Pushes the upload of `new` (a new 3-byte file) with `files` in the cache.
fn push_new(session: &mut Session, files: &[&str], new: &str, now: &str) {
    let plan = session
        .plan_push(&listing(files), &PushInput::default())
        .unwrap();
    assert_eq!(plan.uploads.len(), 1);
    let uploaded = [Uploaded {
        rel: new.into(),
        size: 3,
        mtime_ms: Some(MTIME),
        sha256: SHA.into(),
        etag: None,
    }];
    assert!(session.record_push(&uploaded, now, true).unwrap());
}

/// The committed shard set as a loadable one: the untouched shards as they were, the written
/// ones replaced, the deleted ones gone.
fn committed(
    before: &[(String, Vec<u8>)],
    written: Vec<(String, Option<Vec<u8>>)>,
) -> Vec<(String, Vec<u8>)> {
    let mut out: std::collections::BTreeMap<String, Vec<u8>> = before.iter().cloned().collect();
    for (partition, bytes) in written {
        match bytes {
            Some(bytes) => out.insert(partition, bytes),
            None => out.remove(&partition),
        };
    }
    out.into_iter().collect()
}

fn index_of(session: &Session) -> Index {
    Index::parse(&session.index_json(false).unwrap()).unwrap()
}

#[test]
fn a_delete_commits_its_record_into_the_partitions_shard() {
    let mut session = loaded(&[("logs", &["logs/a.log", "logs/b.log"])]);
    push_delete(&mut session, &["ns/logs/a.log"], "logs/b.log", NOW);
    let (written, next) = session.shard_commit().unwrap();
    assert_eq!(written.len(), 1);
    let (partition, bytes) = &written[0];
    assert_eq!(partition, "logs");
    let doc = parse_shard_document(bytes.as_ref().unwrap(), "logs", usize::MAX).unwrap();
    assert_eq!(doc.entries.keys().collect::<Vec<_>>(), ["logs/a.log"]);
    let records = doc.extra[DELETIONS_FIELD].as_object().unwrap();
    assert_eq!(records.keys().collect::<Vec<_>>(), ["logs/b.log"]);
    assert_eq!(records["logs/b.log"]["size"], 3);
    assert_eq!(records["logs/b.log"]["deletedAt"], NOW);
    assert_eq!(ShardMeta::parse(&next).unwrap().partitions, ["logs"]);
}

#[test]
fn an_emptied_partitions_shard_is_deleted_and_its_records_move_to_the_meta() {
    let before: Vec<(String, Vec<u8>)> = vec![
        ("audit".into(), shard_bytes(&["audit/x.json"], None)),
        ("logs".into(), shard_bytes(&["logs/a.log"], None)),
    ];
    let mut session = load(&before, &meta(&["audit", "logs"], 7));
    push_delete(&mut session, &["ns/logs/a.log"], "audit/x.json", NOW);
    let (written, next) = session.shard_commit().unwrap();
    let by_name: Vec<(&str, bool)> = written
        .iter()
        .map(|(p, b)| (p.as_str(), b.is_some()))
        .collect();
    assert_eq!(by_name, [("audit", false)], "the emptied shard is deleted");
    let next_meta = ShardMeta::parse(&next).unwrap();
    assert_eq!(next_meta.partitions, ["logs"]);
    assert_eq!(next_meta.commit_seq, Some(8));
    assert!(next_meta.extra[DELETIONS_FIELD]["audit/x.json"].is_object());

    // Another clone reading the committed set sees the record, in the assembled index.
    let after = committed(&before, written);
    let reader = load(&after, &next);
    let index = index_of(&reader);
    assert!(!index.entries.contains_key("audit/x.json"));
    let record = deletion_of(&index, "audit/x.json").expect("the record reloads");
    assert_eq!(record.size, 3);
    assert_eq!(record.last_modified.as_deref(), Some(OLD));
}

#[test]
fn records_ride_along_when_another_change_rewrites_their_shard() {
    let before: Vec<(String, Vec<u8>)> = vec![(
        "logs".into(),
        shard_bytes(&["logs/a.log", "logs/b.log"], None),
    )];
    let mut first = load(&before, &meta(&["logs"], 7));
    push_delete(&mut first, &["ns/logs/b.log"], "logs/a.log", NOW);
    let (written, next) = first.shard_commit().unwrap();
    let after = committed(&before, written);

    // A later push in the window adds a file to the same partition: the record is kept.
    let mut second = load(&after, &next);
    push_new(
        &mut second,
        &["ns/logs/b.log", "ns/logs/c.log"],
        "logs/c.log",
        NOW,
    );
    let (written, next) = second.shard_commit().unwrap();
    let doc = parse_shard_document(written[0].1.as_ref().unwrap(), "logs", usize::MAX).unwrap();
    assert_eq!(
        doc.entries.keys().collect::<Vec<_>>(),
        ["logs/b.log", "logs/c.log"]
    );
    assert!(doc.extra[DELETIONS_FIELD]["logs/a.log"].is_object());
    assert_eq!(ShardMeta::parse(&next).unwrap().partitions, ["logs"]);
}

#[test]
fn an_expired_record_leaves_the_meta() {
    let before: Vec<(String, Vec<u8>)> = vec![
        ("audit".into(), shard_bytes(&["audit/x.json"], None)),
        ("logs".into(), shard_bytes(&["logs/a.log"], None)),
    ];
    let mut first = load(&before, &meta(&["audit", "logs"], 7));
    push_delete(&mut first, &["ns/logs/a.log"], "audit/x.json", NOW);
    let (written, next) = first.shard_commit().unwrap();
    let after = committed(&before, written);

    // Past the window, an unrelated push prunes the record: `audit` has nothing left.
    let mut later = load(&after, &next);
    push_new(
        &mut later,
        &["ns/logs/a.log", "ns/logs/b.log"],
        "logs/b.log",
        LATER,
    );
    let (written, next) = later.shard_commit().unwrap();
    let names: Vec<&str> = written.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["logs"]);
    let next_meta = ShardMeta::parse(&next).unwrap();
    assert_eq!(next_meta.partitions, ["logs"]);
    assert!(!next_meta.extra.contains_key(DELETIONS_FIELD));
    let reloaded = load(&committed(&after, written), &next);
    assert!(deletion_of(&index_of(&reloaded), "audit/x.json").is_none());
}

#[test]
fn a_record_read_from_a_shard_is_forgotten_when_the_rel_is_written_again() {
    let record = json!({DELETIONS_FIELD: {"logs/a.log": {"size": 3, "lastModified": OLD, "deletedAt": NOW}}});
    let before: Vec<(String, Vec<u8>)> = vec![("logs".into(), shard_bytes(&[], Some(record)))];
    let mut session = load(&before, &meta(&["logs"], 7));
    assert!(deletion_of(&index_of(&session), "logs/a.log").is_some());
    push_new(&mut session, &["ns/logs/a.log"], "logs/a.log", NOW);
    let (written, _) = session.shard_commit().unwrap();
    let doc = parse_shard_document(written[0].1.as_ref().unwrap(), "logs", usize::MAX).unwrap();
    assert!(doc.entries.contains_key("logs/a.log"));
    assert!(
        !doc.extra.contains_key(DELETIONS_FIELD),
        "a rel written again is no longer deleted"
    );
}

#[test]
fn a_hostile_records_field_is_ignored_not_fatal() {
    for hostile in [
        json!({DELETIONS_FIELD: "not an object"}),
        json!({DELETIONS_FIELD: [1, 2, 3]}),
        json!({DELETIONS_FIELD: {"logs/a.log": "not a record"}}),
    ] {
        let before: Vec<(String, Vec<u8>)> =
            vec![("logs".into(), shard_bytes(&["logs/b.log"], Some(hostile)))];
        let session = load(&before, &meta(&["logs"], 7));
        let index = index_of(&session);
        assert!(index.entries.contains_key("logs/b.log"));
        assert!(deletion_of(&index, "logs/a.log").is_none());
    }
}

#[test]
fn moving_a_monolith_to_shards_carries_its_records() {
    let monolith = json!({
        "version": 1,
        "entries": {"logs/a.log": {"key": "logs/a.log", "size": 3, "lastModified": OLD}},
        DELETIONS_FIELD: {
            "logs/b.log": {"size": 3, "lastModified": OLD, "deletedAt": NOW},
            "audit/x.json": {"size": 4, "lastModified": OLD, "deletedAt": NOW},
        },
    });
    let mut session = Session::new(Some("ns"), "").unwrap();
    session
        .load_index(&serde_json::to_vec(&monolith).unwrap())
        .unwrap();
    let layout = session
        .shard_layout(ShardFormat::V2 { commit_seq: 1 }, false)
        .unwrap();
    let names: Vec<&str> = layout.shards.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["logs"], "no shard for a partition with no entries");
    let meta = ShardMeta::parse(&layout.meta).unwrap();
    assert_eq!(meta.partitions, ["logs"]);
    assert!(meta.extra[DELETIONS_FIELD]["audit/x.json"].is_object());
    let logs = parse_shard_document(&layout.shards[0].1, "logs", usize::MAX).unwrap();
    assert!(logs.extra[DELETIONS_FIELD]["logs/b.log"].is_object());
    let reader = load(&layout.shards, &layout.meta);
    let index = index_of(&reader);
    assert_eq!(deletion_of(&index, "logs/b.log").unwrap().size, 3);
    assert_eq!(deletion_of(&index, "audit/x.json").unwrap().size, 4);

    // The v1 mirror needs none: the monolith it mirrors keeps them.
    let mirror = session.shard_layout(ShardFormat::V1Mirror, false).unwrap();
    for (partition, bytes) in &mirror.shards {
        let doc = parse_shard_document(bytes, partition, usize::MAX).unwrap();
        assert!(!doc.extra.contains_key(DELETIONS_FIELD));
    }
}

#[test]
fn a_record_stays_in_the_shard_it_was_read_from() {
    // `audit/x.json` belongs to `audit` by its key, but `logs` recorded it: a commit of `logs`
    // that moved it out would list an `audit` shard it never wrote.
    let record = json!({DELETIONS_FIELD: {"audit/x.json": {"size": 3, "lastModified": OLD, "deletedAt": NOW}}});
    let before: Vec<(String, Vec<u8>)> =
        vec![("logs".into(), shard_bytes(&["logs/a.log"], Some(record)))];
    let mut session = load(&before, &meta(&["logs"], 7));
    push_new(
        &mut session,
        &["ns/logs/a.log", "ns/logs/b.log"],
        "logs/b.log",
        NOW,
    );
    let (written, next) = session.shard_commit().unwrap();
    assert_eq!(written.len(), 1);
    let doc = parse_shard_document(written[0].1.as_ref().unwrap(), "logs", usize::MAX).unwrap();
    assert!(doc.extra[DELETIONS_FIELD]["audit/x.json"].is_object());
    assert_eq!(ShardMeta::parse(&next).unwrap().partitions, ["logs"]);
}

#[test]
fn a_record_in_an_untouched_shard_stays_there_and_is_not_copied_to_the_meta() {
    let record = json!({DELETIONS_FIELD: {"logs/z.log": {"size": 3, "lastModified": OLD, "deletedAt": NOW}}});
    let before: Vec<(String, Vec<u8>)> = vec![
        ("audit".into(), shard_bytes(&["audit/x.json"], None)),
        ("logs".into(), shard_bytes(&["logs/a.log"], Some(record))),
    ];
    let mut session = load(&before, &meta(&["audit", "logs"], 7));
    push_new(
        &mut session,
        &["ns/audit/x.json", "ns/audit/y.json", "ns/logs/a.log"],
        "audit/y.json",
        NOW,
    );
    let (written, next) = session.shard_commit().unwrap();
    let names: Vec<&str> = written.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["audit"]);
    let next_meta = ShardMeta::parse(&next).unwrap();
    assert!(!next_meta.extra.contains_key(DELETIONS_FIELD));
    let reloaded = load(&committed(&before, written), &next);
    assert!(deletion_of(&index_of(&reloaded), "logs/z.log").is_some());
}

#[test]
fn a_record_in_the_meta_moves_into_its_shard_once_the_partition_has_entries_again() {
    let before: Vec<(String, Vec<u8>)> = vec![("logs".into(), shard_bytes(&["logs/a.log"], None))];
    let meta_bytes = serde_json::to_vec(&json!({
        "version": 2, "partitions": ["logs"], "commitSeq": 7,
        DELETIONS_FIELD: {"audit/x.json": {"size": 3, "lastModified": OLD, "deletedAt": NOW}},
    }))
    .unwrap();
    let mut session = load(&before, &meta_bytes);
    assert!(deletion_of(&index_of(&session), "audit/x.json").is_some());
    push_new(
        &mut session,
        &["ns/audit/y.json", "ns/logs/a.log"],
        "audit/y.json",
        NOW,
    );
    let (written, next) = session.shard_commit().unwrap();
    let audit = parse_shard_document(written[0].1.as_ref().unwrap(), "audit", usize::MAX).unwrap();
    assert!(audit.entries.contains_key("audit/y.json"));
    assert!(audit.extra[DELETIONS_FIELD]["audit/x.json"].is_object());
    let next_meta = ShardMeta::parse(&next).unwrap();
    assert_eq!(next_meta.partitions, ["audit", "logs"]);
    assert!(!next_meta.extra.contains_key(DELETIONS_FIELD));
}
