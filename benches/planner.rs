//! Native benchmarks of the planning core (issue 7, part 1), run by `cargo bench`.
//!
//! Four operations at 10^4, 10^5 and 10^6 index entries, on a synthetic namespaced datastore
//! shaped like the tests' seed (`tests/harness/seed.ts`) and like `bench/plan_bench.ts`'s:
//!
//! - `index_parse`: `Index::parse` of the compact remote index bytes;
//! - `pull_plan`: `Session::plan_pull` against a local listing buffer (decode, survey, diff);
//! - `push_plan`: `Session::plan_push` against the same listing (no tombstones, no hashes);
//! - `rebuild`: `RebuildBuilder` fed the bucket listing in pages of 1,000, then finished;
//! - `pull_phases` (10^5 only): the steps inside a pull plan timed apart (listing decode, layout
//!   survey, collision search over the index keys, the diff given a survey, plan serialization),
//!   to show where a plan's time goes.
//!
//! The local cache differs from the index in fixed proportions (see [`LocalState`]), so each plan
//! has real work: about 5 % downloads, 10 % uploads, 3 % mtime updates, 2 % missing.
//!
//! Sampling is kept small (see [`configure`]) so the whole run takes minutes on 2 cores; the
//! 10^6 cases use flat sampling with 10 samples because one iteration takes around a second.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use s3sync_core::index::Index;
use s3sync_core::model::layout::survey;
use s3sync_core::model::paths::{find_collisions, PathModel};
use s3sync_core::runs::pull::plan::{plan_pull, PullOptions};
use s3sync_core::runs::push::plan::PushInput;
use s3sync_core::runs::rebuild::plan::RebuildBuilder;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::{decode_local, decode_remote, encode_local, encode_remote};

/// The bound namespace of every case (namespaced mode is the one the seed bugs hit).
const NAMESPACE: &str = "prod";
/// Entry counts benchmarked.
const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// 2026-08-01T12:00:00Z in epoch ms: the base of every recorded `localMtime`.
const BASE_MTIME_MS: i64 = 1_785_585_600_000;
/// Objects per listing page, as S3 returns them.
const PAGE: usize = 1_000;

/// How a local file relates to its index entry; chosen by `i % 100` so every size has the same
/// proportions (mirrored by `bench/plan_bench.ts`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum LocalState {
    /// 2 %: absent from the cache (pull downloads it; push reports it missing).
    Absent,
    /// 3 %: size differs (pull downloads; push uploads, `size-changed`).
    SizeDiffers,
    /// 3 %: same size, mtime moved (pull records the mtime; push uploads, `mtime-changed`).
    MtimeDiffers,
    /// 92 %: identical.
    Same,
}

fn local_state(i: usize) -> LocalState {
    match i % 100 {
        0..=1 => LocalState::Absent,
        2..=4 => LocalState::SizeDiffers,
        5..=7 => LocalState::MtimeDiffers,
        _ => LocalState::Same,
    }
}

/// The `i`-th rel, shaped like swamp's data trees (same rule as `datastoreRels` in the seed).
fn rel(i: usize) -> String {
    match i % 6 {
        0 | 1 => format!("data/aws/ec2/vpc/m-{i}/state/{}/raw", i % 3),
        2 => format!("workflow-runs/wr-{}/workflow-run-{i}.yaml", i / 12),
        3 => format!("outputs/aws/s3/bucket/o-{i}/result/1/raw"),
        4 => format!("definitions-evaluated/aws/iam/role/d-{i}/def.yaml"),
        _ => format!("logs/run-{i}.log"),
    }
}

fn size(i: usize) -> u64 {
    100 + (i as u64 * 7_919) % 4_000
}

/// ISO-8601 with milliseconds, for the fixed base used here (only seconds vary).
fn iso(ms: i64) -> String {
    s3sync_core::model::time::format_iso_millis(ms)
}

/// One synthetic datastore: the index bytes, the local walk, the bucket listing.
struct Dataset {
    index_json: Vec<u8>,
    listing: Vec<u8>,
    remote_pages: Vec<Vec<u8>>,
}

fn dataset(n: usize) -> Dataset {
    let rels: Vec<String> = (0..n).map(rel).collect();
    let mut index = String::with_capacity(n * 180);
    index.push_str(r#"{"version":1,"lastPulled":"2026-08-07T10:00:00.000Z","entries":{"#);
    let mut local: Vec<(String, u64, Option<i64>)> = Vec::with_capacity(n + n / 25 + 2);
    for (i, rel) in rels.iter().enumerate() {
        let mtime = BASE_MTIME_MS + (i as i64 % 86_400) * 1_000;
        if i > 0 {
            index.push(',');
        }
        index.push_str(&format!(
            r#""{rel}":{{"key":"{rel}","size":{},"lastModified":"2026-08-01T12:00:00.000Z","localMtime":"{}"}}"#,
            size(i),
            iso(mtime)
        ));
        let path = format!("{NAMESPACE}/{rel}");
        match local_state(i) {
            LocalState::Absent => {}
            LocalState::SizeDiffers => local.push((path, size(i) + 1, Some(mtime + 5_000))),
            LocalState::MtimeDiffers => local.push((path, size(i), Some(mtime + 1_000))),
            LocalState::Same => local.push((path, size(i), Some(mtime))),
        }
    }
    index.push_str("}}");
    // New work in the cache (push uploads it, `new`), and the root bookkeeping files.
    for j in 0..n / 25 {
        local.push((
            format!("{NAMESPACE}/data/aws/ec2/vpc/new-{j}/state/0/raw"),
            size(j),
            Some(BASE_MTIME_MS),
        ));
    }
    local.push((".datastore-index.json".into(), 1_000, Some(BASE_MTIME_MS)));
    local.push((
        ".datastore-sync-state.json".into(),
        200,
        Some(BASE_MTIME_MS),
    ));
    // In the order the cache walker lists files: byte order of their paths.
    local.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let listing = encode_local(local.iter().map(|(p, s, m)| (p.as_str(), *s, *m)));
    let keys: Vec<String> = rels.iter().map(|r| format!("{NAMESPACE}/{r}")).collect();
    let remote_pages = keys
        .chunks(PAGE)
        .enumerate()
        .map(|(page, chunk)| {
            let sizes: Vec<u64> = (0..chunk.len()).map(|k| size(page * PAGE + k)).collect();
            encode_remote(
                chunk
                    .iter()
                    .zip(&sizes)
                    .map(|(k, s)| (k.as_str(), *s, None, Some("2026-08-01T12:00:00.000Z"))),
            )
        })
        .collect();
    Dataset {
        index_json: index.into_bytes(),
        listing,
        remote_pages,
    }
}

/// Small sampling so the suite finishes in minutes; flat sampling at 10^6, where one iteration
/// is long enough that criterion's linear ramp would multiply the run time.
fn configure<'a>(
    c: &'a mut Criterion,
    name: &str,
    n: usize,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    if n >= 1_000_000 {
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(8));
    } else {
        group
            .sample_size(if n >= 100_000 { 10 } else { 20 })
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
    }
    group
}

