//! What the shim reports to a pull ([`PullEvent`]), what the pull answers at once
//! ([`PullReply`]), and the pull as a [`Machine`].

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::bytes::buf::Bytes;
use crate::error::{CoreError, CoreResult};
use crate::runs::machine::Machine;
use crate::runs::pull::machine::{PullAction, PullRun};
use crate::runs::pull::plan::{PullApplied, PullOutcome};
use crate::runs::session::{BaseLoad, Session};
use crate::safety::conflicts::KeptAside;

/// What happened, answering the pull's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PullEvent {
    /// `readLocalState`: the sidecar (no bytes: none) and whether the local index exists.
    LocalState {
        /// The sidecar's bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        sidecar: Option<Bytes>,
        /// Whether the local index exists.
        local_index_exists: bool,
    },
    /// `headIndex`: what the HEAD of the remote index found.
    Head {
        /// Whether it exists.
        exists: bool,
        /// Its ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `loadIndex`: the remote index is loaded into the planner; in the bucket or not, its
    /// ETag (v1) or `commitSeq` (v2).
    Index {
        /// Whether the bucket has one.
        exists: bool,
        /// The monolith's ETag (or the v2 meta's).
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
        /// The v2 meta's commit sequence.
        #[serde(default)]
        #[tsify(optional)]
        commit_seq: Option<u64>,
    },
    /// `readBase`: the local index as read (no bytes: none). Replies how it loaded.
    Base {
        /// Its bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        bytes: Option<Bytes>,
    },
    /// `walk`: the cache walk (a local listing buffer, `encodeLocalListing`). Replies the plan.
    Walk {
        /// The listing.
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
    },
    /// `transfer`: what the transfers did, at `nowIso`. Replies what the core applied.
    Transfers {
        /// The files written, with the mtime read after each write (a local listing buffer).
        #[tsify(type = "Uint8Array")]
        downloaded: Bytes,
        /// Rels whose object was gone (404).
        not_found: Vec<String>,
        /// Conflicts whose local version was copied aside first.
        aside: Vec<KeptAside>,
        /// Rels hashed as written, beside `hashedSha256`.
        hashed_rels: Vec<String>,
        /// The SHA-256 of what each of `hashedRels` wrote.
        hashed_sha256: Vec<String>,
        /// Rels of the plan's `removals` whose file was removed.
        removed: Vec<String>,
        /// Rels of the plan's `pointers` whose local version won the merge.
        kept_pointers: Vec<String>,
        /// How many transfers failed.
        failures: u64,
        /// When they ended (ISO-8601).
        now_iso: String,
    },
    /// `publishIndex`: whether the pruned index was written (false: the race was lost), and
    /// its new ETag.
    Published {
        /// Whether the write landed.
        published: bool,
        /// The new ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `writeLocalIndex` / `writeSidecar`: the write is done; after the local index, with the
    /// sidecar read again (no bytes: absent; ignored after the sidecar).
    Written {
        /// The sidecar as it is now.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        sidecar_now: Option<Bytes>,
    },
}

/// What a pull's event answers at once (`PullReplies` in TypeScript names which event answers
/// what).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PullReply {
    /// Nothing to answer.
    Nothing,
    /// `base`: how the local index loaded as the base (none: there was none).
    Base(Option<BaseLoad>),
    /// `walk`: the plan, as JSON. A plan holds one record per file, and one string crosses the
    /// boundary faster than 10^5 objects built one by one (`JSON.parse` reads it natively).
    Plan(String),
    /// `transfers`: what the core applied.
    Applied(PullApplied),
}

/// How a pull ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct PullEnded {
    /// The remote index was unchanged since the last verified pull: nothing was done.
    pub noop: bool,
    /// The pull published its pruned index.
    pub index_published: bool,
}

impl Machine for PullRun {
    type Context = Session;
    type Action = PullAction;
    type Event = PullEvent;
    type Reply = PullReply;
    type Output = PullEnded;

    fn poll(&mut self, session: &mut Session) -> CoreResult<PullAction> {
        Ok(PullRun::poll(self, session))
    }

    fn handle(&mut self, session: &mut Session, event: PullEvent) -> CoreResult<PullReply> {
        let nothing = |()| PullReply::Nothing;
        match event {
            PullEvent::LocalState {
                sidecar,
                local_index_exists,
            } => self
                .on_local_state(sidecar.map(|b| b.0), local_index_exists)
                .map(nothing),
            PullEvent::Head { exists, etag } => self.on_head(exists, etag).map(nothing),
            PullEvent::Index {
                exists,
                etag,
                commit_seq,
            } => self.on_index(exists, etag, commit_seq).map(nothing),
            PullEvent::Base { bytes } => self
                .on_base(session, bytes.map(|b| b.0))
                .map(PullReply::Base),
            PullEvent::Walk { listing } => {
                let plan = self.on_walk(session, &listing)?;
                serde_json::to_string(plan)
                    .map(PullReply::Plan)
                    .map_err(|e| CoreError::input(e.to_string()))
            }
            PullEvent::Transfers {
                downloaded,
                not_found,
                aside,
                hashed_rels,
                hashed_sha256,
                removed,
                kept_pointers,
                failures,
                now_iso,
            } => {
                if hashed_rels.len() != hashed_sha256.len() {
                    return Err(CoreError::input(
                        "hashedRels and hashedSha256 differ in length",
                    ));
                }
                let mut outcome = PullOutcome::of_downloads(&downloaded, not_found, aside)?;
                outcome.hashes = hashed_rels.into_iter().zip(hashed_sha256).collect();
                outcome.removed = removed;
                outcome.kept_pointers = kept_pointers;
                self.on_transfers(session, &outcome, failures, &now_iso)
                    .map(PullReply::Applied)
            }
            PullEvent::Published { published, etag } => {
                self.on_published(published, etag).map(nothing)
            }
            PullEvent::Written { sidecar_now } => self
                .on_written(session, sidecar_now.as_deref())
                .map(nothing),
        }
    }

    fn result(&self) -> CoreResult<PullEnded> {
        self.ended()
            .ok_or_else(|| CoreError::input("pull run: result before the run is done"))
    }
}
