//! Hostile callers of the run machines: random sequences of calls, in any order and with junk,
//! valid and empty inputs, made through `Machine::handle` (one event each) to `RebuildRun`, `RepairRun`, `MigrateRun`, `ResolveRun` and
//! `ContaminationRun`.
//! Whatever the sequence, no call panics (the machines sit behind the WASM boundary), and a
//! call the machine refuses changes nothing: the next action is the one it asked for before.
//! Native only: proptest does not build for wasm32-unknown-unknown.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;

use s3sync_core::bytes::buf::Bytes;
use s3sync_core::bytes::buf::F64s;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::contamination::events::ContaminationEvent;
use s3sync_core::runs::contamination::machine::ContaminationRun;
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::migrate::events::MigrateEvent;
use s3sync_core::runs::migrate::machine::{HeadFound, MigrateRequest, MigrateRun};
use s3sync_core::runs::pull::events::PullEvent;
use s3sync_core::runs::pull::machine::{PullRequest, PullRun};
use s3sync_core::runs::push::events::PushEvent;
use s3sync_core::runs::push::machine::{PushRun, PushRunRequest};
use s3sync_core::runs::push::plan::Uploaded;
use s3sync_core::runs::rebuild::events::RebuildEvent;
use s3sync_core::runs::rebuild::machine::{RebuildRequest, RebuildRun};
use s3sync_core::runs::repair::events::RepairEvent;
use s3sync_core::runs::repair::machine::{RepairRequest, RepairRun, StepResult};
use s3sync_core::runs::resolve::events::ResolveEvent;
use s3sync_core::runs::resolve::machine::{ResolvePushed, ResolveRequest, ResolveRun};
use s3sync_core::runs::session::Session;
use s3sync_core::safety::conflicts::KeptAside;
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

fn blob(pick: u8) -> Option<Bytes> {
    bytes(pick).map(Bytes)
}

fn some_blob(pick: u8) -> Bytes {
    Bytes(bytes(pick).unwrap_or_default())
}

