//! The path-model table, shared by the native tests (`tests/paths.rs`) and the WASM tests
//! (`tests/wasm.rs`), so the same cases run against both builds.
//!
//! Every `check_*` function walks one table through the public Rust API and panics naming the
//! first case that disagrees. The tables are the rules of `shared/reference/datastore-formats.md`
//! plus the refusal reasons of `PathRefusal`.

// Each includer uses a different subset of the helpers.
#![allow(dead_code)]

use std::collections::BTreeSet;

use s3sync_core::error::{CoreError, PathRefusal};
use s3sync_core::model::paths::{
    find_collisions, is_internal, is_lazy_skippable, partition_key, CachePlace, Collision,
    CollisionKind, ForeignNamespaces, Namespace, PathModel, RelPath,
};

/// Every refusal reason, so a table can prove it names each one at least once.
pub const ALL_REFUSALS: &[PathRefusal] = &[
    PathRefusal::Empty,
    PathRefusal::Absolute,
    PathRefusal::DotSegment,
    PathRefusal::EmptySegment,
    PathRefusal::TrailingSlash,
    PathRefusal::Backslash,
    PathRefusal::ControlCharacter,
    PathRefusal::DriveLetter,
    PathRefusal::ReservedName,
    PathRefusal::TooLong,
    PathRefusal::NamespaceNotOneSegment,
    PathRefusal::NamespaceReservedPrefix,
    PathRefusal::NamespaceReservedName,
];

/// `(input, code)`: inputs `RelPath::parse` must refuse, with the exact code.
pub const REL_REFUSALS: &[(&str, &str)] = &[
    ("", "path-empty"),
    ("/", "path-absolute"),
    ("/a", "path-absolute"),
    ("/data/x/raw", "path-absolute"),
    ("//a", "path-absolute"),
    (".", "path-dot-segment"),
    ("..", "path-dot-segment"),
    ("../x", "path-dot-segment"),
    ("../../etc/passwd", "path-dot-segment"),
    ("a/./b", "path-dot-segment"),
    ("a/../b", "path-dot-segment"),
    ("a/..", "path-dot-segment"),
    ("./a", "path-dot-segment"),
    ("a//b", "path-empty-segment"),
    ("data//x/raw", "path-empty-segment"),
    ("a/", "path-trailing-slash"),
    ("data/x/", "path-trailing-slash"),
    ("a\\b", "path-backslash"),
    ("\\", "path-backslash"),
    ("..\\..\\x", "path-backslash"),
    ("C:\\x", "path-backslash"),
    ("a\u{0}b", "path-control-character"),
    ("a\nb", "path-control-character"),
    ("a\rb", "path-control-character"),
    ("\tx", "path-control-character"),
    ("a\u{1b}[31m", "path-control-character"),
    ("a\u{7f}", "path-control-character"),
    ("a\u{85}b", "path-control-character"),
    ("a\u{9f}", "path-control-character"),
    ("C:", "path-drive-letter"),
    ("c:", "path-drive-letter"),
    ("c:/windows", "path-drive-letter"),
    ("data/D:evil", "path-drive-letter"),
    ("z:x", "path-drive-letter"),
    ("CON", "path-reserved-name"),
    ("con", "path-reserved-name"),
    ("Con.txt", "path-reserved-name"),
    ("data/x/NUL", "path-reserved-name"),
    ("aux.tar.gz", "path-reserved-name"),
    ("PRN", "path-reserved-name"),
    ("COM1", "path-reserved-name"),
    ("com9.log", "path-reserved-name"),
    ("LPT1", "path-reserved-name"),
    ("lpt5.x", "path-reserved-name"),
    ("CON .txt", "path-reserved-name"),
];

/// Inputs `RelPath::parse` must accept: near misses of every rule.
pub const REL_ACCEPTED: &[&str] = &[
    "a",
    "data/x/y/m1/state/1/raw",
    "..a",
    ".a",
    "a/.hidden/b",
    "a.b/c..d",
    "-",
    "a b/c d",
    "données/é/日本語",
    "emoji/🦀",
    "COM0",
    "COM10",
    "LPT",
    "CONSOLE",
    "xcon",
    "con-x",
    "1:",
    "ab:c",
];

/// Keys that look like the rules forbid them but do not: kept separate from `REL_ACCEPTED` so
/// the reason for each is written down.
pub const REL_ACCEPTED_EXTRA: &[(&str, &str)] = &[
    (
        "_index",
        "internal, but a safe path: internal-ness is a separate rule",
    ),
    (".datastore-index.json", "internal, but a safe path"),
    (
        "secrets/x",
        "never synced (solo or namespaced), but a safe path",
    ),
    ("a%2F..%2Fb", "percent-encoding is not decoded"),
    ("a\u{a0}b", "a no-break space is not a control character"),
    (
        "a\u{200b}b",
        "a zero-width space is a format character, not a control character",
    ),
];

/// The code of a path error, or a description of what else came back.
pub fn code_of<T: std::fmt::Debug>(result: &Result<T, CoreError>) -> String {
    match result {
        Ok(value) => format!("accepted as {value:?}"),
        Err(error) => error.code().to_string(),
    }
}

