//! [`ConditionsRun`]: whether this push's writes and deletes can be conditional, decided before
//! its first conditional request.
//!
//! A push asks the server once per store, on a probe object in the control folder, whether it
//! honours `If-None-Match: *` and `If-Match` on PUT (a create-only write over the object and a
//! write `If-Match` an ETag it does not have must both fail), and, when the push deletes,
//! `If-Match` on DELETE (S3 since 2025-09; s3s-fs ignores it). Swamp runs every command in a new
//! process, so a verdict is remembered in the sidecar and trusted as `state/server_verdict.rs`
//! says; what this process already probed on the store comes in as known facts. A server that
//! ignores conditional writes is refused before anything is written
//! (`conditional-writes-unsupported`): a concurrent writer's objects could otherwise be
//! overwritten without a trace. The user may waive conditions (`allowUnconditional`), and the
//! extension's client, which cannot send `If-Match`, gets no conditions at all (its creates go
//! create-only and the rest rests on a HEAD compare just before).
//!
//! `doctor --probe-server` asks the same questions and is told the answers instead: it probes
//! both, never refuses, and neither recalls nor remembers a verdict.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::runs::session::Session;
use crate::state::server_verdict::{self, ServerVerdict};

/// The body of a probe object.
const PROBE_BODY: &str = "s3sync conditional-write probe\n";

/// An ETag no object has: a write or delete `If-Match` it must be refused.
const NOT_THE_ETAG: &str = "\"s3sync-not-the-etag\"";

/// Why a push is refused on a server that ignores conditional writes.
fn refusal() -> CoreError {
    CoreError::ConditionalWritesUnsupported {
        detail: "this server ignores conditional writes, so a concurrent writer's objects and index entries could be silently overwritten; nothing was written. Re-run with --allow-unconditional when you are the only writer".to_string(),
    }
}

/// Who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum ConditionsPurpose {
    /// A push about to write: refuses a server that ignores conditional writes, trusts and
    /// keeps a remembered verdict.
    Push,
    /// `doctor --probe-server`: probes both kinds and reports them.
    Doctor,
}

/// What the shim asks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ConditionsRequest {
    /// Who asks.
    pub purpose: ConditionsPurpose,
    /// The client can send `If-Match` (false for the extension's client).
    pub conditional_client: bool,
    /// `push`: the user waived conditions (absent: no).
    // Options, not defaults: JS callers pass `{x: undefined}`, which serde-wasm-bindgen reads
    // as a present unit value, not as a missing field.
    #[serde(default)]
    #[tsify(optional)]
    pub allow_unconditional: Option<bool>,
    /// `push`: the push deletes, so `If-Match` on DELETE is asked too (absent: no).
    #[serde(default)]
    #[tsify(optional)]
    pub deleting: Option<bool>,
    /// `push`: the store the verdict is bound to (endpoint, bucket and prefix); absent, no
    /// verdict is recalled or remembered.
    #[serde(default)]
    #[tsify(optional)]
    pub store: Option<String>,
    /// What this process already probed of conditional writes on the store.
    #[serde(default)]
    #[tsify(optional)]
    pub known_writes: Option<bool>,
    /// What this process already probed of conditional deletes on the store.
    #[serde(default)]
    #[tsify(optional)]
    pub known_deletes: Option<bool>,
}

/// What a server honours of conditional requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
pub struct ConditionalSupport {
    /// `If-None-Match: *` and `If-Match` on PUT.
    pub writes: bool,
    /// `If-Match` on DELETE.
    pub deletes: bool,
}

/// The next thing the shim must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ConditionsAction {
    /// Read the sidecar file as it is (the verdict is one of its fields; the tombstone journal
    /// beside it holds none); answer `sidecar` (no bytes when there is none).
    ReadSidecar,
    /// At a key `keyPrefix` and a fresh UUID, write `body` create-only, create-only again, then
    /// `If-Match` `notTheEtag`; remove the object whatever happened; answer `writesProbed` with
    /// whether each write landed. A failure retries the whole trial under a new key (a retried
    /// write could meet its own first attempt's object).
    ProbeWrites {
        /// The probe object's key, less its UUID.
        key_prefix: String,
        /// Its body.
        body: String,
        /// An ETag no object has.
        not_the_etag: String,
    },
    /// At a key `keyPrefix` and a fresh UUID, write `body`, delete it `If-Match` `notTheEtag`,
    /// HEAD it; remove it whatever happened; answer `deletesProbed`. Retried as `probeWrites`.
    ProbeDeletes {
        /// The probe object's key, less its UUID.
        key_prefix: String,
        /// Its body.
        body: String,
        /// An ETag no object has.
        not_the_etag: String,
    },
    /// Keep `verdict` in the sidecar for the next run (in the cache's queue; a failure only
    /// costs the next run a probe); answer `remembered`.
    Remember {
        /// What to keep.
        verdict: ServerVerdict,
    },
    /// Decided: read `result`.
    Done,
}

