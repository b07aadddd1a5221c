//! What a [`LockRun`](super::machine::LockRun) is asked ([`LockRequest`]), what it asks the shim
//! to do ([`LockAction`]) and what it reports ([`LockResult`]).

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::runs::shard_write::machine::PutCondition;

/// Who takes the lock: the body's identity fields and this acquisition's random nonce.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LockHolder {
    /// `user@host`.
    pub holder: String,
    /// The host name.
    pub hostname: String,
    /// The process id.
    pub pid: u64,
    /// The random token of this acquisition (the shim draws it: the core has no randomness).
    pub nonce: String,
}

/// What to do with the lock at `key`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(
    tag = "mode",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LockRequest {
    /// Take it, waiting while a live holder has it.
    Acquire {
        /// The lock object's key.
        key: String,
        /// Who takes it.
        holder: LockHolder,
        /// Lease length (default 30 s, at most an hour).
        #[serde(default)]
        #[tsify(optional)]
        ttl_ms: Option<u64>,
        /// Wait between attempts while it is held (default 1 s).
        #[serde(default)]
        #[tsify(optional)]
        retry_ms: Option<u64>,
        /// Longest wait before `lock-timeout` (default 60 s).
        #[serde(default)]
        #[tsify(optional)]
        max_wait_ms: Option<u64>,
        /// The clock when the run starts (epoch ms).
        now_ms: i64,
        /// Whether the store can make a PUT or DELETE conditional on an ETag (`If-Match`).
        if_match: bool,
    },
    /// Refresh a lease we hold.
    Refresh {
        /// The lock object's key.
        key: String,
        /// Who holds it (the nonce of the acquisition).
        holder: LockHolder,
        /// Lease length written in the body.
        ttl_ms: u64,
        /// Whether the store can make a PUT conditional on an ETag.
        if_match: bool,
    },
    /// Delete it if it is still ours (`nonce`).
    Release {
        /// The lock object's key.
        key: String,
        /// Our acquisition's nonce.
        nonce: String,
        /// Whether the store can make a DELETE conditional on an ETag.
        if_match: bool,
    },
    /// Delete it for a person who names its nonce (or `unreadable` for a body that is no lock).
    ForceRelease {
        /// The lock object's key.
        key: String,
        /// The nonce named.
        nonce: String,
        /// Whether the store can make a DELETE conditional on an ETag.
        if_match: bool,
    },
}

/// What `lock release --force` takes for a lock object whose body is no lock.
pub const UNREADABLE_LOCK: &str = "unreadable";

/// The next thing the shim must do for the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LockAction {
    /// Write the lock object under `condition`; answer with `put` (`landed` false: refused).
    Put {
        /// The lock's key.
        key: String,
        /// The body.
        #[tsify(type = "Uint8Array")]
        body: Bytes,
        /// What the write is conditional on.
        condition: PutCondition,
        /// Whether a transient failure may be retried.
        retry: bool,
    },
    /// HEAD then GET the lock object; answer with `inspected` (no body: there is none).
    Inspect {
        /// The lock's key.
        key: String,
        /// Whether a transient failure may be retried.
        retry: bool,
    },
    /// DELETE the lock object, `If-Match` the ETag when one is given; one attempt, never
    /// retried. Answer with `deleted` (false: the condition was refused).
    Delete {
        /// The lock's key.
        key: String,
        /// Delete only this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[tsify(optional)]
        if_match: Option<String>,
    },
    /// Wait `ms`, after telling a person `say` when there is one; answer with `slept`.
    Sleep {
        /// How long.
        ms: u64,
        /// A line for the log (who holds the lock, how long we wait).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[tsify(optional)]
        say: Option<String>,
    },
    /// The run is over: read `result`.
    Done,
}

/// What the run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
pub struct LockResult {
    /// Acquire and refresh: the lock is ours now.
    pub held: bool,
    /// Acquire: the stale holder taken over from.
    pub took_over_from: Option<String>,
    /// Acquire: how long it waited (ms).
    pub waited_ms: u64,
    /// Acquire: whether another writer held it or had left it stale.
    pub contended: bool,
    /// Refresh: why the lease is lost (the shim stops publishing), when it is.
    pub lost: Option<String>,
    /// Release and force release: whether the lock object was deleted.
    pub released: bool,
    /// Lines for the log (a takeover, a lock left alone at release).
    pub notes: Vec<String>,
}
