//! The index parser's fast path (issue 15): entries are collected, sorted once and bulk-built
//! into the map, known fields are read without a `serde_json::Value`. These cases pin what it accepts and
//! refuses, with which message, to what the parser before it did (they pass against both).

use s3sync_core::index::Index;

/// The index parser sorts the entries it read and builds the map from them at the end; entries
/// in any order read the same, and a repeated key is refused wherever it sits.
#[test]
fn entries_out_of_order_parse_and_repeats_are_refused() {
    let entry = |rel: &str| format!(r#""{rel}":{{"key":"{rel}","size":1}}"#);
    let doc = |rels: &[&str]| {
        let body: Vec<String> = rels.iter().map(|r| entry(r)).collect();
        format!(r#"{{"version":1,"entries":{{{}}}}}"#, body.join(","))
    };
    let sorted = Index::parse(doc(&["a", "b", "c"]).as_bytes()).expect("sorted parses");
    let shuffled = Index::parse(doc(&["b", "c", "a"]).as_bytes()).expect("shuffled parses");
    assert_eq!(sorted, shuffled);
    assert_eq!(shuffled.entries.len(), 3);
    for repeated in [
        &["a", "a"][..],
        &["a", "b", "a"],
        &["b", "a", "b"],
        &["c", "a", "b", "a"],
    ] {
        let error = Index::parse(doc(repeated).as_bytes()).expect_err("a repeat is refused");
        assert!(
            error.to_string().contains("appears twice"),
            "{repeated:?}: {error}"
        );
    }
    // Parsing finishes before the repeat is seen: a malformed entry after a repeated key is
    // the error reported (both refuse the index as corrupt; only the message differs).
    let body = format!(
        r#"{{"version":1,"entries":{{{},{},"c":{{"key":"c","size":-1}}}}}}"#,
        entry("a"),
        entry("a")
    );
    let error = Index::parse(body.as_bytes()).expect_err("refused");
    assert!(
        error.to_string().contains("\"size\" is negative"),
        "{error}"
    );
    assert_eq!(error.code(), "index-corrupt");
}

/// Known fields are read without building a `serde_json::Value`; their checks refuse the same
/// values with the same messages (each case names the field's rule).
#[test]
fn known_field_values_are_judged_as_before() {
    let with = |fields: &str| format!(r#"{{"version":1,"entries":{{"d/x":{{{fields}}}}}}}"#);
    let accepted = [
        r#""key":"d/x","size":0"#,
        r#""key":"d\/x","size":0"#,
        r#""size":9007199254740991,"lastModified":null,"localMtime":null,"sha256":null"#,
        r#""size":1,"lastModified":"t","localMtime":"\u0074","sha256":"ab""#,
    ];
    for fields in accepted {
        Index::parse(with(fields).as_bytes()).unwrap_or_else(|e| panic!("{fields}: {e}"));
    }
    let refused = [
        (r#""key":["d/x"],"size":1"#, "\"key\" must be a string"),
        (r#""key":{"a":[1]},"size":1"#, "\"key\" must be a string"),
        (r#""key":"d/y","size":1"#, "not its map key"),
        (r#""size":-1"#, "\"size\" is negative"),
        (r#""size":-0"#, "\"size\" must be a non-negative integer"),
        (r#""size":1.5"#, "\"size\" must be a non-negative integer"),
        (r#""size":1e3"#, "\"size\" must be a non-negative integer"),
        (r#""size":"1""#, "\"size\" must be a non-negative integer"),
        (r#""size":9007199254740992"#, "larger than 2^53-1"),
        (
            r#""size":1,"lastModified":5"#,
            "\"lastModified\" must be a string",
        ),
        (
            r#""size":1,"localMtime":[true]"#,
            "\"localMtime\" must be a string",
        ),
        (r#""size":1,"sha256":false"#, "\"sha256\" must be a string"),
        (r#""size":1,"sha256":"a","sha256":"b""#, "appears twice"),
        // A repeat is refused whatever the first value was, null included.
        (r#""size":1,"sha256":null,"sha256":"b""#, "appears twice"),
        (
            r#""size":1,"lastModified":null,"lastModified":null"#,
            "appears twice",
        ),
        (
            r#""size":1,"localMtime":null,"localMtime":"t""#,
            "appears twice",
        ),
        (r#""size":1,"size":1"#, "appears twice"),
    ];
    for (fields, message) in refused {
        let error = Index::parse(with(fields).as_bytes()).expect_err(fields);
        let text = error.to_string();
        assert!(
            text.contains(message) && text.contains("\"d/x\""),
            "{fields}: {text}"
        );
    }
}

/// `Index::parse_owned` (the WASM surface's path: the bytes are freed before the map is built)
/// accepts and refuses exactly what `Index::parse` does, with the same message.
#[test]
fn parse_owned_reads_as_parse() {
    let documents = [
        r#"{"version":1,"entries":{}}"#,
        r#"{"version":1,"lastPulled":"t","entries":{"b":{"key":"b","size":2},"a":{"key":"a","size":1}},"x":[1]}"#,
        r#"{"entries":{"a":{"key":"a","size":1}}}"#,
        r#"{"version":1,"entries":{"a":{"key":"a","size":1},"a":{"key":"a","size":1}}}"#,
        r#"{"version":2,"entries":{"a":{"key":"a","size":1},"a":{"key":"a","size":1}}}"#,
        r#"{"version":2,"entries":{}}"#,
        r#"{"version":1}"#,
        r#"{"version":1,"entries":{"a":{"key":"b","size":1}}}"#,
        r#"{"version":1,"entries":{"a":{"key":"a","size":1}}} trailing"#,
        "",
    ];
    for document in documents {
        let borrowed = Index::parse(document.as_bytes()).map_err(|e| e.to_string());
        let owned = Index::parse_owned(document.as_bytes().to_vec()).map_err(|e| e.to_string());
        assert_eq!(borrowed, owned, "{document}");
    }
    // A repeated key is refused before the version is judged, as when it was a parse error.
    let error = Index::parse(documents[4].as_bytes()).expect_err("refused");
    assert!(error.to_string().contains("appears twice"), "{error}");
}

/// The fast reader of the common shape (`src/index/scan.rs`) and serde's general reader give the
/// same index, or the same error, for every fixture and for documents on the edge of the shape:
/// whitespace, escapes, unknown fields, nulls, numbers that are not plain, a cut document.
#[test]
fn fast_and_general_readers_agree() {
    // Every file of tests/fixtures/index, v1 or not (a shard or a meta read as a monolith is
    // refused alike by both).
    let fixtures = [
        include_bytes!("fixtures/index/meta-v1.json").as_slice(),
        include_bytes!("fixtures/index/meta-v2-minimal.json").as_slice(),
        include_bytes!("fixtures/index/meta-v2.json").as_slice(),
        include_bytes!("fixtures/index/shard-_root.json").as_slice(),
        include_bytes!("fixtures/index/shard-data--x--y--m1.json").as_slice(),
        include_bytes!("fixtures/index/shard-workflow-runs--wf-1.json").as_slice(),
        include_bytes!("fixtures/index/v1-empty-entries.json").as_slice(),
        include_bytes!("fixtures/index/v1-full.json").as_slice(),
        include_bytes!("fixtures/index/v1-js-order.json").as_slice(),
        include_bytes!("fixtures/index/v1-no-version-no-last-pulled.json").as_slice(),
        include_bytes!("fixtures/index/v1-old-writer.json").as_slice(),
        include_bytes!("fixtures/index/v1-unknown-fields.json").as_slice(),
    ]
    .map(<[u8]>::to_vec);
    let edges = [
        r#"{"version":1,"lastPulled":null,"entries":{"a":{"key":"a","size":0,"lastModified":null,"localMtime":null,"sha256":null}}}"#,
        "{\n  \"version\": 1,\n  \"entries\": {\n    \"a\": {\n      \"key\": \"a\",\n      \"size\": 7\n    }\n  }\n}\n",
        r#"{"entries":{"a\/b":{"key":"a/b","size":1}}}"#,
        r#"{"entries":{"é":{"key":"\u00e9","size":1}}}"#,
        r#"{"entries":{"a":{"size":1,"etag":"x"}}}"#,
        r#"{"entries":{"a":{"size":01}}}"#,
        r#"{"entries":{"a":{"size":1.0}}}"#,
        r#"{"entries":{"a":{"size":1}},"entries":{}}"#,
        r#"{"version":"1","entries":{}}"#,
        r#"{"version":1,"entries":{"a":{"key":"a","size":1}}"#,
        r#"{"version":1,"entries":{"a":{"key":"a","size":1}}}  "#,
        "{\"entries\":{\"a\u{1}\":{\"size\":1}}}",
    ];
    for bytes in fixtures
        .into_iter()
        .chain(edges.iter().map(|doc| doc.as_bytes().to_vec()))
    {
        let fast = Index::parse(&bytes).map_err(|e| e.to_string());
        let full = Index::parse_fully(&bytes).map_err(|e| e.to_string());
        assert_eq!(fast, full, "{}", String::from_utf8_lossy(&bytes));
    }
}
