//! Every run as a state machine in the shape of quinn-proto's connection: the core says what to
//! do next (`poll`), the shim does it and hands back what happened (the `on_*` methods). Each
//! run has its folder: `plan` (the diff it decides), `machine` (the sequence of actions), and
//! for pull and push `run` (how the run ends: what it publishes and records). `outcome` is what
//! a finished pull or push answers the extension's caller.

pub mod catalog_export;
pub mod conditions;
pub mod contamination;
pub mod doctor;
pub mod index_read;
pub mod lock;
pub mod machine;
pub mod migrate;
pub mod outcome;
pub mod pull;
pub mod push;
pub mod rebuild;
pub mod repair;
pub mod resolve;
pub mod session;
pub mod shard_move;
pub mod shard_write;
