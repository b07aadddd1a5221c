//! The v2 shard layout: `_index/_meta.json`, then shards, separated by 0xFF. Whatever parses is
//! assembled, regrouped by partition, and written back out shard by shard; each written shard
//! must parse back to the same entries.
#![no_main]

use fuzz_support::fields;
use libfuzzer_sys::fuzz_target;
use s3sync_core::index::{assemble_shards, group_by_partition, parse_shard, shard_json, ShardMeta};

fuzz_target!(|data: &[u8]| {
    let parts = fields(data);
    let meta = ShardMeta::parse(parts[0]).ok();
    if let Some(meta) = &meta {
        assert!(meta.version == 1 || meta.version == 2);
        let written = meta.to_json();
        let again = ShardMeta::parse(&written).unwrap_or_else(|e| {
            panic!(
                "meta json does not parse back: {e}: {}",
                String::from_utf8_lossy(&written)
            )
        });
        assert_eq!(&again, meta, "meta round trip changed it");
    }
    // Shard names come from the meta's partitions when there are enough, else made up.
    let names: Vec<String> = (0..parts.len() - 1)
        .map(|i| {
            meta.as_ref()
                .and_then(|m| m.partitions.get(i).cloned())
                .unwrap_or_else(|| format!("p{i}"))
        })
        .collect();
    let mut shards = Vec::new();
    for (name, bytes) in names.iter().zip(&parts[1..]) {
        if let Ok(entries) = parse_shard(bytes, name) {
            shards.push((name.clone(), entries));
        }
    }
    let total: usize = shards.iter().map(|(_, e)| e.len()).sum();
    let Ok(index) = assemble_shards(shards.clone()) else {
        // Only a rel in two shards is refused.
        let mut seen = std::collections::BTreeSet::new();
        let duplicate = shards
            .iter()
            .flat_map(|(_, e)| e.keys())
            .any(|rel| !seen.insert(rel));
        assert!(
            duplicate,
            "assemble_shards refused shards without a shared rel"
        );
        return;
    };
    assert_eq!(
        index.entries.len(),
        total,
        "assembly lost or invented entries"
    );

    let grouped = group_by_partition(&index);
    let mut placed = 0;
    for (partition, rels) in &grouped.shards {
        placed += rels.len();
        assert!(!partition.is_empty());
        let written = shard_json(&index, rels);
        let back = parse_shard(&written, partition).unwrap_or_else(|e| {
            panic!(
                "shard json does not parse back: {e}: {}",
                String::from_utf8_lossy(&written)
            )
        });
        let expected: s3sync_core::index::Entries = rels
            .iter()
            .map(|rel| (rel.clone(), index.entries.get(rel).unwrap().clone()))
            .collect();
        assert_eq!(back, expected, "shard {partition:?} round trip changed it");
    }
    assert_eq!(placed + grouped.unpartitioned.len(), index.entries.len());
});
