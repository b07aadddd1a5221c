//! The planner's fast paths (issue 15) against plain statements of the same rules: the byte
//! scan of the path rules against `char::is_control`, and the one-pass file/folder search over
//! sorted keys against the hashing search. Native only: proptest does not build for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use proptest::prelude::*;

use s3sync_core::error::{CoreError, PathRefusal};
use s3sync_core::paths::{find_file_folder_conflicts, find_file_folder_conflicts_sorted, RelPath};

/// Every character, one at a time inside a rel, is refused exactly when `char::is_control`
/// (or the backslash rule) says so: the byte scan must agree on C0, DEL and C1 and on every
/// multi-byte character whose encoding contains their byte values.
#[test]
fn control_characters_are_judged_as_char_is_control() {
    let mut checked = 0;
    for c in (0..=0x10_ffff_u32).filter_map(char::from_u32) {
        let path = format!("ab{c}cd");
        let got = RelPath::parse(&path).err().map(|e| match e {
            CoreError::UnsafePath { reason, .. } => reason,
            other => panic!("{path:?}: unexpected error {other:?}"),
        });
        let want = if c == '\\' {
            Some(PathRefusal::Backslash)
        } else if c.is_control() {
            Some(PathRefusal::ControlCharacter)
        } else {
            None
        };
        assert_eq!(got, want, "U+{:04X}", c as u32);
        checked += 1;
    }
    assert!(checked > 1_000_000, "checked {checked} characters");
}

/// Paths from a tiny alphabet, so that prefixes, `-`/`.` siblings sorting between a file and
/// its folder, and deep nesting all occur often.
fn paths() -> impl Strategy<Value = BTreeSet<String>> {
    proptest::collection::btree_set("[ab]{1,2}([-./][ab]{1,2}){0,4}", 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// The sorted one-pass search finds exactly the collisions of the hashing one.
    #[test]
    fn sorted_file_folder_search_matches_the_hashing_one(set in paths()) {
        let sorted: Vec<&str> = set.iter().map(String::as_str).collect();
        let fast = find_file_folder_conflicts_sorted(sorted.iter().copied());
        let plain = find_file_folder_conflicts(sorted.iter().copied());
        prop_assert_eq!(fast, plain);
    }
}

/// The survey's payload table answers as a map from rel to the last file walked under it.
#[test]
fn payload_table_answers_as_a_map_of_the_last_file_per_rel() {
    use std::collections::HashMap;

    use s3sync_core::layout::survey;
    use s3sync_core::listing::LocalFile;
    use s3sync_core::paths::PathModel;

    let model = PathModel::new(Some("ns"), "").expect("namespace is valid");
    let paths: Vec<String> = (0..5_000)
        .map(|i| format!("ns/data/m-{}/raw", (i * 7_919) % 3_000))
        .collect();
    let files: Vec<LocalFile<'_>> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| LocalFile {
            path,
            size: i as u64,
            mtime_ms: Some(i as i64),
        })
        .collect();
    let mut want: HashMap<&str, u64> = HashMap::new();
    for file in &files {
        want.insert(&file.path[3..], file.size);
    }
    let surveyed = survey(&model, &files);
    assert_eq!(surveyed.payload.len(), want.len());
    assert_eq!(want.len(), 3_000, "rels walked twice are in the case");
    for (rel, size) in &want {
        let file = surveyed.payload.get(rel).expect("walked rel is found");
        assert_eq!((file.rel.as_str(), file.size), (*rel, *size));
        assert_eq!(file.cache_path, format!("ns/{rel}"));
        assert_eq!(
            files[file.slot].size, *size,
            "slot is the last walk position"
        );
    }
    assert!(!surveyed.payload.contains_key("data/m-3000/raw"));
    assert_eq!(surveyed.payload.keys().count(), want.len());
}
