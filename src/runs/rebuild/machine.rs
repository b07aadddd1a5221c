//! Rebuilding the remote index from a listing, as a state machine in the shape of the pull and
//! push runs: the core says what to do next ([`RebuildRun::poll`]), the shim does it and hands
//! back what happened. Two callers drive it:
//!
//! - a sync that found no index ([`RebuildRequest::Missing`]): the rebuild is published
//!   create-only when it kept anything, and when another writer's index lands first, theirs is
//!   read and used (never overwritten);
//! - `rebuild-index` ([`RebuildRequest::Asked`]): the index as found is judged (absent, valid,
//!   corrupt), and [`rebuild_step`] decides between a dry run, keeping a valid index, and a
//!   publish over exactly the copy judged.
//!
//! The machine also words the hint for an empty listing (a new datastore, or a typo in the
//! namespace) and says whether the result needs a person.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::model::paths::{near_names, INDEX_FILE};
use crate::runs::rebuild::plan::{rebuild_step, ExistingIndex, RebuildDecision, RebuildReport};
use crate::runs::session::Session;

/// Why the index is rebuilt, and what may become of the rebuild.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(
    tag = "mode",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RebuildRequest {
    /// A sync found no index in the bucket.
    Missing {
        /// Publish the rebuild (create-only) when it kept anything; off for read-only callers
        /// (doctor, repair, a push that must not write the index before its own publish).
        publish: bool,
        /// The bucket prefix, only to word the hint for an empty listing.
        #[serde(default)]
        prefix: Option<String>,
    },
    /// `rebuild-index`, asked by a person.
    Asked {
        /// `--apply`: publish (otherwise report only).
        apply: bool,
        /// `--force`: replace an index that exists and reads.
        force: bool,
        /// The v2 shard index as the shim judged it (its meta says version 2); absent for the
        /// v1 monolith, which the run reads and judges itself.
        #[serde(default)]
        v2_existing: Option<ExistingIndex>,
        /// The bucket prefix, only to word the hint for an empty listing.
        #[serde(default)]
        prefix: Option<String>,
    },
}

impl Default for RebuildRequest {
    fn default() -> Self {
        RebuildRequest::Missing {
            publish: false,
            prefix: None,
        }
    }
}

/// The next thing the shim must do for a rebuild.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[tsify(missing_as_null)]
pub enum RebuildAction {
    /// Read the index object at `key` (its bytes and ETag, or that there is none); answer with
    /// the `got` event. Asked first for the index as found, and again for another writer's
    /// index when that one landed before this run's publish.
    Get {
        /// The index key, relative to the prefix.
        key: String,
    },
    /// List every object under `prefix`, page by page, handing each page over as a `page` event; then
    /// answer with the `listed` event. `narration` is said once the first page is in (a bucket that
    /// does not exist fails the listing, and is not a missing index).
    List {
        /// The folder to list (`ns/`, or empty for the whole bucket).
        prefix: String,
        /// What the run is doing, for the log.
        narration: String,
    },
    /// List one page of the bucket's top level; answer with the `topFolders` event and the first
    /// segments of its keys (near names of the namespace go in the hint).
    ListTopFolders,
    /// Publish the session's index (`indexJson(false)`) at `key` under the datastore lock:
    /// over `ifMatch`, or create-only when it is null; retry transient failures when `retry`.
    /// Answer with the `published` event.
    Publish {
        /// The index key.
        key: String,
        /// The ETag the bucket's copy must still have; null: create-only.
        if_match: Option<String>,
        /// Retry transient failures of the write (a sync's does; `rebuild-index` writes once
        /// and reports a lost race).
        retry: bool,
    },
    /// Publish the session's index as the v2 shard set over the one judged, under the
    /// datastore lock; answer with the `published` event.
    PublishShards,
    /// The rebuild is over; `result()` says what became of it.
    Done,
}

