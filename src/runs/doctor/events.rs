//! What the shim reports to the doctor ([`DoctorEvent`]), and the run as a [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::doctor::machine::{DoctorAction, DoctorFindings, DoctorRun, WalkFound};
use crate::runs::machine::Machine;
use crate::runs::session::Session;

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DoctorEvent {
    /// `loadIndex`: the index is loaded.
    Index,
    /// `loadIndex`: the read failed with one of the findings asked for.
    IndexUnreadable {
        /// The error's code.
        code: String,
        /// The error's message.
        message: String,
    },
    /// `walk`: the cache walk.
    Walk {
        /// The files (`encodeLocalListing`).
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
        /// What the walk could not read.
        walk_errors: Vec<String>,
        /// Symlinked files.
        symlinked_files: Vec<String>,
        /// Symlinked folders.
        symlinked_folders: Vec<String>,
        /// Our temporary files.
        temp_files: Vec<String>,
    },
    /// `statTemps`: each path's mtime (epoch ms; null: it could not be stat'ed), in order, and
    /// the clock.
    Temps {
        /// The mtimes.
        #[tsify(type = "(number | null)[]")]
        mtimes: Vec<Option<i64>>,
        /// The clock (epoch ms).
        now_ms: i64,
    },
    /// `readSidecar`: its bytes, absent when there is none.
    Sidecar {
        /// The sidecar.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
    },
}

impl Machine for DoctorRun {
    type Context = Session;
    type Action = DoctorAction;
    type Event = DoctorEvent;
    type Reply = ();
    type Output = DoctorFindings;

    fn poll(&mut self, _: &mut Session) -> CoreResult<DoctorAction> {
        Ok(DoctorRun::poll(self))
    }

    fn handle(&mut self, session: &mut Session, event: DoctorEvent) -> CoreResult<()> {
        match event {
            DoctorEvent::Index => self.on_index(),
            DoctorEvent::IndexUnreadable { code, message } => {
                self.on_index_unreadable(&code, &message)
            }
            DoctorEvent::Walk {
                listing,
                walk_errors,
                symlinked_files,
                symlinked_folders,
                temp_files,
            } => self.on_walk(WalkFound {
                listing: listing.0,
                walk_errors,
                symlinked_files,
                symlinked_folders,
                temp_files,
            }),
            DoctorEvent::Temps { mtimes, now_ms } => self.on_temps(&mtimes, now_ms),
            DoctorEvent::Sidecar { bytes } => self.on_sidecar(session, bytes.as_deref()),
        }
    }

    fn result(&self) -> CoreResult<DoctorFindings> {
        DoctorRun::result(self)
    }
}
