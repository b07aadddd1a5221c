//! Cutting an index into shards: the v1 mirror a v1 writer keeps beside the monolith, and the
//! v2 shard-first layout a migration writes (which refuses, rather than drops, a rel with no
//! partition).
#![cfg(not(target_arch = "wasm32"))]

use s3sync_core::index::{assemble_shards, parse_shard, ShardMeta};
use s3sync_core::runs::session::{Session, ShardFormat};

fn session(rels: &[&str]) -> Session {
    let entries: Vec<String> = rels
        .iter()
        .map(|r| {
            format!(r#""{r}":{{"key":"{r}","size":1,"lastModified":"2026-08-01T12:00:00.000Z"}}"#)
        })
        .collect();
    let body = format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(","));
    let mut session = Session::new(None, "").unwrap();
    session.load_index(body.as_bytes()).unwrap();
    session
}

const RELS: &[&str] = &[
    "data/aws/ec2/m-1/state/1/raw",
    "data/aws/ec2/m-1/state/2/raw",
    "logs/run.log",
    "workflow-runs/w-1/run.yaml",
];

#[test]
fn v2_layout_holds_every_entry_once_and_lists_every_shard() {
    let layout = session(RELS)
        .shard_layout(ShardFormat::V2 { commit_seq: 7 }, false)
        .unwrap();
    let meta = ShardMeta::parse(&layout.meta).unwrap();
    assert_eq!(meta.version, 2);
    assert_eq!(meta.commit_seq, Some(7));
    let listed: Vec<_> = layout.shards.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(meta.partitions, listed);
    let parsed = layout
        .shards
        .iter()
        .map(|(p, json)| (p.clone(), parse_shard(json, p).unwrap()))
        .collect::<Vec<_>>();
    let index = assemble_shards(parsed).unwrap();
    let rels: Vec<_> = index.entries.keys().map(String::as_str).collect();
    assert_eq!(rels, RELS);
}

#[test]
fn v2_layout_refuses_a_rel_without_partition() {
    let error =
        session(&["logs/run.log", "README"]).shard_layout(ShardFormat::V2 { commit_seq: 1 }, false);
    // `README` has one segment: partition `_root`. A tree with no rule has none.
    assert!(error.is_ok());
    let error = session(&["logs/run.log", "custom/thing"])
        .shard_layout(ShardFormat::V2 { commit_seq: 1 }, false)
        .unwrap_err();
    assert!(error.to_string().contains("custom/thing"), "{error}");
}

#[test]
fn v1_mirror_keeps_unpartitioned_rels_in_the_monolith_only() {
    let layout = session(&["logs/run.log", "custom/thing"])
        .shard_layout(ShardFormat::V1Mirror, false)
        .unwrap();
    let meta = ShardMeta::parse(&layout.meta).unwrap();
    assert_eq!(meta.version, 1);
    assert_eq!(meta.commit_seq, None);
    assert_eq!(meta.partitions, vec!["logs".to_string()]);
    assert_eq!(layout.unpartitioned, vec!["custom/thing".to_string()]);
}

#[test]
fn touched_shards_need_a_recorded_push() {
    assert!(session(RELS)
        .shard_layout(ShardFormat::V1Mirror, true)
        .is_err());
}
