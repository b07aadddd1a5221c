//! Property tests of the path model, the hostile-input guarantees and the time format.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use proptest::prelude::*;

use s3sync_core::index::Index;
use s3sync_core::model::paths::{
    find_collisions, is_internal, is_lazy_skippable, partition_key, CachePlace, ForeignNamespaces,
    Namespace, PathModel, RelPath,
};
use s3sync_core::model::time::{format_iso_millis, parse_iso_millis};

#[path = "common/path_rules.rs"]
mod path_rules;
use path_rules::{is_device_name, is_drive_segment};

// ---------------------------------------------------------------------------------------------
// An independent statement of the rules, used to check the implementation.

/// Every rule `path` breaks, as refusal codes. Empty means the path is valid.
fn violations(path: &str) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    if path.is_empty() {
        out.insert("path-empty");
        return out;
    }
    if path.len() > 1024 {
        out.insert("path-too-long");
    }
    if path.starts_with('/') {
        out.insert("path-absolute");
    }
    if path.ends_with('/') {
        out.insert("path-trailing-slash");
    }
    if path.contains('\\') {
        out.insert("path-backslash");
    }
    if path
        .chars()
        .any(|c| (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)))
    {
        out.insert("path-control-character");
    }
    for segment in path.split('/') {
        if segment.is_empty() {
            out.insert("path-empty-segment");
        } else if segment == "." || segment == ".." {
            out.insert("path-dot-segment");
        } else if is_drive_segment(segment) {
            out.insert("path-drive-letter");
        } else if is_device_name(segment) {
            out.insert("path-reserved-name");
        }
    }
    out
}

/// Lexically normalises `path` (resolving `.` and `..`), as `path.normalize` would.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

// ---------------------------------------------------------------------------------------------
// Strategies

/// A segment from a mixed alphabet (ASCII, dots, dashes, colons, spaces, Latin-1, CJK, emoji),
/// made valid by prefixing `x` when it would break a segment rule.
fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9._: é日本ßİ🦀-]{1,12}".prop_map(|s| {
        if violations(&s).is_empty() {
            s
        } else {
            format!("x{s}")
        }
    })
}

/// A valid rel of 1 to 8 segments.
fn rel() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 1..=8).prop_map(|segments| segments.join("/"))
}

/// A rel that is internal under one of the rules.
fn internal_rel() -> impl Strategy<Value = String> {
    let exact = prop::sample::select(vec![
        ".datastore-index.json",
        ".push-queue.json",
        ".datastore.lock",
        ".datastore-sync-state.json",
        "_index",
        "_control",
    ])
    .prop_map(str::to_string);
    let under = (prop::sample::select(vec!["_index", "_control"]), rel())
        .prop_map(|(top, rest)| format!("{top}/{rest}"));
    let basename = (
        prop::collection::vec(segment(), 0..4),
        prop::sample::select(vec![
            ".lock",
            ".namespace.json",
            "_catalog.db",
            "_catalog.db-wal",
            "_catalog.db-shm",
            "_catalog.db-journal",
        ]),
    )
        .prop_map(|(folders, base)| {
            let mut parts = folders;
            parts.push(base.to_string());
            parts.join("/")
        });
    prop_oneof![exact, under, basename]
}

/// A valid namespace: one segment, not starting with `.` or `_`, not a reserved name.
fn namespace() -> impl Strategy<Value = String> {
    "[a-z0-9é][a-z0-9é._-]{0,15}".prop_map(|s| {
        if Namespace::parse(&s).is_ok() && !is_device_name(&s) {
            s
        } else {
            format!("n{s}")
        }
    })
}

fn optional_namespace() -> impl Strategy<Value = Option<String>> {
    prop::option::of(namespace())
}

/// Strings biased towards the characters the rules are about.
fn pathish() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a/.\\\\:\\x00\\x01\\x7f\\x{85} é.CONnulcom1lpt9_-]{0,24}",
        "(\\.\\.|\\.|ns|data|_index|C:|con|a|/|//){0,8}",
    ]
}