/// `n` bytes of ASCII `a`.
pub fn ascii(n: usize) -> String {
    "a".repeat(n)
}

/// A path of exactly `n` bytes of ASCII `a` in segments of at most 255 bytes (the name limit),
/// so only the whole-key limit can refuse it.
pub fn long_path(n: usize) -> String {
    let mut path = String::new();
    while path.len() < n {
        if !path.is_empty() {
            path.push('/');
        }
        let room = n - path.len();
        // Never leave a lone byte for a last segment after a slash: shorten this one instead.
        let take = if room > 255 { 255.min(room - 2) } else { room };
        path.push_str(&ascii(take));
    }
    path
}

/// Rel refusals that need generated inputs (the 1,024-byte limit, the 255-byte name limit).
pub fn rel_refusals_generated() -> Vec<(String, &'static str)> {
    vec![
        (ascii(1025), "path-too-long"),
        (format!("data/{}", ascii(1020)), "path-too-long"),
        // 513 two-byte characters: 513 chars, 1,026 bytes. The limit counts bytes.
        ("é".repeat(513), "path-too-long"),
        // The length is checked before anything else, so even a traversal is "too long".
        (format!("../{}", ascii(1022)), "path-too-long"),
        // A name over 255 bytes fits S3 and no file system.
        (ascii(256), "path-segment-too-long"),
        (
            format!("logs/{}/x.log", ascii(256)),
            "path-segment-too-long",
        ),
        // 128 two-byte characters: 256 bytes. The limit counts bytes.
        (format!("logs/{}", "é".repeat(128)), "path-segment-too-long"),
    ]
}

/// Rels right at the limit, which must be accepted.
pub fn rel_accepted_generated() -> Vec<String> {
    vec![
        long_path(1024),
        ascii(255),
        format!("logs/{}", "é".repeat(127)),
        // Four 254-byte names and a 4-byte one: 1,024 bytes, every name within the limit.
        format!("{}/éé", vec!["é".repeat(127); 4].join("/")),
        format!("data/{}", long_path(1019)),
    ]
}

pub fn check_rel_refusals() {
    let mut cases: Vec<(String, &str)> = REL_REFUSALS
        .iter()
        .map(|(input, code)| (input.to_string(), *code))
        .collect();
    cases.extend(rel_refusals_generated());
    for (input, code) in &cases {
        let result = RelPath::parse(input);
        assert_eq!(
            code_of(&result),
            *code,
            "RelPath::parse({input:?}) should be refused with {code}"
        );
        // The error says what was refused, in lowercase, and names the input.
        let error = result.unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("unsafe path "),
            "message of {input:?}: {message}"
        );
        match &error {
            CoreError::UnsafePath { path, reason } => {
                assert_eq!(path, input);
                assert_eq!(reason.code(), *code);
                assert!(message.ends_with(reason.describe()), "{message}");
            }
            other => panic!("{input:?}: expected UnsafePath, got {other:?}"),
        }
    }
}

pub fn check_rel_accepted() {
    let mut inputs: Vec<String> = REL_ACCEPTED.iter().map(|s| s.to_string()).collect();
    inputs.extend(REL_ACCEPTED_EXTRA.iter().map(|(s, _)| s.to_string()));
    inputs.extend(rel_accepted_generated());
    for input in &inputs {
        let rel = RelPath::parse(input)
            .unwrap_or_else(|e| panic!("RelPath::parse({input:?}) refused: {e}"));
        assert_eq!(rel.as_str(), input);
        assert_eq!(rel.to_string(), *input);
        assert_eq!(rel.clone().into_string(), *input);
        assert_eq!(rel.first_segment(), input.split('/').next().unwrap());
        assert_eq!(rel.basename(), input.rsplit('/').next().unwrap());
    }
}

/// `(input, code)`: inputs `Namespace::parse` must refuse.
pub const NAMESPACE_REFUSALS: &[(&str, &str)] = &[
    ("", "path-empty"),
    ("/ns", "path-absolute"),
    (".", "path-dot-segment"),
    ("..", "path-dot-segment"),
    ("ns/", "path-trailing-slash"),
    ("ns//x", "path-empty-segment"),
    ("n\\s", "path-backslash"),
    ("ns\u{0}", "path-control-character"),
    ("n\ns", "path-control-character"),
    ("C:", "path-drive-letter"),
    ("c:ns", "path-drive-letter"),
    ("CON", "path-reserved-name"),
    ("nul.ns", "path-reserved-name"),
    ("a/b", "namespace-not-one-segment"),
    ("team/prod/eu", "namespace-not-one-segment"),
    (".hidden", "namespace-reserved-prefix"),
    (".namespace.json", "namespace-reserved-prefix"),
    ("_index", "namespace-reserved-prefix"),
    ("_control", "namespace-reserved-prefix"),
    ("_x", "namespace-reserved-prefix"),
    ("data", "namespace-reserved-name"),
    ("outputs", "namespace-reserved-name"),
    ("definitions-evaluated", "namespace-reserved-name"),
    ("workflow-runs", "namespace-reserved-name"),
    ("workflows-evaluated", "namespace-reserved-name"),
    ("auto-definitions", "namespace-reserved-name"),
    ("audit", "namespace-reserved-name"),
    ("telemetry", "namespace-reserved-name"),
    ("logs", "namespace-reserved-name"),
    ("files", "namespace-reserved-name"),
    ("secrets", "namespace-reserved-name"),
];

