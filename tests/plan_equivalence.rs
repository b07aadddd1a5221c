//! The planner's fast paths (issue 15) against plain statements of the same rules: the byte
//! scan of the path rules against `char::is_control` and against the rules read one by one, the
//! internal-name test against its lists, the one-pass file/folder search over sorted keys
//! against the hashing search, and the payload cursor against a map. Native only: proptest does
//! not build for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use proptest::prelude::*;

#[path = "common/path_rules.rs"]
mod path_rules;
use path_rules::{is_device_name, is_drive_segment};

use s3sync_core::error::{CoreError, PathRefusal};
use s3sync_core::model::paths::{
    find_file_folder_conflicts, find_file_folder_conflicts_sorted, is_internal, RelPath,
    MAX_KEY_BYTES, MAX_SEGMENT_BYTES,
};

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

    use s3sync_core::model::layout::survey;
    use s3sync_core::model::paths::PathModel;
    use s3sync_core::wire::listing::LocalFile;

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

/// The path rules read one at a time, in the order they are reported: the whole-path rules,
/// then each segment from the left.
fn refusal_by_the_rules(path: &str) -> Option<PathRefusal> {
    let whole = [
        (path.is_empty(), PathRefusal::Empty),
        (path.len() > MAX_KEY_BYTES, PathRefusal::TooLong),
        (path.starts_with('/'), PathRefusal::Absolute),
        (path.contains('\\'), PathRefusal::Backslash),
        (
            path.chars().any(char::is_control),
            PathRefusal::ControlCharacter,
        ),
        (path.ends_with('/'), PathRefusal::TrailingSlash),
    ];
    if let Some((_, refusal)) = whole.into_iter().find(|(broken, _)| *broken) {
        return Some(refusal);
    }
    path.split('/').find_map(|segment| {
        [
            (segment.is_empty(), PathRefusal::EmptySegment),
            (segment == "." || segment == "..", PathRefusal::DotSegment),
            (
                segment.len() > MAX_SEGMENT_BYTES,
                PathRefusal::SegmentTooLong,
            ),
            (is_drive_segment(segment), PathRefusal::DriveLetter),
            (is_device_name(segment), PathRefusal::ReservedName),
        ]
        .into_iter()
        .find(|(broken, _)| *broken)
        .map(|(_, refusal)| refusal)
    })
}

/// Paths from pieces that break, or nearly break, each rule: separators, dots, device names in
/// both cases, drive letters, a backslash, C0/DEL/C1 controls and the non-control characters
/// whose UTF-8 shares their lead byte (`\u{a2}` is `C2 A2`, as `\u{85}` is `C2 85`).
fn rule_breaking_paths() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a", "b", "/", "//", ".", "..", "-", " ", "con", "CON", "Lpt1", "com9", "aux.txt", "c:",
        "Z:", "\\", "\u{1}", "\u{7f}", "\u{85}", "\u{a2}", "\u{e9}", "_", ".lock",
    ]);
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// The path check (a quick pass, then the full one only for suspicious paths) reports
    /// what the rules read one by one report.
    #[test]
    fn path_check_reports_what_the_rules_say(path in rule_breaking_paths()) {
        let got = RelPath::parse(&path).err().map(|e| match e {
            CoreError::UnsafePath { reason, .. } => reason,
            other => panic!("{path:?}: unexpected error {other:?}"),
        });
        prop_assert_eq!(got, refusal_by_the_rules(&path), "{:?}", path);
    }

    /// The internal-name test (with its quick refusal) agrees with its lists read plainly.
    #[test]
    fn internal_names_are_found_whatever_surrounds_them(
        head in rule_breaking_paths(),
        name in prop::sample::select(vec![
            ".datastore-index.json", ".push-queue.json", ".datastore.lock",
            ".datastore-sync-state.json", ".datastore-sync-state.journal",
            ".datastore-sync-state.journal.taken", ".lock", ".namespace.json", "_catalog.db",
            "_catalog.db-wal", "_index", "_control", "a", "_x", ".x",
        ]),
        tail in rule_breaking_paths(),
    ) {
        for rel in [
            name.to_string(),
            format!("{head}/{name}"),
            format!("{name}/{tail}"),
            format!("{head}{name}{tail}"),
        ] {
            prop_assert_eq!(is_internal(&rel), internal_by_the_lists(&rel), "{:?}", rel);
        }
    }
}

