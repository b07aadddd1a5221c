//! A simulated bucket for the index read, and a driver that answers each of its actions the way
//! the shim does (`readIndex` in `js/ops/remote_index.ts`); it makes no decision of its own.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use s3sync_core::runs::index_read::events::IndexReadEvent;
use s3sync_core::runs::index_read::machine::{
    IndexReadAction, IndexReadRequest, IndexReadResult, IndexReadRun,
};
use s3sync_core::runs::machine::Machine;
use s3sync_core::runs::session::Session;
use s3sync_core::wire::listing::encode_remote;

/// The date a simulated rebuild gives what it lists.
pub const NOW: &str = "2026-12-01T00:00:00.000Z";

/// A bucket as the index read sees it.
#[derive(Debug, Default, Clone)]
pub struct IndexBucket {
    /// Objects by key: bytes and ETag.
    pub objects: BTreeMap<String, (Vec<u8>, String)>,
    /// Keys whose reads fail (after the shim's retries).
    pub failing: BTreeSet<String>,
    /// Reads of each key, in order.
    pub reads: Vec<String>,
    writes: u64,
}

impl IndexBucket {
    /// Puts `text` at `key`; every write gets a fresh ETag (`"e1"`, `"e2"`, … in write order).
    pub fn put(&mut self, key: &str, text: &str) {
        self.writes += 1;
        let etag = format!("\"e{}\"", self.writes);
        self.objects
            .insert(key.to_string(), (text.as_bytes().to_vec(), etag));
    }

    fn read(&mut self, key: &str) -> Result<Option<(Vec<u8>, String)>, String> {
        self.reads.push(key.to_string());
        if self.failing.contains(key) {
            return Err(format!("503 reading {key}"));
        }
        Ok(self.objects.get(key).cloned())
    }
}

/// What a simulated read did: the actions asked for (by name) and the run's result, or the
/// error that stopped it (its code).
#[derive(Debug, Clone)]
pub struct IndexReadDriven {
    /// The actions, by name.
    pub actions: Vec<String>,
    /// The result, or the stopping error's code and message.
    pub outcome: Result<IndexReadResult, (String, String)>,
}

/// Runs an index read of `request` into `session` over `bucket`, as the shim does. A `get`
/// that fails stops the run (the shim rethrows it); a shard that fails is counted, as the
/// shim's pool counts it.
pub fn read_index(
    session: &mut Session,
    bucket: &mut IndexBucket,
    request: IndexReadRequest,
) -> IndexReadDriven {
    let mut run = IndexReadRun::new(request);
    let mut actions = Vec::new();
    let outcome = (|| loop {
        let action = Machine::poll(&mut run, session).map_err(|e| code(&e))?;
        let name = serde_json::to_value(&action).unwrap()["action"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        actions.push(name);
        match action {
            IndexReadAction::Done => return Machine::result(&run).map_err(|e| code(&e)),
            IndexReadAction::Get { key } => {
                let got = bucket
                    .read(&key)
                    .map_err(|why| ("s3-error".to_string(), why))?;
                let (bytes, etag) = got.map_or((None, None), |(b, e)| (Some(b.into()), Some(e)));
                Machine::handle(&mut run, session, IndexReadEvent::Got { bytes, etag })
                    .map_err(|e| code(&e))?;
            }
            IndexReadAction::GetShards { shards } => {
                let mut failed = Vec::new();
                for shard in shards {
                    match bucket.read(&shard.key) {
                        Ok(Some((bytes, etag))) => Machine::handle(
                            &mut run,
                            session,
                            IndexReadEvent::Shard {
                                partition: shard.partition,
                                bytes: bytes.into(),
                                etag: Some(etag),
                            },
                        )
                        .map_err(|e| code(&e))?,
                        Ok(None) => failed.push(format!("{}: NoSuchKey", shard.key)),
                        Err(why) => failed.push(why),
                    }
                }
                let event = IndexReadEvent::ShardsRead {
                    failed: failed.len() as u64,
                    first: failed.first().cloned(),
                };
                Machine::handle(&mut run, session, event).map_err(|e| code(&e))?;
            }
            IndexReadAction::Rebuild { .. } => {
                // The rebuild run's own decisions are tested with it (`tests/rebuild_machine.rs`):
                // here it lists the bound tree into the session as that run does.
                let prefix = session.model().listing_prefix();
                let listed: Vec<(String, u64)> = bucket
                    .objects
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, (b, _))| (k.clone(), b.len() as u64))
                    .collect();
                session.begin_rebuild(NOW);
                let page = encode_remote(listed.iter().map(|(k, n)| (k.as_str(), *n, None, None)));
                session.add_listing_page(&page, &[]).map_err(|e| code(&e))?;
                session.finish_rebuild(None).map_err(|e| code(&e))?;
                Machine::handle(&mut run, session, IndexReadEvent::Rebuilt)
                    .map_err(|e| code(&e))?;
            }
        }
    })();
    IndexReadDriven { actions, outcome }
}

fn code(error: &s3sync_core::CoreError) -> (String, String) {
    (error.code().to_string(), error.to_string())
}
