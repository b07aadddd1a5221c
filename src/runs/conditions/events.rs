//! What the shim reports to a conditions run ([`ConditionsEvent`]), and the run as a
//! [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::conditions::machine::{ConditionsAction, ConditionsResult, ConditionsRun};
use crate::runs::machine::Machine;
use crate::runs::session::Session;

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ConditionsEvent {
    /// `readSidecar`: its bytes; none when there is no sidecar.
    Sidecar {
        /// The sidecar file's bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
    },
    /// `probeWrites`: whether each write landed (a 412 is a write that did not).
    WritesProbed {
        /// The first create-only write.
        created: bool,
        /// The second create-only write, over the object the first made.
        again: bool,
        /// The write `If-Match` an ETag the object does not have.
        wrong_match: bool,
    },
    /// `probeDeletes`: what the server did with a delete it should refuse.
    DeletesProbed {
        /// The delete `If-Match` a wrong ETag was refused (a 412).
        refused: bool,
        /// A HEAD after it still found the object.
        exists: bool,
    },
    /// `remember`: done (kept, or not: either way the run goes on).
    Remembered,
}

impl Machine for ConditionsRun {
    type Context = Session;
    type Action = ConditionsAction;
    type Event = ConditionsEvent;
    type Reply = ();
    type Output = ConditionsResult;

    fn poll(&mut self, session: &mut Session) -> CoreResult<ConditionsAction> {
        ConditionsRun::poll(self, session)
    }

    fn handle(&mut self, _session: &mut Session, event: ConditionsEvent) -> CoreResult<()> {
        match event {
            ConditionsEvent::Sidecar { bytes } => self.on_sidecar(bytes.as_ref().map(|b| &b.0[..])),
            ConditionsEvent::WritesProbed {
                created,
                again,
                wrong_match,
            } => self.on_writes_probed(created, again, wrong_match),
            ConditionsEvent::DeletesProbed { refused, exists } => {
                self.on_deletes_probed(refused, exists)
            }
            ConditionsEvent::Remembered => self.on_remembered(),
        }
    }

    fn result(&self) -> CoreResult<ConditionsResult> {
        ConditionsRun::result(self)
    }
}