/// What the run decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ConditionsResult {
    /// How the push's writes and deletes are made conditional: `null` when conditions were
    /// waived, or (`doctor`) the client cannot send `If-Match`.
    #[tsify(type = "ConditionalSupport | null")]
    pub support: Option<ConditionalSupport>,
}

/// What a run knows of the server (see [`ConditionsRun::known`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
pub struct ConditionsKnown {
    /// Conditional writes are honoured (none: not known).
    #[tsify(type = "boolean | null")]
    pub writes: Option<bool>,
    /// Conditional deletes are honoured (none: not known).
    #[tsify(type = "boolean | null")]
    pub deletes: Option<bool>,
}

/// Where the run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Start,
    Sidecar,
    Writes,
    Deletes,
    Remember,
    Done,
    Refused,
}

/// Deciding the conditions of one push (or answering `doctor`).
#[derive(Debug, Clone)]
pub struct ConditionsRun {
    request: ConditionsRequest,
    now_ms: i64,
    stage: Stage,
    recalled: Option<ServerVerdict>,
    writes: Option<bool>,
    deletes: Option<bool>,
    result: Option<ConditionsResult>,
}

impl ConditionsRun {
    /// A run for `request` at `now_ms` (epoch ms: a remembered verdict's age, a new one's
    /// stamp).
    ///
    /// # Errors
    ///
    /// `conditional-writes-unsupported` when a push's process already probed that the server
    /// ignores conditional writes.
    pub fn new(request: ConditionsRequest, now_ms: i64) -> CoreResult<ConditionsRun> {
        let mut run = ConditionsRun {
            writes: request.known_writes,
            deletes: request.known_deletes,
            request,
            now_ms,
            stage: Stage::Start,
            recalled: None,
            result: None,
        };
        run.advance()?;
        Ok(run)
    }

    /// A push's question, or `doctor`'s.
    fn pushing(&self) -> bool {
        self.request.purpose == ConditionsPurpose::Push
    }

    /// Whether `If-Match` on DELETE is asked.
    fn asks_deletes(&self) -> bool {
        !self.pushing() || self.request.deleting.unwrap_or(false)
    }

    /// Moves to the next stage that needs the shim, or decides; a push on a server known to
    /// ignore conditional writes is refused.
    fn advance(&mut self) -> CoreResult<()> {
        if self.stage == Stage::Start {
            // Neither a waiver nor the extension's client asks the server anything, so neither
            // can be refused, whatever this process found of the server before.
            if self.pushing() && self.request.allow_unconditional == Some(true) {
                self.finish(None);
                return Ok(());
            }
            if !self.request.conditional_client {
                let support = self.pushing().then_some(ConditionalSupport {
                    writes: false,
                    deletes: false,
                });
                self.finish(support);
                return Ok(());
            }
        }
        if self.pushing() && self.writes == Some(false) {
            // Refused for good: every later poll and the result say so too, so no caller that
            // swallowed the error can read "no conditions" (waived) out of a refusal.
            self.stage = Stage::Refused;
            return Err(refusal());
        }
        self.stage = match self.stage {
            Stage::Start if self.pushing() && self.request.store.is_some() => Stage::Sidecar,
            Stage::Start | Stage::Sidecar if self.writes.is_none() => Stage::Writes,
            Stage::Start | Stage::Sidecar | Stage::Writes
                if self.asks_deletes() && self.deletes.is_none() =>
            {
                Stage::Deletes
            }
            Stage::Start | Stage::Sidecar | Stage::Writes | Stage::Deletes
                if self.verdict_to_remember().is_some() =>
            {
                Stage::Remember
            }
            _ => {
                let support = ConditionalSupport {
                    writes: self.writes.unwrap_or(false),
                    deletes: self.asks_deletes() && self.deletes.unwrap_or(false),
                };
                self.finish(Some(support));
                return Ok(());
            }
        };
        Ok(())
    }

    fn finish(&mut self, support: Option<ConditionalSupport>) {
        self.stage = Stage::Done;
        self.result = Some(ConditionsResult { support });
    }

