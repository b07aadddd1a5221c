//! [`ShardWriteRun`]: an index cut into shards, written in the one order readers can trust:
//! the v1 mirror, a migration's or a rebuild's v2 set, and a push's v2 commit.
//!
//! Order: every shard (the shim writes them in parallel), then, for a migration, the monolith
//! rewritten marked as moved (so a cache that synced against it sees its ETag move and takes
//! the full pull path), then `_meta.json`. The meta goes last because readers follow it: until
//! it names the new shards, they keep reading what they read before.
//!
//! Conditions: the v1 mirror is a copy of the monolith, which stays the source of truth, so its
//! writes are unconditional. A v2 set is the index itself, so every write is conditional on the
//! copy read: the ETag the caller read, or, for a key it did not read, what a HEAD finds now
//! (create-only when there is nothing). The first refused condition stops the run before the
//! meta, so a commit that landed meanwhile is never overwritten and nothing is published (shards
//! no meta lists are no part of any index).
//!
//! A push's commit writes only the shards its changes touched, first asks what the server
//! honours (a server that ignores conditional writes is refused before the first write), and
//! once its meta is in, retires the shards it emptied: each only while it holds the version the
//! commit read (`If-Match` where the server honours it on DELETE, else after a HEAD finds that
//! version, the publish lock covering the window between the two). A shard read without an ETag
//! has nothing to hold the delete to and stays; one the commit did not read is another writer's.
//! A retired shard that stays is only an unlisted object, which the next commit into that
//! partition writes over.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::{CoreError, CoreResult};
use crate::index::ShardMeta;
use crate::model::paths::INDEX_FILE;
use crate::runs::contamination::machine::ObjectVersion;
use crate::runs::migrate::machine::HeadFound;
use crate::runs::session::{Session, ShardFormat};

/// What to write: the v1 mirror, or a v2 set over what the caller read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ShardWriteRequest {
    /// Absent: the v1 mirror of the shards the recorded push touched. Present: a v2 set (every
    /// shard) whose meta records this `commitSeq`.
    #[serde(default)]
    #[tsify(optional)]
    pub commit_seq: Option<u64>,
    /// A push's v2 commit instead: the shards the recorded push changed and the next meta, over
    /// the meta and shards read (`metaRead` and the ETags), the emptied shards retired after.
    #[serde(default)]
    #[tsify(optional)]
    pub commit: bool,
    /// True when the caller read `_meta.json` (its ETag is then `metaEtag`, absent when there
    /// was none); false: a HEAD finds it before the meta is written.
    #[serde(default)]
    #[tsify(optional)]
    pub meta_read: bool,
    /// The meta's ETag as read.
    #[serde(default)]
    #[tsify(optional)]
    pub meta_etag: Option<String>,
    /// The ETag of each shard the caller read, by partition (null: it read none there); a
    /// shard not named is HEADed first.
    #[serde(default)]
    #[tsify(optional, type = "Map<string, string | null>")]
    pub shard_etags: BTreeMap<String, Option<String>>,
    /// A migration's monolith: rewritten, marked as moved at `nowIso`, over exactly the copy
    /// the shards were cut from, between the shards and the meta.
    #[serde(default)]
    #[tsify(optional)]
    pub mark_monolith: Option<MonolithMark>,
}

/// The monolith a migration marks as moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct MonolithMark {
    /// The ETag of the copy read (absent: the copy had none, so the write is create-only and
    /// fails over any copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub etag: Option<String>,
    /// When the move happens (ISO 8601), recorded in the monolith.
    pub now_iso: String,
}

/// What a write is conditional on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PutCondition {
    /// Nothing: a copy of what the source of truth holds (the v1 mirror).
    Any,
    /// Only over the copy with this ETag (`If-Match`).
    Match {
        /// The ETag.
        etag: String,
    },
    /// Only where there is no object (`If-None-Match: *`).
    Absent,
}

impl PutCondition {
    fn over(etag: Option<String>) -> PutCondition {
        match etag {
            Some(etag) => PutCondition::Match { etag },
            None => PutCondition::Absent,
        }
    }
}

/// One object to write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ObjectWrite {
    /// Its key, relative to the prefix.
    pub key: String,
    /// Its bytes.
    #[tsify(type = "Uint8Array")]
    pub body: Bytes,
    /// What the write is conditional on.
    pub condition: PutCondition,
}

