//! The spec runner: every JSON file under `tests/specs/<kind>/` is one case of the planner named
//! by its folder (`pull`, `push`, `migrate`, `contamination`, `rebuild`, `shard_write`, `lock`, `doctor`,
//! `index_read`, `conditions`, `shard_move`, `catalog_export`), with its inputs and the expected plan in one file. One test
//! runs them all and fails naming every spec that disagrees; a folder no runner knows is a
//! failure too, so a new kind of spec cannot be silently skipped.
#![cfg(not(target_arch = "wasm32"))]
// Reading the fixture folder is the test harness's I/O; the sans-io bans are for `src/`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

#[path = "spec_runner/catalog_export.rs"]
mod catalog_export;
#[path = "common/catalog_export_sim.rs"]
mod catalog_export_sim;
#[path = "spec_runner/conditions.rs"]
mod conditions;
#[path = "common/conditions_sim.rs"]
mod conditions_sim;
#[path = "spec_runner/contamination.rs"]
mod contamination;
#[path = "spec_runner/doctor.rs"]
mod doctor;
#[path = "common/doctor_sim.rs"]
mod doctor_sim;
#[path = "spec_runner/index_read.rs"]
mod index_read;
#[path = "common/index_read_sim.rs"]
mod index_read_sim;
#[path = "spec_runner/lock.rs"]
mod lock;
#[path = "common/lock_sim.rs"]
mod lock_sim;
#[path = "spec_runner/migrate.rs"]
mod migrate;
#[path = "spec_runner/pull.rs"]
mod pull;
#[path = "spec_runner/push.rs"]
mod push;
#[path = "spec_runner/rebuild.rs"]
mod rebuild;
#[path = "spec_runner/shard_move.rs"]
mod shard_move;
#[path = "common/shard_move_sim.rs"]
mod shard_move_sim;
#[path = "spec_runner/shard_write.rs"]
mod shard_write;
#[path = "common/sim.rs"]
mod sim;
#[path = "common/spec_diff.rs"]
mod spec_diff;

/// The spec files of `kind`, sorted.
fn spec_files(kind: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kind)
        .unwrap_or_else(|e| panic!("reading {}: {e}", kind.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_spec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs");
    let mut kinds: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    kinds.sort();
    let mut ran = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    for kind in &kinds {
        let name = kind.file_name().unwrap().to_string_lossy().into_owned();
        let run: fn(&Path) -> Result<(), String> = match name.as_str() {
            "catalog_export" => catalog_export::run,
            "conditions" => conditions::run,
            "contamination" => contamination::run,
            "doctor" => doctor::run,
            "index_read" => index_read::run,
            "lock" => lock::run,
            "migrate" => migrate::run,
            "pull" => pull::run,
            "push" => push::run,
            "rebuild" => rebuild::run,
            "shard_move" => shard_move::run,
            "shard_write" => shard_write::run,
            other => {
                failures.push(format!(
                    "tests/specs/{other}/: no runner for this kind of spec"
                ));
                continue;
            }
        };
        let files = spec_files(kind);
        for path in &files {
            if let Err(why) = run(path) {
                let file = path.file_name().unwrap().to_string_lossy();
                failures.push(format!("{name}/{file}: {why}"));
            }
        }
        ran.insert(name, files.len());
    }
    // A runner that found nothing to run must not pass for one that checked everything.
    assert!(
        ran.get("pull").copied().unwrap_or(0) >= 8,
        "pull specs: {ran:?}"
    );
    assert!(
        ran.get("push").copied().unwrap_or(0) >= 14,
        "push specs: {ran:?}"
    );
    assert!(
        ran.get("migrate").copied().unwrap_or(0) >= 8,
        "migrate specs: {ran:?}"
    );
    assert!(
        ran.get("contamination").copied().unwrap_or(0) >= 5,
        "contamination specs: {ran:?}"
    );
    assert!(
        ran.get("rebuild").copied().unwrap_or(0) >= 6,
        "rebuild specs: {ran:?}"
    );
    assert!(
        ran.get("doctor").copied().unwrap_or(0) >= 5,
        "doctor specs: {ran:?}"
    );
    assert!(
        ran.get("index_read").copied().unwrap_or(0) >= 10,
        "index_read specs: {ran:?}"
    );
    assert!(
        ran.get("catalog_export").copied().unwrap_or(0) >= 8,
        "catalog_export specs: {ran:?}"
    );
    assert!(
        ran.get("conditions").copied().unwrap_or(0) >= 10,
        "conditions specs: {ran:?}"
    );
    assert!(
        ran.get("lock").copied().unwrap_or(0) >= 8,
        "lock specs: {ran:?}"
    );
    assert!(
        ran.get("shard_move").copied().unwrap_or(0) >= 6,
        "shard_move specs: {ran:?}"
    );
    assert!(
        ran.get("shard_write").copied().unwrap_or(0) >= 10,
        "shard_write specs: {ran:?}"
    );
    let total: usize = ran.values().sum();
    assert!(
        failures.is_empty(),
        "{} of {total} specs failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
