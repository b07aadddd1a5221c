//! [`LockRun`]: taking, refreshing and releasing the datastore lock, as a sequence of requests
//! the core chooses.
//!
//! **Acquire.** Create the lock object create-only (`If-None-Match: *`). Refused: read it and
//! assess it ([`assess`]). Free (gone meanwhile): create again. Ours: held. Stale: take it over,
//! atomically where the store can make a PUT conditional on the ETag read (of two takers that
//! saw the same stale lock exactly one wins); otherwise delete it and create again, the window
//! the extension's writers have too (a second taker can delete the first taker's fresh lock).
//! Held: wait ([`wait_decision`]) and try again, saying once who holds it (a wait with no word
//! looks like a hang), until the longest wait has passed: `lock-timeout`, naming the holder and
//! how to clear the lock.
//!
//! **Refresh** (the heartbeat, every third of the lease). Read the lock; not ours any more: the
//! lease is lost (`lost` names who took it). Ours: rewrite it with a fresh `acquiredAt`, over
//! the copy read where the store can (a refused rewrite means it changed hands meanwhile).
//!
//! **Release.** Read it; delete it only if it is still ours, and only the copy read (`If-Match`
//! where the store can). **Force release** (`lock release --force <nonce>`): the same, for the
//! nonce a person names, or, for a body that is no lock at all, for the object read.
//!
//! Retries: a read or a create may be retried on a transient failure; a DELETE of the lock never
//! is (one that reached the server but whose answer was lost would, retried, delete the lock the
//! next writer took meanwhile, and two writers would hold it at once), nor are the heartbeat's
//! requests (the next beat comes a third of a lease later). The clock and the nonce come in as
//! values; the core sleeps only by asking for a `sleep`.

use crate::bytes::buf::Bytes;
use crate::bytes::printable::printable;
use crate::error::{CoreError, CoreResult};
pub use crate::runs::lock::actions::{
    LockAction, LockHolder, LockRequest, LockResult, UNREADABLE_LOCK,
};
use crate::runs::lock::events::LockEvent;
use crate::runs::shard_write::machine::PutCondition;
use crate::state::lock::{
    assess, check_ttl, wait_decision, LockBody, LockState, WaitDecision, DEFAULT_MAX_WAIT_MS,
    DEFAULT_RETRY_MS, DEFAULT_TTL_MS,
};

/// Where the run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Nothing asked yet.
    Start,
    /// A create-only write is out; `after_delete` names the stale holder whose lock we deleted.
    Creating { after_delete: Option<String> },
    /// An `If-Match` takeover of `holder`'s stale lock is out.
    TakingOver { holder: String },
    /// The lock object is being read.
    Inspecting,
    /// The stale lock of `holder` is being deleted.
    DeletingStale { holder: String },
    /// A wait is out.
    Sleeping,
    /// A refresh's rewrite is out.
    Refreshing,
    /// A release's delete is out.
    Releasing,
    /// The run is over.
    Done,
}

/// A lock run.
#[derive(Debug, Clone)]
pub struct LockRun {
    request: LockRequest,
    ttl_ms: u64,
    started_ms: i64,
    now_ms: i64,
    stage: Stage,
    /// The action the last `poll` gave, until its event comes.
    pending: Option<LockAction>,
    told_waiting: bool,
    result: LockResult,
}

impl LockRun {
    /// A run for `request`; a lease outside 1 ms..=1 h is `invalid-input`.
    pub fn new(request: LockRequest) -> CoreResult<LockRun> {
        let (ttl_ms, now_ms) = match &request {
            LockRequest::Acquire { ttl_ms, now_ms, .. } => {
                (check_ttl(ttl_ms.unwrap_or(DEFAULT_TTL_MS))?, *now_ms)
            }
            LockRequest::Refresh { ttl_ms, .. } => (check_ttl(*ttl_ms)?, 0),
            LockRequest::Release { .. } | LockRequest::ForceRelease { .. } => (DEFAULT_TTL_MS, 0),
        };
        if let LockRequest::Acquire {
            retry_ms: Some(0), ..
        } = &request
        {
            return Err(CoreError::input("lock retryMs must be at least 1"));
        }
        Ok(LockRun {
            request,
            ttl_ms,
            started_ms: now_ms,
            now_ms,
            stage: Stage::Start,
            pending: None,
            told_waiting: false,
            result: LockResult::default(),
        })
    }

