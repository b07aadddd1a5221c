//! Uploading a namespace's catalog export (`<ns>/.catalog-export.json`): whether it is sent at
//! all, held back, what the write is conditional on and what a lost condition means are decided
//! in [`machine`]; the shim reads the sidecar, makes the requests and keeps the hash
//! ([`events`]).

pub mod events;
pub mod machine;
