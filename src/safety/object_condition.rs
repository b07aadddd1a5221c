//! What an object write or delete is conditional on, and the verdict on what the bucket holds.
//!
//! A push replaces or deletes an object only when the bucket still holds the version the push
//! decided from (the entry of the index it read), and creates a key only where none exists. The
//! shim reports facts (a HEAD's answer, a lost precondition); this module decides:
//!
//! - **Create** (`expected` is `None`): `If-None-Match: *`. The write that loses is a conflict,
//!   unless the object is this push's own bytes (an earlier attempt whose answer was lost).
//! - **Replace or delete of a version whose entry records its ETag** ([`ETAG_FIELD`], written by
//!   this core with each upload): `If-Match` that ETag, with no HEAD first; the server holds the
//!   version or refuses, and a refusal takes the path below.
//! - **Replace or delete** (`expected` names a version): a HEAD just before the request, judged
//!   here against that version; the request then goes `If-Match` the ETag the HEAD saw, so
//!   nothing can slip in after the HEAD where the server honours `If-Match`. The identity check
//!   is as strong as what the object carries: the SHA-256 the shim writes into each object's
//!   metadata when it uploads (read back by a HEAD) when both sides have one, else the size alone
//!   (objects written by the extension, or before this change). A same-size replacement by such a writer
//!   between this push's index read and its HEAD is the window that remains.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::index::IndexEntry;

/// The entry field (ours; readers ignore unknown entry fields and writers keep them) holding
/// the ETag the server gave the write of the entry's version.
pub const ETAG_FIELD: &str = "s3syncEtag";

/// The version of an object a replacement or delete was decided against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedVersion {
    /// Size in bytes the index recorded.
    pub size: u64,
    /// SHA-256 the index recorded, if any.
    pub sha256: Option<String>,
    /// The ETag recorded with that version ([`ETAG_FIELD`]), if any: a write or delete may go
    /// `If-Match` it with no HEAD first. The server compares it with what it holds, so a stale
    /// one (another writer replaced the object and kept the field) only costs the HEAD after
    /// the refusal; it never lets a write through.
    #[serde(default)]
    pub etag: Option<String>,
}

impl ExpectedVersion {
    /// The version an index entry describes.
    pub fn of(entry: &IndexEntry) -> ExpectedVersion {
        ExpectedVersion {
            size: entry.size,
            sha256: entry.sha256.clone(),
            etag: recorded_etag(entry),
        }
    }
}

/// The ETag `entry` records for its version, when it is one a condition can rest on (not
/// empty, not weak).
pub fn recorded_etag(entry: &IndexEntry) -> Option<String> {
    let etag = entry.extra.as_ref()?.get(ETAG_FIELD)?.as_str()?;
    (!etag.is_empty() && !etag.starts_with("W/") && etag.len() <= 200).then(|| etag.to_string())
}

/// Records `etag` as the ETag of `entry`'s version, or removes a recorded one (`None`).
pub fn record_etag(entry: &mut IndexEntry, etag: Option<&str>) {
    match etag.filter(|e| !e.is_empty()) {
        Some(etag) => {
            entry
                .extra
                .get_or_insert_with(Default::default)
                .insert(ETAG_FIELD.to_string(), etag.into());
        }
        None => {
            if let Some(extra) = entry.extra.as_mut() {
                extra.remove(ETAG_FIELD);
                if extra.is_empty() {
                    entry.extra = None;
                }
            }
        }
    }
}

/// What a HEAD of the object answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectFacts {
    /// The object exists.
    pub exists: bool,
    /// Its size.
    #[tsify(optional)]
    pub size: Option<u64>,
    /// Its ETag, as the server sent it.
    #[tsify(optional)]
    pub etag: Option<String>,
    /// The SHA-256 its metadata records (written by the shim's uploads), if any.
    #[tsify(optional)]
    pub sha256: Option<String>,
}

