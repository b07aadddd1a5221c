//! Index formats v1 and v2: lossless round trips, byte compatibility with the JavaScript
//! writer, and hostile inputs that must fail with a stable code instead of panicking.
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::error::CoreError;
use s3sync_core::index::{
    assemble_shards, group_by_partition, parse_shard, shard_json, Entries, Index, IndexEntry,
    ShardMeta, MAX_SAFE_INTEGER,
};

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("fixtures/index/", $name)).as_slice()
    };
}

/// Every v1 fixture, by name.
const V1_FIXTURES: &[(&str, &[u8])] = &[
    ("v1-full.json", fixture!("v1-full.json")),
    ("v1-old-writer.json", fixture!("v1-old-writer.json")),
    ("v1-unknown-fields.json", fixture!("v1-unknown-fields.json")),
    ("v1-empty-entries.json", fixture!("v1-empty-entries.json")),
    (
        "v1-no-version-no-last-pulled.json",
        fixture!("v1-no-version-no-last-pulled.json"),
    ),
    ("v1-js-order.json", fixture!("v1-js-order.json")),
];

fn parse(bytes: &[u8]) -> Index {
    Index::parse(bytes).unwrap_or_else(|e| {
        panic!(
            "parse failed: {e}\n{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        )
    })
}

fn corrupt_detail(bytes: &[u8]) -> String {
    match Index::parse(bytes) {
        Err(error @ CoreError::IndexCorrupt { .. }) => {
            assert_eq!(error.code(), "index-corrupt");
            let message = error.to_string();
            assert!(message.starts_with("index is corrupt: "), "{message}");
            message
        }
        other => panic!(
            "expected index-corrupt for {:?}, got {other:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        ),
    }
}

fn entry(index: &Index, rel: &str) -> IndexEntry {
    index
        .entries
        .get(rel)
        .unwrap_or_else(|| panic!("no entry {rel:?}"))
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Round trips

#[test]
fn every_v1_fixture_round_trips_through_compact_and_pretty() {
    for (name, bytes) in V1_FIXTURES {
        let index = parse(bytes);
        let compact = index.to_compact_json();
        let pretty = index.to_pretty_json();
        assert_eq!(parse(&compact), index, "{name}: compact round trip");
        assert_eq!(parse(&pretty), index, "{name}: pretty round trip");
        // Serializing twice gives the same bytes (deterministic output).
        assert_eq!(parse(&compact).to_compact_json(), compact, "{name}");
        assert_eq!(parse(&pretty).to_pretty_json(), pretty, "{name}");
        // Both are the same document.
        let a: serde_json::Value = serde_json::from_slice(&compact).unwrap();
        let b: serde_json::Value = serde_json::from_slice(&pretty).unwrap();
        assert_eq!(a, b, "{name}");
        assert!(!compact.contains(&b'\n'), "{name}: compact has no newline");
        assert!(!pretty.ends_with(b"\n"), "{name}: no trailing newline");
    }
}

#[test]
fn full_fixture_reads_every_field() {
    let index = parse(fixture!("v1-full.json"));
    assert_eq!(
        index.last_pulled.as_deref(),
        Some("2026-08-07T10:00:00.000Z")
    );
    assert_eq!(index.entries.len(), 3);
    assert!(index.extra.is_empty());
    let raw = entry(&index, "data/x/y/m1/state/1/raw");
    assert_eq!(
        raw,
        IndexEntry {
            size: 812,
            last_modified: Some("2026-08-01T12:00:00.000Z".into()),
            local_mtime: Some("2026-08-01T12:00:00.512Z".into()),
            sha256: Some("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into()),
            extra: None,
        }
    );
    assert_eq!(entry(&index, "data/x/y/m1/state/1/metadata.yaml").size, 0);
    // The largest size a JavaScript number holds exactly is accepted.
    assert_eq!(
        entry(&index, "workflow-runs/wf-1/run-1.yaml").size,
        MAX_SAFE_INTEGER
    );
}

#[test]
fn optional_fields_may_be_absent() {
    let index = parse(fixture!("v1-old-writer.json"));
    for e in index.entries.values() {
        assert_eq!(e.local_mtime, None);
        assert_eq!(e.sha256, None);
        assert!(e.last_modified.is_some());
        assert!(e.extra.is_none());
    }
    // Absent optional fields stay absent on output (no `null`s appear).
    let text = String::from_utf8(index.to_compact_json()).unwrap();
    assert!(!text.contains("localMtime"), "{text}");
    assert!(!text.contains("sha256"), "{text}");
    assert!(!text.contains("null"), "{text}");

    // A writer from before versioning: no version, no lastPulled, no key, no dates.
    let index = parse(fixture!("v1-no-version-no-last-pulled.json"));
    assert_eq!(index.last_pulled, None);
    assert_eq!(
        entry(&index, "data/a/b/c/1/raw"),
        IndexEntry {
            size: 1,
            ..IndexEntry::default()
        }
    );
    // It is written back as version 1 with the key repeated, as the extension writes it.
    assert_eq!(
        index.to_compact_json(),
        br#"{"version":1,"entries":{"data/a/b/c/1/raw":{"key":"data/a/b/c/1/raw","size":1}}}"#
    );
    // Explicit nulls read as absent.
    let index = parse(
        br#"{"version":1,"lastPulled":null,"entries":{"a":{"key":"a","size":1,"lastModified":null,"localMtime":null,"sha256":null}}}"#,
    );
    assert_eq!(index.last_pulled, None);
    assert_eq!(
        entry(&index, "a"),
        IndexEntry {
            size: 1,
            ..IndexEntry::default()
        }
    );
}

#[test]
fn unknown_fields_are_kept_at_top_level_and_in_entries() {
    let index = parse(fixture!("v1-unknown-fields.json"));
    let keys: Vec<&str> = index.extra.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["commitSeq", "flags", "writer"]);
    assert_eq!(
        index.extra["writer"],
        serde_json::json!({"name": "swamp", "version": "1.2.3"})
    );
    assert_eq!(index.extra["flags"], serde_json::json!([true, null, "x"]));
    let raw = entry(&index, "data/x/y/m1/state/1/raw");
    let extra = raw.extra.expect("entry extras kept");
    assert_eq!(extra.len(), 3);
    assert_eq!(extra["etag"], "\"d41d8cd98f00b204e9800998ecf8427e-2\"");
    assert_eq!(
        extra["tags"],
        serde_json::json!({"owner": "team-a", "retain": true, "n": [1, 2, 3]})
    );
    // `key` is consumed (it repeats the map key), never stored as an extra.
    assert!(!extra.contains_key("key"));
    let note = entry(&index, "files/é/日本語.txt").extra.unwrap();
    assert_eq!(note["note"], "tab\there \"quoted\" back\\slash \u{1}");

    // Unknown fields survive a write and a re-read, in both forms.
    let again = parse(&index.to_compact_json());
    assert_eq!(again.extra, index.extra);
    assert_eq!(again, index);
}

#[test]
fn empty_entries_object() {
    let index = parse(fixture!("v1-empty-entries.json"));
    assert!(index.entries.is_empty());
    assert_eq!(
        index.to_compact_json(),
        br#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{}}"#
    );
    assert_eq!(
        String::from_utf8(index.to_pretty_json()).unwrap(),
        "{\n  \"version\": 1,\n  \"lastPulled\": \"2026-08-07T10:00:00.000Z\",\n  \"entries\": {}\n}"
    );
    assert_eq!(
        Index::default().to_compact_json(),
        br#"{"version":1,"entries":{}}"#
    );
}

/// The remote copy is what JavaScript's `JSON.stringify(index)` writes, byte for byte, and the
/// local copy what `JSON.stringify(index, null, 2)` writes (the fixture file itself is that
/// output: two-space indent, no trailing newline).
#[test]
fn output_is_byte_identical_to_json_stringify() {
    let fixture = fixture!("v1-js-order.json");
    let index = parse(fixture);
    // Written by hand, field order key, size, lastModified, localMtime, sha256, then unknown
    // fields; `\t`, `"`, `\` and control characters escaped as JavaScript escapes them.
    let expected = concat!(
        r#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{"#,
        r#""data/x/y/m1/state/1/metadata.yaml":{"key":"data/x/y/m1/state/1/metadata.yaml","size":0,"lastModified":"2026-08-01T12:00:00.000Z"},"#,
        r#""data/x/y/m1/state/1/raw":{"key":"data/x/y/m1/state/1/raw","size":812,"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"2026-08-01T12:00:00.512Z","sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},"#,
        r#""files/é/日本語.txt":{"key":"files/é/日本語.txt","size":5,"lastModified":"2026-08-03T00:00:00.000Z","note":"tab\there \"q\" back\\slash \u0001 \u001f","parts":[1,2],"tags":{}}"#,
        r#"}}"#,
    );
    assert_eq!(
        String::from_utf8(index.to_compact_json()).unwrap(),
        expected
    );
    assert_eq!(
        String::from_utf8(index.to_pretty_json()).unwrap(),
        String::from_utf8(fixture.to_vec()).unwrap(),
        "v1-js-order.json must stay exactly JSON.stringify(x, null, 2) output, with no \
         trailing newline: keep tests/fixtures/ out of formatters"
    );
}

#[test]
fn entries_are_written_in_sorted_order() {
    let index = parse(br#"{"entries":{"b":{"size":1},"a/z":{"size":2},"a":{"size":3}}}"#);
    let text = String::from_utf8(index.to_compact_json()).unwrap();
    let a = text.find(r#""a":"#).unwrap();
    let az = text.find(r#""a/z":"#).unwrap();
    let b = text.find(r#""b":"#).unwrap();
    assert!(a < az && az < b, "{text}");
}

#[test]
fn scrub_internal_removes_only_internal_entries() {
    let mut index = parse(
        br#"{"entries":{
            "_index/x.json":{"size":1},
            "data/a/.lock":{"size":1},
            ".datastore-index.json":{"size":1},
            "data/a/b/c":{"size":1},
            ".catalog-export.json":{"size":3}
        }}"#,
    );
    let removed = index.scrub_internal();
    assert_eq!(
        removed,
        vec![".datastore-index.json", "_index/x.json", "data/a/.lock"]
    );
    let kept: Vec<&str> = index.entries.keys().map(String::as_str).collect();
    assert_eq!(kept, vec![".catalog-export.json", "data/a/b/c"]);
    assert!(index.scrub_internal().is_empty(), "idempotent");
}

// ---------------------------------------------------------------------------------------------
// v2: meta and shards

#[test]
fn meta_v1_and_v2() {
    let v1 = ShardMeta::parse(fixture!("meta-v1.json")).unwrap();
    assert_eq!(v1.version, 1);
    assert_eq!(
        v1.partitions,
        vec!["_root", "data--x--y--m1", "workflow-runs--wf-1"]
    );
    assert_eq!(v1.commit_seq, None);
    assert_eq!(v1.last_compacted, None);
    assert!(v1.extra.is_empty());

    let v2 = ShardMeta::parse(fixture!("meta-v2.json")).unwrap();
    assert_eq!(v2.version, 2);
    assert_eq!(v2.commit_seq, Some(7));
    assert_eq!(
        v2.last_compacted.as_deref(),
        Some("2026-08-06T00:00:00.000Z")
    );
    assert_eq!(v2.extra["compactor"], serde_json::json!({"host": "ci"}));

    let minimal = ShardMeta::parse(fixture!("meta-v2-minimal.json")).unwrap();
    assert_eq!(minimal.commit_seq, Some(0));
    assert!(minimal.partitions.is_empty());

    for meta in [v1, v2, minimal] {
        let json = meta.to_json();
        assert_eq!(ShardMeta::parse(&json).unwrap(), meta, "meta round trip");
    }
    // The meta file is written compact and says the same as the file it was read from.
    let written = ShardMeta::parse(fixture!("meta-v2.json"))
        .unwrap()
        .to_json();
    assert!(!written.contains(&b'\n') && !written.contains(&b' '));
    let written: serde_json::Value = serde_json::from_slice(&written).unwrap();
    let original: serde_json::Value = serde_json::from_slice(fixture!("meta-v2.json")).unwrap();
    assert_eq!(written, original);
}

#[test]
fn malformed_meta_is_refused_with_a_code() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "index-corrupt"),
        (b"[]\n", "index-corrupt"),
        (b"{\"version\":2,\"partitions\":[]", "index-corrupt"),
        (b"{\"partitions\":[]}", "index-corrupt"),
        (b"{\"version\":\"2\",\"partitions\":[]}", "index-corrupt"),
        (b"{\"version\":2.5,\"partitions\":[]}", "index-corrupt"),
        (b"{\"version\":2}", "index-corrupt"),
        (b"{\"version\":2,\"partitions\":{}}", "index-corrupt"),
        (b"{\"version\":2,\"partitions\":[1]}", "index-corrupt"),
        (
            b"{\"version\":2,\"partitions\":[],\"commitSeq\":-1}",
            "index-corrupt",
        ),
        (
            b"{\"version\":2,\"partitions\":[],\"commitSeq\":\"7\"}",
            "index-corrupt",
        ),
        (
            b"{\"version\":2,\"partitions\":[],\"lastCompacted\":7}",
            "index-corrupt",
        ),
        (
            b"{\"version\":3,\"partitions\":[]}",
            "index-version-unsupported",
        ),
        (
            b"{\"version\":0,\"partitions\":[]}",
            "index-version-unsupported",
        ),
    ];
    for (bytes, code) in cases {
        let result = ShardMeta::parse(bytes);
        assert_eq!(
            result.as_ref().map_err(CoreError::code).err(),
            Some(*code),
            "{:?} gave {result:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let error = ShardMeta::parse(b"{\"version\":3,\"partitions\":[]}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unsupported index version 3 in _index/_meta.json"
    );
}

fn shards() -> Vec<(String, Entries)> {
    [
        ("_root", fixture!("shard-_root.json")),
        ("data--x--y--m1", fixture!("shard-data--x--y--m1.json")),
        (
            "workflow-runs--wf-1",
            fixture!("shard-workflow-runs--wf-1.json"),
        ),
    ]
    .into_iter()
    .map(|(partition, bytes)| {
        (
            partition.to_string(),
            parse_shard(bytes, partition).unwrap(),
        )
    })
    .collect()
}

#[test]
fn shards_assemble_group_and_round_trip() {
    let index = assemble_shards(shards()).unwrap();
    assert_eq!(index.entries.len(), 4);
    assert_eq!(index.last_pulled, None);
    assert_eq!(
        entry(&index, "README").local_mtime.as_deref(),
        Some("2026-01-01T00:00:00.001Z")
    );

    // Grouping gives back the partitions the meta file lists, with the same rels.
    let grouped = group_by_partition(&index);
    assert!(grouped.unpartitioned.is_empty());
    let meta = ShardMeta::parse(fixture!("meta-v2.json")).unwrap();
    assert_eq!(
        grouped.shards.keys().cloned().collect::<Vec<_>>(),
        meta.partitions
    );
    for (partition, entries) in shards() {
        let rels = &grouped.shards[&partition];
        assert_eq!(
            rels,
            &entries.keys().cloned().collect::<Vec<_>>(),
            "{partition}"
        );
        // shard_json writes exactly the shard's entries, and parse_shard reads them back.
        let json = shard_json(&index, rels);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(
            parse_shard(&json, &partition).unwrap(),
            entries,
            "{partition}"
        );
    }
    // A rel not in the index is skipped, not invented.
    let json = shard_json(&index, &["README".into(), "missing".into()]);
    assert_eq!(
        String::from_utf8(json).unwrap(),
        r#"{"version":1,"entries":{"README":{"key":"README","size":3,"lastModified":"2026-01-01T00:00:00.000Z","localMtime":"2026-01-01T00:00:00.001Z"}}}"#
    );
}

#[test]
fn unpartitionable_entries_are_reported_not_dropped() {
    let mut index = assemble_shards(shards()).unwrap();
    for rel in [
        "secrets/vault.key",
        "data/a/b",
        "workflow-runs/x",
        "stray/a/b/c",
    ] {
        index.entries.insert(
            rel.into(),
            IndexEntry {
                size: 1,
                ..IndexEntry::default()
            },
        );
    }
    let grouped = group_by_partition(&index);
    assert_eq!(
        grouped.unpartitioned,
        vec![
            "data/a/b",
            "secrets/vault.key",
            "stray/a/b/c",
            "workflow-runs/x"
        ]
    );
    let partitioned: usize = grouped.shards.values().map(Vec::len).sum();
    assert_eq!(
        partitioned + grouped.unpartitioned.len(),
        index.entries.len()
    );
}

#[test]
fn a_rel_in_two_shards_is_corrupt() {
    let mut twice = shards();
    let (_, root) = twice[0].clone();
    twice.push(("_root-copy".into(), root));
    let error = assemble_shards(twice).unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    let message = error.to_string();
    assert!(message.contains("\"README\""), "{message}");
    assert!(message.contains("_root-copy"), "{message}");
}

#[test]
fn malformed_shards_name_their_file() {
    let error = parse_shard(b"{\"version\":2,\"entries\":{}}", "data--x").unwrap_err();
    assert_eq!(error.code(), "index-version-unsupported");
    assert!(error.to_string().contains("_index/data--x.json"), "{error}");

    let error = parse_shard(b"{\"version\":1}", "data--x").unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    assert!(error.to_string().contains("_index/data--x.json"), "{error}");

    let error = parse_shard(b"{\"entries\":{\"a\":{\"size\":-1}}}", "p").unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
    assert!(error.to_string().contains("\"a\""), "{error}");
    // No version is read as version 1, as for the monolith.
    assert_eq!(
        parse_shard(b"{\"entries\":{}}", "p").unwrap(),
        Entries::new()
    );
}

// ---------------------------------------------------------------------------------------------
// Hostile and malformed monoliths

#[test]
fn malformed_monoliths_are_corrupt_never_empty() {
    let cases: &[(&str, &[u8])] = &[
        ("empty input", b""),
        ("whitespace", b"  \n"),
        ("json null", b"null"),
        ("a string", b"\"index\""),
        ("the 3-byte emptied catalog", b"[]\n"),
        (
            "truncated",
            br#"{"version":1,"entries":{"a":{"key":"a","size":1"#,
        ),
        (
            "truncated after a complete entry",
            br#"{"version":1,"entries":{"a":{"key":"a","size":1}}"#,
        ),
        ("trailing garbage", br#"{"version":1,"entries":{}} x"#),
        (
            "two documents",
            br#"{"version":1,"entries":{}}{"version":1,"entries":{}}"#,
        ),
        (
            "not utf-8",
            b"{\"version\":1,\"entries\":{\"\xff\":{\"size\":1}}}",
        ),
        (
            "missing entries",
            br#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z"}"#,
        ),
        ("entries as array", br#"{"version":1,"entries":[]}"#),
        ("entries as null", br#"{"version":1,"entries":null}"#),
        ("entry as number", br#"{"version":1,"entries":{"a":1}}"#),
        ("entry as array", br#"{"version":1,"entries":{"a":[]}}"#),
        (
            "size missing",
            br#"{"version":1,"entries":{"a":{"key":"a"}}}"#,
        ),
        (
            "size null",
            br#"{"version":1,"entries":{"a":{"key":"a","size":null}}}"#,
        ),
        (
            "size as string",
            br#"{"version":1,"entries":{"a":{"key":"a","size":"812"}}}"#,
        ),
        (
            "negative size",
            br#"{"version":1,"entries":{"a":{"key":"a","size":-1}}}"#,
        ),
        (
            "fractional size",
            br#"{"version":1,"entries":{"a":{"key":"a","size":1.5}}}"#,
        ),
        (
            "size 1.0",
            br#"{"version":1,"entries":{"a":{"key":"a","size":1.0}}}"#,
        ),
        (
            "size in exponent form",
            br#"{"version":1,"entries":{"a":{"key":"a","size":1e3}}}"#,
        ),
        (
            "size 2^53",
            br#"{"version":1,"entries":{"a":{"key":"a","size":9007199254740992}}}"#,
        ),
        (
            "size above u64",
            br#"{"version":1,"entries":{"a":{"key":"a","size":18446744073709551616}}}"#,
        ),
        (
            "key mismatch",
            br#"{"version":1,"entries":{"a":{"key":"b","size":1}}}"#,
        ),
        (
            "key not a string",
            br#"{"version":1,"entries":{"a":{"key":1,"size":1}}}"#,
        ),
        (
            "lastModified not a string",
            br#"{"version":1,"entries":{"a":{"size":1,"lastModified":5}}}"#,
        ),
        (
            "localMtime not a string",
            br#"{"version":1,"entries":{"a":{"size":1,"localMtime":{}}}}"#,
        ),
        (
            "sha256 not a string",
            br#"{"version":1,"entries":{"a":{"size":1,"sha256":[]}}}"#,
        ),
        (
            "lastPulled not a string",
            br#"{"version":1,"lastPulled":0,"entries":{}}"#,
        ),
        ("version as string", br#"{"version":"1","entries":{}}"#),
        ("version 1.0", br#"{"version":1.0,"entries":{}}"#),
        ("version null", br#"{"version":null,"entries":{}}"#),
        ("version negative", br#"{"version":-1,"entries":{}}"#),
        (
            "duplicate entry key",
            br#"{"version":1,"entries":{"a":{"size":1},"a":{"size":1}}}"#,
        ),
        (
            "duplicate entry field",
            br#"{"version":1,"entries":{"a":{"size":1,"size":2}}}"#,
        ),
        (
            "duplicate unknown entry field",
            br#"{"version":1,"entries":{"a":{"size":1,"x":1,"x":1}}}"#,
        ),
        (
            "duplicate version",
            br#"{"version":1,"version":1,"entries":{}}"#,
        ),
        (
            "duplicate entries",
            br#"{"version":1,"entries":{},"entries":{}}"#,
        ),
        (
            "duplicate lastPulled",
            br#"{"version":1,"lastPulled":"a","lastPulled":"a","entries":{}}"#,
        ),
        (
            "duplicate unknown field",
            br#"{"version":1,"x":1,"x":2,"entries":{}}"#,
        ),
        ("nul byte", b"{\"version\":1,\0\"entries\":{}}"),
        (
            "unescaped control in string",
            b"{\"version\":1,\"entries\":{\"a\nb\":{\"size\":1}}}",
        ),
        (
            "lone surrogate escape",
            br#"{"version":1,"entries":{"\ud800":{"size":1}}}"#,
        ),
    ];
    for (what, bytes) in cases {
        let message = corrupt_detail(bytes);
        assert!(message.len() < 2_000, "{what}: the message stays short");
    }
}

#[test]
fn corrupt_messages_name_the_entry() {
    for (bytes, needles) in [
        (
            &br#"{"version":1,"entries":{"data/x/raw":{"key":"data/y/raw","size":1}}}"#[..],
            &["\"data/x/raw\"", "\"data/y/raw\"", "not its map key"][..],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":"812"}}}"#,
            &["\"data/x/raw\"", "size"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":-5}}}"#,
            &["\"data/x/raw\"", "negative"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":1.5}}}"#,
            &["\"data/x/raw\"", "non-negative integer"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":9007199254740992}}}"#,
            &["\"data/x/raw\"", "2^53-1"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":1},"data/x/raw":{"size":1}}}"#,
            &["\"data/x/raw\"", "appears twice"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":1,"size":1}}}"#,
            &["\"data/x/raw\"", "\"size\"", "appears twice"],
        ),
        (
            br#"{"version":1,"version":1,"entries":{}}"#,
            &["\"version\"", "appears twice"],
        ),
        (
            br#"{"version":1,"entries":{"data/x/raw":{"size":1,"sha256":5}}}"#,
            &["\"data/x/raw\"", "sha256"],
        ),
    ] {
        let message = corrupt_detail(bytes);
        for needle in needles {
            assert!(message.contains(needle), "{message:?} lacks {needle:?}");
        }
    }
}

#[test]
fn unknown_versions_are_unsupported_not_corrupt() {
    for (bytes, version) in [
        (&br#"{"version":2,"entries":{}}"#[..], 2),
        (br#"{"version":0,"entries":{}}"#, 0),
        (br#"{"version":99,"entries":{"a":{"size":1}}}"#, 99),
    ] {
        let error = Index::parse(bytes).unwrap_err();
        assert_eq!(
            error,
            CoreError::IndexVersionUnsupported {
                file: ".datastore-index.json".into(),
                version
            }
        );
        assert_eq!(error.code(), "index-version-unsupported");
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let depth = 100_000;
    let open = "[".repeat(depth);
    let close = "]".repeat(depth);
    let objects = "{\"a\":".repeat(depth);
    let hostile: Vec<Vec<u8>> = vec![
        // At the top level.
        open.clone().into_bytes(),
        format!("{open}{close}").into_bytes(),
        // As an unknown top-level field (kept as a JSON value, so read recursively).
        format!("{{\"version\":1,\"x\":{open}{close},\"entries\":{{}}}}").into_bytes(),
        format!("{{\"version\":1,\"x\":{objects}1").into_bytes(),
        // As an unknown field of an entry.
        format!("{{\"version\":1,\"entries\":{{\"a\":{{\"size\":1,\"x\":{open}{close}}}}}}}")
            .into_bytes(),
        // In place of the version and the size.
        format!("{{\"version\":{open}{close},\"entries\":{{}}}}").into_bytes(),
        format!("{{\"entries\":{{\"a\":{{\"size\":{open}{close}}}}}}}").into_bytes(),
    ];
    for bytes in &hostile {
        corrupt_detail(bytes);
        assert!(ShardMeta::parse(bytes).is_err());
        assert!(parse_shard(bytes, "p").is_err());
    }
    // Nesting within serde_json's limit is fine in an unknown field.
    let ok = format!(
        "{{\"version\":1,\"x\":{}{},\"entries\":{{}}}}",
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(Index::parse(ok.as_bytes()).is_ok());
}

#[test]
fn fifty_megabytes_of_junk_is_refused() {
    const TARGET: usize = 50 * 1024 * 1024;
    let unit = b"\"junk\",1,null,{\"k\":[true,false]},-0.5e3,";
    let mut junk = Vec::with_capacity(TARGET + unit.len() + 2);
    junk.push(b'[');
    while junk.len() < TARGET {
        junk.extend_from_slice(unit);
    }
    junk.extend_from_slice(b"0]");
    assert!(junk.len() >= TARGET);
    // A well-formed JSON array, but not an index.
    corrupt_detail(&junk);
    assert!(ShardMeta::parse(&junk).is_err());
    // The same junk where the entries belong.
    let mut inside = br#"{"version":1,"entries":"#.to_vec();
    inside.extend_from_slice(&junk);
    inside.push(b'}');
    corrupt_detail(&inside);
    // And as an unknown field that never ends (truncated after 50 MB).
    let mut unterminated = br#"{"version":1,"entries":{},"junk":"#.to_vec();
    unterminated.extend_from_slice(&junk[..junk.len() - 1]);
    corrupt_detail(&unterminated);
}

#[test]
fn errors_are_stable_values() {
    let a = Index::parse(b"[]\n").unwrap_err();
    let b = Index::parse(b"[]\n").unwrap_err();
    assert_eq!(a, b, "the same input gives the same error");
    let message = a.to_string();
    assert!(message.starts_with("index is corrupt: "), "{message}");
    assert!(!message.ends_with('.'), "{message}");
}
