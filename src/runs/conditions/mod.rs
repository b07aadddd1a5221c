//! What the server honours of conditional requests, and from it how a push's object writes and
//! deletes are made conditional: the probe's verdicts, trusting a remembered one, refusing a
//! server that ignores conditional writes and what is remembered for the next run are decided
//! in [`machine`]; the shim makes the probe's requests and reads and writes the sidecar
//! ([`events`]).

pub mod events;
pub mod machine;