/// The next thing the shim must do to write a shard set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ShardWriteAction {
    /// Before anything is written, say what the server honours of conditional requests
    /// (`deletes`: `If-Match` on DELETE too, since the commit retires shards); answer with the
    /// `probed` event. A server that ignores conditional writes stops the run there.
    Probe {
        /// Whether the commit deletes (retires) shards.
        deletes: bool,
    },
    /// HEAD each of `keys`; answer with the `heads` event (a key that is gone: `exists` false).
    Head {
        /// The keys.
        keys: Vec<String>,
    },
    /// Write every object (in parallel), each under its condition; once one is refused, start
    /// no other. Answer with the `put` event.
    Put {
        /// The writes.
        writes: Vec<ObjectWrite>,
    },
    /// Delete each shard the published commit emptied, only while it holds the version read:
    /// `If-Match` its ETag when `ifMatch`, else only after a HEAD finds that ETag. Answer with
    /// the `retired` event. The meta is in: a failure here is the shim's to log, never to throw.
    Retire {
        /// The shards, each with the ETag read.
        objects: Vec<ObjectVersion>,
        /// Whether the DELETE itself carries the condition.
        if_match: bool,
    },
    /// The run is over; `result()` says what it wrote.
    Done,
}

/// What a shard-set write did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
pub struct ShardWriteResult {
    /// True when the meta was written (the set is published).
    pub published: bool,
    /// The shards written, by partition (the meta lists these for a v2 set).
    pub partitions: Vec<String>,
    /// The `commitSeq` the meta records (absent for the v1 mirror).
    pub commit_seq: Option<u64>,
    /// The published meta's ETag, when the store sent one.
    pub meta_etag: Option<String>,
    /// Emptied shards deleted (or found gone) after a commit's meta.
    pub retired: u64,
    /// Emptied shards kept: changed since the commit read them, or read without an ETag.
    pub kept: u64,
}

/// Where a shard-set write stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitProbe,
    AwaitShardHeads,
    AwaitShards,
    AwaitMonolith,
    AwaitMetaHead,
    AwaitMeta,
    AwaitRetire,
    Finished,
}

/// One write of an index cut into shards.
#[derive(Debug)]
pub struct ShardWriteRun {
    request: ShardWriteRequest,
    stage: Stage,
    /// `(partition, key, body)` of every shard to write.
    shards: Vec<(String, String, Vec<u8>)>,
    /// What each shard's write is conditional on, by key, once known.
    conditions: BTreeMap<String, PutCondition>,
    meta_key: String,
    meta: Vec<u8>,
    meta_condition: Option<PutCondition>,
    /// The partitions a commit empties, retired after its meta.
    retire: Vec<String>,
    /// Whether the server honours `If-Match` on DELETE (from the probe).
    conditional_deletes: bool,
    /// The `commitSeq` the meta records.
    commit_seq: Option<u64>,
    published: bool,
    meta_etag: Option<String>,
    retired: u64,
    kept: u64,
}

impl ShardWriteRun {
    /// A run for `request`.
    pub fn new(request: ShardWriteRequest) -> ShardWriteRun {
        ShardWriteRun {
            request,
            stage: Stage::Start,
            shards: Vec::new(),
            conditions: BTreeMap::new(),
            meta_key: String::new(),
            meta: Vec::new(),
            meta_condition: None,
            retire: Vec::new(),
            conditional_deletes: false,
            commit_seq: None,
            published: false,
            meta_etag: None,
            retired: 0,
            kept: 0,
        }
    }

    fn conditional(&self) -> bool {
        self.request.commit_seq.is_some() || self.request.commit
    }

    /// The next action.
    pub fn poll(&mut self, session: &mut Session) -> CoreResult<ShardWriteAction> {
        if self.stage == Stage::Start {
            self.cut(session)?;
        }
        Ok(match self.stage {
            Stage::Start | Stage::Finished => ShardWriteAction::Done,
            Stage::AwaitProbe => ShardWriteAction::Probe {
                deletes: !self.retire.is_empty(),
            },
            Stage::AwaitShardHeads => ShardWriteAction::Head {
                keys: self.unknown_shards().collect(),
            },
            Stage::AwaitShards => ShardWriteAction::Put {
                writes: self.shard_writes(),
            },
            Stage::AwaitMonolith => self.monolith_write(session)?,
            Stage::AwaitMetaHead => ShardWriteAction::Head {
                keys: vec![self.meta_key.clone()],
            },
            Stage::AwaitMeta => ShardWriteAction::Put {
                writes: vec![ObjectWrite {
                    key: self.meta_key.clone(),
                    body: Bytes(self.meta.clone()),
                    condition: self.meta_condition.clone().unwrap_or(PutCondition::Any),
                }],
            },
            Stage::AwaitRetire => ShardWriteAction::Retire {
                objects: self.retired_versions(session)?,
                if_match: self.conditional_deletes,
            },
        })
    }

