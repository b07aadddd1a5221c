//! Regression tests for what the fuzz targets (fuzz/, see fuzz/RESULTS.md) found, each with the
//! exact input the target failed on, replayed through the same public API.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use s3sync_core::index::Index;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::push::plan::PushInput;
use s3sync_core::runs::rebuild::plan::RebuildBuilder;
use s3sync_core::runs::session::Session;
use s3sync_core::safety::{normalize_tombstone, DeletePolicy, Evidence};
use s3sync_core::wire::listing::{decode_remote, encode_local, encode_remote};
use serde_json::json;

/// index_v1, artifact crash-1384307bb222a178aaa1737fa0ce3cdc10265321: an unknown numeric field
/// with more digits than an f64 holds changed value on every read-write cycle (serde_json's
/// default float parser is not correctly rounded; fixed by its `float_roundtrip` feature).
#[test]
fn index_v1_unknown_float_fields_survive_a_round_trip() {
    let input: &[u8] = br#"{"version": 1, "entries": {"a": {"kdy": "a", "size": 5, "etag": 1.5, "n": -0.0, "big": 18446700000011801407261512564734, "sha256": null, "x": [5.1, 1e+300, -3]}}, "writer": {"floats": [3.141592653589793, 2.5e-308]}}"#;
    let index = Index::parse(input).unwrap();
    for json in [index.to_compact_json(), index.to_pretty_json()] {
        let again = Index::parse(&json).unwrap();
        assert_eq!(again, index, "{}", String::from_utf8_lossy(&json));
    }
    // And the value read is the correctly rounded one, as JavaScript reads it.
    let big = &index.entries.get("a").unwrap().extra.as_ref().unwrap()["big"];
    assert_eq!(
        big.as_f64(),
        "18446700000011801407261512564734".parse::<f64>().ok()
    );
}

/// listing_rebuild, seed `repeated-page` (the same page fed twice, as a retried page would be):
/// every key of it was seen twice but kept once, so the report did not add up.
#[test]
fn listing_rebuild_accounts_for_keys_listed_twice() {
    let page = encode_remote([
        (
            "data/aws/ec2/vpc/m-1/state/3/raw",
            12,
            Some("\"etag\""),
            Some("2026-08-01T12:00:00.000Z"),
        ),
        ("workflow-runs/wf-1/run.json", 40, None, None),
        (".datastore-index.json", 100, None, None),
        ("_index/_meta.json", 60, None, None),
        ("other/-x", 1, None, None),
        ("other/.namespace.json", 90, None, None),
        ("secrets/token", 32, None, None),
    ]);
    let model = PathModel::new(None, "swamp").unwrap();
    let mut builder = RebuildBuilder::new(model, "2026-08-01T12:00:00.000Z".into());
    builder.add_page(&decode_remote(&page).unwrap());
    builder.add_page(&decode_remote(&page).unwrap());
    let (index, report) = builder.finish(None);
    assert_eq!(report.objects_seen, 14);
    assert_eq!(report.kept, 2);
    assert_eq!(index.entries.len(), 2);
    assert_eq!(report.skipped_internal, 8);
    // `other/-x` twice: kept once, then dropped as foreign once, and once a duplicate.
    assert_eq!(report.skipped_foreign, 1);
    assert_eq!(report.skipped_duplicate, 3);
    assert_eq!(
        report.objects_seen,
        report.kept
            + report.skipped_internal
            + report.skipped_foreign
            + report.skipped_outside_namespace
            + report.skipped_unsafe
            + report.skipped_folder_markers
            + report.skipped_duplicate
    );
}