/// What became of a rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum RebuildStep {
    /// Reported only (`rebuild-index` without `--apply`).
    DryRun,
    /// A valid index exists and `--force` was not given: it stays.
    KeptExisting,
    /// Published.
    Published,
    /// The index changed while rebuilding (`rebuild-index`): not published; run it again.
    LostRace,
    /// Another writer's index landed first (a sync): theirs was read and is used.
    AdoptedPeer,
    /// Left unpublished: the caller asked for no publish, or the listing kept nothing (an
    /// empty index is never written into a bucket that may be mid-upload).
    Unpublished,
}

/// The result of a rebuild run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
#[tsify(missing_as_null)]
pub struct RebuildResult {
    /// What the listing held and what the index kept.
    pub report: RebuildReport,
    /// What became of it.
    pub step: RebuildStep,
    /// The index as found (`rebuild-index` only).
    pub existing: Option<ExistingIndex>,
    /// The ETag of the index the session now holds in the bucket (published or adopted).
    pub etag: Option<String>,
    /// When the listing held nothing: what to check, with near names that do hold data.
    pub hint: Option<String>,
    /// True when a person must act: keys left out of the index (they stay in the bucket where
    /// no pull finds them), a valid index kept, or a lost race.
    pub needs_attention: bool,
}

/// Where a rebuild run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Start,
    AwaitExisting,
    AwaitListing,
    Listed,
    AwaitTopFolders,
    Decide,
    AwaitPublish,
    AwaitPeer,
    Finished,
}

/// One rebuild, from the listing to the publish (or not).
#[derive(Debug, Clone)]
pub struct RebuildRun {
    request: RebuildRequest,
    now_iso: String,
    stage: Stage,
    existing: Option<ExistingIndex>,
    existing_etag: Option<String>,
    report: Option<RebuildReport>,
    hint: Option<String>,
    step: Option<RebuildStep>,
    etag: Option<String>,
}

impl RebuildRun {
    /// A run for `request`; `now_iso` dates objects listed without a date.
    pub fn new(request: RebuildRequest, now_iso: &str) -> RebuildRun {
        let existing = match &request {
            RebuildRequest::Asked { v2_existing, .. } => *v2_existing,
            RebuildRequest::Missing { .. } => None,
        };
        RebuildRun {
            request,
            now_iso: now_iso.to_string(),
            stage: Stage::Start,
            existing,
            existing_etag: None,
            report: None,
            hint: None,
            step: None,
            etag: None,
        }
    }

    fn asked(&self) -> bool {
        matches!(self.request, RebuildRequest::Asked { .. })
    }

    fn v2(&self) -> bool {
        matches!(
            self.request,
            RebuildRequest::Asked {
                v2_existing: Some(_),
                ..
            }
        )
    }

    /// The next action. Asking again before answering returns the same action.
    pub fn poll(&mut self, session: &mut Session) -> CoreResult<RebuildAction> {
        let index_key = session.model().under_binding(INDEX_FILE);
        loop {
            match &self.stage {
                // `rebuild-index` judges the v1 index before listing; a v2 one came judged.
                Stage::Start if self.asked() && self.existing.is_none() => {
                    self.stage = Stage::AwaitExisting;
                }
                Stage::AwaitExisting => return Ok(RebuildAction::Get { key: index_key }),
                Stage::Start => {
                    session.begin_rebuild(&self.now_iso);
                    self.stage = Stage::AwaitListing;
                }
                Stage::AwaitListing => {
                    return Ok(RebuildAction::List {
                        prefix: session.model().listing_prefix(),
                        narration: self.narration(session),
                    });
                }
                Stage::Listed => {
                    let report = self.report.as_ref().expect("listed runs hold a report");
                    if report.objects_seen > 0 {
                        self.stage = Stage::Decide;
                    } else if session.model().namespace().is_some() {
                        self.stage = Stage::AwaitTopFolders;
                    } else {
                        self.hint = Some(self.empty_hint(session, &[]));
                        self.stage = Stage::Decide;
                    }
                }
                Stage::AwaitTopFolders => return Ok(RebuildAction::ListTopFolders),
                Stage::Decide | Stage::AwaitPublish => match self.decide(index_key.clone()) {
                    Ok(publish) => {
                        self.stage = Stage::AwaitPublish;
                        return Ok(publish);
                    }
                    Err(step) => {
                        self.step = Some(step);
                        self.stage = Stage::Finished;
                    }
                },
                Stage::AwaitPeer => return Ok(RebuildAction::Get { key: index_key }),
                Stage::Finished => return Ok(RebuildAction::Done),
            }
        }
    }