/// The bytes a write would send.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct OurBytes {
    /// Their SHA-256.
    pub sha256: String,
    /// Their size.
    pub size: u64,
}

/// The verdict on a write or delete, given what the bucket holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(
    tag = "verdict",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ObjectVerdict {
    /// Go ahead, `If-Match` this ETag (`None`: the server gave none; the request then rests on
    /// the HEAD's comparison alone).
    Proceed {
        /// The ETag the request must match.
        if_match: Option<String>,
    },
    /// Go ahead create-only (`If-None-Match: *`): the object is gone.
    Create,
    /// The bucket holds another writer's version: leave it, report a conflict.
    Conflict,
    /// Nothing to do: the object is already gone (a delete) or already holds these bytes.
    Settled,
    /// The HEAD cannot tell (no recorded hash, the size of ours): read the object, hash it, and
    /// ask again with its SHA-256 as the HEAD's.
    ReadContent,
}

/// Judges a replacement by `ours` (`None`: a delete) of an object expected to be `expected`,
/// from a HEAD.
///
/// - An object that is gone: a delete is settled (nothing to remove); a replacement goes
///   create-only. An edit outlives a delete of the version it edits (nothing is lost either
///   way: the delete's evidence was that version, and the edit is its descendant), while a
///   concurrent create of the key still wins the condition and makes this a conflict.
/// - An object that already holds our bytes (its recorded SHA-256 is ours): settled, nothing to
///   send (a killed push's replacement landed before it could index it).
/// - The version expected (its recorded SHA-256 when both sides have one, else its size):
///   proceed, `If-Match` the ETag the HEAD saw.
/// - Otherwise a conflict, unless the object records no hash and has our size: then its
///   content decides ([`ObjectVerdict::ReadContent`]; asked again with the hash as the HEAD's).
pub fn judge_existing(
    expected: &ExpectedVersion,
    ours: Option<&OurBytes>,
    head: &ObjectFacts,
) -> ObjectVerdict {
    if !head.exists {
        return match ours {
            None => ObjectVerdict::Settled,
            Some(_) => ObjectVerdict::Create,
        };
    }
    if let (Some(ours), Some(have)) = (ours, &head.sha256) {
        if ours.sha256.eq_ignore_ascii_case(have) {
            return ObjectVerdict::Settled;
        }
    }
    let same = match (&expected.sha256, &head.sha256) {
        (Some(want), Some(have)) => want.eq_ignore_ascii_case(have),
        _ => head.size == Some(expected.size),
    };
    match ours {
        _ if same => ObjectVerdict::Proceed {
            if_match: head.etag.clone(),
        },
        Some(ours) if head.sha256.is_none() && head.size == Some(ours.size) => {
            ObjectVerdict::ReadContent
        }
        _ => ObjectVerdict::Conflict,
    }
}

