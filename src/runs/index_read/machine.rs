//! [`IndexReadRun`]: where the bound tree's index comes from, in order: `_index/_meta.json`;
//! when it says version 2, every shard it lists (the shards are the index); otherwise the
//! monolith; and when there is no index at all, a rebuild from a listing.
//!
//! Each purpose reads the same way and differs in what it makes of it: a sync loads the index
//! it finds (`load`); a push that lost a v2 race re-applies its changes over the set read again
//! (`rebase`), and a set gone by then is `index-vanished`, never a fresh start; a move to shards
//! asks only whether the repo is on v2 already (`shards`); `rebuild-index` asks what the v2 set
//! it is about to replace holds (`find`), judged in a session of its own. A listed shard that
//! cannot be read is `index-corrupt` (for `find`, a corrupt set to replace): a set missing a
//! shard is never read as one without its entries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::index::ShardMeta;
use crate::runs::session::Session;

/// What a read is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum IndexReadPurpose {
    /// A sync's read: the v2 set, else the monolith, else a rebuild from a listing.
    Load,
    /// A push's re-merge after another writer committed to the v2 set first.
    Rebase,
    /// Whether the repo is on v2 already, and its set loaded when it is.
    Shards,
    /// What the v2 set a rebuild replaces holds: valid or corrupt (and why), judged without
    /// loading it into the session, which will hold the rebuilt index. A meta that cannot be
    /// parsed stops it: the layout the repo uses is then unknown.
    Find,
}

/// What the shim asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct IndexReadRequest {
    /// What the read is for.
    pub purpose: IndexReadPurpose,
    /// `load` only: publish a rebuild (create-only) when there is no index (absent: no).
    // An Option: JS callers pass `{publishRebuild: undefined}`, which serde-wasm-bindgen reads
    // as a present unit value, not as a missing field.
    #[serde(default)]
    #[tsify(optional)]
    pub publish_rebuild: Option<bool>,
}

/// One shard to read: its partition and key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ShardToRead {
    /// The partition the meta lists.
    pub partition: String,
    /// Its key, relative to the prefix.
    pub key: String,
}

/// The next thing the shim must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum IndexReadAction {
    /// Read `key`, retrying transient failures; answer `got` (without bytes on a 404).
    Get {
        /// The key, relative to the prefix.
        key: String,
    },
    /// Read every shard, retrying each; answer `shard` for each one read, then `shardsRead`.
    GetShards {
        /// The shards the meta lists.
        shards: Vec<ShardToRead>,
    },
    /// Rebuild the index from a listing (the rebuild run), publishing it create-only when
    /// `publish`; answer `rebuilt`.
    Rebuild {
        /// Publish the rebuilt index.
        publish: bool,
    },
    /// The read is over: read `result`.
    Done,
}

/// Where the index the session now holds came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum IndexOrigin {
    /// The v2 shard set.
    Shards,
    /// The v1 monolith.
    Monolith,
    /// A rebuild from a listing (there was no index).
    Rebuilt,
    /// `shards` and `find`: the repo is not on v2, and nothing was loaded.
    NotShards,
    /// `find` only: a v2 set whose meta lists an unsafe partition, or whose shards cannot all be
    /// read or parsed (`problem` says which).
    CorruptShards,
}

/// The v2 set as read: what a commit over it must match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ShardSetRead {
    /// `_index/_meta.json`'s key.
    pub meta_key: String,
    /// Its ETag as read.
    #[tsify(type = "string | null")]
    pub meta_etag: Option<String>,
    /// Each shard's ETag as read, by partition.
    #[tsify(type = "Record<string, string | null>")]
    pub shard_etags: BTreeMap<String, Option<String>>,
    /// The partitions in the meta's order.
    pub partitions: Vec<String>,
    /// The meta's commit sequence.
    pub commit_seq: u64,
}

/// What the read found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct IndexReadResult {
    /// Where the session's index came from.
    pub origin: IndexOrigin,
    /// The monolith's ETag (`monolith`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub etag: Option<String>,
    /// The v2 set as read (`shards`, `corrupt-shards`; a corrupt one with no shard ETags).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub shards: Option<ShardSetRead>,
    /// Why the set is corrupt (`corrupt-shards`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub problem: Option<String>,
}

/// Where the read stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Meta,
    Shards,
    Monolith,
    Rebuild,
    Done,
}

/// A read of the bound tree's index.
#[derive(Debug, Clone)]
pub struct IndexReadRun {
    request: IndexReadRequest,
    stage: Stage,
    meta: Option<(Vec<u8>, Option<String>, ShardMeta)>,
    shards: BTreeMap<String, (Vec<u8>, Option<String>)>,
    result: Option<IndexReadResult>,
}

