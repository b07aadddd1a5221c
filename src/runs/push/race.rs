//! What a push does after losing the race to publish the index: another writer's publish
//! landed between our read and our conditional write. The shim has already re-read the index and
//! re-applied this push's changes over it; this decides whether to try again, and after what
//! pause, or to give up and leave the uploads for the next push to index.
//!
//! The pause grows with each loss and is spread by a jitter the shim draws (a value in [0, 1),
//! so the core stays deterministic and the decision is testable): two writers that keep
//! colliding drift apart instead of retrying in lockstep.

use serde::Serialize;
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};

/// How many times a push publishes before it gives the race up.
pub const PUBLISH_ATTEMPTS: u32 = 10;

/// The longest pause after the first lost race, in milliseconds; after the n-th, n times this.
pub const RACE_PAUSE_MS: f64 = 50.0;

/// What follows a lost publish race.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "step",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RaceStep {
    /// Publish again over the re-read index, after pausing this long.
    Retry {
        /// The pause before the next attempt, in milliseconds.
        pause_ms: u32,
    },
    /// Stop: every attempt lost (`publish-conflict`). The uploads are in the bucket; the next
    /// push indexes them.
    GiveUp {
        /// How many attempts were made.
        attempts: u32,
    },
}

/// Decides what follows losing attempt number `lost_attempt` (1 for the first), given a jitter
/// drawn uniformly from [0, 1).
///
/// # Errors
///
/// `invalid-input` for an attempt number of 0, or a jitter outside [0, 1) (NaN included).
pub fn after_lost_race(lost_attempt: u32, jitter: f64) -> CoreResult<RaceStep> {
    if lost_attempt == 0 {
        return Err(CoreError::input("a lost race is numbered from 1"));
    }
    if !(0.0..1.0).contains(&jitter) {
        return Err(CoreError::input(format!(
            "the race jitter must lie in [0, 1), got {jitter}"
        )));
    }
    if lost_attempt >= PUBLISH_ATTEMPTS {
        return Ok(RaceStep::GiveUp {
            attempts: PUBLISH_ATTEMPTS,
        });
    }
    // Below 50 × 9 = 450 ms at most: the cast cannot overflow or go negative.
    let pause_ms = (jitter * RACE_PAUSE_MS * f64::from(lost_attempt)).floor() as u32;
    Ok(RaceStep::Retry { pause_ms })
}