    fn key(&self) -> &str {
        match &self.request {
            LockRequest::Acquire { key, .. }
            | LockRequest::Refresh { key, .. }
            | LockRequest::Release { key, .. }
            | LockRequest::ForceRelease { key, .. } => key,
        }
    }

    fn if_match(&self) -> bool {
        match &self.request {
            LockRequest::Acquire { if_match, .. }
            | LockRequest::Refresh { if_match, .. }
            | LockRequest::Release { if_match, .. }
            | LockRequest::ForceRelease { if_match, .. } => *if_match,
        }
    }

    /// The nonce the run compares the lock's with: ours, or the one a person named.
    fn nonce(&self) -> &str {
        match &self.request {
            LockRequest::Acquire { holder, .. } | LockRequest::Refresh { holder, .. } => {
                &holder.nonce
            }
            LockRequest::Release { nonce, .. } | LockRequest::ForceRelease { nonce, .. } => nonce,
        }
    }

    /// Our lock body, taken or refreshed now.
    fn body_now(&self) -> Bytes {
        let holder = match &self.request {
            LockRequest::Acquire { holder, .. } | LockRequest::Refresh { holder, .. } => holder,
            // Releases write nothing; never reached.
            LockRequest::Release { .. } | LockRequest::ForceRelease { .. } => {
                return Bytes::default()
            }
        };
        Bytes(
            LockBody {
                holder: holder.holder.clone(),
                hostname: holder.hostname.clone(),
                pid: holder.pid,
                acquired_at: crate::model::time::format_iso_millis(self.now_ms),
                ttl_ms: self.ttl_ms,
                nonce: holder.nonce.clone(),
            }
            .to_json(),
        )
    }

    fn put(&mut self, condition: PutCondition, retry: bool) -> LockAction {
        LockAction::Put {
            key: self.key().to_string(),
            body: self.body_now(),
            condition,
            retry,
        }
    }

    fn inspect(&mut self, retry: bool) -> LockAction {
        self.stage = Stage::Inspecting;
        LockAction::Inspect {
            key: self.key().to_string(),
            retry,
        }
    }

    /// The next action (the same one again until its event comes).
    pub fn poll(&mut self) -> CoreResult<LockAction> {
        if let Some(action) = &self.pending {
            return Ok(action.clone());
        }
        let action = match (&self.stage, &self.request) {
            (Stage::Done, _) => LockAction::Done,
            (Stage::Start, LockRequest::Acquire { .. }) => {
                self.stage = Stage::Creating { after_delete: None };
                self.put(PutCondition::Absent, true)
            }
            (Stage::Start, LockRequest::Refresh { .. }) => self.inspect(false),
            (Stage::Start, LockRequest::Release { .. }) => self.inspect(true),
            (Stage::Start, LockRequest::ForceRelease { .. }) => self.inspect(false),
            _ => {
                return Err(CoreError::input(
                    "the lock run is waiting for an event, not a poll",
                ))
            }
        };
        if action != LockAction::Done {
            self.pending = Some(action.clone());
        }
        Ok(action)
    }

    fn expect(&mut self, what: &str) -> CoreResult<LockAction> {
        self.pending.take().ok_or_else(|| {
            CoreError::input(format!(
                "a {what} event came while the lock run was not waiting for one"
            ))
        })
    }

    /// Takes back what the shim did; the next `poll` says what follows.
    pub fn handle(&mut self, event: LockEvent) -> CoreResult<()> {
        let pending = self.expect(match &event {
            LockEvent::Put { .. } => "put",
            LockEvent::Inspected { .. } => "inspected",
            LockEvent::Deleted { .. } => "deleted",
            LockEvent::Slept { .. } => "slept",
        })?;
        let next = match (event, &pending) {
            (LockEvent::Put { landed }, LockAction::Put { .. }) => self.on_put(landed),
            (
                LockEvent::Inspected {
                    body,
                    last_modified_ms,
                    etag,
                    now_ms,
                },
                LockAction::Inspect { .. },
            ) => {
                if now_ms > self.now_ms {
                    self.now_ms = now_ms;
                }
                self.on_inspected(body.as_deref(), last_modified_ms, etag)
            }
            (LockEvent::Deleted { deleted }, LockAction::Delete { .. }) => self.on_deleted(deleted),
            (LockEvent::Slept { now_ms }, LockAction::Sleep { .. }) => {
                if now_ms > self.now_ms {
                    self.now_ms = now_ms;
                }
                self.stage = Stage::Creating { after_delete: None };
                Ok(Some(self.put(PutCondition::Absent, true)))
            }
            (_, pending) => {
                let answer = pending.clone();
                self.pending = Some(answer);
                return Err(CoreError::input(format!(
                    "the event does not answer the lock run's {}",
                    action_name(pending)
                )));
            }
        };
        match next {
            Ok(Some(action)) => {
                self.pending = Some(action);
                Ok(())
            }
            Ok(None) => {
                self.stage = Stage::Done;
                Ok(())
            }
            Err(error) => {
                self.stage = Stage::Done;
                Err(error)
            }
        }
    }