fn session_with(data: &Dataset) -> Session {
    let mut session = Session::new(Some(NAMESPACE), "").expect("namespace is valid");
    session
        .load_index(&data.index_json)
        .expect("synthetic index parses");
    session
}

/// Checks once per size, outside the timed loops, that the plans do the work the proportions of
/// [`LocalState`] promise, so a change in the planner cannot turn a benchmark into a no-op.
fn check_plans(
    session: &mut Session,
    data: &Dataset,
    n: usize,
    options: &PullOptions,
    input: &PushInput,
) {
    let pull = session.plan_pull(&data.listing, options).expect("plans");
    assert_eq!(pull.downloads.len(), n / 20, "pull downloads 5 %");
    assert_eq!(
        pull.mtime_updates.len(),
        n * 3 / 100,
        "pull records 3 % mtimes"
    );
    let push = session.plan_push(&data.listing, input).expect("plans");
    assert_eq!(push.uploads.len(), n / 10, "push uploads 10 %");
    assert_eq!(push.missing.len(), n / 50, "push reports 2 % missing");
}

fn benches(c: &mut Criterion) {
    for n in SIZES {
        let data = dataset(n);
        let id = BenchmarkId::from_parameter(n);

        let mut group = configure(c, "index_parse", n);
        group.bench_with_input(id.clone(), &data, |b, d| {
            b.iter(|| Index::parse(black_box(&d.index_json)).expect("parses"))
        });
        group.finish();

        let mut session = session_with(&data);
        let options = PullOptions::default();
        let input = PushInput::default();
        check_plans(&mut session, &data, n, &options, &input);
        let mut group = configure(c, "pull_plan", n);
        group.bench_with_input(id.clone(), &data, |b, d| {
            b.iter(|| {
                let plan = session
                    .plan_pull(black_box(&d.listing), &options)
                    .expect("plans");
                plan.downloads.len()
            })
        });
        group.finish();

        let mut group = configure(c, "push_plan", n);
        group.bench_with_input(id.clone(), &data, |b, d| {
            b.iter(|| {
                let plan = session
                    .plan_push(black_box(&d.listing), &input)
                    .expect("plans");
                plan.uploads.len()
            })
        });
        group.finish();
        drop(session);

        let model = PathModel::new(Some(NAMESPACE), "").expect("namespace is valid");
        let mut group = configure(c, "rebuild", n);
        group.bench_with_input(id, &data, |b, d| {
            b.iter(|| {
                let mut builder =
                    RebuildBuilder::new(model.clone(), "2026-08-07T10:00:00.000Z".into());
                for page in &d.remote_pages {
                    builder.add_page(&decode_remote(page).expect("page decodes"));
                }
                builder.finish(None).1.kept
            })
        });
        group.finish();
    }
}

/// The steps of one pull plan at 10^5 entries, each timed alone.
fn pull_phases(c: &mut Criterion) {
    let data = dataset(100_000);
    let model = PathModel::new(Some(NAMESPACE), "").expect("namespace is valid");
    let index = Index::parse(&data.index_json).expect("synthetic index parses");
    let files = decode_local(&data.listing).expect("listing decodes");
    let surveyed = survey(&model, &files);
    let options = PullOptions::default();
    let plan = plan_pull(&model, &index, None, &surveyed, &options);
    let mut group = configure(c, "pull_phases", 100_000);
    group.bench_function("decode_listing", |b| {
        b.iter(|| {
            decode_local(black_box(&data.listing))
                .expect("decodes")
                .len()
        })
    });
    group.bench_function("survey", |b| {
        b.iter(|| survey(&model, black_box(&files)).payload.len())
    });
    group.bench_function("find_collisions", |b| {
        b.iter(|| find_collisions(index.entries.keys().map(String::as_str)).len())
    });
    group.bench_function("diff_given_survey", |b| {
        b.iter(|| {
            plan_pull(&model, &index, None, black_box(&surveyed), &options)
                .downloads
                .len()
        })
    });
    group.bench_function("serialize_plan", |b| {
        b.iter(|| serde_json::to_string(black_box(&plan)).map_or(0, |j| j.len()))
    });
    group.finish();
}

criterion_group!(planner, benches, pull_phases);
criterion_main!(planner);
