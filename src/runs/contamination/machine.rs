//! Repairing namespace contamination (objects of other namespaces under the bound one) as a
//! state machine in the shape of the other runs: the core says what to do next
//! ([`ContaminationRun::poll`]), the shim does it and hands back what happened.
//!
//! Order: list the bucket and judge every contaminating object ([`find_contamination`]): only
//! one whose home copy has the same size and content ETag may go. Where a listing gave no ETag
//! (some servers list none), HEAD both copies and judge again. The dry run stops there. The real
//! run drops the removable objects' entries from the bound index first, over exactly the copy
//! read (so no entry names an object once it is gone), and only then deletes them. Every other
//! contaminating object is kept and reported with the reason.

use serde::Serialize;
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{Namespace, INDEX_FILE};
use crate::runs::contamination::plan::{
    find_contamination, ContaminationReport, ForeignNamespace, ForeignVerdict,
};
use crate::runs::migrate::machine::HeadFound;
use crate::runs::session::Session;
use crate::wire::listing::{decode_remote, encode_remote_fields};

/// The next thing the shim must do for a contamination repair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum ContaminationAction {
    /// List the whole bucket; answer with the `listing` event.
    ListAll,
    /// HEAD each of `keys` (their listing gave no ETag); answer with the `heads` event.
    Head {
        /// The keys.
        keys: Vec<String>,
    },
    /// Read the object at `key` (the bound index); answer with the `got` event (the shared verb
    /// of every run that reads an object which may be absent).
    Get {
        /// The key.
        key: String,
    },
    /// Write `body()` at `key` over `ifMatch` (retrying transient failures); answer with
    /// the `published` event.
    Publish {
        /// The key.
        key: String,
        /// The ETag of the copy read.
        if_match: Option<String>,
    },
    /// Delete each object only while it is the version the listing showed (`If-Match` its
    /// ETag; with a client that has none, after a HEAD shows that ETag); answer with
    /// the `deleted` event: how many went, and the keys where another version was found (kept).
    Delete {
        /// The objects, each with the ETag its removal is conditional on.
        objects: Vec<ObjectVersion>,
    },
    /// The repair is over; `result()` says what it found and did.
    Done,
}

/// An object and the ETag of the version an action is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ObjectVersion {
    /// Its key, relative to the prefix.
    pub key: String,
    /// The version's ETag, as listed.
    pub etag: String,
}

/// A contaminating object kept, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct KeptForeignObject {
    /// Its key: `<ns>/<other>/<rel>`.
    pub key: String,
    /// `only-copy`, `differs`, `unproven` or `changed-since-listing`.
    pub reason: ForeignVerdict,
}

/// What a contamination repair found and did (the extension's summary shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContaminationSummary {
    /// Other namespaces with objects under the bound one.
    pub foreign_namespaces: Vec<ForeignNamespace>,
    /// All contaminating objects.
    pub total_foreign_objects: u64,
    /// Objects removed (0 on a dry run).
    pub deleted: u64,
    /// Objects kept because removing them could lose data.
    pub kept: Vec<KeptForeignObject>,
}

/// Where a contamination run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    AwaitListing,
    AwaitHeads,
    Judged,
    AwaitIndex,
    AwaitPublish,
    AwaitDeletes,
    Finished,
}

/// One contamination repair.
#[derive(Debug)]
pub struct ContaminationRun {
    namespace: Namespace,
    prefix: String,
    dry_run: bool,
    stage: Stage,
    listing: Vec<u8>,
    report: ContaminationReport,
    asked: Vec<String>,
    index_etag: Option<String>,
    body: Vec<u8>,
    deleted: u64,
    /// The most entries the bound index may name (see [`Session::set_entry_limit`]).
    entry_limit: Option<u64>,
}

impl ContaminationRun {
    /// A run for the bound `namespace` (`prefix` only for the key length limit); a dry run
    /// only reports.
    pub fn new(namespace: &str, prefix: &str, dry_run: bool) -> CoreResult<ContaminationRun> {
        Ok(ContaminationRun {
            namespace: Namespace::parse(namespace)?,
            prefix: prefix.to_string(),
            dry_run,
            stage: Stage::AwaitListing,
            listing: Vec::new(),
            report: ContaminationReport::default(),
            asked: Vec::new(),
            index_etag: None,
            body: Vec::new(),
            deleted: 0,
            entry_limit: None,
        })
    }