pub const NAMESPACE_ACCEPTED: &[&str] = &[
    "ns",
    "team-a",
    "prod.eu",
    "n_s",
    "équipe",
    "1",
    "data-2",
    "datas",
    "my-secrets",
    "COM0",
];

pub fn check_namespace_refusals() {
    let mut cases: Vec<(String, &str)> = NAMESPACE_REFUSALS
        .iter()
        .map(|(input, code)| (input.to_string(), *code))
        .collect();
    cases.push((ascii(1025), "path-too-long"));
    for (input, code) in &cases {
        let result = Namespace::parse(input);
        assert_eq!(
            code_of(&result),
            *code,
            "Namespace::parse({input:?}) should be refused with {code}"
        );
        match result.unwrap_err() {
            CoreError::InvalidNamespace { namespace, reason } => {
                assert_eq!(&namespace, input);
                assert_eq!(reason.code(), *code);
            }
            other => panic!("{input:?}: expected InvalidNamespace, got {other:?}"),
        }
        // The same refusal stops a path model (and so a session) from being built at all; only
        // the empty namespace is special there: it means solo mode.
        if input.is_empty() {
            continue;
        }
        assert_eq!(
            code_of(&PathModel::new(Some(input), "")),
            *code,
            "PathModel::new({input:?})"
        );
    }
}

pub fn check_namespace_accepted() {
    for input in NAMESPACE_ACCEPTED {
        let ns = Namespace::parse(input)
            .unwrap_or_else(|e| panic!("Namespace::parse({input:?}) refused: {e}"));
        assert_eq!(ns.as_str(), *input);
        let model = PathModel::new(Some(input), "").unwrap();
        assert_eq!(model.namespace(), Some(&ns));
    }
    // An absent or empty namespace means solo mode.
    assert_eq!(PathModel::new(None, "").unwrap(), PathModel::solo());
    assert_eq!(PathModel::new(Some(""), "").unwrap(), PathModel::solo());
    assert_eq!(PathModel::solo().namespace(), None);
}

/// Every refusal code is named by at least one table case.
pub fn check_every_refusal_is_covered() {
    let mut named: BTreeSet<&str> = REL_REFUSALS.iter().map(|(_, c)| *c).collect();
    named.extend(NAMESPACE_REFUSALS.iter().map(|(_, c)| *c));
    named.extend(rel_refusals_generated().iter().map(|(_, c)| *c));
    for refusal in ALL_REFUSALS {
        assert!(
            named.contains(refusal.code()),
            "no table case for {refusal:?} ({})",
            refusal.code()
        );
        assert!(!refusal.describe().is_empty());
        assert_eq!(
            refusal.describe(),
            refusal.describe().to_lowercase(),
            "messages are lowercase"
        );
    }
    let codes: BTreeSet<&str> = ALL_REFUSALS.iter().map(|r| r.code()).collect();
    assert_eq!(codes.len(), ALL_REFUSALS.len(), "codes are distinct");
}

/// `(namespace, prefix, rel length in bytes, accepted)`: the 1,024-byte limit applies to the
/// full key `{prefix}/{namespace}/{rel}`, not to the rel alone.
pub const KEY_LIMIT_CASES: &[(Option<&str>, &str, usize, bool)] = &[
    (None, "", 1024, true),
    (None, "", 1025, false),
    (None, "p", 1022, true),
    (None, "p", 1023, false),
    // Slashes around the prefix are trimmed: "/p/" counts as "p" plus one separator.
    (None, "/p/", 1022, true),
    (None, "/p/", 1023, false),
    (None, "/", 1024, true),
    (Some("ns"), "", 1021, true),
    (Some("ns"), "", 1022, false),
    (Some("ns"), "p", 1019, true),
    (Some("ns"), "p", 1020, false),
    (Some("ns"), "team/swamp", 1010, true),
    (Some("ns"), "team/swamp", 1011, false),
];

