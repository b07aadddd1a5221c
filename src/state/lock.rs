//! Decisions of the distributed lock the extension's writers hold while they publish.
//!
//! The lock is an object (`.datastore.lock` under the prefix) created with `If-None-Match: *`,
//! holding `{holder, hostname, pid, acquiredAt, ttlMs, nonce}`. It is stale when its object's
//! `LastModified + ttlMs` is in the past. The shim does the requests; every decision (is it ours,
//! is it stale, wait or give up, how often to heartbeat) is made here from values, with time
//! passed in, so a slowed or frozen clock can test it without sleeping.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

/// The extension's default lease.
pub const DEFAULT_TTL_MS: u64 = 30_000;
/// The extension's default wait between attempts.
pub const DEFAULT_RETRY_MS: u64 = 1_000;
/// The extension's default longest wait.
pub const DEFAULT_MAX_WAIT_MS: u64 = 60_000;

/// The lock's defaults together (the extension's), as the shim reads them once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockDefaults {
    /// The lease ([`DEFAULT_TTL_MS`]).
    pub ttl_ms: u64,
    /// The pause between tries ([`DEFAULT_RETRY_MS`]).
    pub retry_ms: u64,
    /// The longest wait ([`DEFAULT_MAX_WAIT_MS`]).
    pub max_wait_ms: u64,
}

/// The lock's defaults (see [`LockDefaults`]).
pub const DEFAULTS: LockDefaults = LockDefaults {
    ttl_ms: DEFAULT_TTL_MS,
    retry_ms: DEFAULT_RETRY_MS,
    max_wait_ms: DEFAULT_MAX_WAIT_MS,
};

/// The longest lease honoured: a lock body asking for more (a bug, or a hostile writer asking
/// for 10^15 ms or 2^64 − 1) is held for this long and then stale, so no lock can block every
/// writer for longer than an hour without being refreshed.
pub const MAX_TTL_MS: u64 = 3_600_000;

/// Checks a lease we are asked to take: at most [`MAX_TTL_MS`] (a longer one would be capped by
/// every reader, so asking for it is a mistake to report, not to honour silently), and not 0.
pub fn check_ttl(ttl_ms: u64) -> crate::error::CoreResult<u64> {
    if ttl_ms == 0 || ttl_ms > MAX_TTL_MS {
        return Err(crate::error::CoreError::input(format!(
            "lock ttlMs {ttl_ms} is outside 1..={MAX_TTL_MS} (a lease is at most an hour)"
        )));
    }
    Ok(ttl_ms)
}

/// The lock object's body, as the extension writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct LockBody {
    /// `user@host` of the holder.
    pub holder: String,
    /// Host name of the holder.
    pub hostname: String,
    /// Process id of the holder.
    pub pid: u64,
    /// When it was taken or last refreshed (ISO-8601).
    pub acquired_at: String,
    /// Lease length in ms.
    pub ttl_ms: u64,
    /// Random token that identifies this acquisition.
    pub nonce: String,
}

impl LockBody {
    /// Reads a lock body; `None` when it is not one (a lock we cannot read is still a lock: the
    /// caller treats it as held with the default lease).
    pub fn parse(bytes: &[u8]) -> Option<LockBody> {
        serde_json::from_slice(bytes).ok()
    }

    /// The pretty JSON the extension writes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }
}

/// What the current lock object means for us.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "state"
)]
pub enum LockState {
    /// No lock object: try to create it.
    Free,
    /// The lock is ours (our nonce).
    Ours,
    /// Someone else holds a live lease.
    Held {
        /// Who (`user@host`, or `unknown` when the body is unreadable).
        holder: String,
        /// Their host and pid, for the message.
        hostname: String,
        /// Their process id.
        pid: u64,
        /// Age of the lock object in ms.
        age_ms: u64,
        /// How long until it turns stale.
        expires_in_ms: u64,
        /// The body asked for a lease over [`MAX_TTL_MS`], which is what is honoured.
        ttl_capped: bool,
    },
    /// Someone else's lease ran out: it may be taken over.
    Stale {
        /// Who held it.
        holder: String,
        /// Age of the lock object in ms.
        age_ms: u64,
        /// The body asked for a lease over [`MAX_TTL_MS`], which is what was honoured.
        ttl_capped: bool,
    },
}

/// Classifies the lock object: its body (if any), its `LastModified` (epoch ms), our nonce and
/// the time now (epoch ms).
pub fn assess(
    body: Option<&[u8]>,
    last_modified_ms: Option<i64>,
    our_nonce: &str,
    now_ms: i64,
) -> LockState {
    let Some(bytes) = body else {
        return LockState::Free;
    };
    let parsed = LockBody::parse(bytes);
    if parsed.as_ref().is_some_and(|b| b.nonce == our_nonce) {
        return LockState::Ours;
    }
    let asked = parsed.as_ref().map_or(DEFAULT_TTL_MS, |b| b.ttl_ms);
    let ttl_capped = asked > MAX_TTL_MS;
    let ttl = asked.min(MAX_TTL_MS);
    let holder = parsed
        .as_ref()
        .map_or_else(|| "unknown".to_string(), |b| b.holder.clone());
    // Without a LastModified we cannot prove the lease ran out: treat it as fresh.
    let age_ms = last_modified_ms.map_or(0, |m| now_ms.saturating_sub(m).max(0) as u64);
    if age_ms > ttl {
        LockState::Stale {
            holder,
            age_ms,
            ttl_capped,
        }
    } else {
        LockState::Held {
            holder,
            hostname: parsed
                .as_ref()
                .map_or_else(String::new, |b| b.hostname.clone()),
            pid: parsed.as_ref().map_or(0, |b| b.pid),
            age_ms,
            expires_in_ms: ttl - age_ms,
            ttl_capped,
        }
    }
}

/// Whether to try again after finding the lock held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "action"
)]
pub enum WaitDecision {
    /// Sleep this long, then try again.
    Retry {
        /// Delay in ms.
        delay_ms: u64,
    },
    /// The wait is over: report the holder.
    GiveUp,
}

/// Decides whether to keep waiting: retry every `retry_ms` (never past the deadline) until
/// `max_wait_ms` after `started_ms`.
pub fn wait_decision(
    started_ms: i64,
    now_ms: i64,
    max_wait_ms: u64,
    retry_ms: u64,
) -> WaitDecision {
    let waited = now_ms.saturating_sub(started_ms).max(0) as u64;
    if waited >= max_wait_ms {
        return WaitDecision::GiveUp;
    }
    WaitDecision::Retry {
        delay_ms: retry_ms.min(max_wait_ms - waited).max(1),
    }
}

/// How often a holder refreshes its lease: a third of it, as the extension does, so two
/// refreshes can fail before the lease runs out.
pub fn heartbeat_interval_ms(ttl_ms: u64) -> u64 {
    (ttl_ms / 3).max(1)
}
