//! [`DoctorRun`]: read the remote index (an unreadable one is a problem, not a failure), walk
//! the cache, stat our temporary files when the walk found any, read the sidecar, then diagnose.
//!
//! Problems the run finds itself, beside the survey's: an index that cannot be read (nothing
//! syncs until a rebuild replaces it), parts of the cache that cannot be read, symlinked files
//! (never followed, so never pushed), and our temporary files a killed run left over an hour
//! ago. Temporary files written within the hour are only a note: a live run may own them, and a
//! re-run right after a kill must not call the cache unhealthy for an hour over files nothing
//! reads.

use serde::Serialize;
use tsify_next::Tsify;

use crate::codes::{NoteCode, ProblemCode};
use crate::error::{CoreError, CoreResult};
use crate::model::paths::is_stale_temp;
use crate::runs::repair::plan::{DoctorFacts, Problem};
use crate::runs::session::Session;

/// The error codes of an index read that the doctor reports as a problem (any other failure of
/// the read stops it): both leave the index unreadable, so nothing syncs until it is rebuilt.
pub const INDEX_FINDINGS: &[ProblemCode] =
    &[ProblemCode::IndexCorrupt, ProblemCode::PartitionNameUnsafe];

/// A fact worth knowing that is not a problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// Stable code: `recent-temp-files`.
    #[tsify(type = "\"recent-temp-files\"")]
    pub code: NoteCode,
    /// What it is and what happens to it.
    pub message: String,
}

/// What the doctor found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DoctorFindings {
    /// Problems with stable codes; empty when the cache is healthy.
    pub problems: Vec<Problem>,
    /// Facts worth knowing that are not problems.
    pub notes: Vec<Note>,
}

/// The next thing the shim must do for the doctor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DoctorAction {
    /// Load the remote index into the planner without publishing anything; answer with
    /// `index`, or, when the read fails with one of `findings`, with `indexUnreadable` (any
    /// other failure stops the run).
    LoadIndex {
        /// The error codes reported as a problem.
        #[tsify(type = "ProblemCode[]")]
        findings: Vec<ProblemCode>,
    },
    /// Walk the cache; answer with `walk`.
    Walk,
    /// Stat each of `paths` (our temporary files); answer with `temps`.
    StatTemps {
        /// Cache paths.
        paths: Vec<String>,
    },
    /// Read the sync-state sidecar (the journal folded in); answer with `sidecar`.
    ReadSidecar,
    /// The run is over: read `result`.
    Done,
}

/// Where the run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitIndex,
    AwaitWalk,
    AwaitTemps,
    AwaitSidecar,
    Done,
}

/// A doctor run.
#[derive(Debug, Clone)]
pub struct DoctorRun {
    stage: Stage,
    listing: Vec<u8>,
    symlinked_folders: Vec<String>,
    temp_files: Vec<String>,
    findings: DoctorFindings,
}

impl Default for DoctorRun {
    fn default() -> DoctorRun {
        DoctorRun::new()
    }
}

impl DoctorRun {
    /// A run over the planner's session (which will hold the index).
    pub fn new() -> DoctorRun {
        DoctorRun {
            stage: Stage::Start,
            listing: Vec::new(),
            symlinked_folders: Vec::new(),
            temp_files: Vec::new(),
            findings: DoctorFindings::default(),
        }
    }

    /// The next action.
    pub fn poll(&mut self) -> DoctorAction {
        match self.stage {
            Stage::Start => {
                self.stage = Stage::AwaitIndex;
                DoctorAction::LoadIndex {
                    findings: INDEX_FINDINGS.to_vec(),
                }
            }
            Stage::AwaitIndex => DoctorAction::LoadIndex {
                findings: INDEX_FINDINGS.to_vec(),
            },
            Stage::AwaitWalk => DoctorAction::Walk,
            Stage::AwaitTemps => DoctorAction::StatTemps {
                paths: self.temp_files.clone(),
            },
            Stage::AwaitSidecar => DoctorAction::ReadSidecar,
            Stage::Done => DoctorAction::Done,
        }
    }

    fn expect(&self, stage: Stage, what: &str) -> CoreResult<()> {
        if self.stage != stage {
            return Err(CoreError::input(format!(
                "a {what} event came while the doctor was not waiting for one"
            )));
        }
        Ok(())
    }

    /// `index`: the remote index is loaded (or there is none, and a listing stood in for it).
    pub fn on_index(&mut self) -> CoreResult<()> {
        self.expect(Stage::AwaitIndex, "index")?;
        self.stage = Stage::AwaitWalk;
        Ok(())
    }