    /// What the server honours: whether a DELETE can carry `If-Match` (only asked when the
    /// commit retires shards).
    pub fn on_probed(&mut self, conditional_deletes: bool) -> CoreResult<()> {
        if self.stage != Stage::AwaitProbe {
            return self.out_of_order("event \"probed\"");
        }
        self.conditional_deletes = conditional_deletes;
        self.stage = self.first_write_stage();
        Ok(())
    }

    /// How many emptied shards went (or were found gone) and how many stayed.
    pub fn on_retired(&mut self, retired: u64, kept: u64) -> CoreResult<()> {
        if self.stage != Stage::AwaitRetire {
            return self.out_of_order("event \"retired\"");
        }
        self.retired = retired;
        self.kept += kept;
        self.stage = Stage::Finished;
        Ok(())
    }

    /// The emptied shards to retire, each with the ETag read: one read without an ETag has
    /// nothing to hold the delete to (kept, counted once the meta is in); one the commit did not
    /// read is no part of the index it read (another writer's commit emptied it first).
    fn retired_versions(&self, session: &Session) -> CoreResult<Vec<ObjectVersion>> {
        let model = session.model();
        let mut objects = Vec::new();
        for partition in &self.retire {
            if let Some(Some(etag)) = self.request.shard_etags.get(partition) {
                objects.push(ObjectVersion {
                    key: model.shard_key(partition)?,
                    etag: etag.clone(),
                });
            }
        }
        Ok(objects)
    }

    /// What the HEADs found: each write is then conditional on exactly that copy (create-only
    /// where there is none, and where a copy came without an ETag, so that write is refused).
    pub fn on_heads(&mut self, heads: &[HeadFound]) -> CoreResult<()> {
        let found = |key: &str| -> CoreResult<PutCondition> {
            let head = heads.iter().find(|h| h.key == key).ok_or_else(|| {
                CoreError::input(format!("shard write: no HEAD answered for {key}"))
            })?;
            Ok(PutCondition::over(
                head.exists.then(|| head.etag.clone()).flatten(),
            ))
        };
        match self.stage {
            Stage::AwaitShardHeads => {
                let asked: Vec<String> = self.unknown_shards().collect();
                for key in asked {
                    let condition = found(&key)?;
                    self.conditions.insert(key, condition);
                }
                self.stage = Stage::AwaitShards;
            }
            Stage::AwaitMetaHead => {
                self.meta_condition = Some(found(&self.meta_key)?);
                self.stage = Stage::AwaitMeta;
            }
            _ => return self.out_of_order("event \"heads\""),
        }
        Ok(())
    }

    /// Whether every write of the last `put` landed (false: a condition was refused, and the
    /// run stops there with nothing published).
    ///
    /// `etag`: the new ETag of an action's only write, when the store sent one.
    pub fn on_put(&mut self, landed: bool, etag: Option<String>) -> CoreResult<()> {
        let next = match self.stage {
            Stage::AwaitShards if self.request.mark_monolith.is_some() => Stage::AwaitMonolith,
            Stage::AwaitShards | Stage::AwaitMonolith if self.meta_condition.is_some() => {
                Stage::AwaitMeta
            }
            Stage::AwaitShards | Stage::AwaitMonolith => Stage::AwaitMetaHead,
            Stage::AwaitMeta => {
                self.published = landed;
                self.meta_etag = etag.filter(|_| landed);
                self.after_meta()
            }
            _ => return self.out_of_order("event \"put\""),
        };
        self.stage = if landed { next } else { Stage::Finished };
        Ok(())
    }

    /// What follows a published meta: the retire of the shards a commit emptied, if any.
    fn after_meta(&mut self) -> Stage {
        if !self.published || self.retire.is_empty() {
            return Stage::Finished;
        }
        self.kept = self
            .retire
            .iter()
            .filter(|p| matches!(self.request.shard_etags.get(*p), Some(None)))
            .count() as u64;
        let to_delete = self
            .retire
            .iter()
            .any(|p| matches!(self.request.shard_etags.get(p), Some(Some(_))));
        if to_delete {
            Stage::AwaitRetire
        } else {
            Stage::Finished
        }
    }