/// The internal names read plainly: exact bookkeeping files, the shard and control folders,
/// and the names internal in any folder.
fn internal_by_the_lists(rel: &str) -> bool {
    let exact = [
        ".datastore-index.json",
        ".push-queue.json",
        ".datastore.lock",
        ".datastore-sync-state.json",
        ".datastore-sync-state.journal",
        ".datastore-sync-state.journal.taken",
    ];
    let first = rel.split('/').next().unwrap_or("");
    let last = rel.rsplit('/').next().unwrap_or("");
    exact.contains(&rel)
        || first == "_index"
        || first == "_control"
        || [".lock", ".namespace.json", "_catalog.db"].contains(&last)
        || last.starts_with("_catalog.db-")
}

/// Long paths with every rule in reach of the size limits, checked the same way.
#[test]
fn path_check_agrees_with_the_rules_at_the_length_limits() {
    let long = |n: usize| "a".repeat(n);
    let cases = [
        long(MAX_KEY_BYTES),
        long(MAX_KEY_BYTES + 1),
        long(MAX_SEGMENT_BYTES),
        long(MAX_SEGMENT_BYTES + 1),
        format!(
            "{}/{}",
            long(MAX_SEGMENT_BYTES),
            long(MAX_SEGMENT_BYTES + 1)
        ),
        format!("{}/x\\", long(MAX_SEGMENT_BYTES + 1)),
        format!("{}/", long(MAX_SEGMENT_BYTES + 1)),
        format!("a/{}/con", long(MAX_SEGMENT_BYTES + 1)),
    ];
    for path in cases {
        let got = RelPath::parse(&path).err().map(|e| match e {
            CoreError::UnsafePath { reason, .. } => reason,
            other => panic!("{path:?}: unexpected error {other:?}"),
        });
        assert_eq!(got, refusal_by_the_rules(&path), "{path:?}");
    }
}