    /// The publish this run makes, or what becomes of the rebuild when it makes none.
    fn decide(&self, key: String) -> Result<RebuildAction, RebuildStep> {
        let kept = self.report.as_ref().map_or(0, |r| r.kept);
        match &self.request {
            RebuildRequest::Missing { publish, .. } => {
                // An empty index is never written into a bucket that may be mid-upload.
                if *publish && kept > 0 {
                    Ok(RebuildAction::Publish {
                        key,
                        if_match: None,
                        retry: true,
                    })
                } else {
                    Err(RebuildStep::Unpublished)
                }
            }
            RebuildRequest::Asked { apply, force, .. } => {
                let existing = self.existing.unwrap_or(ExistingIndex::Absent);
                match rebuild_step(*apply, *force, existing) {
                    RebuildDecision::DryRun => Err(RebuildStep::DryRun),
                    RebuildDecision::KeptExisting => Err(RebuildStep::KeptExisting),
                    RebuildDecision::Publish if self.v2() => Ok(RebuildAction::PublishShards),
                    // Over exactly the copy judged; create-only where there was none.
                    RebuildDecision::Publish => Ok(RebuildAction::Publish {
                        key,
                        if_match: match existing {
                            ExistingIndex::Absent => None,
                            _ => self.existing_etag.clone(),
                        },
                        retry: false,
                    }),
                }
            }
        }
    }

    fn narration(&self, session: &Session) -> String {
        let what = if self.asked() {
            "rebuilding the index"
        } else {
            "remote index missing: rebuilding it"
        };
        let prefix = session.model().listing_prefix();
        let place = if prefix.is_empty() {
            "the bucket"
        } else {
            &prefix
        };
        format!("{what} from a listing of {place}")
    }

    /// What to say when the bound tree holds nothing: a new datastore, or a typo in the
    /// namespace or prefix (`Prod` for `prod`), naming `top_folders` near the namespace.
    fn empty_hint(&self, session: &Session, top_folders: &[String]) -> String {
        let prefix = match &self.request {
            RebuildRequest::Missing { prefix, .. } | RebuildRequest::Asked { prefix, .. } => {
                prefix.as_deref().filter(|p| !p.is_empty())
            }
        };
        let namespace = session.model().namespace().map(|n| n.as_str().to_string());
        let place = match (&namespace, prefix) {
            (Some(ns), Some(p)) => format!("namespace {ns} under prefix {p}"),
            (Some(ns), None) => format!("namespace {ns}"),
            (None, Some(p)) => format!("prefix {p}"),
            (None, None) => "the bucket".to_string(),
        };
        let near = match &namespace {
            Some(ns) => near_names(ns, top_folders.iter().map(String::as_str)),
            None => Vec::new(),
        };
        let advice = if !near.is_empty() {
            format!(
                "; names are case-sensitive: did you mean --namespace {}?",
                near.join(" or ")
            )
        } else if namespace.is_some() {
            "; if you expected data there, check --namespace and --prefix".to_string()
        } else {
            "; if you expected data there, check --prefix".to_string()
        };
        format!("nothing is stored under {place} yet (a new datastore?){advice}")
    }

    fn expect(&self, stage: &Stage, what: &str) -> CoreResult<()> {
        if std::mem::discriminant(&self.stage) == std::mem::discriminant(stage) {
            Ok(())
        } else {
            Err(CoreError::input(format!(
                "rebuild run: {what} out of order (at {:?})",
                self.stage
            )))
        }
    }

