//! What a pull does with this cache's version of a file before the bucket's replaces it.
//!
//! A local file that differs from the bucket's version and from the version this cache last
//! synced (the base) is this cache's own change: it is kept aside as a conflict copy, named by
//! its content (`.s3sync-conflicts/…`), before the bucket's version goes in its place. The same
//! version kept twice is one file: a copy already at that name with the same bytes is reused,
//! never written again.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

/// A file's content, as the shim hashed it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256 (hex).
    pub sha256: String,
}

/// What to do with the local file (see [`judge_aside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum AsideStep {
    /// Nothing of ours to keep: no local file, the bucket's bytes already, or the base's.
    Nothing,
    /// The conflict copy already holds these bytes: keep it, write nothing.
    Reuse,
    /// Copy the local file to its conflict copy (verified against `sha256` as it is copied).
    Copy,
}

/// What to do with the `local` file (none: there is none) before `incoming` replaces it (none:
/// the bucket's version was not hashed, so it is never taken for the same bytes), given the
/// `base` version's hash this cache last synced and the `copy` already at the conflict copy's
/// name (none: there is none).
pub fn judge_aside(
    local: Option<&FileContent>,
    incoming: Option<&FileContent>,
    base_sha256: Option<&str>,
    copy: Option<&FileContent>,
) -> AsideStep {
    let Some(local) = local else {
        return AsideStep::Nothing;
    };
    if incoming == Some(local) || base_sha256 == Some(local.sha256.as_str()) {
        return AsideStep::Nothing;
    }
    match copy {
        Some(copy) if copy == local => AsideStep::Reuse,
        _ => AsideStep::Copy,
    }
}