impl IndexReadRun {
    /// A read for `request`.
    pub fn new(request: IndexReadRequest) -> IndexReadRun {
        IndexReadRun {
            request,
            stage: Stage::Meta,
            meta: None,
            shards: BTreeMap::new(),
            result: None,
        }
    }

    /// The next action.
    pub fn poll(&self, session: &Session) -> CoreResult<IndexReadAction> {
        let model = session.model();
        Ok(match self.stage {
            Stage::Meta => IndexReadAction::Get {
                key: model.meta_key(),
            },
            Stage::Shards => {
                let meta = &self.meta()?.2;
                // A partition listed twice is read once.
                let mut asked = std::collections::BTreeSet::new();
                let shards = meta
                    .partitions
                    .iter()
                    .filter(|partition| asked.insert(partition.as_str()))
                    .map(|partition| {
                        Ok(ShardToRead {
                            partition: partition.clone(),
                            key: model.shard_key(partition)?,
                        })
                    })
                    .collect::<CoreResult<_>>()?;
                IndexReadAction::GetShards { shards }
            }
            Stage::Monolith => IndexReadAction::Get {
                key: model.under_binding(crate::model::paths::INDEX_FILE),
            },
            Stage::Rebuild => IndexReadAction::Rebuild {
                publish: self.request.publish_rebuild.unwrap_or(false),
            },
            Stage::Done => IndexReadAction::Done,
        })
    }

    /// The meta read, which the `shards` stage always holds.
    fn meta(&self) -> CoreResult<&(Vec<u8>, Option<String>, ShardMeta)> {
        self.meta
            .as_ref()
            .ok_or_else(|| CoreError::input("the index read has no meta for its shards"))
    }

    fn expect(&self, stages: &[Stage], what: &str) -> CoreResult<()> {
        if !stages.contains(&self.stage) {
            return Err(CoreError::input(format!(
                "a {what} event came while the index read was not waiting for one"
            )));
        }
        Ok(())
    }

    /// `got`: the object asked for, with its ETag.
    pub fn on_got(
        &mut self,
        session: &mut Session,
        bytes: Vec<u8>,
        etag: Option<String>,
    ) -> CoreResult<()> {
        self.expect(&[Stage::Meta, Stage::Monolith], "got")?;
        if self.stage == Stage::Monolith {
            session.load_index_owned(bytes)?;
            return self.finish(IndexReadResult {
                origin: IndexOrigin::Monolith,
                etag,
                shards: None,
                problem: None,
            });
        }
        let finding = self.request.purpose == IndexReadPurpose::Find;
        let meta = ShardMeta::shard_first(&bytes).map_err(|error| match finding {
            true => CoreError::corrupt(format!(
                "{} cannot be read ({error}), so the layout this repo uses is unknown; fix or remove it by hand, then rebuild",
                session.model().meta_key()
            )),
            false => error,
        })?;
        // The meta decides the layout, and every partition name is judged before any shard is
        // read: `_index/../../evil.json` would name an object outside `_index/`.
        match meta {
            Some(meta) => {
                if let Err(unsafe_name) = meta.check_partitions() {
                    return match finding {
                        true => self.corrupt(session, etag, meta, unsafe_name.to_string()),
                        false => Err(unsafe_name),
                    };
                }
                let empty = meta.partitions.is_empty();
                self.meta = Some((bytes, etag, meta));
                self.stage = Stage::Shards;
                if empty {
                    return self.on_shards_read(session, 0, None);
                }
                Ok(())
            }
            None => self.not_shards(),
        }
    }

    /// `got` without bytes: the object asked for does not exist.
    pub fn on_absent(&mut self) -> CoreResult<()> {
        self.expect(&[Stage::Meta, Stage::Monolith], "got")?;
        if self.stage == Stage::Meta {
            return self.not_shards();
        }
        self.stage = Stage::Rebuild;
        Ok(())
    }

    /// No v2 set (no meta, or a v1 meta that mirrors the monolith).
    fn not_shards(&mut self) -> CoreResult<()> {
        match self.request.purpose {
            IndexReadPurpose::Load => {
                self.stage = Stage::Monolith;
                Ok(())
            }
            IndexReadPurpose::Rebase => Err(CoreError::IndexVanished {
                detail: "the v2 shard index disappeared while this push was publishing over it; nothing was published: run push again".to_string(),
            }),
            IndexReadPurpose::Shards | IndexReadPurpose::Find => self.finish(IndexReadResult {
                origin: IndexOrigin::NotShards,
                etag: None,
                shards: None,
                problem: None,
            }),
        }
    }

