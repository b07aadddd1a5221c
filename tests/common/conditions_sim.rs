//! A simulated server for a push's conditions, and a driver that answers each action of the
//! conditions run the way the shim does (`decideConditions` in `js/ops/push_conditions.ts`):
//! the probe's requests go to a server that honours what it is told to, a verdict to remember
//! is written into the sidecar as the shim writes it; it makes no decision of its own.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;

use s3sync_core::runs::conditions::events::ConditionsEvent;
use s3sync_core::runs::conditions::machine::{
    ConditionsAction, ConditionsKnown, ConditionsRequest, ConditionsResult, ConditionsRun,
};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::session::Session;
use s3sync_core::state::server_verdict::{self, ServerVerdict};

/// What the simulated server honours.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Honours {
    /// `If-None-Match: *` on PUT.
    pub create_only: bool,
    /// `If-Match` on PUT.
    pub if_match_put: bool,
    /// `If-Match` on DELETE.
    pub if_match_delete: bool,
}

/// The server and the cache's sidecar as a conditions run meets them.
#[derive(Debug, Clone)]
pub struct ConditionsWorld {
    /// What the server honours.
    pub honours: Honours,
    /// The sidecar file (none: no sidecar yet).
    pub sidecar: Option<Vec<u8>>,
    /// Trials whose requests fail before they are made (the shim retries the whole trial).
    pub failing_trials: u32,
    /// Every trial of the delete probe fails.
    pub failing_delete_probe: bool,
    /// Objects by key (the probe objects while a trial runs).
    pub objects: BTreeMap<String, Vec<u8>>,
    /// Requests made, in order (`PUT key`, `PUT-create key`, …).
    pub requests: Vec<String>,
    /// The verdicts the shim was asked to remember.
    pub remembered: Vec<ServerVerdict>,
    trials: u32,
}

impl ConditionsWorld {
    /// A server honouring `honours`, with `sidecar`.
    pub fn new(honours: Honours, sidecar: Option<Vec<u8>>) -> Self {
        ConditionsWorld {
            honours,
            sidecar,
            failing_trials: 0,
            failing_delete_probe: false,
            objects: BTreeMap::new(),
            requests: Vec::new(),
            remembered: Vec::new(),
            trials: 0,
        }
    }

    /// A fresh probe key (the shim appends a UUID).
    fn trial_key(&mut self, prefix: &str) -> Result<String, String> {
        self.trials += 1;
        if self.trials <= self.failing_trials {
            return Err(format!("503 on trial {}", self.trials));
        }
        Ok(format!("{prefix}{:08}", self.trials))
    }

    /// A PUT: `create_only` sends `If-None-Match: *`, `if_match` an ETag; answers whether it
    /// landed.
    fn put(&mut self, key: &str, body: &[u8], create_only: bool, if_match: Option<&str>) -> bool {
        self.requests.push(format!("PUT {key}"));
        let exists = self.objects.contains_key(key);
        let refused = (create_only && self.honours.create_only && exists)
            || (if_match.is_some() && self.honours.if_match_put);
        if !refused {
            self.objects.insert(key.to_string(), body.to_vec());
        }
        !refused
    }

    /// A DELETE `If-Match` an ETag no object has: answers whether it deleted.
    fn delete_if_match(&mut self, key: &str) -> bool {
        self.requests.push(format!("DELETE {key}"));
        if self.honours.if_match_delete {
            return false;
        }
        self.objects.remove(key).is_some()
    }

    fn head(&mut self, key: &str) -> bool {
        self.requests.push(format!("HEAD {key}"));
        self.objects.contains_key(key)
    }

    /// The cleanup delete after a trial, whatever happened.
    fn remove(&mut self, key: &str) {
        self.requests.push(format!("DELETE {key}"));
        self.objects.remove(key);
    }
}

