//! The chunked key sort an index load uses (issue 15), against the plain byte-order sort: same
//! order, same answer on whether two keys are equal, on keys built to stress its chunk
//! boundaries (shared prefixes of any length, zero bytes, a key that is a prefix of another).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use s3sync_core::bytes::key_sort::sorted_positions;
use s3sync_core::index::Index;

/// Checks one list: the positions are a permutation, they order the keys as the byte order
/// does, and `has_equal` says whether two keys are equal.
fn check(keys: &[Vec<u8>]) {
    let sorted = sorted_positions(keys, |k| k.as_slice()).expect("fewer than 2^32 keys");
    let mut seen = vec![false; keys.len()];
    for &p in &sorted.positions {
        assert!(!std::mem::replace(&mut seen[p as usize], true), "{p} twice");
    }
    assert!(seen.iter().all(|s| *s), "every position once");
    let ordered: Vec<&Vec<u8>> = sorted
        .positions
        .iter()
        .map(|&p| &keys[p as usize])
        .collect();
    let mut expected: Vec<&Vec<u8>> = keys.iter().collect();
    expected.sort();
    assert_eq!(ordered, expected, "keys {keys:?}");
    let any_equal = expected.windows(2).any(|pair| pair[0] == pair[1]);
    assert_eq!(sorted.has_equal, any_equal, "keys {keys:?}");
}

/// Keys from a few shared stems of lengths around the 16-byte chunk (so groups tie for one or
/// more whole chunks) and short tails over an alphabet with a zero byte and a high byte.
fn key() -> impl Strategy<Value = Vec<u8>> {
    let stem = prop::sample::select(vec![
        Vec::new(),
        b"data/aws/ec2/vp".to_vec(),
        b"data/aws/ec2/vpc".to_vec(),
        b"data/aws/ec2/vpc/".to_vec(),
        vec![b'x'; 32],
        vec![b'x'; 47],
        vec![0u8; 16],
    ]);
    let tail = prop::collection::vec(prop::sample::select(vec![0u8, 1, b'/', b'a', 0xff]), 0..20);
    (stem, tail).prop_map(|(mut stem, tail)| {
        stem.extend(tail);
        stem
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn orders_as_the_byte_order(keys in prop::collection::vec(key(), 0..40)) {
        check(&keys);
    }
}

#[test]
fn edge_cases_order_as_the_byte_order() {
    let cases: Vec<Vec<Vec<u8>>> = vec![
        vec![],
        vec![b"only".to_vec()],
        vec![Vec::new(), Vec::new()],
        // A key that ends where another goes on with zero bytes.
        vec![
            vec![b'a'; 16],
            [vec![b'a'; 16], vec![0]].concat(),
            vec![b'a'; 15],
        ],
        vec![[vec![b'a'; 16], vec![0]].concat(), vec![b'a'; 16]],
        // Equal only after several whole chunks; different only in the last byte.
        vec![
            [vec![b'k'; 100], vec![2]].concat(),
            [vec![b'k'; 100], vec![1]].concat(),
            [vec![b'k'; 100], vec![2]].concat(),
        ],
        // Bytes above 0x7f order after ASCII (unsigned), as in the byte order.
        vec![vec![0xff], vec![0x7f], vec![0x80, 0]],
    ];
    for keys in &cases {
        check(keys);
    }
}

/// A key far longer than the chunk, shared by many keys: the sort goes one level per chunk on
/// an explicit stack (a recursion that deep could overflow the WASM stack).
#[test]
fn long_shared_prefixes_do_not_recurse() {
    let stem = vec![b'p'; 200_000];
    let keys: Vec<Vec<u8>> = (0..50u8)
        .rev()
        .map(|i| [stem.clone(), vec![i]].concat())
        .collect();
    check(&keys);
}

/// Through the index parser: an index in insertion order reads as the same map as the sorted
/// one, and of several repeated keys the first in key order is the one named.
#[test]
fn index_load_orders_and_names_the_first_repeat() {
    let doc = |rels: &[&str]| {
        let body: Vec<String> = rels
            .iter()
            .map(|r| format!(r#""{r}":{{"key":"{r}","size":1}}"#))
            .collect();
        format!(r#"{{"version":1,"entries":{{{}}}}}"#, body.join(","))
    };
    let rels = [
        "data/aws/ec2/vpc/m-10/raw",
        "data/aws/ec2/vpc/m-9/raw",
        "data/aws/ec2/vpc/m-1/raw",
        "logs/run-1.log",
        "data/aws/ec2/vpc/m-100/raw",
    ];
    let index = Index::parse(doc(&rels).as_bytes()).expect("parses");
    let mut expected: Vec<&str> = rels.to_vec();
    expected.sort();
    let keys: Vec<&str> = index.entries.keys().map(String::as_str).collect();
    assert_eq!(keys, expected);

    let repeated = [
        "logs/z",
        "data/aws/ec2/vpc/m-2/raw",
        "logs/z",
        "data/aws/ec2/vpc/m-2/raw",
    ];
    let error = Index::parse(doc(&repeated).as_bytes()).expect_err("refused");
    assert_eq!(error.code(), "index-corrupt");
    assert!(
        error
            .to_string()
            .contains("\"data/aws/ec2/vpc/m-2/raw\" appears twice"),
        "{error}"
    );
}