    /// The same run reading the bound index with at most `limit` entries (default
    /// [`crate::index::DEFAULT_MAX_ENTRIES`]); a longer one is `index-too-large`.
    pub fn with_entry_limit(mut self, limit: u64) -> CoreResult<ContaminationRun> {
        if limit == 0 {
            return Err(CoreError::input("the index entry limit must be at least 1"));
        }
        self.entry_limit = Some(limit);
        Ok(self)
    }

    fn index_key(&self) -> String {
        format!("{}/{INDEX_FILE}", self.namespace.as_str())
    }

    /// The objects proven redundant, each with the listed ETag that proved it (a redundant
    /// verdict needs one, so none is left out).
    fn removable(&self) -> Vec<ObjectVersion> {
        self.report
            .objects
            .iter()
            .filter(|o| o.verdict == ForeignVerdict::Redundant)
            .filter_map(|o| {
                Some(ObjectVersion {
                    key: o.key.clone(),
                    etag: o.etag.clone()?,
                })
            })
            .collect()
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self) -> ContaminationAction {
        loop {
            match self.stage {
                Stage::AwaitListing => return ContaminationAction::ListAll,
                Stage::AwaitHeads => {
                    return ContaminationAction::Head {
                        keys: self.asked.clone(),
                    }
                }
                Stage::Judged if self.dry_run || self.removable().is_empty() => {
                    self.stage = Stage::Finished;
                }
                Stage::Judged => self.stage = Stage::AwaitIndex,
                Stage::AwaitIndex => {
                    return ContaminationAction::Get {
                        key: self.index_key(),
                    }
                }
                Stage::AwaitPublish => {
                    return ContaminationAction::Publish {
                        key: self.index_key(),
                        if_match: self.index_etag.clone(),
                    }
                }
                Stage::AwaitDeletes => {
                    return ContaminationAction::Delete {
                        objects: self.removable(),
                    }
                }
                Stage::Finished => return ContaminationAction::Done,
            }
        }
    }

