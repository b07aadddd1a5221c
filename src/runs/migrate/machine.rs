//! The remote side of a solo → namespaced migrate as a state machine in the shape of the other
//! runs: the core says what to do next ([`MigrateRun::poll`]), the shim does it and hands back
//! what happened.
//!
//! Order: refuse a namespace on the sharded (v2) index, which migrate does not write; read both
//! indexes; list the bucket and plan, HEADing the keys a listing gave no ETag for; then, applied,
//! copy every solo object whose namespaced key is absent; re-read the namespace's index and
//! re-list; index the verified copies and publish that index over exactly the copy read; plan
//! again against it; and only with `removeOriginals`, first publish the solo index without the
//! originals that may go (verified and indexed at their size), then delete those originals. No
//! index ever names an object that is gone, and a copy is proven by evidence, never assumed.

use crate::error::{CoreError, CoreResult};
use crate::index::{Index, ShardMeta, DEFAULT_MAX_ENTRIES};
use crate::model::paths::{PathModel, INDEX_FILE, SOLO_LOCK_KEY};
// Shared with the contamination repair, which HEADs the same way.
pub use crate::runs::migrate::actions::{
    MigrateAction, MigrateIndex, MigrateRequest, MigrateResult,
};
pub use crate::runs::migrate::plan::HeadFound;
use crate::runs::migrate::plan::{plan_migrate, MigrateInputs, MigrateItem, MigratePlan};
use crate::runs::session::Session;
use crate::wire::listing::{decode_remote, encode_remote_fields};

/// Which listing a stage reads: the one planned from, or the fresh one after the copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Plan,
    Index,
}

/// Where a migrate run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitMeta,
    AwaitSoloIndex,
    AwaitIndexes,
    AwaitListing(Phase),
    AwaitHeads(Phase),
    Listed(Phase),
    AwaitCopies,
    AwaitNamespaceIndex,
    AwaitPublish(MigrateIndex),
    Published(MigrateIndex),
    AwaitDeletes,
    Finished,
}

/// An index object as read.
#[derive(Debug, Clone, Default)]
struct Read {
    bytes: Option<Vec<u8>>,
    etag: Option<String>,
}

/// One migrate, from the layout check to the deletes.
#[derive(Debug)]
pub struct MigrateRun {
    request: MigrateRequest,
    now_iso: String,
    model: PathModel,
    prefix: String,
    stage: Stage,
    solo: Read,
    namespace_index: Read,
    listing: Vec<u8>,
    /// The plan of the stage (the first one until the run reports).
    plan: Option<MigratePlan>,
    first_plan: Option<MigratePlan>,
    /// The index being published, its bytes.
    body: Vec<u8>,
    copied: u64,
    indexed: u64,
    removed: u64,
    /// The originals that may go, once the namespace's index names them.
    removable: Vec<MigrateItem>,
}

impl MigrateRun {
    /// A run migrating the solo layout into `namespace` (`prefix` only for the key length
    /// limit), at `now_iso`.
    pub fn new(
        namespace: &str,
        prefix: &str,
        request: MigrateRequest,
        now_iso: &str,
    ) -> CoreResult<MigrateRun> {
        let model = PathModel::new(Some(namespace), prefix)?;
        if model.namespace().is_none() {
            return Err(CoreError::input("migrate needs a namespace"));
        }
        Ok(MigrateRun {
            request,
            now_iso: now_iso.to_string(),
            model,
            prefix: prefix.to_string(),
            stage: Stage::Start,
            solo: Read::default(),
            namespace_index: Read::default(),
            listing: Vec::new(),
            plan: None,
            first_plan: None,
            body: Vec::new(),
            copied: 0,
            indexed: 0,
            removed: 0,
            removable: Vec::new(),
        })
    }