    /// What the run wrote (an error before it is over).
    pub fn result(&self) -> CoreResult<ShardWriteResult> {
        if self.stage != Stage::Finished {
            return self.out_of_order("result()");
        }
        Ok(ShardWriteResult {
            published: self.published,
            partitions: if self.published {
                self.shards.iter().map(|(p, _, _)| p.clone()).collect()
            } else {
                Vec::new()
            },
            commit_seq: self.commit_seq.filter(|_| self.published),
            meta_etag: self.meta_etag.clone(),
            retired: self.retired,
            kept: self.kept,
        })
    }

    fn out_of_order<T>(&self, what: &str) -> CoreResult<T> {
        Err(CoreError::input(format!(
            "shard write: {what} out of order (at {:?})",
            self.stage
        )))
    }

    /// Cuts the session's index into the shards to write and settles the conditions known.
    fn cut(&mut self, session: &mut Session) -> CoreResult<()> {
        if self.request.commit && self.request.commit_seq.is_some() {
            // A commit's sequence is the meta's next; one given besides is a confused caller.
            return Err(CoreError::input(
                "shard write: a commit takes its commitSeq from the meta read, not the request",
            ));
        }
        let model = session.model().clone();
        if self.request.commit {
            let (changed, meta) = session.shard_commit()?;
            for (partition, body) in changed {
                match body {
                    Some(body) => {
                        let key = model.shard_key(&partition)?;
                        self.shards.push((partition, key, body));
                    }
                    None => self.retire.push(partition),
                }
            }
            self.commit_seq = ShardMeta::parse(&meta)?.commit_seq;
            self.meta = meta;
        } else {
            let format = match self.request.commit_seq {
                Some(commit_seq) => ShardFormat::V2 { commit_seq },
                None => ShardFormat::V1Mirror,
            };
            let layout = session.shard_layout(format, !self.conditional())?;
            for (partition, body) in layout.shards {
                let key = model.shard_key(&partition)?;
                self.shards.push((partition, key, body));
            }
            self.commit_seq = self.request.commit_seq;
            self.meta = layout.meta;
        }
        self.meta_key = model.meta_key();
        if !self.conditional() {
            // Nothing the push changed has a shard: the mirror (and a missing one) stays.
            if self.shards.is_empty() {
                self.stage = Stage::Finished;
                return Ok(());
            }
            for (_, key, _) in &self.shards {
                self.conditions.insert(key.clone(), PutCondition::Any);
            }
            self.meta_condition = Some(PutCondition::Any);
        } else {
            for (partition, key, _) in &self.shards {
                if let Some(etag) = self.request.shard_etags.get(partition) {
                    self.conditions
                        .insert(key.clone(), PutCondition::over(etag.clone()));
                }
            }
            if self.request.meta_read {
                self.meta_condition = Some(PutCondition::over(self.request.meta_etag.clone()));
            }
        }
        self.stage = if self.request.commit {
            Stage::AwaitProbe
        } else {
            self.first_write_stage()
        };
        Ok(())
    }

    /// The first stage that writes: HEADs of the shards whose copy is not known, else the shards.
    fn first_write_stage(&self) -> Stage {
        if self.unknown_shards().next().is_none() {
            Stage::AwaitShards
        } else {
            Stage::AwaitShardHeads
        }
    }

    /// The keys of shards whose condition is not known yet.
    fn unknown_shards(&self) -> impl Iterator<Item = String> + '_ {
        self.shards
            .iter()
            .filter(|(_, key, _)| !self.conditions.contains_key(key))
            .map(|(_, key, _)| key.clone())
    }

    fn shard_writes(&self) -> Vec<ObjectWrite> {
        self.shards
            .iter()
            .map(|(_, key, body)| ObjectWrite {
                key: key.clone(),
                body: Bytes(body.clone()),
                condition: self
                    .conditions
                    .get(key)
                    .cloned()
                    .unwrap_or(PutCondition::Absent),
            })
            .collect()
    }

    /// The monolith rewritten marked as moved, over exactly the copy the shards were cut from
    /// (marking is idempotent, so polling twice writes the same bytes).
    fn monolith_write(&self, session: &mut Session) -> CoreResult<ShardWriteAction> {
        let mark = self
            .request
            .mark_monolith
            .as_ref()
            .ok_or_else(|| CoreError::input("shard write: no monolith to mark"))?;
        session.mark_moved_to_shards(&mark.now_iso)?;
        Ok(ShardWriteAction::Put {
            writes: vec![ObjectWrite {
                key: session.model().under_binding(INDEX_FILE),
                body: Bytes(session.index_json(false)?),
                condition: PutCondition::over(mark.etag.clone()),
            }],
        })
    }
}