/// What a simulated run did: the actions asked for (by name) and the run's result, or the error
/// that stopped it (its code and message), and what the run answered when asked again after it.
#[derive(Debug, Clone)]
pub struct ConditionsDriven {
    /// The actions, by name.
    pub actions: Vec<String>,
    /// The result, or the stopping error's code and message.
    pub outcome: Result<ConditionsResult, (String, String)>,
    /// The run's `result` after it stopped on an error (a refusal must still be one).
    pub result_after_error: Option<Result<ConditionsResult, String>>,
    /// What the run knew of the server when it ended (none: it never started).
    pub known: Option<ConditionsKnown>,
}

/// Runs a conditions run of `request` at `now_ms` in `world`, as the shim does. A trial that
/// fails is retried whole (the shim's `withRetry`, three attempts here).
pub fn decide_conditions(
    session: &mut Session,
    world: &mut ConditionsWorld,
    request: ConditionsRequest,
    now_ms: i64,
) -> ConditionsDriven {
    let mut actions = Vec::new();
    let mut run = match ConditionsRun::new(request, now_ms) {
        Ok(run) => run,
        Err(e) => {
            return ConditionsDriven {
                actions,
                outcome: Err(code(&e)),
                result_after_error: None,
                known: None,
            }
        }
    };
    let outcome = drive(&mut run, session, world, &mut actions);
    let result_after_error = match &outcome {
        Err(_) => Some(Machine::result(&run).map_err(|e| e.code().to_string())),
        Ok(_) => None,
    };
    ConditionsDriven {
        actions,
        outcome,
        result_after_error,
        known: Some(run.known()),
    }
}

fn drive(
    run: &mut ConditionsRun,
    session: &mut Session,
    world: &mut ConditionsWorld,
    actions: &mut Vec<String>,
) -> Result<ConditionsResult, (String, String)> {
    loop {
        let action = Machine::poll(run, session).map_err(|e| code(&e))?;
        let name = serde_json::to_value(&action).unwrap()["action"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        actions.push(name);
        let event = match action {
            ConditionsAction::Done => return Machine::result(run).map_err(|e| code(&e)),
            ConditionsAction::ReadSidecar => ConditionsEvent::Sidecar {
                bytes: world.sidecar.clone().map(Into::into),
            },
            ConditionsAction::ProbeWrites {
                key_prefix,
                body,
                not_the_etag,
            } => {
                let key = trial(world, &key_prefix)?;
                let body = body.as_bytes();
                let created = world.put(&key, body, true, None);
                let again = world.put(&key, body, true, None);
                let wrong_match = world.put(&key, body, false, Some(&not_the_etag));
                world.remove(&key);
                ConditionsEvent::WritesProbed {
                    created,
                    again,
                    wrong_match,
                }
            }
            ConditionsAction::ProbeDeletes {
                key_prefix, body, ..
            } => {
                if world.failing_delete_probe {
                    return Err((
                        "s3-error".to_string(),
                        "503 on every delete probe".to_string(),
                    ));
                }
                let key = trial(world, &key_prefix)?;
                world.put(&key, body.as_bytes(), false, None);
                let refused = !world.delete_if_match(&key);
                let exists = world.head(&key);
                world.remove(&key);
                ConditionsEvent::DeletesProbed { refused, exists }
            }
            ConditionsAction::Remember { verdict } => {
                // As the shim's `rememberServer`: kept only in a sidecar there is.
                if let Some(written) =
                    server_verdict::remembered(world.sidecar.as_deref(), &verdict)
                {
                    world.sidecar = Some(written);
                }
                world.remembered.push(verdict);
                ConditionsEvent::Remembered
            }
        };
        Machine::handle(run, session, event).map_err(|e| code(&e))?;
    }
}

/// A trial's key, retrying failed trials as the shim's `withRetry` does (three attempts).
fn trial(world: &mut ConditionsWorld, prefix: &str) -> Result<String, (String, String)> {
    let mut last = String::new();
    for _ in 0..3 {
        match world.trial_key(prefix) {
            Ok(key) => return Ok(key),
            Err(why) => last = why,
        }
    }
    Err(("s3-error".to_string(), last))
}

fn code(error: &s3sync_core::CoreError) -> (String, String) {
    (error.code().to_string(), error.to_string())
}
