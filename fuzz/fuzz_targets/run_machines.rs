//! The run machines under a hostile caller: `RebuildRun`, `RepairRun`, `MigrateRun`,
//! `ResolveRun` and `ContaminationRun` driven by any sequence of calls with any bytes. Input: a
//! 1-byte header (which machine, and its options), then fields (0xFF), each a call: its first
//! byte picks the method, the rest is the argument (bytes, or text read lossily). A call must
//! never panic, and a call the machine refuses must change nothing: the next action is the one it
//! asked for before (except the two refusals that end a run by design: a lost publish,
//! `publish-conflict`, and `resolve`'s failed pull, `download-failed`).
#![no_main]

use fuzz_support::{byte, header, text};
use libfuzzer_sys::fuzz_target;
use s3sync_core::model::paths::PathModel;
use s3sync_core::runs::contamination::machine::ContaminationRun;
use s3sync_core::runs::migrate::machine::{HeadFound, MigrateRequest, MigrateRun};
use s3sync_core::runs::rebuild::machine::{RebuildRequest, RebuildRun};
use s3sync_core::runs::repair::machine::{RepairRequest, RepairRun, StepResult};
use s3sync_core::runs::resolve::machine::{ResolvePushed, ResolveRequest, ResolveRun};
use s3sync_core::runs::session::Session;
use s3sync_core::CoreError;

const NOW: &str = "2026-12-01T00:00:00.000Z";

/// Refusals that end a run by design; any other refusal must leave the run where it was.
fn ends_the_run(result: &Result<(), CoreError>) -> bool {
    matches!(result, Err(e) if e.code() == "publish-conflict" || e.code() == "download-failed")
}

/// Checks the rule for one call: `before` and `after` are the actions asked for around it.
fn check<A: PartialEq + std::fmt::Debug>(before: A, after: A, result: &Result<(), CoreError>) {
    if result.is_err() && !ends_the_run(result) {
        assert_eq!(before, after, "a refused call moved the run: {result:?}");
    }
}

/// The lines of a field, as a list of texts (paths, keys).
fn texts(arg: &[u8]) -> Vec<String> {
    text(arg)
        .split('\n')
        .filter(|s| !s.is_empty())
        .take(8)
        .map(str::to_string)
        .collect()
}

fn number(arg: &[u8]) -> u64 {
    u64::from(byte(arg, 0))
}