pub fn check_key_limit() {
    for (namespace, prefix, len, accepted) in KEY_LIMIT_CASES {
        let model = PathModel::new(*namespace, prefix).unwrap();
        let rel = format!("data/{}", long_path(len - 5));
        assert_eq!(rel.len(), *len);
        let result = model.rel(&rel);
        let expected = if *accepted {
            format!("accepted as {:?}", RelPath::parse(&rel).unwrap())
        } else {
            "path-too-long".to_string()
        };
        assert_eq!(
            code_of(&result),
            expected,
            "namespace {namespace:?}, prefix {prefix:?}, rel of {len} bytes"
        );
        if let Ok(rel) = result {
            // The full key (prefix applied by the client) fits S3's limit exactly or better.
            let trimmed = prefix.trim_matches('/');
            let full = if trimmed.is_empty() {
                model.remote_key(&rel)
            } else {
                format!("{trimmed}/{}", model.remote_key(&rel))
            };
            assert!(full.len() <= 1024, "{} bytes", full.len());
        }
    }
    // The remote-key direction enforces the same limit.
    let model = PathModel::new(Some("ns"), "").unwrap();
    let fits = format!("ns/{}", long_path(1021));
    assert!(model.rel_from_remote_key(&fits).is_ok());
    let over = format!("ns/{}", long_path(1022));
    assert_eq!(code_of(&model.rel_from_remote_key(&over)), "path-too-long");
    let model = PathModel::new(Some("ns"), "prefix").unwrap();
    assert_eq!(
        code_of(&model.rel_from_remote_key(&fits)),
        "path-too-long",
        "with a prefix, a key that fits alone no longer does"
    );
    // Multi-byte characters count by bytes.
    let model = PathModel::new(Some("ns"), "").unwrap();
    // Four names of 127 two-byte characters (254 bytes each) and a one-byte last name.
    let wide = format!("{}/a", vec!["é".repeat(127); 4].join("/"));
    assert_eq!(wide.len(), 1021);
    assert!(model.rel(&wide).is_ok());
    assert_eq!(code_of(&model.rel(&format!("{wide}a"))), "path-too-long");
}

/// Rels `is_internal` must flag: every rule of the reference.
pub const INTERNAL_RELS: &[&str] = &[
    ".datastore-index.json",
    ".push-queue.json",
    ".datastore.lock",
    ".datastore-sync-state.json",
    "_index",
    "_index/_meta.json",
    "_index/data--aws--ec2--vpc--m-1.json",
    "_index/_root.json",
    "_control",
    "_control/lease.json",
    "_control/a/b/c",
    ".lock",
    "data/aws/ec2/vpc/m-1/.lock",
    "outputs/.lock",
    ".namespace.json",
    "other/.namespace.json",
    "a/b/c/.namespace.json",
    "_catalog.db",
    "data/_catalog.db",
    "_catalog.db-wal",
    "_catalog.db-shm",
    "_catalog.db-journal",
    "deep/down/_catalog.db-wal",
    "_catalog.db-",
];

/// Rels `is_internal` must not flag: near misses of every rule.
pub const PAYLOAD_RELS: &[&str] = &[
    "data/x/y/m1/state/1/raw",
    // The exact names count only at the root of the rel.
    "data/.datastore-index.json",
    "x/.push-queue.json",
    "x/.datastore.lock",
    "x/.datastore-sync-state.json",
    ".datastore-index.json.bak",
    "datastore-index.json",
    // `_index`/`_control` count only as the first segment.
    "_indexes/x",
    "_index.json",
    "x/_index/y",
    "_controls",
    "data/_control/x",
    // Basename rules are exact.
    "a.lock",
    ".lock.json",
    "lock",
    "data/x/.lock/y",
    ".namespace.json.bak",
    "namespace.json",
    "_catalog.dbx",
    "x_catalog.db",
    "_catalog.db.bak",
    "_catalog",
    "_catalog.db/x",
    // Nothing marks the catalog export internal (see the reference).
    ".catalog-export.json",
    "secrets/x",
];

pub fn check_is_internal() {
    for rel in INTERNAL_RELS {
        assert!(is_internal(rel), "{rel:?} should be internal");
    }
    for rel in PAYLOAD_RELS {
        assert!(!is_internal(rel), "{rel:?} should not be internal");
    }
}

