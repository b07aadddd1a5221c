//! The same path table as `tests/paths.rs`, and hostile index inputs, compiled to wasm32 and run
//! under Node by `wasm-pack test --node` (wasm-bindgen-test-runner). What a native test proves
//! about the Rust logic, these prove about the WebAssembly build the shim loads: no panic, no
//! stack overflow, the same codes.
#![cfg(target_arch = "wasm32")]

#[path = "common/path_cases.rs"]
mod path_cases;

use s3sync_core::error::CoreError;
use s3sync_core::index::Index;
use s3sync_core::runs::pull::plan::PullOptions;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;
use wasm_bindgen_test::wasm_bindgen_test;

// No `wasm_bindgen_test_configure!(run_in_browser)`: these run in Node.

#[wasm_bindgen_test]
fn every_refusal_reason_has_a_case() {
    path_cases::check_every_refusal_is_covered();
}

#[wasm_bindgen_test]
fn rel_refusals() {
    path_cases::check_rel_refusals();
}

#[wasm_bindgen_test]
fn rel_near_misses_are_accepted() {
    path_cases::check_rel_accepted();
}

#[wasm_bindgen_test]
fn namespace_refusals() {
    path_cases::check_namespace_refusals();
}

#[wasm_bindgen_test]
fn namespace_near_misses_are_accepted() {
    path_cases::check_namespace_accepted();
}

#[wasm_bindgen_test]
fn key_limit_applies_to_the_full_key() {
    path_cases::check_key_limit();
}

#[wasm_bindgen_test]
fn internal_files() {
    path_cases::check_is_internal();
}

#[wasm_bindgen_test]
fn classify_cache_paths() {
    path_cases::check_classify();
}

#[wasm_bindgen_test]
fn lazy_skippable() {
    path_cases::check_lazy();
}

#[wasm_bindgen_test]
fn partition_keys() {
    path_cases::check_partition_keys();
}

#[wasm_bindgen_test]
fn collisions() {
    path_cases::check_collisions();
}

#[wasm_bindgen_test]
fn remote_key_refusals() {
    path_cases::check_remote_key_refusals();
}

#[wasm_bindgen_test]
fn seed_bug_remote_key_maps_to_the_namespaced_cache_path() {
    path_cases::check_seed_mapping();
}

fn load(bytes: &[u8]) -> Result<(), CoreError> {
    let mut session = Session::new(Some("ns"), "prefix").expect("session");
    session.load_index(bytes).map(|_| ())
}

fn assert_code(bytes: &[u8], code: &str, what: &str) {
    match load(bytes) {
        Err(error) => {
            assert_eq!(error.code(), code, "{what}: {error}");
            // Sentence style: starts lowercase, no trailing period (details quoted from the
            // input or the json parser, like "EOF", keep their case).
            let message = error.to_string();
            assert!(
                message.starts_with(|c: char| c.is_ascii_lowercase()),
                "{what}: {message}"
            );
            assert!(!message.ends_with('.'), "{what}: {message}");
        }
        Ok(()) => panic!("{what}: accepted"),
    }
}

#[wasm_bindgen_test]
fn hostile_indexes_fail_with_codes() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("empty", b"", "index-corrupt"),
        ("the 3-byte emptied catalog", b"[]\n", "index-corrupt"),
        (
            "truncated",
            br#"{"version":1,"entries":{"data/x/raw":{"key":"data/x/raw","si"#,
            "index-corrupt",
        ),
        (
            "entries as array",
            br#"{"version":1,"entries":[]}"#,
            "index-corrupt",
        ),
        (
            "negative size",
            br#"{"version":1,"entries":{"a":{"size":-1}}}"#,
            "index-corrupt",
        ),
        (
            "size 2^53",
            br#"{"version":1,"entries":{"a":{"size":9007199254740992}}}"#,
            "index-corrupt",
        ),
        (
            "key mismatch",
            br#"{"version":1,"entries":{"a":{"key":"b","size":1}}}"#,
            "index-corrupt",
        ),
        (
            "duplicate entry",
            br#"{"version":1,"entries":{"a":{"size":1},"a":{"size":1}}}"#,
            "index-corrupt",
        ),
        (
            "not utf-8",
            b"{\"entries\":{\"\xc3\x28\":{\"size\":1}}}",
            "index-corrupt",
        ),
        (
            "version 2 monolith",
            br#"{"version":2,"entries":{}}"#,
            "index-version-unsupported",
        ),
    ];
    for (what, bytes, code) in cases {
        assert_code(bytes, code, what);
    }
}