    fn namespace(&self) -> String {
        self.model
            .namespace()
            .map(|n| n.as_str().to_string())
            .unwrap_or_default()
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self) -> CoreResult<MigrateAction> {
        loop {
            match self.stage.clone() {
                Stage::Start | Stage::AwaitMeta => {
                    self.stage = Stage::AwaitMeta;
                    return Ok(MigrateAction::Get {
                        key: self.model.under_binding("_index/_meta.json"),
                    });
                }
                Stage::AwaitSoloIndex => return Ok(get(INDEX_FILE.to_string())),
                Stage::AwaitIndexes => return Ok(get(self.model.under_binding(INDEX_FILE))),
                Stage::AwaitListing(_) => return Ok(MigrateAction::ListAll),
                Stage::AwaitHeads(_) => {
                    return Ok(MigrateAction::Head {
                        keys: self
                            .plan
                            .as_ref()
                            .map(|p| p.needs_etag.clone())
                            .unwrap_or_default(),
                    })
                }
                Stage::Listed(Phase::Plan) => {
                    self.first_plan = self.plan.clone();
                    let copies = self
                        .plan
                        .as_ref()
                        .map(|p| p.copy.clone())
                        .unwrap_or_default();
                    self.stage = match (self.request.apply, copies.is_empty()) {
                        (false, _) => Stage::Finished,
                        (true, true) => Stage::AwaitNamespaceIndex,
                        (true, false) => Stage::AwaitCopies,
                    };
                }
                Stage::AwaitCopies => {
                    return Ok(MigrateAction::Copy {
                        items: self
                            .plan
                            .as_ref()
                            .map(|p| p.copy.clone())
                            .unwrap_or_default(),
                    })
                }
                Stage::AwaitNamespaceIndex => {
                    return Ok(MigrateAction::Get {
                        key: self.model.under_binding(INDEX_FILE),
                    })
                }
                Stage::Listed(Phase::Index) => self.index_copies()?,
                Stage::AwaitPublish(index) => {
                    let read = match index {
                        MigrateIndex::Namespace => &self.namespace_index,
                        MigrateIndex::Solo => &self.solo,
                    };
                    let key = match index {
                        MigrateIndex::Namespace => self.model.under_binding(INDEX_FILE),
                        MigrateIndex::Solo => INDEX_FILE.to_string(),
                    };
                    let lock_key = match index {
                        MigrateIndex::Namespace => self.model.lock_key(),
                        MigrateIndex::Solo => SOLO_LOCK_KEY.to_string(),
                    };
                    return Ok(MigrateAction::Publish {
                        index,
                        key,
                        lock_key,
                        if_match: read.etag.clone(),
                    });
                }
                Stage::Published(MigrateIndex::Namespace) => self.choose_removals()?,
                Stage::Published(MigrateIndex::Solo) => self.stage = Stage::AwaitDeletes,
                Stage::AwaitDeletes => {
                    return Ok(MigrateAction::Delete {
                        items: self.removable.clone(),
                    })
                }
                Stage::Finished => return Ok(MigrateAction::Done),
            }
        }
    }