/// What a cache path should classify as.
#[derive(Debug, Clone, Copy)]
pub enum Want {
    Payload(&'static str),
    Internal(&'static str),
    RootLayout(&'static str),
    Foreign(&'static str),
    Other,
    Unsafe(&'static str),
}

impl Want {
    pub fn matches(self, place: &CachePlace) -> bool {
        match (self, place) {
            (Want::Payload(want), CachePlace::Payload(rel)) => rel.as_str() == want,
            (Want::Internal(want), CachePlace::Internal(rel)) => rel == want,
            (Want::RootLayout(want), CachePlace::RootLayout(rel)) => rel.as_str() == want,
            (Want::Foreign(want), CachePlace::ForeignNamespace(ns)) => ns == want,
            (Want::Other, CachePlace::Other) => true,
            (Want::Unsafe(code), CachePlace::Unsafe(reason)) => reason.code() == code,
            _ => false,
        }
    }
}

/// `(namespace, foreign folders, cache path, expected place)`.
pub const CLASSIFY_CASES: &[(Option<&str>, &[&str], &str, Want)] = &[
    // Solo: the cache root is the bound tree.
    (
        None,
        &[],
        "data/x/y/m1/state/1/raw",
        Want::Payload("data/x/y/m1/state/1/raw"),
    ),
    (None, &[], "README", Want::Payload("README")),
    (
        None,
        &[],
        ".catalog-export.json",
        Want::Payload(".catalog-export.json"),
    ),
    (
        None,
        &[],
        ".datastore-index.json",
        Want::Internal(".datastore-index.json"),
    ),
    (
        None,
        &[],
        ".push-queue.json",
        Want::Internal(".push-queue.json"),
    ),
    (
        None,
        &[],
        ".datastore.lock",
        Want::Internal(".datastore.lock"),
    ),
    (
        None,
        &[],
        ".datastore-sync-state.json",
        Want::Internal(".datastore-sync-state.json"),
    ),
    (None, &[], "_index", Want::Internal("_index")),
    (
        None,
        &[],
        "_index/_meta.json",
        Want::Internal("_index/_meta.json"),
    ),
    (None, &[], "_index/x.json", Want::Internal("_index/x.json")),
    (
        None,
        &[],
        "_control/lease.json",
        Want::Internal("_control/lease.json"),
    ),
    (None, &[], "data/a/.lock", Want::Internal("data/a/.lock")),
    (None, &[], ".lock", Want::Internal(".lock")),
    (
        None,
        &[],
        ".namespace.json",
        Want::Internal(".namespace.json"),
    ),
    (
        None,
        &[],
        "x/y/.namespace.json",
        Want::Internal("x/y/.namespace.json"),
    ),
    (None, &[], "_catalog.db", Want::Internal("_catalog.db")),
    (
        None,
        &[],
        "_catalog.db-wal",
        Want::Internal("_catalog.db-wal"),
    ),
    (
        None,
        &[],
        "data/_catalog.db-shm",
        Want::Internal("data/_catalog.db-shm"),
    ),
    (
        None,
        &[],
        "data/.datastore-index.json",
        Want::Payload("data/.datastore-index.json"),
    ),
    (None, &[], "secrets/vault.key", Want::Other),
    (None, &["other"], "other/data/x/raw", Want::Foreign("other")),
    (
        None,
        &["other"],
        "other/.namespace.json",
        Want::Foreign("other"),
    ),
    (
        None,
        &["other"],
        "otherwise/x",
        Want::Payload("otherwise/x"),
    ),
    (None, &["other"], "other", Want::Payload("other")),
    (None, &[], "../x", Want::Unsafe("path-dot-segment")),
    (None, &[], "/etc/passwd", Want::Unsafe("path-absolute")),
    (None, &[], "a//b", Want::Unsafe("path-empty-segment")),
    (None, &[], "a/", Want::Unsafe("path-trailing-slash")),
    (None, &[], "a\\b", Want::Unsafe("path-backslash")),
    (None, &[], "a\u{1}", Want::Unsafe("path-control-character")),
    (None, &[], "", Want::Unsafe("path-empty")),
    (None, &[], "data/c:", Want::Unsafe("path-drive-letter")),
    (None, &[], "data/CON", Want::Unsafe("path-reserved-name")),
    // Namespaced: `ns/` is the bound tree; the check runs on the rel after stripping it.
    (
        Some("ns"),
        &[],
        "ns/data/x/y/m1/state/1/raw",
        Want::Payload("data/x/y/m1/state/1/raw"),
    ),
    (Some("ns"), &[], "ns/README", Want::Payload("README")),
    (
        Some("ns"),
        &[],
        "ns/.catalog-export.json",
        Want::Payload(".catalog-export.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/_index/x.json",
        Want::Internal("_index/x.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/_index/_meta.json",
        Want::Internal("_index/_meta.json"),
    ),
    (Some("ns"), &[], "ns/_index", Want::Internal("_index")),
    (
        Some("ns"),
        &[],
        "ns/_control/lease.json",
        Want::Internal("_control/lease.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/data/a/.lock",
        Want::Internal("data/a/.lock"),
    ),
    (Some("ns"), &[], "ns/.lock", Want::Internal(".lock")),
    (
        Some("ns"),
        &[],
        "ns/.namespace.json",
        Want::Internal(".namespace.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/.datastore-index.json",
        Want::Internal(".datastore-index.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/.push-queue.json",
        Want::Internal(".push-queue.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/.datastore.lock",
        Want::Internal(".datastore.lock"),
    ),
    (
        Some("ns"),
        &[],
        "ns/.datastore-sync-state.json",
        Want::Internal(".datastore-sync-state.json"),
    ),
    (
        Some("ns"),
        &[],
        "ns/_catalog.db",
        Want::Internal("_catalog.db"),
    ),
    (
        Some("ns"),
        &[],
        "ns/_catalog.db-wal",
        Want::Internal("_catalog.db-wal"),
    ),
    (
        Some("ns"),
        &[],
        "ns/data/_catalog.db-shm",
        Want::Internal("data/_catalog.db-shm"),
    ),
    // The root's own bookkeeping (the local index and sidecar live at the cache root).
    (
        Some("ns"),
        &[],
        ".datastore-index.json",
        Want::Internal(".datastore-index.json"),
    ),
    (
        Some("ns"),
        &[],
        ".datastore-sync-state.json",
        Want::Internal(".datastore-sync-state.json"),
    ),
    // The seed bug's layout: data trees at the root in namespaced mode.
    (
        Some("ns"),
        &[],
        "data/x/y/m1/state/1/raw",
        Want::RootLayout("data/x/y/m1/state/1/raw"),
    ),
    (
        Some("ns"),
        &[],
        "outputs/a/b",
        Want::RootLayout("outputs/a/b"),
    ),
    (
        Some("ns"),
        &[],
        "workflow-runs/w/r.yaml",
        Want::RootLayout("workflow-runs/w/r.yaml"),
    ),
    (
        Some("ns"),
        &[],
        "data/a/.lock",
        Want::Internal("data/a/.lock"),
    ),
    (
        Some("ns"),
        &[],
        "data/x/CON",
        Want::Unsafe("path-reserved-name"),
    ),
    (Some("ns"), &[], "data", Want::Other),
    // Outside the bound tree.
    (
        Some("ns"),
        &["other"],
        "other/data/x/raw",
        Want::Foreign("other"),
    ),
    (
        Some("ns"),
        &["other"],
        "other/.namespace.json",
        Want::Foreign("other"),
    ),
    (Some("ns"), &[], "nsx/data/x", Want::Other),
    (Some("ns"), &[], "NS/data/x", Want::Other),
    (Some("ns"), &[], "ns", Want::Other),
    (Some("ns"), &[], "secrets/vault.key", Want::Other),
    (Some("ns"), &[], "_index/x.json", Want::Other),
    (Some("ns"), &[], "README", Want::Other),
    // Unsafe, judged on the whole path first.
    (Some("ns"), &[], "ns/../x", Want::Unsafe("path-dot-segment")),
    (
        Some("ns"),
        &[],
        "ns/a//b",
        Want::Unsafe("path-empty-segment"),
    ),
    (Some("ns"), &[], "ns/", Want::Unsafe("path-trailing-slash")),
    (Some("ns"), &[], "/ns/a", Want::Unsafe("path-absolute")),
    (Some("ns"), &[], "ns/a\\b", Want::Unsafe("path-backslash")),
    (
        Some("ns"),
        &[],
        "ns/a\u{0}",
        Want::Unsafe("path-control-character"),
    ),
];

fn foreign_set(folders: &[&str]) -> ForeignNamespaces {
    folders.iter().map(|f| f.to_string()).collect()
}

pub fn check_classify() {
    for (namespace, foreign, path, want) in CLASSIFY_CASES {
        let model = PathModel::new(*namespace, "").unwrap();
        let place = model.classify_cache_path(path, &foreign_set(foreign));
        assert!(
            want.matches(&place),
            "namespace {namespace:?}, foreign {foreign:?}: {path:?} classified as {place:?}, want {want:?}"
        );
    }
    // The internal-file rules hold in both forms: `<rel>` solo and `<ns>/<rel>` namespaced.
    let solo = PathModel::solo();
    let namespaced = PathModel::new(Some("ns"), "").unwrap();
    let none = ForeignNamespaces::new();
    for rel in INTERNAL_RELS {
        assert_eq!(
            solo.classify_cache_path(rel, &none),
            CachePlace::Internal(rel.to_string()),
            "solo {rel:?}"
        );
        assert_eq!(
            namespaced.classify_cache_path(&format!("ns/{rel}"), &none),
            CachePlace::Internal(rel.to_string()),
            "namespaced ns/{rel:?}"
        );
    }
    for rel in PAYLOAD_RELS {
        // `secrets/` never syncs, in the cache root (solo) or inside the namespace folder.
        let want = if rel.starts_with("secrets/") {
            CachePlace::Other
        } else {
            CachePlace::Payload(RelPath::parse(rel).unwrap())
        };
        assert_eq!(solo.classify_cache_path(rel, &none), want, "solo {rel:?}");
        assert_eq!(
            namespaced.classify_cache_path(&format!("ns/{rel}"), &none),
            want,
            "namespaced ns/{rel:?}"
        );
    }
    // A prefix shortens what fits: classify applies the full-key limit too.
    let prefixed = PathModel::new(Some("ns"), "prefix").unwrap();
    let long = format!("ns/{}", long_path(1021));
    assert!(matches!(
        namespaced.classify_cache_path(&long, &none),
        CachePlace::Payload(_)
    ));
    assert_eq!(
        prefixed.classify_cache_path(&long, &none),
        CachePlace::Unsafe(PathRefusal::TooLong)
    );
}

/// `(rel, lazily skippable)`.
pub const LAZY_CASES: &[(&str, bool)] = &[
    ("data/x/raw", true),
    ("data/x/y/m1/state/1/raw", true),
    ("data/aws/ec2/vpc/abc-123/state-main/1/raw", true),
    ("data/raw", false),
    ("raw", false),
    ("data", false),
    ("outputs/x/y/raw", false),
    ("files/x/raw", false),
    ("data/x/y/metadata.yaml", false),
    ("data/x/raw.bak", false),
    ("data/x/raw/y", false),
    ("data/x/RAW", false),
    ("ns/data/x/raw", false),
];

pub fn check_lazy() {
    for (rel, want) in LAZY_CASES {
        assert_eq!(is_lazy_skippable(rel), *want, "is_lazy_skippable({rel:?})");
    }
}

/// `(rel, partition key)`, every rule of the v2 layout.
pub const PARTITION_CASES: &[(&str, Option<&str>)] = &[
    // The empty rel names no file: no shard.
    ("", None),
    // One segment.
    ("README", Some("_root")),
    (".datastore-index.json", Some("_root")),
    ("data", Some("_root")),
    // data / outputs / definitions-evaluated: n >= 6 takes n-3, 4..=5 takes n-1, < 4 none.
    (
        "data/aws/ec2/vpc/abc-123/state-main/1/raw",
        Some("data--aws--ec2--vpc--abc-123"),
    ),
    ("data/x/y/m1/state/1/raw", Some("data--x--y--m1")),
    ("data/a/b/c/d/e", Some("data--a--b")),
    ("data/a/b/c/d", Some("data--a--b--c")),
    ("data/a/b/c", Some("data--a--b")),
    ("data/a/b", None),
    ("data/a", None),
    ("outputs/t/m/o/1/raw", Some("outputs--t--m")),
    ("outputs/a/b/c", Some("outputs--a--b")),
    ("outputs/a/b", None),
    (
        "definitions-evaluated/a/b/c",
        Some("definitions-evaluated--a--b"),
    ),
    (
        "definitions-evaluated/a/b/c/d/e/f",
        Some("definitions-evaluated--a--b--c"),
    ),
    ("definitions-evaluated/a/b", None),
    // workflow-runs: >= 3 segments, `workflow-runs--{segment 2}`.
    ("workflow-runs/wf-1/run-1.yaml", Some("workflow-runs--wf-1")),
    ("workflow-runs/wf-1/a/b/c/d", Some("workflow-runs--wf-1")),
    ("workflow-runs/wf-1", None),
    // The single-shard trees partition by their name.
    (
        "workflows-evaluated/runs/1/evaluated.yaml",
        Some("workflows-evaluated"),
    ),
    ("workflows-evaluated/x", Some("workflows-evaluated")),
    ("auto-definitions/x.yaml", Some("auto-definitions")),
    ("audit/2026/08/01.log", Some("audit")),
    ("telemetry/t", Some("telemetry")),
    ("logs/l/m", Some("logs")),
    ("files/f", Some("files")),
    // Anything else has no partition (reported by the caller, never dropped).
    ("secrets/x", None),
    ("other/a/b/c", None),
    ("_index/x.json", None),
    ("Data/a/b/c", None),
];

pub fn check_partition_keys() {
    for (rel, want) in PARTITION_CASES {
        assert_eq!(
            partition_key(rel).as_deref(),
            *want,
            "partition_key({rel:?})"
        );
    }
}

/// `(paths, expected collisions as (kind, sorted paths))`.
/// One collision case: the paths, and the collisions expected as (kind, sorted paths).
pub type CollisionCase = (Vec<&'static str>, Vec<(CollisionKind, Vec<&'static str>)>);

pub fn collision_cases() -> Vec<CollisionCase> {
    vec![
        (
            vec!["a/B", "a/b"],
            vec![(CollisionKind::CaseFold, vec!["a/B", "a/b"])],
        ),
        (
            vec!["data/Model/raw", "data/model/raw", "DATA/MODEL/RAW"],
            vec![(
                CollisionKind::CaseFold,
                vec!["DATA/MODEL/RAW", "data/Model/raw", "data/model/raw"],
            )],
        ),
        // NFC "café" vs NFD "cafe" + combining acute: one name on APFS.
        (
            vec!["caf\u{e9}", "cafe\u{301}"],
            vec![(CollisionKind::CaseFold, vec!["cafe\u{301}", "caf\u{e9}"])],
        ),
        // Case and normalisation at once.
        (
            vec!["x/CAF\u{c9}", "x/cafe\u{301}"],
            vec![(
                CollisionKind::CaseFold,
                vec!["x/CAF\u{c9}", "x/cafe\u{301}"],
            )],
        ),
        // A file where another path needs a folder.
        (
            vec!["a", "a/b"],
            vec![(CollisionKind::FileFolder, vec!["a", "a/b"])],
        ),
        (
            vec!["data/x", "data/x/y/z"],
            vec![(CollisionKind::FileFolder, vec!["data/x", "data/x/y/z"])],
        ),
        // ... also when only the folded names clash.
        (
            vec!["A", "a/b"],
            vec![(CollisionKind::FileFolder, vec!["A", "a/b"])],
        ),
        // No clash.
        (vec!["x/y", "x/z", "xy", "x-y/z"], vec![]),
        (vec!["a", "a"], vec![]),
        (vec!["ab", "a/b"], vec![]),
        (vec![], vec![]),
    ]
}

fn normalised(collisions: &[Collision]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = collisions
        .iter()
        .map(|c| (format!("{:?}", c.kind), c.paths.clone()))
        .collect();
    out.sort();
    out
}

pub fn check_collisions() {
    for (paths, want) in collision_cases() {
        let got = find_collisions(paths.iter().copied());
        for collision in &got {
            let mut sorted = collision.paths.clone();
            sorted.sort();
            assert_eq!(collision.paths, sorted, "paths of a collision are sorted");
        }
        let want: Vec<Collision> = want
            .into_iter()
            .map(|(kind, paths)| Collision {
                kind,
                paths: paths.into_iter().map(str::to_string).collect(),
            })
            .collect();
        assert_eq!(
            normalised(&got),
            normalised(&want),
            "find_collisions({paths:?})"
        );
    }
    // Case and file/folder at once: both are reported.
    let got = find_collisions(["data/x", "data/x/raw", "data/X/raw"]);
    let kinds: BTreeSet<String> = got.iter().map(|c| format!("{:?}", c.kind)).collect();
    assert_eq!(
        kinds,
        ["CaseFold", "FileFolder"]
            .into_iter()
            .map(str::to_string)
            .collect()
    );
    assert!(got.iter().any(|c| c.kind == CollisionKind::FileFolder
        && c.paths.contains(&"data/x".to_string())
        && c.paths.contains(&"data/X/raw".to_string())));
}

/// The seed bug: a namespaced remote key maps to the same cache path, never to the root.
pub fn check_seed_mapping() {
    let model = PathModel::new(Some("ns"), "").unwrap();
    let rel = model
        .rel_from_remote_key("ns/data/x/y/m1/state/1/raw")
        .unwrap();
    assert_eq!(rel.as_str(), "data/x/y/m1/state/1/raw");
    assert_eq!(model.index_key(&rel), "data/x/y/m1/state/1/raw");
    assert_eq!(model.remote_key(&rel), "ns/data/x/y/m1/state/1/raw");
    assert_eq!(model.cache_path(&rel), "ns/data/x/y/m1/state/1/raw");
    assert!(!model.cache_path(&rel).starts_with("data/"));
    assert_eq!(
        model.under_binding("_index/_meta.json"),
        "ns/_index/_meta.json"
    );
    // The prefix is the client's business: it never shows in the names.
    let prefixed = PathModel::new(Some("ns"), "team/swamp").unwrap();
    let rel = prefixed
        .rel_from_remote_key("ns/data/x/y/m1/state/1/raw")
        .unwrap();
    assert_eq!(prefixed.cache_path(&rel), "ns/data/x/y/m1/state/1/raw");
    assert_eq!(prefixed.remote_key(&rel), "ns/data/x/y/m1/state/1/raw");
    // Solo: all three names are the rel.
    let solo = PathModel::solo();
    let rel = solo.rel_from_remote_key("data/x/y/m1/state/1/raw").unwrap();
    assert_eq!(solo.remote_key(&rel), "data/x/y/m1/state/1/raw");
    assert_eq!(solo.cache_path(&rel), "data/x/y/m1/state/1/raw");
    assert_eq!(solo.index_key(&rel), "data/x/y/m1/state/1/raw");
}

/// `(namespace, remote key, code)`: keys `rel_from_remote_key` refuses.
pub const REMOTE_KEY_REFUSALS: &[(Option<&str>, &str, &str)] = &[
    (
        Some("ns"),
        "data/x/y/m1/state/1/raw",
        "key-outside-namespace",
    ),
    (Some("ns"), "nsx/data/x", "key-outside-namespace"),
    (Some("ns"), "NS/data/x", "key-outside-namespace"),
    (Some("ns"), "ns", "key-outside-namespace"),
    (Some("ns"), "other/ns/data/x", "key-outside-namespace"),
    (Some("ns"), "ns/", "path-empty"),
    (Some("ns"), "ns//x", "path-absolute"),
    (Some("ns"), "ns/../x", "path-dot-segment"),
    (Some("ns"), "ns/a//b", "path-empty-segment"),
    (Some("ns"), "ns/a/", "path-trailing-slash"),
    (Some("ns"), "ns/a\\b", "path-backslash"),
    (Some("ns"), "ns/a\u{7}", "path-control-character"),
    (Some("ns"), "ns/C:", "path-drive-letter"),
    (Some("ns"), "ns/aux", "path-reserved-name"),
    (None, "", "path-empty"),
    (None, "/data/x", "path-absolute"),
    (None, "../../etc/passwd", "path-dot-segment"),
    (None, "a//b", "path-empty-segment"),
];

pub fn check_remote_key_refusals() {
    for (namespace, key, code) in REMOTE_KEY_REFUSALS {
        let model = PathModel::new(*namespace, "").unwrap();
        assert_eq!(
            code_of(&model.rel_from_remote_key(key)),
            *code,
            "namespace {namespace:?}: rel_from_remote_key({key:?})"
        );
    }
    let model = PathModel::new(Some("ns"), "").unwrap();
    let error = model.rel_from_remote_key("data/x").unwrap_err();
    assert_eq!(
        error,
        CoreError::KeyOutsideNamespace {
            key: "data/x".into(),
            namespace: "ns".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "key \"data/x\" is outside namespace \"ns\""
    );
}