// ---------------------------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The generator only makes valid rels, and the oracle agrees.
    #[test]
    fn generated_rels_are_valid(rel in rel()) {
        prop_assert!(violations(&rel).is_empty(), "{rel:?}: {:?}", violations(&rel));
        prop_assert!(RelPath::parse(&rel).is_ok(), "{rel:?}");
    }

    /// remote key → rel inverts rel → remote key, and the cache path is the remote key.
    #[test]
    fn every_mapping_inverts(namespace in optional_namespace(), rel in rel()) {
        let model = PathModel::new(namespace.as_deref(), "").unwrap();
        let parsed = model.rel(&rel).unwrap();
        let remote = model.remote_key(&parsed);
        let cache = model.cache_path(&parsed);
        prop_assert_eq!(&remote, &cache);
        prop_assert_eq!(model.index_key(&parsed), rel.as_str());
        prop_assert_eq!(model.rel_from_remote_key(&remote).unwrap(), parsed.clone());
        match &namespace {
            Some(ns) => {
                prop_assert_eq!(remote, format!("{ns}/{rel}"));
            }
            None => prop_assert_eq!(remote, rel.clone()),
        }
    }

    /// Nothing a valid rel maps to escapes the cache root.
    #[test]
    fn no_output_escapes_the_cache_root(namespace in optional_namespace(), rel in rel()) {
        let model = PathModel::new(namespace.as_deref(), "").unwrap();
        let parsed = model.rel(&rel).unwrap();
        for name in [model.cache_path(&parsed), model.remote_key(&parsed)] {
            prop_assert!(!name.starts_with('/'), "{name:?}");
            prop_assert!(
                name.split('/').all(|s| s != ".." && s != "." && !s.is_empty()),
                "{name:?} has a dot or empty segment"
            );
            let joined = normalise(&format!("/cache/{name}"));
            prop_assert_eq!(&joined, &format!("/cache/{name}"), "normalising changes nothing");
            prop_assert!(joined.starts_with("/cache/"));
            if let Some(ns) = &namespace {
                let tree = format!("/cache/{ns}/");
                prop_assert!(joined.starts_with(&tree), "{joined:?} is outside {tree:?}");
            }
        }
    }

    /// A payload rel classifies as payload of itself; an internal rel as internal.
    #[test]
    fn classify_inverts_cache_path(namespace in optional_namespace(), rel in rel()) {
        let model = PathModel::new(namespace.as_deref(), "").unwrap();
        let parsed = model.rel(&rel).unwrap();
        let place = model.classify_cache_path(&model.cache_path(&parsed), &ForeignNamespaces::new());
        let solo_secret = namespace.is_none() && rel.starts_with("secrets/");
        if is_internal(&rel) {
            prop_assert_eq!(place, CachePlace::Internal(rel.clone()));
        } else if solo_secret {
            prop_assert_eq!(place, CachePlace::Other);
        } else {
            prop_assert_eq!(place, CachePlace::Payload(parsed));
        }
    }

    #[test]
    fn internal_rels_classify_as_internal(namespace in optional_namespace(), rel in internal_rel()) {
        prop_assert!(is_internal(&rel), "{rel:?}");
        let model = PathModel::new(namespace.as_deref(), "").unwrap();
        let parsed = model.rel(&rel).unwrap();
        let place = model.classify_cache_path(&model.cache_path(&parsed), &ForeignNamespaces::new());
        prop_assert_eq!(place, CachePlace::Internal(rel.clone()));
        // An index that names one loses it to the scrub, and keeps everything else.
        let mut index = Index::default();
        index.entries.insert(rel.clone(), Default::default());
        index.entries.insert("files/kept".into(), Default::default());
        prop_assert_eq!(index.scrub_internal(), vec![rel.clone()]);
        prop_assert_eq!(index.entries.len(), 1);
    }

    /// A namespaced model never maps a key outside its namespace to a rel.
    #[test]
    fn keys_outside_the_namespace_are_refused(ns in namespace(), other in namespace(), rel in rel()) {
        prop_assume!(ns != other);
        let model = PathModel::new(Some(&ns), "").unwrap();
        let error = model.rel_from_remote_key(&format!("{other}/{rel}")).unwrap_err();
        prop_assert_eq!(error.code(), "key-outside-namespace");
    }

    /// Arbitrary strings never panic anything that takes a path, and `RelPath::parse` accepts
    /// exactly the strings that break no rule, refusing the rest with one of the rules broken.
    #[test]
    fn arbitrary_strings_never_panic(input in pathish(), namespace in optional_namespace()) {
        let expected = violations(&input);
        match RelPath::parse(&input) {
            Ok(rel) => {
                prop_assert!(expected.is_empty(), "{input:?} accepted but breaks {expected:?}");
                prop_assert_eq!(rel.as_str(), input.as_str());
            }
            Err(error) => {
                prop_assert!(
                    expected.contains(error.code()),
                    "{input:?} refused with {} but the rules say {expected:?}",
                    error.code()
                );
            }
        }
        let _ = Namespace::parse(&input);
        let _ = PathModel::new(Some(&input), &input);
        let model = PathModel::new(namespace.as_deref(), "").unwrap();
        let foreign: ForeignNamespaces = [input.clone()].into_iter().collect();
        let place = model.classify_cache_path(&input, &foreign);
        if !expected.is_empty() {
            prop_assert!(matches!(place, CachePlace::Unsafe(_)), "{input:?}: {place:?}");
        }
        if let Ok(rel) = model.rel_from_remote_key(&input) {
            prop_assert!(violations(rel.as_str()).is_empty());
            prop_assert_eq!(model.remote_key(&rel), input.clone());
        }
        let _ = is_internal(&input);
        let _ = is_lazy_skippable(&input);
        let _ = partition_key(&input);
        let _ = find_collisions([input.as_str(), "a", "A/b"]);
        let _ = parse_iso_millis(&input);
        let parsed = Index::parse(input.as_bytes());
        prop_assert!(
            parsed.is_err() || input.trim_start().starts_with('{'),
            "only an object can be an index: {input:?}"
        );
    }

    /// Arbitrary bytes never panic the index parser; what it accepts, it writes back losslessly.
    #[test]
    fn arbitrary_bytes_never_panic_the_index_parser(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(index) = Index::parse(&bytes) {
            prop_assert_eq!(Index::parse(&index.to_compact_json()).unwrap(), index);
        }
    }

    /// The internal entries counted while an index is read are those of the finished map, by
    /// both readers (the scanner of the common shape, and serde's when an entry carries a field
    /// the scanner does not know), and the index is the one `parse` gives; a document refused
    /// (a key twice) is refused alike.
    #[test]
    fn internal_entries_counted_while_reading_are_the_maps(
        rels in prop::collection::vec(prop_oneof![rel(), internal_rel()], 0..20),
        unknown_field in any::<bool>(),
    ) {
        let extra = if unknown_field { r#","note":1"# } else { "" };
        let entries: Vec<String> = rels
            .iter()
            .map(|rel| {
                let rel = serde_json::to_string(rel).unwrap();
                format!(r#"{rel}:{{"key":{rel},"size":1{extra}}}"#)
            })
            .collect();
        let bytes = format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(","));
        let counted = Index::parse_counting_internal(bytes.as_bytes(), usize::MAX);
        let owned = Index::parse_owned_counting_internal(bytes.clone().into_bytes(), usize::MAX);
        match Index::parse(bytes.as_bytes()) {
            Ok(index) => {
                let internal = index.entries.keys().filter(|rel| is_internal(rel)).count() as u64;
                prop_assert_eq!(counted.unwrap(), (index.clone(), internal));
                prop_assert_eq!(owned.unwrap(), (index, internal));
            }
            Err(error) => {
                prop_assert_eq!(counted.unwrap_err(), error.clone());
                prop_assert_eq!(owned.unwrap_err(), error);
            }
        }
    }

    /// Every millisecond from year 0 to year 9999 formats as `Date.toISOString()` does and
    /// parses back to itself.
    #[test]
    fn iso_millis_round_trip(millis in -62_167_219_200_000i64..=253_402_300_799_999i64) {
        let text = format_iso_millis(millis);
        prop_assert_eq!(text.len(), 24, "{}", text);
        let b = text.as_bytes();
        prop_assert!(b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':'
            && b[16] == b':' && b[19] == b'.' && b[23] == b'Z', "{}", text);
        prop_assert_eq!(parse_iso_millis(&text), Some(millis), "{}", text);
        // Reformatting what was parsed gives the same text.
        prop_assert_eq!(format_iso_millis(parse_iso_millis(&text).unwrap()), text);
    }

    /// An offset form names the same instant as its UTC form.
    #[test]
    fn iso_offsets_name_the_same_instant(
        millis in 0i64..=4_102_444_800_000i64,
        offset_minutes in -(14 * 60)..=(14 * 60i64),
    ) {
        let local = millis + offset_minutes * 60_000;
        let utc_text = format_iso_millis(local);
        let sign = if offset_minutes < 0 { '-' } else { '+' };
        let abs = offset_minutes.abs();
        let with_offset = format!("{}{sign}{:02}:{:02}", &utc_text[..23], abs / 60, abs % 60);
        prop_assert_eq!(parse_iso_millis(&with_offset), Some(millis), "{}", with_offset);
    }
}

/// Known values, as JavaScript's `new Date(ms).toISOString()` prints them.
#[test]
fn iso_millis_known_values() {
    for (millis, text) in [
        (0, "1970-01-01T00:00:00.000Z"),
        (1_785_585_600_512, "2026-08-01T12:00:00.512Z"),
        (1_785_659_415_250, "2026-08-02T08:30:15.250Z"),
        (951_868_800_000, "2000-03-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
    ] {
        assert_eq!(format_iso_millis(millis), text);
        assert_eq!(parse_iso_millis(text), Some(millis), "{text}");
    }
    // Past four-digit years every digit is kept (and the shape stays readable).
    assert_eq!(
        format_iso_millis(253_402_300_800_000),
        "10000-01-01T00:00:00.000Z"
    );
}
