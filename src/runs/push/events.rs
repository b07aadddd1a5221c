//! What the shim reports to a push ([`PushEvent`]), what the push answers at once
//! ([`PushReply`]), and the push as a [`Machine`].

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::bytes::buf::{Bytes, F64s};
use crate::error::{CoreError, CoreResult};
use crate::runs::machine::Machine;
use crate::runs::push::machine::{PushAction, PushRun, WalkStats};
use crate::runs::push::plan::{PushPlan, Uploaded};
use crate::runs::session::{BaseLoad, Session};

/// What happened, answering the push's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PushEvent {
    /// `readLocalState`: the sidecar as read (no bytes: none).
    LocalState {
        /// The sidecar's bytes.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        sidecar: Option<Bytes>,
    },
    /// `loadIndex`: the remote index is loaded; its ETag (v1), or v2 with its `commitSeq`.
    Index {
        /// The monolith's ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
        /// The index is the v2 shard set.
        v2: bool,
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
    /// `walkFirst`: the walk, each file's change time and inode, its errors and symlinked
    /// folders, and when it began. Replies the (empty) plan as JSON when the seal holds and the
    /// push is done, else null (this walk then answers the later `walk`).
    WalkFirst {
        /// The listing (`encodeLocalListing`).
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
        /// `[ctime, ino, …]` in walk order, NaN where unknown: a `Float64Array`'s bytes.
        #[tsify(type = "Uint8Array")]
        changes: F64s,
        /// Entries the walk could not read.
        walk_errors: u64,
        /// Symlinked folders not followed.
        symlinked_folders: u64,
        /// When the walk began (epoch ms).
        walked_at_ms: i64,
    },
    /// `verifySeal`: the hashes of the files the seal could not vouch for (`paths[i]` hashes to
    /// `values[i]`). Replies the (empty) plan as JSON when each holds the bytes last synced and
    /// the push is done, else null.
    SealHashes {
        /// Cache paths.
        paths: Vec<String>,
        /// Their SHA-256.
        values: Vec<String>,
    },
    /// `refreshSeal`: over, whether it wrote, skipped or failed.
    SealRefreshed,
    /// `walk`: the cache walk with its SHA-256, its errors, the symlinked folders not followed,
    /// each file's change time and inode, and when it began. Replies the plan as JSON.
    Walk {
        /// The listing (`encodeLocalListing`).
        #[tsify(type = "Uint8Array")]
        listing: Bytes,
        /// The listing's SHA-256 (a saved plan names the walk it was made from).
        listing_digest: String,
        /// Entries the walk could not read.
        walk_errors: u64,
        /// Symlinked folders not followed.
        symlinked_folders: u64,
        /// `[ctime, ino, …]` in walk order, NaN where unknown: a `Float64Array`'s bytes.
        #[tsify(type = "Uint8Array")]
        changes: F64s,
        /// When the walk began (epoch ms).
        walked_at_ms: i64,
    },
    /// `hash`: the hashes asked for. Replies the final plan as JSON.
    Hashes {
        /// Cache paths.
        paths: Vec<String>,
        /// Their SHA-256.
        values: Vec<String>,
    },
    /// `confirm`: whether the deletes were confirmed. Replies the plan as JSON.
    Confirmed {
        /// The person's answer.
        confirmed: bool,
    },
    /// `upload`: the uploads that landed, how many failed, and the rels that found another
    /// writer's version in the bucket, at `nowIso`. Replies the plan as JSON.
    Uploaded {
        /// What landed.
        uploaded: Vec<Uploaded>,
        /// Uploads that failed.
        failures: u64,
        /// Rels whose condition another writer's version failed.
        lost: Vec<String>,
        /// When (ISO-8601).
        now_iso: String,
    },
    /// `prepared`: continue a prepared (two-phase) push.
    Commit,
    /// `rebase`: the index was re-read and the changes re-applied; the ETag the publish must
    /// match.
    Rebased {
        /// The ETag of the copy re-read.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `publish`: the publish landed, with its new ETag and the v2 `commitSeq`. Replies the plan
    /// as JSON (a re-merge over another writer's publish may have added conflicts).
    Published {
        /// The new ETag.
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
        /// The v2 commit sequence published.
        #[serde(default)]
        #[tsify(optional)]
        commit_seq: Option<u64>,
    },
    /// `delete`: how many went, how many failed, and the rels left because the bucket held
    /// another version. Replies the plan as JSON.
    Deleted {
        /// Objects deleted.
        deleted: u64,
        /// Deletes that failed.
        failures: u64,
        /// Rels whose condition another writer's version failed.
        lost: Vec<String>,
    },
    /// `writeLocalIndex` / `writeSidecar`: the write is done; after the local index, with the
    /// sidecar as it is now, at `nowIso`.
    Written {
        /// The sidecar as it is now.
        #[serde(default)]
        #[tsify(optional, type = "Uint8Array")]
        sidecar_now: Option<Bytes>,
        /// When (ISO-8601).
        now_iso: String,
    },
}

/// What a push's event answers at once (`PushReplies` in TypeScript names which event answers
/// what).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PushReply {
    /// Nothing to answer.
    Nothing,
    /// `base`: how the local index loaded as the base (none: there was none).
    Base(Option<BaseLoad>),
    /// The plan as it now stands, as JSON (one string crosses the boundary faster than a
    /// plan's 10^5 records built one by one); none: the seal did not hold, the push goes on.
    Plan(Option<String>),
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
#[tsify(missing_as_null)]
pub struct PushEnded {
    /// The push published the index.
    pub published: bool,
    /// The remote index's ETag as this push left it.
    pub remote_index_etag: Option<String>,
}

fn plan_json(plan: &PushPlan) -> CoreResult<PushReply> {
    serde_json::to_string(plan)
        .map(|json| PushReply::Plan(Some(json)))
        .map_err(|e| CoreError::input(e.to_string()))
}

fn session_plan(session: &Session) -> CoreResult<PushReply> {
    plan_json(session.push_plan()?)
}

fn when_sealed(sealed: bool, session: &Session) -> CoreResult<PushReply> {
    if sealed {
        session_plan(session)
    } else {
        Ok(PushReply::Plan(None))
    }
}

impl Machine for PushRun {
    type Context = Session;
    type Action = PushAction;
    type Event = PushEvent;
    type Reply = PushReply;
    type Output = PushEnded;

    fn poll(&mut self, _: &mut Session) -> CoreResult<PushAction> {
        Ok(PushRun::poll(self))
    }

    fn handle(&mut self, session: &mut Session, event: PushEvent) -> CoreResult<PushReply> {
        let nothing = |()| PushReply::Nothing;
        match event {
            PushEvent::LocalState { sidecar } => self
                .on_local_state(session, sidecar.map(|b| b.0))
                .map(nothing),
            PushEvent::Index {
                etag,
                v2,
                commit_seq,
            } => self.on_index(etag, v2, commit_seq).map(nothing),
            PushEvent::Base { bytes } => self
                .on_base(session, bytes.map(|b| b.0))
                .map(PushReply::Base),
            PushEvent::WalkFirst {
                listing,
                changes,
                walk_errors,
                symlinked_folders,
                walked_at_ms,
            } => {
                let sealed = self.on_walk_first(
                    session,
                    &listing,
                    &changes.0,
                    walk_errors,
                    symlinked_folders,
                    walked_at_ms,
                )?;
                when_sealed(sealed, session)
            }
            PushEvent::SealHashes { paths, values } => {
                let sealed = self.on_seal_hashes(session, paths, values)?;
                when_sealed(sealed, session)
            }
            PushEvent::SealRefreshed => self.on_seal_refreshed().map(nothing),
            PushEvent::Walk {
                listing,
                listing_digest,
                walk_errors,
                symlinked_folders,
                changes,
                walked_at_ms,
            } => {
                let stats = WalkStats {
                    changes: changes.0,
                    walked_at_ms,
                };
                let plan = self.on_walk(
                    session,
                    listing.0,
                    listing_digest,
                    walk_errors,
                    symlinked_folders,
                    stats,
                )?;
                plan_json(plan)
            }
            PushEvent::Hashes { paths, values } => {
                plan_json(self.on_hashes(session, paths, values)?)
            }
            PushEvent::Confirmed { confirmed } => plan_json(self.on_confirmed(session, confirmed)?),
            PushEvent::Uploaded {
                uploaded,
                failures,
                lost,
                now_iso,
            } => {
                self.on_uploaded(session, &uploaded, failures, &lost, &now_iso)?;
                session_plan(session)
            }
            PushEvent::Commit => self.commit(session).map(nothing),
            PushEvent::Rebased { etag } => self.on_rebased(etag).map(nothing),
            PushEvent::Published { etag, commit_seq } => {
                self.on_published(session, etag, commit_seq)?;
                session_plan(session)
            }
            PushEvent::Deleted {
                deleted,
                failures,
                lost,
            } => {
                self.on_deleted(session, deleted, failures, &lost)?;
                session_plan(session)
            }
            PushEvent::Written {
                sidecar_now,
                now_iso,
            } => self
                .on_written(session, sidecar_now.map(|b| b.0), &now_iso)
                .map(nothing),
        }
    }

    fn result(&self) -> CoreResult<PushEnded> {
        if !matches!(PushRun::poll(self), PushAction::Done) {
            return Err(CoreError::input("push run: result before the run is done"));
        }
        Ok(PushEnded {
            published: self.published(),
            remote_index_etag: self.remote_index_etag().map(str::to_string),
        })
    }
}
