//! What the shim reports to a shard-set write ([`ShardWriteEvent`]), and the run as a
//! [`Machine`].

use serde::Deserialize;
use tsify_next::Tsify;

use crate::error::CoreResult;
use crate::runs::machine::Machine;
use crate::runs::migrate::machine::HeadFound;
use crate::runs::session::Session;
use crate::runs::shard_write::machine::{ShardWriteAction, ShardWriteResult, ShardWriteRun};

/// What happened, answering the run's last action.
#[derive(Debug, Clone, Deserialize, Tsify)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ShardWriteEvent {
    /// `probe`: whether the server honours `If-Match` on DELETE (false when not asked, when
    /// the user waived conditions, or when the client cannot send it).
    Probed {
        /// Whether a DELETE can carry `If-Match`.
        conditional_deletes: bool,
    },
    /// `head`: what each HEAD found.
    Heads {
        /// One per key asked.
        heads: Vec<HeadFound>,
    },
    /// `put`: whether every write landed (false: a condition was refused).
    Put {
        /// Whether every write landed.
        landed: bool,
        /// For an action of one write, the new object's ETag, when the store sent one (the
        /// meta's is recorded: the next pull's fast path compares it).
        #[serde(default)]
        #[tsify(optional)]
        etag: Option<String>,
    },
    /// `retire`: how many emptied shards went (or were already gone) and how many stayed.
    Retired {
        /// Deleted or found gone.
        retired: u64,
        /// Kept: another version was there.
        kept: u64,
    },
}

impl Machine for ShardWriteRun {
    type Context = Session;
    type Action = ShardWriteAction;
    type Event = ShardWriteEvent;
    type Reply = ();
    type Output = ShardWriteResult;

    fn poll(&mut self, session: &mut Session) -> CoreResult<ShardWriteAction> {
        ShardWriteRun::poll(self, session)
    }

    fn handle(&mut self, _: &mut Session, event: ShardWriteEvent) -> CoreResult<()> {
        match event {
            ShardWriteEvent::Heads { heads } => self.on_heads(&heads),
            ShardWriteEvent::Probed {
                conditional_deletes,
            } => self.on_probed(conditional_deletes),
            ShardWriteEvent::Put { landed, etag } => self.on_put(landed, etag),
            ShardWriteEvent::Retired { retired, kept } => self.on_retired(retired, kept),
        }
    }

    fn result(&self) -> CoreResult<ShardWriteResult> {
        ShardWriteRun::result(self)
    }
}
