//! # s3sync-core
//!
//! The planning core of the S3 datastore sync: it decides **what** must move between a local
//! cache folder and an S3 bucket, and what must never be deleted. A thin Deno shim (`js/`) does
//! the moving.
//!
//! ## The sans-io contract
//!
//! Nothing in this crate touches a file system, a network, a clock, randomness or threads.
//! Time, listings, index bytes and file stats come in as values; plans, reports and typed errors
//! go out. `clippy.toml` bans the std APIs that would break this, so the same code runs natively
//! (fast tests, benchmarks, fuzzing) and as WebAssembly (the shim), and every decision it makes
//! can be replayed from its inputs.
//!
//! ## Layout
//!
//! The tree says where a decision lives and what a file may touch:
//!
//! - [`model`]: what a datastore is. The three names of a file ([`model::paths`]), which
//!   tree a run given no namespace may act on ([`model::binding`]), swamp's kinds of files and
//!   the merge rule of each ([`model::file_class`]), what a cache walk says about the layout
//!   ([`model::layout`]), timestamps as the datastore writes them ([`model::time`]).
//! - [`index`]: the remote index, v1 monolith and v2 shards, read and written.
//! - [`state`]: what a cache keeps between runs and what the lock says: the sync-state sidecar
//!   ([`state::sync_state`]), the stat seal that lets a push with nothing to do send nothing
//!   ([`state::seal`]), the extension-compatible distributed lock ([`state::lock`]).
//! - [`safety`]: nothing lost. Evidence for deletes and the guards that withhold them;
//!   deletion records that carry a delete to every clone ([`safety::deletions`]); conflict
//!   copies and `resolve` ([`safety::conflicts`]); what each object write and delete is
//!   conditional on ([`safety::object_condition`]).
//! - [`runs`]: every run as a state machine the shim drives (next action out, result back),
//!   each in its own folder: `plan` (the diff), `machine` (the sequence), `run` (how it ends);
//!   [`runs::session`] keeps the state between a run's steps.
//! - [`wire`]: compact listing buffers that cross the WASM boundary.
//! - [`bytes`]: byte-level helpers with no knowledge of datastores (word-at-a-time searches and
//!   comparison, the order of keys with long shared prefixes, short inline strings).
//! - [`codes`], [`error`]: the stable codes of verdicts, problems and refusals, and the typed
//!   errors.
//! - `wasm` (wasm32 only): the only `#[wasm_bindgen]` surface; converts and delegates.
//!
//! Every public function returns [`CoreResult`]; no panic may cross the boundary.
//!
//! ## Boundary types
//!
//! Every type that crosses the boundary as a value derives `Tsify` (declarations only: serde
//! still serializes), so its TypeScript declaration is generated into `pkg/s3sync_core.d.ts`
//! with its doc comments, and `js/` re-exports it instead of copying it. Output types carry
//! `#[tsify(missing_as_null, hashmap_as_object)]`, as both serializers the surface uses
//! (serde_json, and serde-wasm-bindgen's `json_compatible`) send `None` as `null` and maps as
//! objects. A doc comment on such a type must not contain `*/`: it becomes a TypeScript comment.

// The one exception, `compare`, supplies the WASM build's `memcmp` and `bcmp`.
#![deny(unsafe_code)]

pub mod bytes;
pub mod codes;
pub mod error;
pub mod index;
pub mod model;
pub mod runs;
pub mod safety;
pub mod state;
#[cfg(target_arch = "wasm32")]
mod wasm;
pub mod wire;

pub use error::{CoreError, CoreResult, PathRefusal};
