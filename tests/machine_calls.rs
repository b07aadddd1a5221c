//! Hostile callers of the run machines: random sequences of calls, in any order and with junk,
//! valid and empty inputs, made to `RebuildRun`, `RepairRun`, `MigrateRun`, `ResolveRun` and
//! `ContaminationRun`.
//! Whatever the sequence, no call panics (the machines sit behind the WASM boundary), and a
//! call the machine refuses changes nothing: the next action is the one it asked for before.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;

use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::contamination::machine::ContaminationRun;
use s3sync_core::runs::migrate::machine::{HeadFound, MigrateRequest, MigrateRun};
use s3sync_core::runs::rebuild::machine::{RebuildRequest, RebuildRun};
use s3sync_core::runs::repair::machine::{RepairRequest, RepairRun, StepResult};
use s3sync_core::runs::resolve::machine::{ResolvePushed, ResolveRequest, ResolveRun};
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::{encode_local, encode_remote};

const NOW: &str = "2026-12-01T00:00:00.000Z";

/// Byte inputs a caller might hand over: none of the formats, an index, a listing of each kind,
/// a v2 meta, deeply nested JSON.
fn bytes(pick: u8) -> Option<Vec<u8>> {
    match pick % 8 {
        0 => None,
        1 => Some(Vec::new()),
        2 => Some(br#"{"version":1,"entries":{"data/a.yaml":{"size":1}}}"#.to_vec()),
        3 => Some(encode_local([
            ("ns/data/a.yaml", 1, Some(1)),
            ("data/a.yaml", 1, Some(2)),
        ])),
        4 => Some(encode_remote([
            ("ns/data/a.yaml", 1, Some("\"e\""), None),
            ("data/b.yaml", 2, None, None),
        ])),
        5 => Some(br#"{"version":2,"partitions":["p"],"commitSeq":1}"#.to_vec()),
        6 => Some(vec![b'['; 4096]),
        _ => Some(vec![0xff, 0x00, 0xfe, b'{']),
    }
}

fn text(pick: u8) -> String {
    [
        "",
        "ns/data/a.yaml",
        "../escape",
        "data/a.yaml",
        "\u{0}",
        "x",
    ][usize::from(pick) % 6]
        .to_string()
}

fn texts(pick: u8) -> Vec<String> {
    (0..pick % 3).map(|i| text(pick.wrapping_add(i))).collect()
}

fn hashes(pick: u8) -> BTreeMap<String, String> {
    texts(pick)
        .into_iter()
        .map(|p| (p, "0".repeat(64)))
        .collect()
}

/// Calls `op` and checks the rule: a refused call leaves the next action as it was.
macro_rules! check {
    ($before:expr, $after:expr, $result:expr) => {
        if $result.is_err() {
            prop_assert_eq!($before, $after, "a refused call moved the run");
        }
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_rebuild_run_survives_any_caller(asked in any::<bool>(), ops in prop::collection::vec((0u8..8, any::<u8>()), 0..24)) {
        let mut session = Session::new(Some("ns"), "").unwrap();
        let request = if asked {
            RebuildRequest::Asked { apply: true, force: false, v2_existing: None, prefix: None }
        } else {
            RebuildRequest::Missing { publish: true, prefix: None }
        };
        let mut run = RebuildRun::new(request, NOW);
        for (op, arg) in ops {
            let before = run.poll(&mut session);
            let result = match op {
                0 => Ok(()),
                1 => run.on_existing(bytes(arg).as_deref(), Some(text(arg))),
                2 => run.on_page(&mut session, &bytes(arg).unwrap_or_default(), &texts(arg)),
                3 => run.on_listed(&mut session),
                4 => run.on_top_folders(&session, &texts(arg)),
                5 => run.on_published(arg % 2 == 0, Some(text(arg))),
                6 => run.on_peer_index(&mut session, &bytes(arg).unwrap_or_default(), None),
                _ => run.outcome().map(|_| ()),
            };
            let after = run.poll(&mut session);
            check!(before, after, result);
        }
    }

    #[test]
    fn the_repair_run_survives_any_caller(ops in prop::collection::vec((0u8..8, any::<u8>()), 0..24)) {
        let mut session = Session::new(Some("ns"), "").unwrap();
        session.load_index(br#"{"version":1,"entries":{"data/a.yaml":{"size":1}}}"#).unwrap();
        let mut run = RepairRun::new(RepairRequest { apply: true }, NOW);
        for (op, arg) in ops {
            let before = run.poll();
            let results: Vec<StepResult> = (0..arg % 4)
                .map(|i| match (arg.wrapping_add(i)) % 3 {
                    0 => StepResult::Done,
                    1 => StepResult::Occupied,
                    _ => StepResult::Refused { message: text(arg) },
                })
                .collect();
            let result = match op {
                0 => Ok(()),
                1 => run.on_journal(bytes(arg).as_deref(), (arg % 2 == 0).then(|| text(arg))),
                2 => run.on_index(),
                3 => run.on_walk(&session, &bytes(arg).unwrap_or_default(), &texts(arg / 7)),
                4 => run.on_hashes(&session, &hashes(arg)),
                5 => run.on_applied(&results),
                6 => run.on_hydrated(u64::from(arg % 2), NOW),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll();
            check!(before, after, result);
        }
    }

    #[test]
    fn the_migrate_run_survives_any_caller(ops in prop::collection::vec((0u8..10, any::<u8>()), 0..24)) {
        let request = MigrateRequest { apply: true, remove_originals: true };
        let mut run = MigrateRun::new("ns", "", request, NOW).unwrap();
        for (op, arg) in ops {
            let before = run.poll().map_err(|e| e.code());
            let heads: Vec<HeadFound> = texts(arg)
                .into_iter()
                .map(|key| HeadFound { key, exists: arg % 2 == 0, size: Some(u64::from(arg)), etag: None })
                .collect();
            let result = match op {
                0 => Ok(()),
                1 => run.on_meta(bytes(arg).as_deref()),
                2 => run.on_indexes(bytes(arg), Some(text(arg)), bytes(arg / 8), None),
                3 => run.on_listing(&bytes(arg).unwrap_or_default()),
                4 => run.on_heads(&heads),
                5 => run.on_copied(u64::from(arg)),
                6 => run.on_namespace_index(bytes(arg), None),
                7 => run.on_published(arg % 2 == 0),
                8 => run.on_deleted(u64::from(arg)),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll().map_err(|e| e.code());
            // A lost publish ends the run by design (`publish-conflict`); other refusals move nothing.
            if !matches!(&result, Err(e) if e.code() == "publish-conflict") {
                check!(before, after, result);
            }
        }
    }

    #[test]
    fn the_resolve_run_survives_any_caller(mine in any::<bool>(), ops in prop::collection::vec((0u8..7, any::<u8>()), 0..24)) {
        let model = PathModel::new(Some("ns"), "").unwrap();
        let request = ResolveRequest { keep: if mine { "mine" } else { "theirs" }.into(), rels: vec![] };
        let mut run = ResolveRun::new(model, request).unwrap();
        for (op, arg) in ops {
            let before = run.poll();
            let pushed = ResolvePushed { conflicts: texts(arg), failed: texts(arg / 3), published: arg % 2 == 0, uploaded: u64::from(arg % 3) };
            let result = match op {
                0 => Ok(()),
                1 => run.on_pulled(&texts(arg / 5)),
                2 => run.on_walk(&bytes(arg).unwrap_or_default()),
                3 => run.on_restored(&texts(arg)),
                4 => run.on_pushed(&pushed),
                5 => run.on_removed(texts(arg)),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll();
            // A failed pull ends the run by design (`download-failed`).
            if !matches!(&result, Err(e) if e.code() == "download-failed") {
                check!(before, after, result);
            }
        }
    }

    #[test]
    fn the_contamination_run_survives_any_caller(dry in any::<bool>(), ops in prop::collection::vec((0u8..8, any::<u8>()), 0..24)) {
        let mut run = ContaminationRun::new("ns", "", dry).unwrap();
        for (op, arg) in ops {
            let before = run.poll();
            let heads: Vec<HeadFound> = texts(arg)
                .into_iter()
                .map(|key| HeadFound { key, exists: arg % 2 == 0, size: None, etag: Some(text(arg)) })
                .collect();
            let result = match op {
                0 => Ok(()),
                1 => run.on_listing(&bytes(arg).unwrap_or_default()),
                2 => run.on_heads(&heads),
                3 => run.on_index(bytes(arg).as_deref(), Some(text(arg))),
                4 => run.body().map(|_| ()),
                5 => run.on_published(arg % 2 == 0),
                6 => run.on_deleted(u64::from(arg), &[]),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll();
            if !matches!(&result, Err(e) if e.code() == "publish-conflict") {
                check!(before, after, result);
            }
        }
    }
}