    /// `indexUnreadable`: the read failed with `code` (one of the findings asked for).
    pub fn on_index_unreadable(&mut self, code: &str, message: &str) -> CoreResult<()> {
        self.expect(Stage::AwaitIndex, "indexUnreadable")?;
        let code = INDEX_FINDINGS
            .iter()
            .copied()
            .find(|c| *c == code)
            .ok_or_else(|| {
                CoreError::input(format!(
                    "indexUnreadable carries {code:?}, which is not a finding of the index read"
                ))
            })?;
        self.findings.problems.push(Problem {
            code,
            message: format!(
                "{message}; nothing syncs until it is fixed: `s3sync rebuild-index --apply` replaces it from a listing"
            ),
        });
        self.stage = Stage::AwaitWalk;
        Ok(())
    }

    /// `walk`: the cache walk and what it found besides files.
    pub fn on_walk(&mut self, walk: WalkFound) -> CoreResult<()> {
        self.expect(Stage::AwaitWalk, "walk")?;
        if let Some(first) = walk.walk_errors.first() {
            self.findings.problems.push(Problem {
                code: ProblemCode::WalkError,
                message: format!(
                    "{} errors reading the cache (e.g. {first}); fix the permissions, then run `s3sync doctor` again",
                    walk.walk_errors.len()
                ),
            });
        }
        if let Some(first) = walk.symlinked_files.first() {
            self.findings.problems.push(Problem {
                code: ProblemCode::SymlinkedFile,
                message: format!(
                    "{} symlinked files in the cache (e.g. {first}): links are never followed, so those files are never pushed; replace each link with the file it points to if it should sync",
                    walk.symlinked_files.len()
                ),
            });
        }
        self.listing = walk.listing;
        self.symlinked_folders = walk.symlinked_folders;
        self.temp_files = walk.temp_files;
        self.stage = if self.temp_files.is_empty() {
            Stage::AwaitSidecar
        } else {
            Stage::AwaitTemps
        };
        Ok(())
    }

    /// `temps`: each temporary file's mtime (`None`: it could not be stat'ed, so it counts as
    /// recent), in the order asked, and the clock.
    pub fn on_temps(&mut self, mtimes: &[Option<i64>], now_ms: i64) -> CoreResult<()> {
        self.expect(Stage::AwaitTemps, "temps")?;
        if mtimes.len() != self.temp_files.len() {
            return Err(CoreError::input(format!(
                "temps carries {} mtimes for {} paths",
                mtimes.len(),
                self.temp_files.len()
            )));
        }
        let (mut stale, mut recent) = (Vec::new(), Vec::new());
        for (path, mtime) in self.temp_files.iter().zip(mtimes) {
            if is_stale_temp(*mtime, now_ms) {
                stale.push(path);
            } else {
                recent.push(path);
            }
        }
        if let Some(first) = stale.first() {
            self.findings.problems.push(Problem {
                code: ProblemCode::LeftoverTempFiles,
                message: format!(
                    "{} temporary files of ours untouched for over an hour (e.g. {first}): a killed run left them between writing and renaming; the next push (or pull that walks the cache) removes them",
                    stale.len()
                ),
            });
        }
        if let Some(first) = recent.first() {
            self.findings.notes.push(Note {
                code: NoteCode::RecentTempFiles,
                message: format!(
                    "{} temporary files of ours written within the hour (e.g. {first}): a run still going, or one killed since; nothing reads them, and the next push (or pull that walks the cache) removes them once they are an hour old",
                    recent.len()
                ),
            });
        }
        self.stage = Stage::AwaitSidecar;
        Ok(())
    }

    /// `sidecar`: the raw sidecar (`None`: there is none); the survey's problems follow.
    pub fn on_sidecar(&mut self, session: &Session, sidecar: Option<&[u8]>) -> CoreResult<()> {
        self.expect(Stage::AwaitSidecar, "sidecar")?;
        let facts = DoctorFacts {
            symlinked_folders: std::mem::take(&mut self.symlinked_folders),
            ..DoctorFacts::from_sidecar(sidecar)
        };
        let problems = session.diagnose(&self.listing, facts)?;
        self.findings.problems.extend(problems);
        self.listing = Vec::new();
        self.stage = Stage::Done;
        Ok(())
    }

    /// What the doctor found; before it is done, `invalid-input`.
    pub fn result(&self) -> CoreResult<DoctorFindings> {
        if self.stage != Stage::Done {
            return Err(CoreError::input("the doctor is not done"));
        }
        Ok(self.findings.clone())
    }
}

/// What a walk found, as the `walk` event carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkFound {
    /// The files (a local listing buffer).
    pub listing: Vec<u8>,
    /// What the walk could not read.
    pub walk_errors: Vec<String>,
    /// Symlinked files (never followed).
    pub symlinked_files: Vec<String>,
    /// Symlinked folders (never followed).
    pub symlinked_folders: Vec<String>,
    /// Our temporary files.
    pub temp_files: Vec<String>,
}
