//! Spec-style doctor fixtures: every JSON file under `tests/specs/doctor/` is one doctor run
//! (`runs::doctor::machine::DoctorRun`) over a simulated cache (`tests/common/doctor_sim.rs`).
//!
//! A spec holds `description`, optionally `namespace` and `indexed` (the rels of the index the
//! session holds), and `facts`: `indexUnreadable` (`[code, message]` of a failed index read),
//! `files` (cache paths the walk lists), `walkErrors`, `symlinkedFiles`, `symlinkedFolders`,
//! `temps` (`[path, ageMs]`, `null` for one that cannot be stat'ed) and `sidecar` (its text);
//! and `expected`: any of `actions` (by name, in order), `problems` and `notes` (codes, in
//! order), `error` (the run stops). Whatever a spec says, every finding must say something.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use s3sync_core::runs::session::Session;

use crate::doctor_sim::{doctor, Facts, NOW};
use crate::spec_diff::{judge, read_spec};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpecFacts {
    #[serde(default)]
    index_unreadable: Option<(String, String)>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    walk_errors: Vec<String>,
    #[serde(default)]
    symlinked_files: Vec<String>,
    #[serde(default)]
    symlinked_folders: Vec<String>,
    #[serde(default)]
    temps: Vec<(String, Option<i64>)>,
    #[serde(default)]
    sidecar: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    description: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    indexed: Vec<String>,
    #[serde(default)]
    facts: SpecFacts,
    expected: serde_json::Map<String, Value>,
}

/// Runs one spec file; `Err` says every way the run disagrees.
pub fn run(path: &Path) -> Result<(), String> {
    let spec: Spec = read_spec(path, &["actions", "problems", "notes", "error"])?;
    let mut session = Session::new(spec.namespace.as_deref(), "").map_err(|e| e.to_string())?;
    if !spec.indexed.is_empty() {
        let entries: serde_json::Map<String, Value> = spec
            .indexed
            .iter()
            .map(|r| {
                let entry =
                    json!({"key": r, "size": 1, "lastModified": "2026-08-01T12:00:00.000Z"});
                (r.clone(), entry)
            })
            .collect();
        let index = json!({"version": 1, "entries": entries});
        session
            .load_index(&serde_json::to_vec(&index).unwrap())
            .map_err(|e| e.to_string())?;
    }
    let facts = Facts {
        index: spec.facts.index_unreadable.clone(),
        files: spec.facts.files.clone(),
        walk_errors: spec.facts.walk_errors.clone(),
        symlinked_files: spec.facts.symlinked_files.clone(),
        symlinked_folders: spec.facts.symlinked_folders.clone(),
        temps: spec
            .facts
            .temps
            .iter()
            .map(|(p, age)| (p.clone(), age.map(|a| NOW - a)))
            .collect(),
        sidecar: spec.facts.sidecar.as_ref().map(|s| s.as_bytes().to_vec()),
    };
    let (actual, said) = match doctor(&mut session, &facts) {
        Ok((actions, findings)) => {
            let said: Vec<String> = findings
                .problems
                .iter()
                .map(|p| p.message.clone())
                .chain(findings.notes.iter().map(|n| n.message.clone()))
                .collect();
            let actual = json!({
                "actions": actions,
                "problems": findings.problems.iter().map(|p| p.code.as_str()).collect::<Vec<_>>(),
                "notes": findings.notes.iter().map(|n| n.code.as_str()).collect::<Vec<_>>(),
            });
            (actual, said)
        }
        Err(error) => (json!({ "error": error }), Vec::new()),
    };
    judge(&spec.description, "run", &spec.expected, &actual, |out| {
        if said.iter().any(|m| m.trim().is_empty()) {
            out.push("invariant: a finding says nothing".into());
        }
    })
}
