//! `compare::compare_bytes` orders byte strings exactly as `<[u8]>::cmp` does; in the WASM build
//! it is `memcmp` and `bcmp` (see `tests/wasm.rs` for the same cases run there).
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/compare_cases.rs"]
mod compare_cases;

use proptest::prelude::*;
use s3sync_core::bytes::compare::compare_bytes;

#[test]
fn every_position_and_byte_value_orders_as_a_byte_loop() {
    compare_cases::check(compare_bytes);
}

#[test]
fn the_native_comparisons_agree_with_the_reference() {
    // The reference itself is checked against the standard library here, where `memcmp` is
    // the platform's; the WASM tests then lean on it.
    compare_cases::check(|a, b| a.cmp(b));
    compare_cases::check_equality();
}

/// A byte string built from a prefix shared by both sides and a short own tail, so that
/// generated pairs mostly share long prefixes, as index keys do.
fn shared_prefix_pair() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    (
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 0..12),
        prop::collection::vec(any::<u8>(), 0..12),
    )
        .prop_map(|(prefix, a_tail, b_tail)| {
            let mut a = prefix.clone();
            a.extend(a_tail);
            let mut b = prefix;
            b.extend(b_tail);
            (a, b)
        })
}

proptest! {
    #[test]
    fn orders_as_the_standard_library((a, b) in shared_prefix_pair()) {
        prop_assert_eq!(compare_bytes(&a, &b), a.cmp(&b));
        prop_assert_eq!(compare_bytes(&b, &a), b.cmp(&a));
        prop_assert_eq!(compare_bytes(&a, &a), std::cmp::Ordering::Equal);
    }

    #[test]
    fn orders_any_two_strings((a, b) in (prop::collection::vec(any::<u8>(), 0..70), prop::collection::vec(any::<u8>(), 0..70))) {
        prop_assert_eq!(compare_bytes(&a, &b), a.cmp(&b));
    }
}