    /// `shard`: one shard read.
    pub fn on_shard(
        &mut self,
        partition: String,
        bytes: Vec<u8>,
        etag: Option<String>,
    ) -> CoreResult<()> {
        self.expect(&[Stage::Shards], "shard")?;
        let listed = self
            .meta
            .as_ref()
            .is_some_and(|(_, _, meta)| meta.partitions.contains(&partition));
        if !listed {
            return Err(CoreError::input(format!(
                "shard {partition:?} was not asked for"
            )));
        }
        self.shards.insert(partition, (bytes, etag));
        Ok(())
    }

    /// `shardsRead`: every shard was asked for; `failed` could not be read (`first` says why).
    pub fn on_shards_read(
        &mut self,
        session: &mut Session,
        failed: u64,
        first: Option<String>,
    ) -> CoreResult<()> {
        self.expect(&[Stage::Shards], "shardsRead")?;
        self.meta()?;
        let (meta_bytes, meta_etag, meta) = self.meta.take().unwrap_or_default();
        let meta_key = session.model().meta_key();
        // Listed partitions that never came (one listed twice is one shard).
        let missing = meta
            .partitions
            .iter()
            .filter(|partition| !self.shards.contains_key(partition.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if failed > 0 || missing > 0 {
            let count = failed.max(missing as u64);
            let problem = format!(
                "cannot read {count} shards of {meta_key}: {}",
                first.as_deref().unwrap_or("not read")
            );
            self.shards.clear();
            return match self.request.purpose {
                IndexReadPurpose::Find => self.corrupt(session, meta_etag, meta, problem),
                _ => Err(CoreError::corrupt(problem)),
            };
        }
        let mut shard_etags = BTreeMap::new();
        let mut shards = Vec::with_capacity(self.shards.len());
        for (partition, (bytes, etag)) in std::mem::take(&mut self.shards) {
            shard_etags.insert(partition.clone(), etag);
            shards.push((partition, bytes));
        }
        let commit_seq = match self.request.purpose {
            IndexReadPurpose::Rebase => {
                session.rebase_push_shards(&meta_bytes, &shards)?;
                meta.commit_seq.unwrap_or(0)
            }
            IndexReadPurpose::Load | IndexReadPurpose::Shards => {
                session.load_shards(&meta_bytes, &shards)?
            }
            IndexReadPurpose::Find => match session.sibling().load_shards(&meta_bytes, &shards) {
                Ok(commit_seq) => commit_seq,
                Err(error) => return self.corrupt(session, meta_etag, meta, error.to_string()),
            },
        };
        self.finish(IndexReadResult {
            origin: IndexOrigin::Shards,
            etag: None,
            shards: Some(ShardSetRead {
                meta_key,
                meta_etag,
                shard_etags,
                partitions: meta.partitions,
                commit_seq,
            }),
            problem: None,
        })
    }

    /// `find`: the v2 set is corrupt for `problem`; what a rebuild replacing it must match is
    /// the meta as read (no shard ETags: each shard is written over the copy there then).
    fn corrupt(
        &mut self,
        session: &Session,
        meta_etag: Option<String>,
        meta: ShardMeta,
        problem: String,
    ) -> CoreResult<()> {
        self.finish(IndexReadResult {
            origin: IndexOrigin::CorruptShards,
            etag: None,
            shards: Some(ShardSetRead {
                meta_key: session.model().meta_key(),
                meta_etag,
                shard_etags: BTreeMap::new(),
                partitions: meta.partitions,
                commit_seq: meta.commit_seq.unwrap_or(0),
            }),
            problem: Some(problem),
        })
    }

    /// `rebuilt`: the rebuild ran (and published, when asked and there was anything to keep).
    pub fn on_rebuilt(&mut self) -> CoreResult<()> {
        self.expect(&[Stage::Rebuild], "rebuilt")?;
        self.finish(IndexReadResult {
            origin: IndexOrigin::Rebuilt,
            etag: None,
            shards: None,
            problem: None,
        })
    }

    fn finish(&mut self, result: IndexReadResult) -> CoreResult<()> {
        self.result = Some(result);
        self.stage = Stage::Done;
        Ok(())
    }

    /// What the read found; before it is done, `invalid-input`.
    pub fn result(&self) -> CoreResult<IndexReadResult> {
        self.result
            .clone()
            .ok_or_else(|| CoreError::input("the index read is not done"))
    }
}