/// Judges a write whose precondition failed (or a create that found the key taken), from a
/// HEAD taken right after: settled when the object holds exactly our bytes (`ours_sha256`,
/// `ours_size`: an earlier attempt of this very write landed and only its answer was lost, or a
/// killed push uploaded it before it could index it), else a conflict. Where the object records
/// no hash (the extension's client writes no metadata) and has our size, its content decides
/// ([`ObjectVerdict::ReadContent`]). A conditional request is never simply sent again: the
/// precondition failed because the bucket moved.
pub fn judge_lost_condition(
    ours_sha256: &str,
    ours_size: u64,
    head: &ObjectFacts,
) -> ObjectVerdict {
    if !head.exists {
        return ObjectVerdict::Conflict;
    }
    match &head.sha256 {
        Some(have) if have.eq_ignore_ascii_case(ours_sha256) => ObjectVerdict::Settled,
        None if head.size == Some(ours_size) => ObjectVerdict::ReadContent,
        _ => ObjectVerdict::Conflict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA_A: &str = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7";
    const SHA_B: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    fn head(size: u64, sha: Option<&str>) -> ObjectFacts {
        ObjectFacts {
            exists: true,
            size: Some(size),
            etag: Some("\"e1\"".into()),
            sha256: sha.map(str::to_string),
        }
    }

    fn expected(size: u64, sha: Option<&str>) -> ExpectedVersion {
        ExpectedVersion {
            size,
            sha256: sha.map(str::to_string),
            etag: None,
        }
    }

    fn ours(size: u64, sha: &str) -> OurBytes {
        OurBytes {
            sha256: sha.to_string(),
            size,
        }
    }

    #[test]
    fn the_version_read_proceeds_if_match_its_etag() {
        let proceed = ObjectVerdict::Proceed {
            if_match: Some("\"e1\"".into()),
        };
        let mine = ours(7, SHA_B);
        let judge = |e: &ExpectedVersion, h: &ObjectFacts| judge_existing(e, Some(&mine), h);
        assert_eq!(
            judge(&expected(5, Some(SHA_A)), &head(5, Some(SHA_A))),
            proceed
        );
        // Without a hash on one side, the size decides.
        assert_eq!(judge(&expected(5, None), &head(5, Some(SHA_A))), proceed);
        assert_eq!(judge(&expected(5, Some(SHA_A)), &head(5, None)), proceed);
        // A delete alike.
        assert_eq!(
            judge_existing(&expected(5, None), None, &head(5, None)),
            proceed
        );
    }

    #[test]
    fn another_version_is_a_conflict() {
        let conflict = ObjectVerdict::Conflict;
        let mine = ours(7, SHA_A);
        // Same size, other bytes: the hashes tell.
        let other = ExpectedVersion {
            size: 5,
            sha256: Some("0".repeat(64)),
            etag: None,
        };
        assert_eq!(
            judge_existing(&other, Some(&mine), &head(5, Some(SHA_B))),
            conflict
        );
        assert_eq!(
            judge_existing(&other, None, &head(5, Some(SHA_B))),
            conflict
        );
        assert_eq!(
            judge_existing(&expected(5, None), Some(&mine), &head(6, None)),
            conflict
        );
    }

    #[test]
    fn our_own_bytes_settle_and_an_unhashed_object_of_our_size_asks_for_content() {
        let mine = ours(7, SHA_A);
        assert_eq!(
            judge_existing(&expected(5, None), Some(&mine), &head(7, Some(SHA_A))),
            ObjectVerdict::Settled
        );
        assert_eq!(
            judge_existing(&expected(5, None), Some(&mine), &head(7, None)),
            ObjectVerdict::ReadContent
        );
        // A delete never reads content: a version it did not expect stays.
        assert_eq!(
            judge_existing(&expected(5, None), None, &head(7, None)),
            ObjectVerdict::Conflict
        );
    }

    #[test]
    fn a_vanished_object_settles_a_delete_and_is_created_by_a_replacement() {
        let gone = ObjectFacts::default();
        assert_eq!(
            judge_existing(&expected(5, None), None, &gone),
            ObjectVerdict::Settled
        );
        assert_eq!(
            judge_existing(&expected(5, None), Some(&ours(7, SHA_A)), &gone),
            ObjectVerdict::Create
        );
    }

    #[test]
    fn a_lost_condition_settles_only_over_our_own_bytes() {
        let judge = |h: &ObjectFacts| judge_lost_condition(SHA_A, 5, h);
        assert_eq!(judge(&head(5, Some(SHA_A))), ObjectVerdict::Settled);
        assert_eq!(judge(&head(5, Some(SHA_B))), ObjectVerdict::Conflict);
        // No recorded hash: our size asks for the content, another size is someone else's.
        assert_eq!(judge(&head(5, None)), ObjectVerdict::ReadContent);
        assert_eq!(judge(&head(6, None)), ObjectVerdict::Conflict);
        assert_eq!(judge(&ObjectFacts::default()), ObjectVerdict::Conflict);
    }
}