    fn on_put(&mut self, landed: bool) -> CoreResult<Option<LockAction>> {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Creating { after_delete } if landed => {
                self.finish_held(after_delete);
                Ok(None)
            }
            Stage::TakingOver { holder } if landed => {
                self.finish_held(Some(holder));
                Ok(None)
            }
            // Refused: someone created it first, or the stale lock changed before our takeover.
            Stage::Creating { .. } | Stage::TakingOver { .. } => Ok(Some(self.inspect(true))),
            Stage::Refreshing => {
                self.result.held = landed;
                if !landed {
                    self.result.lost = Some(format!(
                        "the datastore lock {} changed hands during a refresh",
                        printable(self.key())
                    ));
                }
                Ok(None)
            }
            _ => Err(CoreError::input("a put event the lock run did not ask for")),
        }
    }

    fn finish_held(&mut self, took_over_from: Option<String>) {
        self.result.held = true;
        self.result.waited_ms = self.now_ms.saturating_sub(self.started_ms).max(0) as u64;
        if let Some(holder) = &took_over_from {
            self.result.contended = true;
            self.result.notes.push(format!(
                "took over a stale datastore lock held by {}",
                printable(holder)
            ));
        }
        self.result.took_over_from = took_over_from;
    }

    fn on_inspected(
        &mut self,
        body: Option<&[u8]>,
        last_modified_ms: Option<i64>,
        etag: Option<String>,
    ) -> CoreResult<Option<LockAction>> {
        let state = assess(body, last_modified_ms, self.nonce(), self.now_ms);
        match self.request.clone() {
            LockRequest::Acquire {
                retry_ms,
                max_wait_ms,
                ..
            } => self.acquire_after(
                state,
                body,
                etag,
                retry_ms.unwrap_or(DEFAULT_RETRY_MS),
                max_wait_ms.unwrap_or(DEFAULT_MAX_WAIT_MS),
            ),
            LockRequest::Refresh { .. } => {
                if state != LockState::Ours {
                    let taker = body
                        .and_then(LockBody::parse)
                        .map_or_else(|| "someone else".to_string(), |b| b.holder);
                    self.result.lost = Some(format!(
                        "the datastore lock {} was taken by {}",
                        printable(self.key()),
                        printable(&taker)
                    ));
                    return Ok(None);
                }
                self.stage = Stage::Refreshing;
                let condition = match etag {
                    Some(etag) if self.if_match() => PutCondition::Match { etag },
                    _ => PutCondition::Any,
                };
                Ok(Some(self.put(condition, false)))
            }
            LockRequest::Release { .. } => {
                if state != LockState::Ours {
                    self.result.notes.push(
                        "the datastore lock was no longer ours at release; left it alone".into(),
                    );
                    return Ok(None);
                }
                Ok(Some(self.delete_as_read(etag)))
            }
            LockRequest::ForceRelease { nonce, .. } => {
                let unreadable_named = body.is_some()
                    && nonce == UNREADABLE_LOCK
                    && body.and_then(LockBody::parse).is_none();
                if unreadable_named || state == LockState::Ours {
                    Ok(Some(self.delete_as_read(etag)))
                } else {
                    Ok(None)
                }
            }
        }
    }

    /// Deletes the lock as it was just read: `If-Match` its ETag where the store can, so a lock
    /// another writer took between the read and the delete stays.
    fn delete_as_read(&mut self, etag: Option<String>) -> LockAction {
        self.stage = Stage::Releasing;
        LockAction::Delete {
            key: self.key().to_string(),
            if_match: etag.filter(|_| self.if_match()),
        }
    }

    fn acquire_after(
        &mut self,
        state: LockState,
        body: Option<&[u8]>,
        etag: Option<String>,
        retry_ms: u64,
        max_wait_ms: u64,
    ) -> CoreResult<Option<LockAction>> {
        match state {
            LockState::Free => {
                self.stage = Stage::Creating { after_delete: None };
                Ok(Some(self.put(PutCondition::Absent, true)))
            }
            LockState::Ours => {
                self.finish_held(None);
                Ok(None)
            }
            LockState::Stale { holder, .. } => {
                self.result.contended = true;
                match etag {
                    // Overwrite only the stale object we looked at: of two takers one wins.
                    Some(etag) if self.if_match() => {
                        self.stage = Stage::TakingOver { holder };
                        Ok(Some(self.put(PutCondition::Match { etag }, true)))
                    }
                    _ => {
                        self.stage = Stage::DeletingStale { holder };
                        Ok(Some(LockAction::Delete {
                            key: self.key().to_string(),
                            if_match: None,
                        }))
                    }
                }
            }
            LockState::Held {
                holder,
                hostname,
                pid,
                age_ms,
                ..
            } => {
                self.result.contended = true;
                match wait_decision(self.started_ms, self.now_ms, max_wait_ms, retry_ms) {
                    WaitDecision::GiveUp => Err(CoreError::LockTimeout {
                        message: self.timeout_message(&holder, body, age_ms),
                    }),
                    WaitDecision::Retry { delay_ms } => {
                        let say = (!self.told_waiting).then(|| {
                            let host = if hostname.is_empty() {
                                String::new()
                            } else {
                                format!(" (host {}, pid {pid})", printable(&hostname))
                            };
                            format!(
                                "the datastore lock {} is held by {}{host}, taken {} s ago: waiting up to {} s for it",
                                printable(self.key()),
                                printable(&holder),
                                seconds(age_ms),
                                seconds(max_wait_ms)
                            )
                        });
                        self.told_waiting = true;
                        self.stage = Stage::Sleeping;
                        Ok(Some(LockAction::Sleep { ms: delay_ms, say }))
                    }
                }
            }
        }
    }

    fn timeout_message(&self, holder: &str, body: Option<&[u8]>, age_ms: u64) -> String {
        let parsed = body.and_then(LockBody::parse);
        let detail = parsed.as_ref().map_or_else(String::new, |b| {
            format!(
                " (host {}, pid {}, nonce {})",
                printable(&b.hostname),
                b.pid,
                printable(&b.nonce)
            )
        });
        let waited = self.now_ms.saturating_sub(self.started_ms).max(0) as u64;
        let nonce = parsed
            .as_ref()
            .map_or_else(|| "<nonce>".to_string(), |b| printable(&b.nonce));
        format!(
            "the datastore lock {} is held by {}{detail}, taken {} s ago; waited {} s. If that process is gone, the lock turns stale after its lease; to clear it now: `s3sync lock release --force {nonce}`",
            printable(self.key()),
            printable(holder),
            seconds(age_ms),
            seconds(waited)
        )
    }

    fn on_deleted(&mut self, deleted: bool) -> CoreResult<Option<LockAction>> {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::DeletingStale { holder } => {
                self.stage = Stage::Creating {
                    after_delete: Some(holder),
                };
                Ok(Some(self.put(PutCondition::Absent, true)))
            }
            Stage::Releasing => {
                self.result.released = deleted;
                if !deleted && matches!(self.request, LockRequest::Release { .. }) {
                    self.result.notes.push(
                        "the datastore lock was no longer ours at release; left it alone".into(),
                    );
                }
                Ok(None)
            }
            _ => Err(CoreError::input(
                "a deleted event the lock run did not ask for",
            )),
        }
    }

    /// What the run did; before it is done, `invalid-input`.
    pub fn result(&self) -> CoreResult<LockResult> {
        if self.stage != Stage::Done || self.pending.is_some() {
            return Err(CoreError::input("the lock run is not done"));
        }
        Ok(self.result.clone())
    }
}

/// Milliseconds as whole seconds, rounded, for a person.
fn seconds(ms: u64) -> u64 {
    (ms + 500) / 1000
}

fn action_name(action: &LockAction) -> &'static str {
    match action {
        LockAction::Put { .. } => "put",
        LockAction::Inspect { .. } => "inspect",
        LockAction::Delete { .. } => "delete",
        LockAction::Sleep { .. } => "sleep",
        LockAction::Done => "done",
    }
}