/// Hashes of the paths a caller names; every fifth event has one value too few (columns of
/// different lengths are refused).
fn hash_event(pick: u8) -> RepairEvent {
    let paths = texts(pick);
    let mut values = vec!["0".repeat(64); paths.len()];
    if pick.is_multiple_of(5) {
        values.pop();
    }
    RepairEvent::Hashes { paths, values }
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
                1 => run.handle(&mut session, RebuildEvent::Got { bytes: blob(arg), etag: Some(text(arg)) }),
                2 => run.handle(&mut session, RebuildEvent::Page { page: some_blob(arg), unencodable: texts(arg) }),
                3 => run.handle(&mut session, RebuildEvent::Listed),
                4 => run.handle(&mut session, RebuildEvent::TopFolders { folders: texts(arg) }),
                5 => run.handle(&mut session, RebuildEvent::Published { published: arg % 2 == 0, etag: Some(text(arg)) }),
                _ => Machine::result(&run).map(|_| ()),
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
                1 => run.handle(&mut session, RepairEvent::Journal { bytes: blob(arg), refused: (arg % 2 == 0).then(|| text(arg)) }),
                2 => run.handle(&mut session, RepairEvent::Index),
                3 => run.handle(&mut session, RepairEvent::Walk { listing: some_blob(arg), walk_errors: texts(arg / 7) }),
                4 => run.handle(&mut session, hash_event(arg)),
                5 => run.handle(&mut session, RepairEvent::Applied { results }),
                6 => run.handle(&mut session, RepairEvent::Hydrated { failures: u64::from(arg % 2), now_iso: if arg % 5 == 0 { text(arg) } else { NOW.to_string() } }),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll();
            check!(before, after, result);
        }
    }

    #[test]
    fn the_migrate_run_survives_any_caller(ops in prop::collection::vec((0u8..10, any::<u8>()), 0..24)) {
        let request = MigrateRequest { apply: true, remove_originals: true, max_index_entries: None };
        let mut run = MigrateRun::new("ns", "", request, NOW).unwrap();
        for (op, arg) in ops {
            let before = run.poll().map_err(|e| e.code());
            let heads: Vec<HeadFound> = texts(arg)
                .into_iter()
                .map(|key| HeadFound { key, exists: arg % 2 == 0, size: Some(u64::from(arg)), etag: None })
                .collect();
            let result = match op {
                0 => Ok(()),
                1 => run.handle(&mut (), MigrateEvent::Got { bytes: blob(arg), etag: None }),
                2 => run.handle(&mut (), MigrateEvent::Got { bytes: blob(arg / 8), etag: Some(text(arg)) }),
                3 => run.handle(&mut (), MigrateEvent::Listing { listing: some_blob(arg) }),
                4 => run.handle(&mut (), MigrateEvent::Heads { heads }),
                5 => run.handle(&mut (), MigrateEvent::Copied { copied: u64::from(arg) }),
                6 => run.handle(&mut (), MigrateEvent::Got { bytes: blob(arg), etag: None }),
                7 => run.handle(&mut (), MigrateEvent::Published { published: arg % 2 == 0 }),
                8 => run.handle(&mut (), MigrateEvent::Deleted { removed: u64::from(arg) }),
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
                1 => run.handle(&mut (), ResolveEvent::Pulled { failed: texts(arg / 5) }),
                2 => run.handle(&mut (), ResolveEvent::Walk { listing: some_blob(arg) }),
                3 => run.handle(&mut (), ResolveEvent::Restored { rels: texts(arg) }),
                4 => run.handle(&mut (), ResolveEvent::Pushed(pushed)),
                5 => run.handle(&mut (), ResolveEvent::Removed { removed: texts(arg) }),
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
                1 => run.handle(&mut (), ContaminationEvent::Listing { listing: some_blob(arg) }),
                2 => run.handle(&mut (), ContaminationEvent::Heads { heads }),
                3 => run.handle(&mut (), ContaminationEvent::Got { bytes: blob(arg), etag: Some(text(arg)) }),
                4 => run.body().map(|_| ()),
                5 => run.handle(&mut (), ContaminationEvent::Published { published: arg % 2 == 0 }),
                6 => run.handle(&mut (), ContaminationEvent::Deleted { deleted: u64::from(arg), changed: texts(arg) }),
                _ => run.result().map(|_| ()),
            };
            let after = run.poll();
            if !matches!(&result, Err(e) if e.code() == "publish-conflict") {
                check!(before, after, result);
            }
        }
    }

    #[test]
    fn the_pull_run_survives_any_caller(verify in any::<bool>(), ops in prop::collection::vec((0u8..10, any::<u8>()), 0..24)) {
        let mut session = Session::new(Some("ns"), "").unwrap();
        let mut run = PullRun::new(PullRequest { verify, ..PullRequest::default() });
        for (op, arg) in ops {
            let before = Machine::poll(&mut run, &mut session);
            let result = match op {
                0 => Ok(()),
                1 => run.handle(&mut session, PullEvent::LocalState { sidecar: blob(arg), local_index_exists: arg % 2 == 0 }).map(|_| ()),
                2 => run.handle(&mut session, PullEvent::Head { exists: arg % 3 != 0, etag: Some(text(arg)) }).map(|_| ()),
                3 => run.handle(&mut session, PullEvent::Index { exists: arg % 2 == 0, etag: Some(text(arg)), commit_seq: (arg % 4 == 0).then_some(u64::from(arg)) }).map(|_| ()),
                4 => run.handle(&mut session, PullEvent::Base { bytes: blob(arg) }).map(|_| ()),
                5 => run.handle(&mut session, PullEvent::Walk { listing: some_blob(arg) }).map(|_| ()),
                6 => run.handle(&mut session, PullEvent::Transfers {
                    downloaded: some_blob(arg),
                    not_found: texts(arg),
                    aside: texts(arg / 3).into_iter().map(|rel| KeptAside { copy: format!("{rel}.copy"), rel }).collect(),
                    hashed_rels: texts(arg),
                    hashed_sha256: texts(arg / 5),
                    removed: texts(arg / 7),
                    kept_pointers: texts(arg / 11),
                    failures: u64::from(arg % 3),
                    now_iso: if arg % 5 == 0 { text(arg) } else { NOW.to_string() },
                }).map(|_| ()),
                7 => run.handle(&mut session, PullEvent::Published { published: arg % 2 == 0, etag: Some(text(arg)) }).map(|_| ()),
                8 => run.handle(&mut session, PullEvent::Written { sidecar_now: blob(arg) }).map(|_| ()),
                _ => Machine::result(&run).map(|_| ()),
            };
            let after = Machine::poll(&mut run, &mut session);
            check!(before.map_err(|e| e.code()), after.map_err(|e| e.code()), result);
        }
    }

    #[test]
    fn the_push_run_survives_any_caller(two_phase in any::<bool>(), ops in prop::collection::vec((0u8..17, any::<u8>()), 0..24)) {
        let mut session = Session::new(Some("ns"), "").unwrap();
        let mut run = PushRun::new(PushRunRequest { two_phase, ..PushRunRequest::default() });
        for (op, arg) in ops {
            let before = Machine::poll(&mut run, &mut session);
            let changes = F64s(vec![f64::NAN, f64::from(arg), -1.0][..usize::from(arg % 4).min(3)].to_vec());
            let uploaded: Vec<Uploaded> = texts(arg)
                .into_iter()
                .map(|rel| Uploaded { rel, size: u64::from(arg), mtime_ms: Some(i64::from(arg)), sha256: "0".repeat(64), etag: None })
                .collect();
            let result = match op {
                0 => Ok(()),
                1 => run.handle(&mut session, PushEvent::LocalState { sidecar: blob(arg) }).map(|_| ()),
                2 => run.handle(&mut session, PushEvent::Index { etag: Some(text(arg)), v2: arg % 5 == 0, commit_seq: (arg % 4 == 0).then_some(u64::from(arg)) }).map(|_| ()),
                3 => run.handle(&mut session, PushEvent::Base { bytes: blob(arg) }).map(|_| ()),
                4 => run.handle(&mut session, PushEvent::WalkFirst { listing: some_blob(arg), changes, walk_errors: u64::from(arg % 2), symlinked_folders: 0, walked_at_ms: i64::from(arg) }).map(|_| ()),
                5 => run.handle(&mut session, PushEvent::SealHashes { paths: texts(arg), values: texts(arg / 3) }).map(|_| ()),
                6 => run.handle(&mut session, PushEvent::SealRefreshed).map(|_| ()),
                7 => run.handle(&mut session, PushEvent::Walk { listing: some_blob(arg), listing_digest: text(arg), walk_errors: 0, symlinked_folders: u64::from(arg % 2), changes, walked_at_ms: i64::from(arg) }).map(|_| ()),
                8 => run.handle(&mut session, PushEvent::Hashes { paths: texts(arg), values: texts(arg / 3) }).map(|_| ()),
                9 => run.handle(&mut session, PushEvent::Confirmed { confirmed: arg % 2 == 0 }).map(|_| ()),
                10 => run.handle(&mut session, PushEvent::Uploaded { uploaded, failures: u64::from(arg % 2), lost: texts(arg / 5), now_iso: NOW.to_string() }).map(|_| ()),
                11 => run.handle(&mut session, PushEvent::Commit).map(|_| ()),
                12 => run.handle(&mut session, PushEvent::Rebased { etag: Some(text(arg)) }).map(|_| ()),
                13 => run.handle(&mut session, PushEvent::Published { etag: Some(text(arg)), commit_seq: None }).map(|_| ()),
                14 => run.handle(&mut session, PushEvent::Deleted { deleted: u64::from(arg), failures: 0, lost: texts(arg) }).map(|_| ()),
                15 => run.handle(&mut session, PushEvent::Written { sidecar_now: blob(arg), now_iso: NOW.to_string() }).map(|_| ()),
                _ => Machine::result(&run).map(|_| ()),
            };
            let after = Machine::poll(&mut run, &mut session);
            check!(before.map_err(|e| e.code()), after.map_err(|e| e.code()), result);
        }
    }
}
