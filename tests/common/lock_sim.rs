//! A simulated lock object and clock, and a driver that does one lock-run action at a time the
//! way the shim does (`js/exec/lock.ts`): the driver makes no decision of its own, so
//! interleaving the steps of several runs explores what several writers can do to one lock.

#![allow(dead_code)]

use s3sync_core::error::CoreError;
use s3sync_core::runs::lock::events::LockEvent;
use s3sync_core::runs::lock::machine::{LockAction, LockResult, LockRun};
use s3sync_core::runs::shard_write::machine::PutCondition;

/// The lock object as a server keeps it: body, ETag, `LastModified`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockObject {
    pub body: Vec<u8>,
    pub etag: String,
    pub last_modified_ms: i64,
}

/// The bucket's one lock key and the clock every writer reads.
#[derive(Debug, Clone, Default)]
pub struct LockWorld {
    pub object: Option<LockObject>,
    pub now_ms: i64,
    /// Writes so far (each gets a fresh ETag).
    pub writes: u64,
    /// Every request, in order (`put absent`, `put match`, `put any`, `inspect`, `delete`,
    /// `delete if-match`, `sleep <ms>`), with ` refused` on a refused condition.
    pub requests: Vec<String>,
    /// Lines the runs asked to say.
    pub said: Vec<String>,
}

impl LockWorld {
    /// A world whose lock object holds `body`, last written at `last_modified_ms`.
    pub fn with_lock(body: Vec<u8>, last_modified_ms: i64, now_ms: i64) -> LockWorld {
        let mut world = LockWorld {
            now_ms,
            ..LockWorld::default()
        };
        world.write(body, last_modified_ms);
        world
    }

    /// Another writer's unconditional write of `body` at `at_ms`.
    pub fn write(&mut self, body: Vec<u8>, at_ms: i64) {
        self.writes += 1;
        self.object = Some(LockObject {
            body,
            etag: format!("\"l{}\"", self.writes),
            last_modified_ms: at_ms,
        });
    }

    /// The nonce in the current lock body, if it reads as a lock.
    pub fn holder_nonce(&self) -> Option<String> {
        let body = self.object.as_ref()?;
        s3sync_core::state::lock::LockBody::parse(&body.body).map(|b| b.nonce)
    }
}

/// One step of a run: the action it asked for was done and answered.
pub enum Stepped {
    /// More to do.
    Going,
    /// The run is over, with its result.
    Done(LockResult),
    /// The run stopped with an error.
    Failed(CoreError),
}

/// Does the run's next action against `world` and hands back what happened.
pub fn step(run: &mut LockRun, world: &mut LockWorld) -> Stepped {
    let action = match run.poll() {
        Ok(action) => action,
        Err(error) => return Stepped::Failed(error),
    };
    let event = match action {
        LockAction::Done => {
            return match run.result() {
                Ok(result) => Stepped::Done(result),
                Err(error) => Stepped::Failed(error),
            }
        }
        LockAction::Put {
            body, condition, ..
        } => {
            let current = world.object.as_ref().map(|o| o.etag.clone());
            let (name, landed) = match &condition {
                PutCondition::Absent => ("put absent", current.is_none()),
                PutCondition::Match { etag } => ("put match", current.as_ref() == Some(etag)),
                PutCondition::Any => ("put any", true),
            };
            world
                .requests
                .push(format!("{name}{}", if landed { "" } else { " refused" }));
            if landed {
                let now = world.now_ms;
                world.write(body.0, now);
            }
            LockEvent::Put { landed }
        }
        LockAction::Inspect { .. } => {
            world.requests.push("inspect".into());
            LockEvent::Inspected {
                body: world.object.as_ref().map(|o| o.body.clone().into()),
                last_modified_ms: world.object.as_ref().map(|o| o.last_modified_ms),
                etag: world.object.as_ref().map(|o| o.etag.clone()),
                now_ms: world.now_ms,
            }
        }
        LockAction::Delete { if_match, .. } => {
            let deleted = match &if_match {
                Some(etag) => world.object.as_ref().is_some_and(|o| &o.etag == etag),
                None => true,
            };
            world.requests.push(format!(
                "delete{}{}",
                if if_match.is_some() { " if-match" } else { "" },
                if deleted { "" } else { " refused" }
            ));
            if deleted {
                world.object = None;
            }
            LockEvent::Deleted { deleted }
        }
        LockAction::Sleep { ms, say } => {
            world.requests.push(format!("sleep {ms}"));
            world.said.extend(say);
            world.now_ms += ms as i64;
            LockEvent::Slept {
                now_ms: world.now_ms,
            }
        }
    };
    match run.handle(event) {
        Ok(()) => Stepped::Going,
        Err(error) => Stepped::Failed(error),
    }
}

/// Runs `run` alone to its end.
pub fn run_lock(run: &mut LockRun, world: &mut LockWorld) -> Result<LockResult, CoreError> {
    for _ in 0..10_000 {
        match step(run, world) {
            Stepped::Going => {}
            Stepped::Done(result) => return Ok(result),
            Stepped::Failed(error) => return Err(error),
        }
    }
    panic!("a lock run that never ends: {:?}", world.requests);
}