    /// What a push keeps for the next run: anything not recalled as it is, on a store that can
    /// be named. A verdict that only adds what deletes do keeps the recalled probe time, so the
    /// verdict still expires when its writes half does.
    fn verdict_to_remember(&self) -> Option<ServerVerdict> {
        let store = self.request.store.as_ref().filter(|_| self.pushing())?;
        let asked = self.asks_deletes().then_some(self.deletes).flatten();
        let learned = match &self.recalled {
            None => true,
            Some(recalled) => asked.is_some() && recalled.deletes.is_none(),
        };
        learned.then(|| ServerVerdict {
            store: store.clone(),
            writes: true,
            deletes: asked.or(self.recalled.as_ref().and_then(|r| r.deletes)),
            probed_at_ms: match (&self.recalled, asked) {
                (Some(recalled), Some(_)) => recalled.probed_at_ms,
                _ => self.now_ms,
            },
        })
    }

    /// The next action.
    pub fn poll(&self, session: &Session) -> CoreResult<ConditionsAction> {
        let probe = || {
            (
                session.model().control_folder() + "s3sync-probe-",
                PROBE_BODY.to_string(),
            )
        };
        Ok(match self.stage {
            Stage::Start => return Err(CoreError::input("the conditions run has not started")),
            Stage::Sidecar => ConditionsAction::ReadSidecar,
            Stage::Writes => {
                let (key_prefix, body) = probe();
                ConditionsAction::ProbeWrites {
                    key_prefix,
                    body,
                    not_the_etag: NOT_THE_ETAG.to_string(),
                }
            }
            Stage::Deletes => {
                let (key_prefix, body) = probe();
                ConditionsAction::ProbeDeletes {
                    key_prefix,
                    body,
                    not_the_etag: NOT_THE_ETAG.to_string(),
                }
            }
            Stage::Remember => ConditionsAction::Remember {
                verdict: self.verdict_to_remember().ok_or_else(|| {
                    CoreError::input("the conditions run has nothing to remember")
                })?,
            },
            Stage::Done => ConditionsAction::Done,
            Stage::Refused => return Err(refusal()),
        })
    }

    fn expect(&self, stage: Stage, what: &str) -> CoreResult<()> {
        if self.stage != stage {
            return Err(CoreError::input(format!(
                "a {what} event came while the conditions run was not waiting for one"
            )));
        }
        Ok(())
    }

    /// `sidecar`: the sidecar as it is (none: no sidecar yet). A verdict it remembers for this
    /// store, young enough, stands in for the probes it answers.
    pub fn on_sidecar(&mut self, bytes: Option<&[u8]>) -> CoreResult<()> {
        self.expect(Stage::Sidecar, "sidecar")?;
        let store = self.request.store.as_deref().unwrap_or_default();
        self.recalled = server_verdict::recalled(bytes, store, self.now_ms);
        if let Some(recalled) = &self.recalled {
            self.writes = Some(recalled.writes);
            self.deletes = recalled.deletes.or(self.deletes);
        }
        self.advance()
    }

    /// `writesProbed`: whether each of the probe's three writes landed. Honoured only when the
    /// first landed and both others were refused; a push then goes on, else it is refused.
    pub fn on_writes_probed(
        &mut self,
        created: bool,
        again: bool,
        wrong_match: bool,
    ) -> CoreResult<()> {
        self.expect(Stage::Writes, "writesProbed")?;
        self.writes = Some(created && !again && !wrong_match);
        self.advance()
    }

    /// `deletesProbed`: whether the delete `If-Match` a wrong ETag was refused, and whether the
    /// HEAD after it still found the object. Honoured only when both.
    pub fn on_deletes_probed(&mut self, refused: bool, exists: bool) -> CoreResult<()> {
        self.expect(Stage::Deletes, "deletesProbed")?;
        self.deletes = Some(refused && exists);
        self.advance()
    }

    /// `remembered`: the verdict was kept (or could not be: the next run probes again).
    pub fn on_remembered(&mut self) -> CoreResult<()> {
        self.expect(Stage::Remember, "remembered")?;
        // Whatever happened to the write, this run's decision stands.
        self.recalled = self.verdict_to_remember();
        self.advance()
    }

    /// What is known of the server so far (probed, recalled, or known before), for the
    /// process's memo: readable at any point, a refusal included, so a run that stopped on a
    /// failed request keeps what it had learned.
    pub fn known(&self) -> ConditionsKnown {
        ConditionsKnown {
            writes: self.writes,
            deletes: self.deletes,
        }
    }

    /// What the run decided (an error before it decided, and the refusal after one).
    pub fn result(&self) -> CoreResult<ConditionsResult> {
        if self.stage == Stage::Refused {
            return Err(refusal());
        }
        self.result
            .clone()
            .ok_or_else(|| CoreError::input("the conditions run has not decided yet"))
    }
}