    /// The most entries an index this run reads may name.
    fn entry_limit(&self) -> usize {
        self.request
            .max_index_entries
            .map_or(DEFAULT_MAX_ENTRIES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
    }

    /// A session bound to `namespace` (none: solo) under the run's prefix and entry limit.
    fn session(&self, namespace: Option<&str>) -> CoreResult<Session> {
        let mut session = Session::new(namespace, &self.prefix)?;
        session.set_entry_limit(self.entry_limit() as u64)?;
        Ok(session)
    }

    /// Plans from the listing held and the indexes as read.
    fn plan_now(&self, namespace_index: Option<&[u8]>) -> CoreResult<MigratePlan> {
        let listed = decode_remote(&self.listing)?;
        let limit = self.entry_limit();
        let parse = |bytes: &[u8]| Index::parse_limited(bytes, limit);
        let solo = self.solo.bytes.as_deref().map(parse).transpose()?;
        let namespace = namespace_index.map(parse).transpose()?;
        Ok(plan_migrate(
            &self.model,
            MigrateInputs {
                listing: &listed,
                solo_index: solo.as_ref(),
                ns_index: namespace.as_ref(),
                now_iso: &self.now_iso,
            },
        ))
    }

    /// Indexes the verified copies in the namespace's index as re-read, and publishes it when
    /// that added anything.
    fn index_copies(&mut self) -> CoreResult<()> {
        let mut session = self.session(Some(&self.namespace()))?;
        match &self.namespace_index.bytes {
            Some(bytes) => {
                session.load_index(bytes)?;
            }
            None => session.load_empty_index(),
        }
        self.indexed = session.index_migrated_copies(
            &self.listing,
            self.solo.bytes.as_deref(),
            &self.now_iso,
        )?;
        if self.indexed > 0 {
            self.body = session.index_json(false)?;
            self.stage = Stage::AwaitPublish(MigrateIndex::Namespace);
        } else {
            self.body = self.namespace_index.bytes.clone().unwrap_or_default();
            self.stage = Stage::Published(MigrateIndex::Namespace);
        }
        Ok(())
    }

    /// Plans against what the namespace's index now says: only originals it names at their
    /// size may go, and the solo index drops them first.
    fn choose_removals(&mut self) -> CoreResult<()> {
        let namespace_now = (!self.body.is_empty()).then(|| self.body.clone());
        let after = self.plan_now(namespace_now.as_deref())?;
        self.removable = if self.request.remove_originals {
            after.removable.clone()
        } else {
            Vec::new()
        };
        self.plan = Some(after);
        if self.removable.is_empty() {
            self.stage = Stage::Finished;
            return Ok(());
        }
        let Some(solo_bytes) = &self.solo.bytes else {
            self.stage = Stage::AwaitDeletes;
            return Ok(());
        };
        let mut solo = self.session(None)?;
        solo.load_index(solo_bytes)?;
        let rels: Vec<String> = self.removable.iter().map(|i| i.rel.clone()).collect();
        if solo.remove_entries(&rels)? > 0 {
            self.body = solo.index_json(false)?;
            self.stage = Stage::AwaitPublish(MigrateIndex::Solo);
        } else {
            self.stage = Stage::AwaitDeletes;
        }
        Ok(())
    }

    fn expect(&self, stage: &Stage, what: &str) -> CoreResult<()> {
        if &self.stage == stage {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "migrate run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// The object a `get` asked for (the meta, the solo index, the namespace's, or the
    /// namespace's after the copies: the stage says which).
    pub fn on_got(&mut self, bytes: Option<Vec<u8>>, etag: Option<String>) -> CoreResult<()> {
        match self.stage {
            Stage::AwaitMeta => self.on_meta(bytes.as_deref()),
            Stage::AwaitSoloIndex => {
                self.solo = Read { bytes, etag };
                self.stage = Stage::AwaitIndexes;
                Ok(())
            }
            Stage::AwaitIndexes => {
                let solo = std::mem::take(&mut self.solo);
                self.on_indexes(solo.bytes, solo.etag, bytes, etag)
            }
            _ => self.on_namespace_index(bytes, etag),
        }
    }

    /// The namespace's `_index/_meta.json` as read (`None`: there is none).
    pub fn on_meta(&mut self, bytes: Option<&[u8]>) -> CoreResult<()> {
        self.expect(&Stage::AwaitMeta, "event \"got\"")?;
        if let Some(bytes) = bytes {
            let key = self.model.under_binding("_index/_meta.json");
            match ShardMeta::shard_first(bytes) {
                // Migrate indexes the copies in the monolith, which readers of a sharded
                // namespace ignore: removing originals there would leave their only copies
                // unindexed.
                Ok(Some(_)) => {
                    return Err(CoreError::MigrateV2Unsupported {
                        namespace: self.namespace(),
                    })
                }
                Ok(None) => {}
                Err(error) => {
                    return Err(CoreError::corrupt(format!(
                        "{key} cannot be read ({error}), so the layout this repo uses is unknown; fix or remove it by hand, then rebuild"
                    )))
                }
            }
        }
        self.stage = Stage::AwaitSoloIndex;
        Ok(())
    }

    /// The two indexes as read (`None`: absent), with their ETags (what the two `get`s of
    /// the solo index and the namespace's hand back, at once).
    pub fn on_indexes(
        &mut self,
        solo: Option<Vec<u8>>,
        solo_etag: Option<String>,
        namespace: Option<Vec<u8>>,
        namespace_etag: Option<String>,
    ) -> CoreResult<()> {
        if self.stage != Stage::AwaitSoloIndex {
            self.expect(&Stage::AwaitIndexes, "event \"got\"")?;
        }
        self.solo = Read {
            bytes: solo,
            etag: solo_etag,
        };
        self.namespace_index = Read {
            bytes: namespace,
            etag: namespace_etag,
        };
        self.stage = Stage::AwaitListing(Phase::Plan);
        Ok(())
    }

    /// The whole bucket, listed (`key\0size\0etag\0lastModified\0` records).
    pub fn on_listing(&mut self, listing: &[u8]) -> CoreResult<()> {
        let phase = match self.stage {
            Stage::AwaitListing(phase) => phase,
            _ => return self.expect(&Stage::AwaitListing(Phase::Plan), "event \"listing\""),
        };
        decode_remote(listing)?;
        self.listing = listing.to_vec();
        let plan = self.plan_now(self.namespace_index.bytes.as_deref())?;
        self.stage = if plan.needs_etag.is_empty() {
            Stage::Listed(phase)
        } else {
            Stage::AwaitHeads(phase)
        };
        self.plan = Some(plan);
        Ok(())
    }

    /// What the HEADs that answered found: the listing takes their sizes and ETags, a key
    /// gone meanwhile leaves it, and the plan is made again.
    pub fn on_heads(&mut self, heads: &[HeadFound]) -> CoreResult<()> {
        let phase = match self.stage {
            Stage::AwaitHeads(phase) => phase,
            _ => return self.expect(&Stage::AwaitHeads(Phase::Plan), "event \"heads\""),
        };
        let by_key: std::collections::BTreeMap<&str, &HeadFound> =
            heads.iter().map(|h| (h.key.as_str(), h)).collect();
        let listed = decode_remote(&self.listing)?;
        let sizes: Vec<String> = listed
            .iter()
            .map(|o| match by_key.get(o.key).and_then(|h| h.size) {
                Some(size) => size.to_string(),
                None => o.size.to_string(),
            })
            .collect();
        // A key a HEAD found gone leaves the listing; the others take what their HEAD said.
        let fresher = encode_remote_fields(listed.iter().zip(&sizes).filter_map(|(o, size)| {
            let head = by_key.get(o.key);
            if head.is_some_and(|h| !h.exists) {
                return None;
            }
            let etag = head
                .and_then(|h| h.etag.as_deref())
                .or(o.etag)
                .unwrap_or("");
            Some([o.key, size.as_str(), etag, o.last_modified.unwrap_or("")])
        }));
        self.listing = fresher;
        self.plan = Some(self.plan_now(self.namespace_index.bytes.as_deref())?);
        self.stage = Stage::Listed(phase);
        Ok(())
    }

    /// How many copies landed.
    pub fn on_copied(&mut self, copied: u64) -> CoreResult<()> {
        self.expect(&Stage::AwaitCopies, "event \"copied\"")?;
        self.copied = copied;
        self.stage = Stage::AwaitNamespaceIndex;
        Ok(())
    }

    /// The namespace's index as re-read after the copies (`None`: absent), with its ETag.
    pub fn on_namespace_index(
        &mut self,
        bytes: Option<Vec<u8>>,
        etag: Option<String>,
    ) -> CoreResult<()> {
        self.expect(&Stage::AwaitNamespaceIndex, "event \"got\"")?;
        self.namespace_index = Read { bytes, etag };
        self.stage = Stage::AwaitListing(Phase::Index);
        Ok(())
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> CoreResult<&[u8]> {
        match self.stage {
            Stage::AwaitPublish(_) => Ok(&self.body),
            _ => Err(CoreError::input("migrate run: no publish asked for")),
        }
    }

    /// The publish: whether it landed. A lost race stops the run: another writer changed the
    /// index since it was read, and a person runs the migrate again.
    pub fn on_published(&mut self, published: bool) -> CoreResult<()> {
        let index = match self.stage {
            Stage::AwaitPublish(index) => index,
            _ => {
                return self.expect(
                    &Stage::AwaitPublish(MigrateIndex::Namespace),
                    "event \"published\"",
                )
            }
        };
        if !published {
            return Err(CoreError::PublishConflict {
                what: match index {
                    MigrateIndex::Namespace => "the namespace's index changed during the migrate",
                    MigrateIndex::Solo => "the solo index changed during the migrate",
                }
                .to_string(),
            });
        }
        self.stage = Stage::Published(index);
        Ok(())
    }

    /// How many originals went.
    pub fn on_deleted(&mut self, removed: u64) -> CoreResult<()> {
        self.expect(&Stage::AwaitDeletes, "event \"deleted\"")?;
        self.removed = removed;
        self.stage = Stage::Finished;
        Ok(())
    }

    /// What the migrate did; an error before the run is done.
    pub fn result(&self) -> CoreResult<MigrateResult> {
        let (Stage::Finished, Some(first), Some(last)) =
            (&self.stage, &self.first_plan, &self.plan)
        else {
            return Err(CoreError::input(format!(
                "migrate run: result before the run is done (at {:?})",
                self.stage
            )));
        };
        Ok(MigrateResult {
            plan: first.clone(),
            applied: self.request.apply,
            copied: self.copied,
            verified: last.verified.len() as u64,
            indexed: self.indexed,
            removed: self.removed,
            conflicts: last.conflicts.clone(),
        })
    }
}

/// The shared read verb, for the two index reads that follow the meta.
fn get(key: String) -> MigrateAction {
    MigrateAction::Get { key }
}
