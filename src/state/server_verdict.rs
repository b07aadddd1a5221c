//! What a server honours of conditional requests, remembered between runs.
//!
//! A push probes the server before its first conditional write (three PUTs and a DELETE of a
//! probe object; a DELETE probe more when it deletes). Swamp runs every command in a new process,
//! so that probe was paid by every push that uploaded anything: four requests of the eight or ten
//! a one-file push makes. The verdict is now kept in the sidecar (`s3syncServer`, a field the
//! extension ignores and keeps), bound to the store it was probed on and trusted for
//! [`VERDICT_TTL_MS`]; only a server that honours conditional writes is remembered (one that
//! ignores them refuses the push anyway, and is probed again next time).
//!
//! What trusting it risks: a server behind the same endpoint, bucket and prefix that stopped
//! honouring conditions within the day would take this cache's writes unconditionally until the
//! verdict expires. `s3sync doctor --probe-server` always probes afresh.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tsify_next::Tsify;

use crate::state::sync_state::SyncState;

/// The sidecar field holding the verdict.
pub const VERDICT_FIELD: &str = "s3syncServer";

/// How long a verdict is trusted: a day.
pub const VERDICT_TTL_MS: i64 = 24 * 3_600_000;

/// A server's conditional-request support, as probed on one store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
pub struct ServerVerdict {
    /// The store it was probed on (endpoint, bucket and prefix).
    pub store: String,
    /// `If-None-Match: *` and `If-Match` on PUT are honoured.
    pub writes: bool,
    /// `If-Match` on DELETE is honoured; none (`null`) when not probed yet.
    #[serde(default)]
    pub deletes: Option<bool>,
    /// When it was probed (epoch ms).
    pub probed_at_ms: i64,
}

/// The verdict `sidecar` remembers for `store`, when it is one to trust at `now_ms`: probed on
/// that store, conditional writes honoured, less than [`VERDICT_TTL_MS`] old, and not from the
/// future (a clock set back makes it stale, not eternal).
pub fn recalled(sidecar: Option<&[u8]>, store: &str, now_ms: i64) -> Option<ServerVerdict> {
    let state = SyncState::parse(sidecar?)?;
    let verdict: ServerVerdict =
        serde_json::from_value(state.extra.get(VERDICT_FIELD)?.clone()).ok()?;
    let age = now_ms.checked_sub(verdict.probed_at_ms)?;
    (verdict.store == store && verdict.writes && (0..VERDICT_TTL_MS).contains(&age))
        .then_some(verdict)
}

/// `sidecar` with `verdict` remembered (everything else kept), or `None` when there is no
/// readable sidecar to keep it in (a run that has never synced probes again; writing a sidecar
/// of our own here would claim a state nobody verified) or the verdict is not one to remember.
pub fn remembered(sidecar: Option<&[u8]>, verdict: &ServerVerdict) -> Option<Vec<u8>> {
    if !verdict.writes {
        return None;
    }
    let mut state = SyncState::parse(sidecar?)?;
    let value = serde_json::to_value(verdict).ok()?;
    state.extra.insert(VERDICT_FIELD.to_string(), value);
    Some(state.to_json())
}

/// The verdict field's value, for tests and `doctor`.
pub fn field_of(sidecar: &[u8]) -> Option<Value> {
    SyncState::parse(sidecar)?.extra.get(VERDICT_FIELD).cloned()
}