    /// The object a `get` asked for: the index as found, or the index another writer published
    /// first (which one is the stage's to say).
    pub fn on_got(
        &mut self,
        session: &mut Session,
        bytes: Option<&[u8]>,
        etag: Option<String>,
    ) -> CoreResult<()> {
        if self.stage != Stage::AwaitPeer {
            return self.on_existing(bytes, etag);
        }
        match bytes {
            Some(bytes) => self.on_peer_index(session, bytes, etag),
            // Their index was there when our create-only publish lost, and is gone now: someone
            // deleted it meanwhile. Nothing of ours was written; a rerun sees what is there.
            None => Err(CoreError::PublishConflict {
                what: "another writer's index appeared and vanished while this rebuild published"
                    .to_string(),
            }),
        }
    }

    /// The index object as read (`None`: there is none), with its ETag.
    pub fn on_existing(&mut self, bytes: Option<&[u8]>, etag: Option<String>) -> CoreResult<()> {
        self.expect(&Stage::AwaitExisting, "event \"got\"")?;
        self.existing = Some(ExistingIndex::of(bytes));
        self.existing_etag = etag;
        self.stage = Stage::Start;
        Ok(())
    }

    /// One page of the listing (`key\0size\0etag\0lastModified\0` records; keys holding a NUL
    /// come separately in `unencodable` and are refused).
    pub fn on_page(
        &mut self,
        session: &mut Session,
        page: &[u8],
        unencodable: &[String],
    ) -> CoreResult<()> {
        self.expect(&Stage::AwaitListing, "event \"page\"")?;
        session.add_listing_page(page, unencodable)
    }

    /// The listing is complete: the rebuilt index becomes the session's index.
    pub fn on_listed(&mut self, session: &mut Session) -> CoreResult<()> {
        self.expect(&Stage::AwaitListing, "event \"listed\"")?;
        self.report = Some(session.finish_rebuild(Some(&self.now_iso))?);
        self.stage = Stage::Listed;
        Ok(())
    }

    /// The first segments of one page of the bucket's top level.
    pub fn on_top_folders(&mut self, session: &Session, folders: &[String]) -> CoreResult<()> {
        self.expect(&Stage::AwaitTopFolders, "event \"topFolders\"")?;
        self.hint = Some(self.empty_hint(session, folders));
        self.stage = Stage::Decide;
        Ok(())
    }

    /// The publish: its new ETag, or `None` when another writer's index got there first.
    pub fn on_published(&mut self, published: bool, etag: Option<String>) -> CoreResult<()> {
        self.expect(&Stage::AwaitPublish, "event \"published\"")?;
        if published {
            self.step = Some(RebuildStep::Published);
            self.etag = etag;
            self.stage = Stage::Finished;
        } else if self.asked() {
            // A person re-runs it; the index that won is never overwritten.
            self.step = Some(RebuildStep::LostRace);
            self.stage = Stage::Finished;
        } else {
            // Theirs wins: it is read and used, never overwritten.
            self.stage = Stage::AwaitPeer;
        }
        Ok(())
    }

    /// Another writer's index, as read at the key the publish lost on.
    pub fn on_peer_index(
        &mut self,
        session: &mut Session,
        bytes: &[u8],
        etag: Option<String>,
    ) -> CoreResult<()> {
        self.expect(&Stage::AwaitPeer, "event \"got\"")?;
        session.load_index(bytes)?;
        self.step = Some(RebuildStep::AdoptedPeer);
        self.etag = etag;
        self.stage = Stage::Finished;
        Ok(())
    }

    /// What became of the rebuild; an error before the run is done.
    pub fn outcome(&self) -> CoreResult<RebuildResult> {
        let (Stage::Finished, Some(report), Some(step)) = (&self.stage, &self.report, self.step)
        else {
            return Err(CoreError::input(format!(
                "rebuild run: outcome before the run is done (at {:?})",
                self.stage
            )));
        };
        let needs_attention = report.skipped_unsafe > 0
            || matches!(step, RebuildStep::KeptExisting | RebuildStep::LostRace);
        Ok(RebuildResult {
            report: report.clone(),
            step,
            existing: self.existing.filter(|_| self.asked()),
            etag: self.etag.clone(),
            hint: self.hint.clone(),
            needs_attention,
        })
    }
}
