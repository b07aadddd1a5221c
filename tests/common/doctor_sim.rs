//! A simulated cache for the doctor run, and a driver that answers each of its actions the way
//! the shim does (`js/ops/repair.ts`); it makes no decision of its own.

#![allow(dead_code)]

use s3sync_core::runs::doctor::events::DoctorEvent;
use s3sync_core::runs::doctor::machine::{DoctorAction, DoctorFindings, DoctorRun};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_local;

/// The clock of every simulated doctor run (epoch ms).
pub const NOW: i64 = 1_796_000_000_000;

/// The facts a simulated cache reports.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    /// The index read's failure (code, message); none: it loaded.
    pub index: Option<(String, String)>,
    /// The cache paths the walk lists (size 1, written at [`NOW`]).
    pub files: Vec<String>,
    /// What the walk could not read.
    pub walk_errors: Vec<String>,
    /// Symlinked files the walk passed over.
    pub symlinked_files: Vec<String>,
    /// Symlinked folders the walk passed over.
    pub symlinked_folders: Vec<String>,
    /// Our temporary files, each with its mtime (none: it cannot be stat'ed).
    pub temps: Vec<(String, Option<i64>)>,
    /// The raw sidecar, if there is one.
    pub sidecar: Option<Vec<u8>>,
}

/// Runs the doctor over `facts`, as the shim does.
///
/// # Returns
/// the actions asked for, by name, and the findings; or the first error, said
pub fn doctor(
    session: &mut Session,
    facts: &Facts,
) -> Result<(Vec<String>, DoctorFindings), String> {
    let mut run = DoctorRun::new();
    let mut asked = Vec::new();
    loop {
        let action = Machine::poll(&mut run, session).map_err(|e| e.to_string())?;
        let event = match &action {
            DoctorAction::Done => break,
            DoctorAction::LoadIndex { findings } => match &facts.index {
                Some((code, message)) if findings.iter().any(|f| f == code.as_str()) => {
                    DoctorEvent::IndexUnreadable {
                        code: code.clone(),
                        message: message.clone(),
                    }
                }
                // Not a finding: the read's failure stops the doctor, as the shim rethrows it.
                Some((code, _)) => return Err(format!("the index read failed: {code}")),
                None => DoctorEvent::Index,
            },
            DoctorAction::Walk => DoctorEvent::Walk {
                listing: encode_local(facts.files.iter().map(|f| (f.as_str(), 1, Some(NOW))))
                    .into(),
                walk_errors: facts.walk_errors.clone(),
                symlinked_files: facts.symlinked_files.clone(),
                symlinked_folders: facts.symlinked_folders.clone(),
                temp_files: facts.temps.iter().map(|(p, _)| p.clone()).collect(),
            },
            DoctorAction::StatTemps { paths } => DoctorEvent::Temps {
                mtimes: paths
                    .iter()
                    .map(|p| {
                        facts
                            .temps
                            .iter()
                            .find(|(t, _)| t == p)
                            .and_then(|(_, m)| *m)
                    })
                    .collect(),
                now_ms: NOW,
            },
            DoctorAction::ReadSidecar => DoctorEvent::Sidecar {
                bytes: facts.sidecar.clone().map(Into::into),
            },
        };
        let name = serde_json::to_value(&action).map_err(|e| e.to_string())?["action"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        asked.push(name);
        Machine::handle(&mut run, session, event).map_err(|e| e.to_string())?;
    }
    let findings = Machine::result(&run).map_err(|e| e.to_string())?;
    Ok((asked, findings))
}