fuzz_target!(|data: &[u8]| {
    let (head, calls) = header(data, 1);
    let pick = byte(head, 0);
    let calls = calls.into_iter().take(32).filter(|c| !c.is_empty());
    match pick % 5 {
        0 => {
            let mut session = Session::new(Some("ns"), "").unwrap();
            let request = if pick & 8 == 0 {
                RebuildRequest::Missing {
                    publish: pick & 16 == 0,
                    prefix: None,
                }
            } else {
                RebuildRequest::Asked {
                    apply: pick & 16 == 0,
                    force: pick & 32 == 0,
                    v2_existing: None,
                    prefix: None,
                }
            };
            let mut run = RebuildRun::new(request, NOW);
            for call in calls {
                let (op, arg) = (call[0], &call[1..]);
                let before = run.poll(&mut session).ok();
                let result = match op % 8 {
                    0 => Ok(()),
                    1 => {
                        run.on_existing((op & 8 == 0).then_some(arg), Some(text(arg).into_owned()))
                    }
                    2 => run.on_page(&mut session, arg, &texts(arg)),
                    3 => run.on_listed(&mut session),
                    4 => run.on_top_folders(&session, &texts(arg)),
                    5 => run.on_published(op & 8 == 0, Some(text(arg).into_owned())),
                    6 => run.on_peer_index(&mut session, arg, None),
                    _ => run.outcome().map(|_| ()),
                };
                let after = run.poll(&mut session).ok();
                check(before, after, &result);
            }
        }
        1 => {
            let mut session = Session::new(Some("ns"), "").unwrap();
            let _ = session.load_index(br#"{"version":1,"entries":{"data/a.yaml":{"size":1}}}"#);
            let mut run = RepairRun::new(
                RepairRequest {
                    apply: pick & 8 == 0,
                },
                NOW,
            );
            for call in calls {
                let (op, arg) = (call[0], &call[1..]);
                let before = run.poll();
                let results: Vec<StepResult> = arg
                    .iter()
                    .take(16)
                    .map(|b| match b % 3 {
                        0 => StepResult::Done,
                        1 => StepResult::Occupied,
                        _ => StepResult::Refused {
                            message: "symlink".into(),
                        },
                    })
                    .collect();
                let hashes = texts(arg)
                    .into_iter()
                    .map(|p| (p, "0".repeat(64)))
                    .collect();
                let result = match op % 8 {
                    0 => Ok(()),
                    1 => run.on_journal(
                        (op & 8 == 0).then_some(arg),
                        (op & 16 == 0).then(|| text(arg).into_owned()),
                    ),
                    2 => run.on_index(),
                    3 => run.on_walk(
                        &session,
                        arg,
                        &texts(&arg[arg.len().min(1)..])
                            .into_iter()
                            .take(usize::from(op & 16 != 0))
                            .collect::<Vec<_>>(),
                    ),
                    4 => run.on_hashes(&session, &hashes),
                    5 => run.on_applied(&results),
                    6 => run.on_hydrated(number(arg), NOW),
                    _ => run.result().map(|_| ()),
                };
                let after = run.poll();
                check(before, after, &result);
            }
        }
        2 => {
            let request = MigrateRequest {
                apply: pick & 8 == 0,
                remove_originals: pick & 16 == 0,
                max_index_entries: (pick & 32 == 0).then_some(1),
            };
            let mut run = MigrateRun::new("ns", "", request, NOW).unwrap();
            for call in calls {
                let (op, arg) = (call[0], &call[1..]);
                let before = run.poll().map_err(|e| e.code());
                let heads: Vec<HeadFound> = texts(arg)
                    .into_iter()
                    .map(|key| HeadFound {
                        key,
                        exists: op & 16 == 0,
                        size: Some(number(arg)),
                        etag: Some("\"e\"".into()),
                    })
                    .collect();
                let result = match op % 10 {
                    0 => Ok(()),
                    1 => run.on_meta((op & 16 == 0).then_some(arg)),
                    2 => run.on_indexes(
                        (op & 16 == 0).then(|| arg.to_vec()),
                        None,
                        (op & 32 == 0).then(|| arg.to_vec()),
                        None,
                    ),
                    3 => run.on_listing(arg),
                    4 => run.on_heads(&heads),
                    5 => run.on_copied(number(arg)),
                    6 => run.on_namespace_index((op & 16 == 0).then(|| arg.to_vec()), None),
                    7 => run.on_published(op & 16 == 0),
                    8 => run.on_deleted(number(arg)),
                    _ => run.result().map(|_| ()),
                };
                let after = run.poll().map_err(|e| e.code());
                check(before, after, &result);
            }
        }
        3 => {
            let model = PathModel::new(Some("ns"), "").unwrap();
            let keep = if pick & 8 == 0 { "mine" } else { "theirs" };
            let Ok(mut run) = ResolveRun::new(
                model,
                ResolveRequest {
                    keep: keep.into(),
                    rels: vec![],
                },
            ) else {
                return;
            };
            for call in calls {
                let (op, arg) = (call[0], &call[1..]);
                let before = run.poll();
                let pushed = ResolvePushed {
                    conflicts: texts(arg),
                    failed: vec![],
                    published: op & 16 == 0,
                    uploaded: number(arg),
                };
                let result = match op % 7 {
                    0 => Ok(()),
                    1 => run.on_pulled(&texts(arg)),
                    2 => run.on_walk(arg),
                    3 => run.on_restored(&texts(arg)),
                    4 => run.on_pushed(&pushed),
                    5 => run.on_removed(texts(arg)),
                    _ => run.result().map(|_| ()),
                };
                let after = run.poll();
                check(before, after, &result);
            }
        }
        _ => {
            let mut run = ContaminationRun::new("ns", "", pick & 8 == 0).unwrap();
            for call in calls {
                let (op, arg) = (call[0], &call[1..]);
                let before = run.poll();
                let heads: Vec<HeadFound> = texts(arg)
                    .into_iter()
                    .map(|key| HeadFound {
                        key,
                        exists: op & 16 == 0,
                        size: None,
                        etag: Some("\"e\"".into()),
                    })
                    .collect();
                let result = match op % 8 {
                    0 => Ok(()),
                    1 => run.on_listing(arg),
                    2 => run.on_heads(&heads),
                    3 => run.on_index((op & 16 == 0).then_some(arg), None),
                    4 => run.body().map(|_| ()),
                    5 => run.on_published(op & 16 == 0),
                    6 => {
                        let changed = [String::from_utf8_lossy(arg).into_owned()];
                        run.on_deleted(number(arg), &changed[..usize::from(op & 16 == 0)])
                    }
                    _ => run.result().map(|_| ()),
                };
                let after = run.poll();
                check(before, after, &result);
            }
        }
    }
});
