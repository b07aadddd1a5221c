//! [`Machine`]: the one interface every run has, in the shape of quinn-proto's connection.
//!
//! A run never does I/O. The shim asks it what to do next ([`Machine::poll`]), does that, and
//! hands back what happened as one event ([`Machine::handle`]); when `poll` answers "done",
//! [`Machine::result`] says what the run did. Because every run has this one shape, the WASM
//! boundary exports each with one macro and TypeScript drives each through one class.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::CoreResult;

/// A run as a state machine.
pub trait Machine {
    /// What the run works on besides itself: the planner's [`Session`](crate::runs::session::Session)
    /// (its index) for the runs that read or replace it, `()` for runs that hold their own.
    type Context;
    /// What the shim must do next.
    type Action: Serialize;
    /// What the shim reports back: one variant per kind of fact.
    type Event: DeserializeOwned;
    /// What an event answers, when the shim needs an answer at once (most events: `()`).
    type Reply: Serialize;
    /// What the run did.
    type Output: Serialize;

    /// The next action.
    fn poll(&mut self, context: &mut Self::Context) -> CoreResult<Self::Action>;

    /// Takes back what happened; an event the run is not waiting for is `invalid-input`.
    fn handle(
        &mut self,
        context: &mut Self::Context,
        event: Self::Event,
    ) -> CoreResult<Self::Reply>;

    /// What the run did (an error before the run is done).
    fn result(&self) -> CoreResult<Self::Output>;
}
