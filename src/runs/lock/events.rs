//! What the shim reports to a lock run ([`LockEvent`]), and the run as a [`Machine`] (it holds
//! its own state, so its context is `()`).

use serde::Deserialize;
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::CoreResult;
use crate::runs::lock::machine::{LockAction, LockResult, LockRun};
use crate::runs::machine::Machine;

/// What the shim reports back.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LockEvent {
    /// `put`: whether the write landed (false: its condition was refused).
    Put {
        /// Whether it landed.
        landed: bool,
    },
    /// `inspect`: the lock object as read, and the clock then.
    Inspected {
        /// Its body; absent when there is no lock object.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        body: Option<Bytes>,
        /// Its `LastModified` (epoch ms), when the store gave one.
        #[serde(default)]
        #[tsify(optional)]
        last_modified_ms: Option<i64>,
        /// Its ETag, when the store gave one.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
        /// The clock (epoch ms).
        now_ms: i64,
    },
    /// `delete`: whether the object went (false: the `If-Match` was refused).
    Deleted {
        /// Whether it went.
        deleted: bool,
    },
    /// `sleep`: the clock after the wait.
    Slept {
        /// The clock (epoch ms).
        now_ms: i64,
    },
}

impl Machine for LockRun {
    type Context = ();
    type Action = LockAction;
    type Event = LockEvent;
    type Reply = ();
    type Output = LockResult;

    fn poll(&mut self, _: &mut ()) -> CoreResult<LockAction> {
        LockRun::poll(self)
    }

    fn handle(&mut self, _: &mut (), event: LockEvent) -> CoreResult<()> {
        LockRun::handle(self, event)
    }

    fn result(&self) -> CoreResult<LockResult> {
        LockRun::result(self)
    }
}
