//! What a pull does with this cache's version of a file before the bucket's replaces it.
//!
//! A local file that differs from the bucket's version and from the version this cache last
//! synced (the base) is this cache's own change: it is kept aside as a conflict copy, named by
//! its content (`.s3sync-conflicts/…`), before the bucket's version goes in its place. The same
//! version kept twice is one file: a copy already at that name with the same bytes is reused,
//! never written again. A file at that name with other bytes (a copy someone edited to merge by
//! hand) is never written over: the pull leaves this file as it is and says so.

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
    /// Another file is at the conflict copy's name: neither it nor the local file is touched,
    /// and the bucket's version does not replace the local one.
    Occupied,
}

/// What is at the conflict copy's name: its size, and its hash when the shim read it (it need
/// not when the size already differs from the local file's).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct CopyFound {
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256 (hex), when read.
    #[serde(default)]
    #[tsify(optional)]
    pub sha256: Option<String>,
}

/// What to do with the `local` file (none: there is none) before `incoming` replaces it (none:
/// the bucket's version was not hashed, so it is never taken for the same bytes), given the
/// `base` version's hash this cache last synced and the `copy` already at the conflict copy's
/// name (none: there is none).
pub fn judge_aside(
    local: Option<&FileContent>,
    incoming: Option<&FileContent>,
    base_sha256: Option<&str>,
    copy: Option<&CopyFound>,
) -> AsideStep {
    let Some(local) = local else {
        return AsideStep::Nothing;
    };
    if incoming == Some(local) || base_sha256 == Some(local.sha256.as_str()) {
        return AsideStep::Nothing;
    }
    match copy {
        None => AsideStep::Copy,
        Some(copy) if copy.size == local.size && copy.sha256.as_deref() == Some(&local.sha256) => {
            AsideStep::Reuse
        }
        Some(_) => AsideStep::Occupied,
    }
}