#[wasm_bindgen_test]
fn deep_nesting_does_not_overflow_the_wasm_stack() {
    let depth = 100_000;
    let open = "[".repeat(depth);
    let close = "]".repeat(depth);
    assert_code(open.as_bytes(), "index-corrupt", "top-level nesting");
    let in_field = format!("{{\"version\":1,\"x\":{open}{close},\"entries\":{{}}}}");
    assert_code(
        in_field.as_bytes(),
        "index-corrupt",
        "nesting in an unknown field",
    );
    let in_entry = format!("{{\"entries\":{{\"a\":{{\"size\":1,\"x\":{open}{close}}}}}}}");
    assert_code(in_entry.as_bytes(), "index-corrupt", "nesting in an entry");
    let objects = "{\"a\":".repeat(depth);
    assert_code(objects.as_bytes(), "index-corrupt", "nested objects");
}

#[wasm_bindgen_test]
fn a_megabyte_of_junk_is_refused() {
    let mut junk = Vec::with_capacity(1 << 20);
    junk.push(b'[');
    while junk.len() < 1 << 20 {
        junk.extend_from_slice(b"\"junk\",1,null,{\"k\":[true]},");
    }
    junk.extend_from_slice(b"0]");
    assert_code(&junk, "index-corrupt", "1 mb array");
    // Random-looking bytes: a cheap generator, so the test needs no randomness source.
    let mut state: u32 = 0x1234_5678;
    let noise: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect();
    assert_code(&noise, "index-corrupt", "1 mb of noise");
    let mut prefixed = br#"{"version":1,"entries":{"a":{"size":1,"x":""#.to_vec();
    prefixed.extend_from_slice(&noise);
    assert_code(&prefixed, "index-corrupt", "noise in a string");
}

/// A failed load leaves no index behind: planning afterwards is an input error, not a plan
/// over an empty index (absence of an index must never read as "delete nothing / pull nothing").
#[wasm_bindgen_test]
fn a_failed_load_never_reads_as_empty() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    assert_eq!(
        session.load_index(b"[]\n").unwrap_err().code(),
        "index-corrupt"
    );
    let listing = encode_local([("ns/data/a/b/c/raw", 1, Some(0))]);
    let error = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap_err();
    assert_eq!(error.code(), "invalid-input");
}

/// The seed bug through the session, under WASM.
#[wasm_bindgen_test]
fn namespaced_pull_plan_under_wasm() {
    let mut session = Session::new(Some("ns"), "prefix").unwrap();
    let loaded = session
        .load_index(
            br#"{"version":1,"entries":{
                "data/x/y/m1/state/1/raw":{"key":"data/x/y/m1/state/1/raw","size":812},
                "_index/x.json":{"size":1}
            }}"#,
        )
        .unwrap();
    assert_eq!(loaded.entries, 2);
    assert_eq!(loaded.internal_entries, 1);
    let listing = encode_local([("data/x/y/m1/state/1/raw", 812, Some(0))]);
    let plan = session
        .plan_pull(&listing, &PullOptions::default())
        .unwrap()
        .clone();
    assert_eq!(plan.downloads.len(), 1);
    assert_eq!(plan.downloads[0].cache_path, "ns/data/x/y/m1/state/1/raw");
    assert_eq!(plan.downloads[0].remote_key, plan.downloads[0].cache_path);
    assert_eq!(plan.prune, vec!["_index/x.json".to_string()]);
    assert_eq!(plan.layout.root_layout_trees, vec!["data".to_string()]);
    // And the index it writes back is still a valid index.
    let json = session.index_json(false).unwrap();
    assert_eq!(Index::parse(&json).unwrap().entries.len(), 2);
}

#[path = "common/compare_cases.rs"]
mod compare_cases;

/// The WASM build links this crate's `memcmp` and `bcmp` in place of the byte loops of
/// `compiler_builtins`: every slice and string ordering and equality goes through them.
#[wasm_bindgen_test]
fn slice_order_and_equality_are_those_of_a_byte_loop() {
    compare_cases::check(|a, b| a.cmp(b));
    compare_cases::check(s3sync_core::bytes::compare::compare_bytes);
    compare_cases::check_equality();
}

/// A sort of keys sharing long prefixes (as index keys do) comes out in the reference order.
#[wasm_bindgen_test]
fn sorted_index_like_keys_are_in_byte_order() {
    let mut keys: Vec<String> = (0..2_000u32)
        .map(|i| {
            let scrambled = i.wrapping_mul(2_654_435_761) % 2_000;
            format!(
                "data/@test/model-type-{:03}/{scrambled:08x}/file-{:04}.json",
                scrambled % 7,
                i % 13
            )
        })
        .collect();
    keys.sort();
    for pair in keys.windows(2) {
        assert_ne!(
            compare_cases::reference(pair[0].as_bytes(), pair[1].as_bytes()),
            std::cmp::Ordering::Greater,
            "{} before {}",
            pair[0],
            pair[1]
        );
    }
}