    fn expect(&self, stage: Stage, what: &str) -> CoreResult<()> {
        if self.stage == stage {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "contamination run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// Judges the listing held.
    fn judge(&self) -> CoreResult<ContaminationReport> {
        let objects = decode_remote(&self.listing)?
            .iter()
            .map(|r| r.checked())
            .collect::<CoreResult<Vec<_>>>()?;
        Ok(find_contamination(&self.namespace, &objects))
    }

    /// The whole bucket, listed (`key\0size\0etag\0lastModified\0` records).
    pub fn on_listing(&mut self, listing: &[u8]) -> CoreResult<()> {
        self.expect(Stage::AwaitListing, "event \"listing\"")?;
        let previous = std::mem::replace(&mut self.listing, listing.to_vec());
        let report = match self.judge() {
            Ok(report) => report,
            Err(error) => {
                self.listing = previous;
                return Err(error);
            }
        };
        // Both copies of an unproven pair whose listing had no ETag: a HEAD may prove them.
        let unlisted: std::collections::BTreeSet<&str> = decode_remote(&self.listing)?
            .into_iter()
            .filter(|o| o.etag.is_none())
            .map(|o| o.key)
            .collect();
        self.asked = report
            .objects
            .iter()
            .filter(|o| o.verdict == ForeignVerdict::Unproven)
            .flat_map(|o| [o.key.as_str(), o.home_key.as_str()])
            .filter(|k| unlisted.contains(k))
            .map(str::to_string)
            .collect();
        self.report = report;
        self.stage = if self.asked.is_empty() {
            Stage::Judged
        } else {
            Stage::AwaitHeads
        };
        Ok(())
    }

    /// What the HEADs found: an ETag a HEAD sent fills the listing's gap, and the objects are
    /// judged again.
    pub fn on_heads(&mut self, heads: &[HeadFound]) -> CoreResult<()> {
        self.expect(Stage::AwaitHeads, "event \"heads\"")?;
        let by_key: std::collections::BTreeMap<&str, &str> = heads
            .iter()
            .filter(|h| h.exists)
            .filter_map(|h| Some((h.key.as_str(), h.etag.as_deref()?)))
            .collect();
        let fresher = encode_remote_fields(decode_remote(&self.listing)?.iter().map(|o| {
            let etag = o.etag.or_else(|| by_key.get(o.key).copied()).unwrap_or("");
            [o.key, o.size, etag, o.last_modified.unwrap_or("")]
        }));
        self.listing = fresher;
        self.report = self.judge()?;
        self.stage = Stage::Judged;
        Ok(())
    }

    /// The bound index as read (`None`: there is none), with its ETag.
    pub fn on_index(&mut self, bytes: Option<&[u8]>, etag: Option<String>) -> CoreResult<()> {
        self.expect(Stage::AwaitIndex, "event \"got\"")?;
        let Some(bytes) = bytes else {
            self.stage = Stage::AwaitDeletes;
            return Ok(());
        };
        let mut session = Session::new(Some(self.namespace.as_str()), &self.prefix)?;
        if let Some(limit) = self.entry_limit {
            session.set_entry_limit(limit)?;
        }
        session.load_index(bytes)?;
        let own = format!("{}/", self.namespace.as_str());
        let rels: Vec<String> = self
            .removable()
            .iter()
            .filter_map(|o| o.key.strip_prefix(&own).map(str::to_string))
            .collect();
        if session.remove_entries(&rels)? > 0 {
            self.body = session.index_json(false)?;
            self.index_etag = etag;
            self.stage = Stage::AwaitPublish;
        } else {
            self.stage = Stage::AwaitDeletes;
        }
        Ok(())
    }

    /// The bytes a `publish` action writes.
    pub fn body(&self) -> CoreResult<&[u8]> {
        match self.stage {
            Stage::AwaitPublish => Ok(&self.body),
            _ => Err(CoreError::input("contamination run: no publish asked for")),
        }
    }

    /// Whether the publish landed: a lost one stops the run before any delete.
    pub fn on_published(&mut self, published: bool) -> CoreResult<()> {
        self.expect(Stage::AwaitPublish, "event \"published\"")?;
        if !published {
            return Err(CoreError::PublishConflict {
                what: "the index changed while the repair was removing foreign entries".into(),
            });
        }
        self.stage = Stage::AwaitDeletes;
        Ok(())
    }

    /// How many objects went, and the keys whose conditional delete found another version:
    /// those are kept and reported (`changed-since-listing`). A key the action did not name is
    /// refused (`invalid-input`).
    pub fn on_deleted(&mut self, deleted: u64, changed: &[String]) -> CoreResult<()> {
        self.expect(Stage::AwaitDeletes, "event \"deleted\"")?;
        let removable = self.removable();
        if deleted + changed.len() as u64 > removable.len() as u64 {
            return Err(CoreError::input(
                "contamination run: more objects answered than were to be removed",
            ));
        }
        for key in changed {
            let object = self
                .report
                .objects
                .iter_mut()
                .find(|o| &o.key == key && o.verdict == ForeignVerdict::Redundant)
                .ok_or_else(|| {
                    CoreError::input(format!("contamination run: {key:?} was not to be removed"))
                })?;
            object.verdict = ForeignVerdict::ChangedSinceListing;
        }
        self.deleted = deleted;
        self.stage = Stage::Finished;
        Ok(())
    }

    /// What the repair found and did; an error before the run is done.
    pub fn result(&self) -> CoreResult<ContaminationSummary> {
        self.expect(Stage::Finished, "result")?;
        Ok(ContaminationSummary {
            foreign_namespaces: self.report.foreign_namespaces.clone(),
            total_foreign_objects: self.report.objects.len() as u64,
            deleted: self.deleted,
            kept: self
                .report
                .objects
                .iter()
                .filter(|o| o.verdict != ForeignVerdict::Redundant)
                .map(|o| KeptForeignObject {
                    key: o.key.clone(),
                    reason: o.verdict,
                })
                .collect(),
        })
    }
}
