//! Passes over an index in key order (issue 15) that replaced a look-up per key, or a key
//! computed per entry: each checked against the plain version, on random indexes.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;
use s3sync_core::index::{
    carry_local_mtimes, group_by_partition_keeping, same_version, shard_json, Index, IndexEntry,
};
use s3sync_core::model::paths::partition_key;

/// A few rels from a tiny alphabet, so that both indexes share many keys.
fn rel() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "c", "a/b", "b/c"]),
        1..4,
    )
    .prop_map(|parts| parts.join("/"))
}

/// An entry whose version (size, hash) and mtimes vary over small ranges, so that same-version
/// pairs with different `localMtime`s are common.
fn entry() -> impl Strategy<Value = IndexEntry> {
    (0u64..3, prop::option::of(0u8..3), prop::option::of(0u8..4)).prop_map(|(size, sha, mtime)| {
        IndexEntry {
            size,
            sha256: sha.map(|s| format!("{s:064}")),
            local_mtime: mtime.map(|m| format!("2026-01-0{}T00:00:00.000Z", m + 1).as_str().into()),
            ..IndexEntry::default()
        }
    })
}

fn index() -> impl Strategy<Value = Index> {
    prop::collection::btree_map(rel(), entry(), 0..12).prop_map(|entries| Index {
        entries: entries.into(),
        ..Index::default()
    })
}

/// The look-up the one-pass [`carry_local_mtimes`] replaced.
fn carry_by_lookups(index: &mut Index, base: &Index) {
    for (rel, entry) in index.entries.iter_mut() {
        if let Some(b) = base.entries.get(rel).filter(|b| same_version(b, entry)) {
            entry.local_mtime.clone_from(&b.local_mtime);
        }
    }
}

/// Paths of every partition kind (data-like at each depth, workflow runs, plain subfolders, the
/// root, none) with siblings, nesting and a `--` inside a segment (two folders then share a
/// partition name).
fn partitionable_rel() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["data", "outputs", "workflow-runs", "logs", "x", ""]),
        prop::collection::vec(prop::sample::select(vec!["a", "b", "a--b", "c"]), 0..7),
    )
        .prop_map(|(head, rest)| {
            let mut parts: Vec<&str> = Vec::new();
            if !head.is_empty() {
                parts.push(head);
            }
            parts.extend(rest);
            if parts.is_empty() {
                parts.push("f");
            }
            parts.join("/")
        })
}

proptest! {
    #[test]
    fn grouping_by_runs_matches_a_key_per_entry(
        rels in prop::collection::btree_set(partitionable_rel(), 0..40),
        keep_mask in any::<u8>(),
    ) {
        let index = Index {
            entries: rels.iter().map(|r| (r.clone(), IndexEntry::default())).collect(),
            ..Index::default()
        };
        // Kept or not by a hash of the name, so both kinds are common.
        let keep = |p: &str| keep_mask & (1 << (p.len() % 8)) != 0;
        let grouped = group_by_partition_keeping(&index, keep);
        let mut shards: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut unpartitioned = Vec::new();
        for rel in &rels {
            match partition_key(rel) {
                Some(key) => shards.entry(key).or_default().push(rel.clone()),
                None => unpartitioned.push(rel.clone()),
            }
        }
        prop_assert_eq!(grouped.unpartitioned, unpartitioned);
        prop_assert_eq!(
            grouped.shards.keys().collect::<Vec<_>>(),
            shards.keys().collect::<Vec<_>>()
        );
        for (key, want) in &shards {
            let got = &grouped.shards[key];
            if keep(key) {
                prop_assert_eq!(got, want);
            } else {
                prop_assert!(got.is_empty(), "{key}: rels listed for a partition not kept");
            }
        }
    }

    #[test]
    fn carrying_mtimes_in_one_pass_matches_the_lookups(index in index(), base in index()) {
        let mut merged = index.clone();
        carry_local_mtimes(&mut merged, &base);
        let mut looked_up = index;
        carry_by_lookups(&mut looked_up, &base);
        prop_assert_eq!(merged, looked_up);
    }

    #[test]
    fn documents_render_every_entry_in_key_order(index in index(), pick in any::<u16>()) {
        // The monolith renders each entry once, under its own key, in key order, and reads back
        // as itself.
        let json: serde_json::Value = serde_json::from_slice(&index.to_compact_json()).unwrap();
        let rendered: Vec<&String> = json["entries"].as_object().unwrap().keys().collect();
        let keys: Vec<&String> = index.entries.keys().collect();
        prop_assert_eq!(rendered, keys);
        prop_assert_eq!(Index::parse(&index.to_compact_json()).unwrap(), index.clone());
        prop_assert_eq!(Index::parse(&index.to_pretty_json()).unwrap(), index.clone());
        // A shard renders the rels it is given that the index holds, each as the monolith does.
        let mut rels: Vec<String> = index
            .entries
            .keys()
            .enumerate()
            .filter(|(i, _)| pick & (1 << (i % 16)) != 0)
            .map(|(_, rel)| rel.clone())
            .collect();
        rels.push("not/in/the/index".to_string());
        let shard: serde_json::Value = serde_json::from_slice(&shard_json(&index, &rels)).unwrap();
        let want: BTreeMap<&String, serde_json::Value> = rels
            .iter()
            .filter_map(|rel| index.entries.get(rel).map(|_| (rel, json["entries"][rel].clone())))
            .collect();
        let got: BTreeMap<&String, serde_json::Value> = shard["entries"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (rels.iter().find(|r| *r == k).unwrap(), v.clone()))
            .collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(shard["version"].as_u64(), Some(1));
    }
}
