//! Where a download looks after its object answered 404, and when confirmed-missing objects stop
//! the pull. The shim reports the 404 (a fact); what follows is decided here.
//!
//! A 404 prunes the entry from the shared index, so one is not proof: the key is read a second
//! time (a flaky proxy or a replica behind answers the first). Before that, a namespaced pull
//! reads the bare key: the extension's bug #1250 wrote some namespaced objects there while
//! indexing them under the namespace, so the index is right about the file and wrong about where
//! it sits. Only after every read said 404 is the object missing.

use serde::Serialize;
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult};
use crate::runs::pull::run::missing_breaker_open;

/// What a download does after its `not_found`-th 404.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(
    tag = "next",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum AfterNotFound {
    /// Read `key` next.
    Read {
        /// The key to read.
        key: String,
        /// It is the bare key of bug #1250 (a download found there is reported as such).
        at_bare_key: bool,
    },
    /// Every read said 404: the object is missing (the entry is pruned, unless the pull stops
    /// first: [`check_missing_in_a_row`]).
    Missing,
}

/// The next read of the object of `rel` at `remote_key` after its `not_found`-th 404 (1 after
/// the first read); `namespaced`: the run is bound to a namespace, so the bare key `rel` is
/// another place it can be.
pub fn after_not_found(
    remote_key: &str,
    rel: &str,
    namespaced: bool,
    not_found: u32,
) -> AfterNotFound {
    let read = |key: &str, at_bare_key| AfterNotFound::Read {
        key: key.to_string(),
        at_bare_key,
    };
    // A bare key that is the namespaced key (no namespace) is no second place.
    let bare = namespaced && rel != remote_key;
    match (not_found, bare) {
        (1, true) => read(rel, true),
        (1, false) | (2, true) => read(remote_key, false),
        _ => AfterNotFound::Missing,
    }
}

/// `Err(objects-missing)` when `missing_in_a_row` confirmed-missing objects (no download between
/// them) stop the pull: past `limit` (default
/// [`MISSING_IN_A_ROW_LIMIT`](crate::runs::pull::run::MISSING_IN_A_ROW_LIMIT); 0 never stops).
pub fn check_missing_in_a_row(missing_in_a_row: u64, limit: Option<u64>) -> CoreResult<()> {
    if missing_breaker_open(missing_in_a_row, limit) {
        return Err(CoreError::ObjectsMissing {
            in_a_row: missing_in_a_row - 1,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(key: &str, at_bare_key: bool) -> AfterNotFound {
        AfterNotFound::Read {
            key: key.into(),
            at_bare_key,
        }
    }

    #[test]
    fn a_namespaced_download_tries_the_bare_key_then_reads_again() {
        let (key, rel) = ("ns/data/x", "data/x");
        assert_eq!(after_not_found(key, rel, true, 1), read(rel, true));
        assert_eq!(after_not_found(key, rel, true, 2), read(key, false));
        assert_eq!(after_not_found(key, rel, true, 3), AfterNotFound::Missing);
    }

    #[test]
    fn a_solo_download_reads_again_once() {
        assert_eq!(after_not_found("x", "x", false, 1), read("x", false));
        assert_eq!(after_not_found("x", "x", false, 2), AfterNotFound::Missing);
        assert_eq!(after_not_found("x", "x", true, 2), AfterNotFound::Missing);
        assert_eq!(after_not_found("x", "x", false, 0), AfterNotFound::Missing);
        assert_eq!(
            after_not_found("x", "x", false, u32::MAX),
            AfterNotFound::Missing
        );
    }

    #[test]
    fn the_pull_stops_past_the_limit_with_a_count_of_the_missing() {
        assert!(check_missing_in_a_row(100, None).is_ok());
        let error = check_missing_in_a_row(101, None).unwrap_err();
        assert_eq!(error.code(), "objects-missing");
        assert!(error.to_string().starts_with("100 objects the index names"));
        assert!(check_missing_in_a_row(u64::MAX, Some(0)).is_ok());
    }
}
