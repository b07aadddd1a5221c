//! The index's entries (a sorted list until its shape changes, then a tree) behave as a
//! `BTreeMap` does: the same answers to every read, after any sequence of changes.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;
use s3sync_core::index::{Entries, IndexEntry};

/// Rels from a tiny alphabet, so that operations hit present rels often.
fn rel() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "a/b", "c"]), 1..3)
        .prop_map(|parts| parts.join("/"))
}

#[derive(Debug, Clone)]
enum Op {
    Insert(String, u64),
    Remove(String),
    Bump(String),
    BumpAll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (rel(), 0u64..100).prop_map(|(r, s)| Op::Insert(r, s)),
        rel().prop_map(Op::Remove),
        rel().prop_map(Op::Bump),
        Just(Op::BumpAll),
    ]
}

fn entry(size: u64) -> IndexEntry {
    IndexEntry {
        size,
        ..IndexEntry::default()
    }
}

/// Every read of `entries` agrees with `model`'s.
fn agree(entries: &Entries, model: &BTreeMap<String, IndexEntry>, probes: &[String]) {
    assert_eq!(entries.len(), model.len());
    assert_eq!(entries.is_empty(), model.is_empty());
    assert!(entries.iter().eq(model.iter()));
    assert!(entries.iter().rev().eq(model.iter().rev()));
    assert!(entries.keys().eq(model.keys()));
    assert!(entries.values().eq(model.values()));
    assert_eq!(entries.iter().len(), model.len());
    for rel in probes {
        assert_eq!(entries.get(rel), model.get(rel), "{rel}");
        assert_eq!(
            entries.get_key_value(rel),
            model.get_key_value(rel),
            "{rel}"
        );
        assert_eq!(entries.contains_key(rel), model.contains_key(rel), "{rel}");
    }
}

proptest! {
    #[test]
    fn entries_answer_as_a_btree_map_after_any_changes(
        start in prop::collection::vec((rel(), 0u64..100), 0..8),
        ops in prop::collection::vec(op(), 0..24),
        probes in prop::collection::vec(rel(), 0..8),
    ) {
        let mut model: BTreeMap<String, IndexEntry> =
            start.iter().map(|(r, s)| (r.clone(), entry(*s))).collect();
        let mut entries: Entries = start.iter().map(|(r, s)| (r.clone(), entry(*s))).collect();
        agree(&entries, &model, &probes);
        for op in ops {
            match op {
                Op::Insert(rel, size) => prop_assert_eq!(
                    entries.insert(rel.clone(), entry(size)),
                    model.insert(rel, entry(size))
                ),
                Op::Remove(rel) => prop_assert_eq!(entries.remove(&rel), model.remove(&rel)),
                Op::Bump(rel) => {
                    let ours = entries.get_mut(&rel).map(|e| { e.size += 1; e.size });
                    let theirs = model.get_mut(&rel).map(|e| { e.size += 1; e.size });
                    prop_assert_eq!(ours, theirs);
                }
                Op::BumpAll => {
                    for ((rel, e), (model_rel, m)) in entries.iter_mut().zip(model.iter_mut()) {
                        prop_assert_eq!(rel, model_rel);
                        e.size += 1;
                        m.size += 1;
                    }
                }
            }
            agree(&entries, &model, &probes);
        }
        // Taken, in the same order.
        prop_assert!(entries.clone().into_iter().eq(model.clone()));
        prop_assert_eq!(Entries::from(model.clone()), entries);
    }
}