/// Walks for the cursor: rels from a small alphabet (so rels repeat and sort near each other),
/// first in byte order and then, from a random point, in any order.
fn walks() -> impl Strategy<Value = (Vec<String>, usize)> {
    (
        proptest::collection::vec("[ab]{1,2}([-./][ab]{1,2}){0,3}", 0..60),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut rels, cut)| {
            let at = if rels.is_empty() {
                0
            } else {
                cut.index(rels.len() + 1)
            };
            let (head, _) = rels.split_at_mut(at);
            head.sort();
            (rels, at)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// The payload cursor, asked in ascending order or any order, over a sorted walk or one
    /// whose order breaks (rels walked twice included), finds what a map of the last file
    /// walked per rel holds.
    #[test]
    fn payload_cursor_answers_as_a_map(
        (rels, _) in walks(),
        asks in proptest::collection::vec("[ab]{1,2}([-./][ab]{1,2}){0,3}", 0..60),
        ascending in any::<bool>(),
    ) {
        use std::collections::HashMap;

        use s3sync_core::model::layout::survey;
        use s3sync_core::wire::listing::LocalFile;
        use s3sync_core::model::paths::PathModel;

        let model = PathModel::new(None, "").expect("solo model");
        let files: Vec<LocalFile<'_>> = rels
            .iter()
            .enumerate()
            .map(|(i, path)| LocalFile { path, size: i as u64, mtime_ms: None })
            .collect();
        let surveyed = survey(&model, &files);
        let mut want: HashMap<&str, u64> = HashMap::new();
        for file in &files {
            if RelPath::parse(file.path).is_ok() && !is_internal(file.path) {
                want.insert(file.path, file.size);
            }
        }
        prop_assert_eq!(surveyed.payload.len(), want.len());
        let mut asks: Vec<&str> = asks.iter().map(String::as_str).chain(rels.iter().map(String::as_str)).collect();
        if ascending {
            asks.sort();
        }
        let mut cursor = surveyed.payload.cursor();
        for ask in asks {
            let found = cursor.find(ask).map(|f| (f.rel.as_str(), f.size));
            prop_assert_eq!(found, want.get(ask).map(|&size| (ask, size)), "{:?}", ask);
            prop_assert_eq!(surveyed.payload.get(ask).map(|f| f.size), want.get(ask).copied());
        }
    }
}

/// One datastore for the order test: index entries and base entries over a small rel space,
/// and a walk of files (some absent, some changed, some new, some walked twice, some unsafe
/// or internal), each chosen per rel.
fn datastore() -> impl Strategy<Value = (Vec<(String, u8)>, Vec<usize>)> {
    (
        proptest::collection::vec(("[ab]{1,2}([-./][ab_]{1,2}){0,3}", 0u8..8), 0..50),
        proptest::collection::vec(any::<usize>(), 0..60),
    )
}

/// An index document of `rels` (size by the rel's length, `localMtime` by `mtime`).
fn index_json(rels: &[&str], mtime: &str) -> Vec<u8> {
    let entries: Vec<String> = rels
        .iter()
        .map(|rel| {
            format!(
                r#""{rel}":{{"key":"{rel}","size":{},"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"{mtime}"}}"#,
                rel.len()
            )
        })
        .collect();
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(",")).into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// Pull and push plans do not depend on the walk's order: the walker's byte order (the
    /// cursor's one pass), any shuffle of it (the table), and the reverse give the same plans.
    #[test]
    fn plans_do_not_depend_on_the_walk_order((cases, shuffle) in datastore()) {
        use std::collections::BTreeMap;

        use s3sync_core::index::Index;
        use s3sync_core::model::layout::survey;
        use s3sync_core::wire::listing::LocalFile;
        use s3sync_core::model::paths::PathModel;
        use s3sync_core::runs::pull::plan::{plan_pull, PullOptions};
        use s3sync_core::runs::push::plan::{plan_push, PushInput};

        let model = PathModel::new(Some("ns"), "").expect("namespace is valid");
        // By each rel's case: 0 absent here, 1 same, 2 size changed, 3 mtime moved, 4 new here
        // (not indexed), 5 walked twice (the same stat: which copy is last then does not matter),
        // 6 only in the base, 7 in the index only.
        let by_rel: BTreeMap<&str, u8> = cases.iter().map(|(r, c)| (r.as_str(), *c)).collect();
        let indexed: Vec<&str> = by_rel.iter().filter(|(_, c)| !matches!(**c, 4 | 6)).map(|(r, _)| *r).collect();
        let based: Vec<&str> = by_rel.iter().filter(|(_, c)| !matches!(**c, 4 | 7)).map(|(r, _)| *r).collect();
        let mtime_ms = 1_785_585_600_000_i64;
        let iso = "2026-08-01T12:00:00.000Z";
        let index = Index::parse(&index_json(&indexed, iso)).expect("index parses");
        let base = Index::parse(&index_json(&based, iso)).expect("base parses");
        let mut paths: Vec<(String, u64, i64)> = Vec::new();
        for (rel, case) in &by_rel {
            let path = format!("ns/{rel}");
            let size = rel.len() as u64;
            match case {
                0 | 7 => {}
                2 => paths.push((path, size + 1, mtime_ms)),
                3 => paths.push((path, size, mtime_ms + 1_000)),
                5 => {
                    paths.push((path.clone(), size, mtime_ms));
                    paths.push((path, size, mtime_ms));
                }
                _ => paths.push((path, size, mtime_ms)),
            }
        }
        paths.push((".datastore-index.json".into(), 10, mtime_ms));
        paths.push(("ns/_index/x.json".into(), 10, mtime_ms));
        paths.sort_by(|a, b| a.0.cmp(&b.0));
        let mut shuffled = paths.clone();
        for (i, pick) in shuffle.iter().enumerate() {
            let n = shuffled.len();
            if n > 1 {
                shuffled.swap(i % n, pick % n);
            }
        }
        let reversed: Vec<_> = paths.iter().rev().cloned().collect();
        let plans = |walk: &[(String, u64, i64)]| {
            let files: Vec<LocalFile<'_>> = walk
                .iter()
                .map(|(path, size, mtime)| LocalFile { path, size: *size, mtime_ms: Some(*mtime) })
                .collect();
            let surveyed = survey(&model, &files);
            let pull = plan_pull(&model, &index, Some(&base), &surveyed, &PullOptions::default());
            let push = plan_push(&model, &index, Some(&base), &surveyed, &PushInput::default());
            (pull, push)
        };
        let sorted = paths;
        let want = plans(&sorted);
        prop_assert_eq!(&plans(&shuffled), &want);
        prop_assert_eq!(&plans(&reversed), &want);
    }
}
