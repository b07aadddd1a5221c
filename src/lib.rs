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
//! - [`deletions`]: deletion records, so a delete reaches every clone on evidence.
//! - [`file_class`]: swamp's kinds of files and the merge rule of each.
//! - [`binding`]: which tree a run given no namespace may act on.
//! - [`paths`]: the three names of a file (index key, remote key, cache path) and their rules.
//! - [`index`]: index formats v1 and v2.
//! - [`key_sort`]: the order of many keys that share long prefixes (an index's load).
//! - [`listing`]: compact listing buffers that cross the WASM boundary.
//! - [`migrate`]: the remote side of a solo → namespaced migrate.
//! - [`compare`]: byte-string comparison a word at a time (and the WASM build's `memcmp`).
//! - [`swar`]: byte searches eight bytes a step (index scan, listings, path rules).
//! - [`codes`]: the stable codes of verdicts, problems and refusals, as types.
//! - [`conflicts`]: conflict copies (this cache's side of a two-sided change) and `resolve`.
//! - [`contamination`]: objects of other namespaces under the bound one, and which are safe to remove.
//! - [`lock`]: decisions of the extension-compatible distributed lock (time passed in).
//! - [`rebuild`]: an index from a bucket listing.
//! - [`layout`]: what a cache walk says about the layout.
//! - [`repair`]: the layout doctor and the repair (and migrate) planner.
//! - [`pull`]: the pull diff.
//! - [`push`]: the push diff, and the changes a push makes to the index.
//! - [`pull_machine`], [`push_machine`]: a pull and a push as state machines the shim drives
//!   (next action out, result back).
//! - [`pull_run`], [`push_run`]: how a run ends: what it publishes, what it records, whether a
//!   saved plan still holds, deletes nobody confirmed.
//! - [`safety`]: evidence for deletes and the guards that withhold them.
//! - [`seal`]: the stat seal that lets a push with nothing to do send nothing.
//! - [`session`]: state kept between the steps of one run.
//! - [`sync_state`]: the local sync-state sidecar and the no-op pull decision.
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

pub mod binding;
pub mod codes;
pub mod compare;
pub mod conflicts;
pub mod contamination;
pub mod contamination_machine;
pub mod deletions;
pub mod error;
pub mod file_class;
pub mod index;
pub mod key_sort;
pub mod layout;
pub mod listing;
pub mod lock;
pub mod migrate;
pub mod migrate_machine;
pub mod object_condition;
pub mod paths;
pub mod pull;
pub mod pull_machine;
pub mod pull_run;
pub mod push;
pub mod push_machine;
pub mod push_run;
pub mod rebuild;
pub mod rebuild_machine;
pub mod repair;
pub mod repair_machine;
pub mod resolve_machine;
pub mod safety;
pub mod seal;
pub mod session;
pub mod swar;
pub mod sync_state;
pub mod text;
pub mod time;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use error::{CoreError, CoreResult, PathRefusal};
