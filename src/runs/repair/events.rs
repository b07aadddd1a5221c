//! What the shim reports to a layout repair ([`RepairEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreError;
use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::repair::machine::{RepairAction, RepairResult, RepairRun, StepResult};
use crate::runs::session::Session;

/// What happened, answering the repair's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RepairEvent {
    /// `readJournal`: the journal as read (no bytes: none), or why it could not be read.
    Journal {
        /// Its bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
        /// Why it could not be read (a refused path).
        #[serde(default)]
        #[tsify(optional)]
        refused: Option<String>,
    },
    /// `loadIndex`: the remote index is loaded into the planner.
    Index,
    /// `walk`: the cache walk (a local listing buffer, `encodeLocalListing`) and the errors it
    /// met.
    Walk {
        /// The listing.
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
        /// What the walk could not read.
        walk_errors: Vec<String>,
    },
    /// `hash`: the SHA-256 of the paths asked for that still exist (`paths[i]` hashes to
    /// `values[i]`).
    Hashes {
        /// Cache paths.
        paths: Vec<String>,
        /// Their SHA-256, in the same order.
        values: Vec<String>,
    },
    /// `apply`: one result per step, in order.
    Applied {
        /// The steps' results.
        results: Vec<StepResult>,
    },
    /// `hydrate`: the hydration is over; how many downloads failed, at `nowIso`.
    Hydrated {
        /// Downloads that failed.
        failures: u64,
        /// When it ended (ISO-8601).
        now_iso: String,
    },
}

impl Machine for RepairRun {
    type Context = Session;
    type Action = RepairAction;
    type Event = RepairEvent;
    type Reply = ();
    type Output = RepairResult;

    fn poll(&mut self, _: &mut Session) -> CoreResult<RepairAction> {
        Ok(RepairRun::poll(self))
    }

    fn handle(&mut self, session: &mut Session, event: RepairEvent) -> CoreResult<()> {
        match event {
            RepairEvent::Journal { bytes, refused } => self.on_journal(bytes.as_deref(), refused),
            RepairEvent::Index => self.on_index(),
            RepairEvent::Walk {
                listing,
                walk_errors,
            } => self.on_walk(session, &listing, &walk_errors),
            RepairEvent::Hashes { paths, values } => {
                if paths.len() != values.len() {
                    return Err(CoreError::input("hash paths and values differ in length"));
                }
                self.on_hashes(session, &paths.into_iter().zip(values).collect())
            }
            RepairEvent::Applied { results } => self.on_applied(&results),
            RepairEvent::Hydrated { failures, now_iso } => {
                if crate::model::time::parse_iso_millis(&now_iso).is_none() {
                    return Err(CoreError::input(format!(
                        "nowIso: {now_iso:?} is not a time"
                    )));
                }
                self.on_hydrated(failures, &now_iso)
            }
        }
    }

    fn result(&self) -> CoreResult<RepairResult> {
        RepairRun::result(self)
    }
}