/// push_plan, seed `records-foreign-folder`: solo, the index names `other/x`, and the cache
/// holds `other/x` inside the folder of namespace `other` (it has `other/.namespace.json`).
/// The walk does not count the file as payload, so it looked absent, and the tombstone `other`
/// (and `--delete-missing`) planned a delete of the other namespace's object `other/x` while the
/// file sat in the cache.
#[test]
fn push_plan_never_deletes_entries_inside_a_foreign_namespace_folder() {
    let index = json!({"version": 1, "entries": {
        "files/a": {"key": "files/a", "size": 3, "lastModified": "2026-08-01T12:00:00.000Z",
                    "localMtime": "2026-08-01T12:00:00.512Z", "sha256": "a".repeat(64)},
        "files/gone": {"key": "files/gone", "size": 5, "lastModified": "2026-08-01T12:00:00.000Z"},
        "other/x": {"key": "other/x", "size": 1, "lastModified": "2026-08-01T12:00:00.000Z"},
    }});
    let listing = encode_local([
        ("files/a", 3, Some(1_785_585_600_999)),
        ("other/.namespace.json", 9, None),
        ("other/x", 1, None),
    ]);
    for delete_missing in [false, true] {
        let mut session = Session::new(None, "swamp").unwrap();
        session
            .load_index(&serde_json::to_vec(&index).unwrap())
            .unwrap();
        let tombstones: BTreeSet<String> = ["files/gone", "other"]
            .iter()
            .filter_map(|t| normalize_tombstone(session.model(), t))
            .collect();
        let input = PushInput {
            tombstones,
            hashes: BTreeMap::new(),
            policy: DeletePolicy {
                delete_missing,
                ..DeletePolicy::default()
            },
            facts: Default::default(),
            ..PushInput::default()
        };
        let plan = session.plan_push(&listing, &input).unwrap();
        let deletes: Vec<(&str, &Evidence)> = plan
            .deletes
            .iter()
            .map(|d| (d.rel.as_str(), &d.evidence))
            .collect();
        assert_eq!(
            deletes,
            vec![(
                "files/gone",
                &Evidence::Tombstone {
                    path: "files/gone".into()
                }
            )],
            "delete_missing: {delete_missing}"
        );
        assert!(plan.withheld.is_empty() && plan.blocked.is_empty());
        // Neither a delete nor missing: it is present, in another namespace's folder.
        assert!(!plan.missing.contains(&"other/x".to_string()));
        assert!(plan.uploads.iter().all(|u| u.transfer.rel != "other/x"));
    }
}

/// push_plan: the cap check failed on push spec 16 (20 entries, 12 tombstoned and absent,
/// caps raised to 12 deletes and 60 %) with the percentage cap set to NaN (header byte 3 = 255):
/// NaN compares false with everything, so `percent > cap` never fired and the 12 deletes (60 %)
/// went. A cap that is not a number now caps.
#[test]
fn push_plan_a_nan_percentage_cap_withholds_deletes() {
    let spec: serde_json::Value = serde_json::from_slice(include_bytes!(
        "specs/push/16-within-raised-caps-deletes-go.json"
    ))
    .unwrap();
    let local: Vec<(String, u64, Option<i64>)> = spec["local"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row[0].as_str().unwrap().to_string(),
                row[1].as_u64().unwrap(),
                row[2].as_i64(),
            )
        })
        .collect();
    let listing = encode_local(local.iter().map(|(p, s, m)| (p.as_str(), *s, *m)));
    let tombstones: BTreeSet<String> = spec["tombstones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let plan_with = |max_delete_percent: f64| {
        let mut session = Session::new(None, "swamp").unwrap();
        session
            .load_index(&serde_json::to_vec(&spec["index"]).unwrap())
            .unwrap();
        let input = PushInput {
            tombstones: tombstones.clone(),
            hashes: BTreeMap::new(),
            policy: DeletePolicy {
                max_deletes: 12,
                max_delete_percent,
                ..DeletePolicy::default()
            },
            facts: Default::default(),
            ..PushInput::default()
        };
        session.plan_push(&listing, &input).unwrap().clone()
    };
    // The spec as written: within the caps, the deletes go.
    let plan = plan_with(60.0);
    assert_eq!(plan.deletes.len(), 12);
    assert!(plan.blocked.is_empty());
    // A NaN cap withholds them.
    let plan = plan_with(f64::NAN);
    assert!(plan.deletes.is_empty());
    assert_eq!(plan.withheld.len(), 12);
    let codes: Vec<&str> = plan.blocked.iter().map(|v| v.code.as_str()).collect();
    assert_eq!(codes, vec!["delete-cap"]);
    // An infinite cap is an explicit "no percentage cap" (the count cap still holds).
    assert_eq!(plan_with(f64::INFINITY).deletes.len(), 12);
}
