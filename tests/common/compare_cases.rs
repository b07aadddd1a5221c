//! Cases for `s3sync_core::bytes::compare` and for whatever `memcmp`/`bcmp` the build links, shared by
//! the native tests (`tests/compare.rs`) and the WASM ones (`tests/wasm.rs`).

use std::cmp::Ordering;

/// The order the comparison must give, one byte at a time, written without slice comparison
/// (which is the thing under test).
pub fn reference(a: &[u8], b: &[u8]) -> Ordering {
    let mut at = 0;
    while at < a.len() && at < b.len() {
        if a[at] != b[at] {
            return if a[at] < b[at] {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        at += 1;
    }
    a.len().cmp(&b.len())
}

/// Pairs that differ at every position of every length up to three words and a bit (so each
/// word, each tail length and the word/tail seam is hit), by byte values whose signed and
/// unsigned orders disagree, plus prefixes and equal strings.
pub fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut pairs = Vec::new();
    let differing = [
        (0x00, 0x01),
        (0x7f, 0x80),
        (0x01, 0xff),
        (b'a', b'b'),
        (0xfe, 0xff),
    ];
    for len in 0..=27usize {
        let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        pairs.push((base.clone(), base.clone()));
        for cut in 0..len {
            pairs.push((base[..cut].to_vec(), base.clone()));
        }
        for at in 0..len {
            for (low, high) in differing {
                let mut a = base.clone();
                let mut b = base.clone();
                a[at] = low;
                b[at] = high;
                // A later difference the other way must not decide.
                if at + 1 < len {
                    a[len - 1] = 0xff;
                    b[len - 1] = 0x00;
                }
                pairs.push((a, b));
            }
        }
    }
    pairs
}

/// Checks `compare(a, b)` against [`reference`] for every pair, both ways round.
pub fn check(compare: impl Fn(&[u8], &[u8]) -> Ordering) {
    for (a, b) in pairs() {
        assert_eq!(compare(&a, &b), reference(&a, &b), "{a:?} vs {b:?}");
        assert_eq!(compare(&b, &a), reference(&b, &a), "{b:?} vs {a:?}");
    }
}

/// Checks equality (`bcmp` in the WASM build) against [`reference`] for every pair.
pub fn check_equality() {
    for (a, b) in pairs() {
        let equal = reference(&a, &b) == Ordering::Equal;
        assert_eq!(a == b, equal, "{a:?} == {b:?}");
        assert_eq!(a.as_slice() == b.as_slice(), equal, "{a:?} == {b:?}");
    }
}
