//! The v1 monolith parser: any bytes either fail with a typed error or parse to an index that
//! survives both serializations (compact for the remote copy, pretty for the local one), and
//! its fast reader answers as the general one does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3sync_core::index::{group_by_partition, Index, MAX_SAFE_INTEGER};

fuzz_target!(|data: &[u8]| {
    // The fast reader of the common shape and serde's general reader agree on every input
    // (the fast one steps aside for serde on anything it does not read itself).
    let parsed = Index::parse(data);
    match (&parsed, Index::parse_fully(data)) {
        (Ok(fast), Ok(full)) => assert_eq!(fast, &full, "the two readers differ"),
        (Err(fast), Err(full)) => assert_eq!(fast.to_string(), full.to_string()),
        (fast, full) => panic!("one reader refused: {fast:?} vs {full:?}"),
    }
    let Ok(index) = parsed else {
        return;
    };
    for (rel, entry) in &index.entries {
        assert!(
            entry.size <= MAX_SAFE_INTEGER,
            "{rel:?} has size {}",
            entry.size
        );
    }
    let compact = index.to_compact_json();
    let again = Index::parse(&compact).unwrap_or_else(|e| {
        panic!(
            "compact json does not parse back: {e}: {}",
            String::from_utf8_lossy(&compact)
        )
    });
    assert_eq!(again, index, "compact json round trip changed the index");
    let pretty = index.to_pretty_json();
    let again = Index::parse(&pretty).unwrap_or_else(|e| {
        panic!(
            "pretty json does not parse back: {e}: {}",
            String::from_utf8_lossy(&pretty)
        )
    });
    assert_eq!(again, index, "pretty json round trip changed the index");
    // Serialization is deterministic, so a second round gives the same bytes.
    assert_eq!(again.to_compact_json(), compact);

    // Scrubbing removes exactly the internal entries.
    let mut scrubbed = index.clone();
    let removed = scrubbed.scrub_internal();
    assert_eq!(removed.len() + scrubbed.entries.len(), index.entries.len());
    assert!(scrubbed
        .entries
        .keys()
        .all(|rel| !s3sync_core::model::paths::is_internal(rel)));

    // Partitioning places every entry exactly once.
    let grouped = group_by_partition(&index);
    let placed: usize =
        grouped.shards.values().map(Vec::len).sum::<usize>() + grouped.unpartitioned.len();
    assert_eq!(placed, index.entries.len());
});
