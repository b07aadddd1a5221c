//! How one local file compares with its index entry and base entry (size, then mtime, then
//! sha256, as the extension compares): the step of the push diff that decides whether a file
//! goes up, is unchanged, needs a hash, or conflicts.

use crate::index::{same_version, stat_matches, IndexEntry};
use crate::model::time::parse_iso_millis;

use super::plan::UploadReason;

/// What the comparison of one local file with its entry concluded.
pub(super) enum Compared {
    /// Changed here and remotely since the base: neither side is overwritten.
    Conflict,
    Unchanged,
    Upload(UploadReason),
    NeedsHash,
    HashMatched,
}

/// Compares one local file with the remote entry and with the base (what this cache last
/// synced, from the local index).
///
/// - Unchanged since the base (same size and the mtime recorded when it last matched):
///   nothing of ours to upload, whatever the remote holds now; a newer remote version is the
///   pull's to bring, never to be overwritten by a stale copy. Only a file marked dirty since
///   (`dirty`) is hashed against the base's SHA-256: a same-size rewrite within one mtime tick
///   is invisible to stat on coarse file systems.
/// - Otherwise, against the remote entry: a size change uploads; the remote's recorded mtime
///   is trusted only where no SHA-256 is recorded (it may be another machine's mtime), else the
///   file is hashed (the extension's rule since its #1307).
pub(super) fn compare(
    entry: Option<&IndexEntry>,
    has_base: bool,
    base: Option<&IndexEntry>,
    size: u64,
    mtime: Option<i64>,
    hash: Option<&String>,
    dirty: bool,
) -> Compared {
    if let Some(base) = base.filter(|b| stat_matches(b, size, mtime)) {
        match (&base.sha256, dirty) {
            (_, false) => return Compared::Unchanged,
            (Some(expected), true) => {
                return match hash {
                    None => Compared::NeedsHash,
                    Some(actual) if expected.eq_ignore_ascii_case(actual) => Compared::HashMatched,
                    Some(_) => Compared::Upload(UploadReason::ContentChanged),
                }
            }
            // Marked dirty and nothing recorded to hash against: judge it by the remote entry.
            (None, true) => {}
        }
    }
    let Some(entry) = entry else {
        return Compared::Upload(UploadReason::New);
    };
    // Never synced here (the base has no entry), yet the remote holds it: unless the bytes
    // are the same, another cache made it too, and ours must not overwrite theirs.
    if has_base && base.is_none() {
        return match (&entry.sha256, hash) {
            (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                Compared::HashMatched
            }
            (Some(_), None) if entry.size == size => Compared::NeedsHash,
            (None, _) if entry.size == size => Compared::Unchanged,
            _ => Compared::Conflict,
        };
    }
    // Changed here since the base, and the remote moved on from it too: a conflict, unless
    // both sides hold the same bytes (then the remote entry just needs our mtime).
    if base.is_some_and(|b| !same_version(b, entry) && !stat_matches(b, size, mtime)) {
        return match (&entry.sha256, hash) {
            (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                Compared::HashMatched
            }
            (Some(_), None) if entry.size == size => Compared::NeedsHash,
            _ => Compared::Conflict,
        };
    }
    if entry.size != size {
        return Compared::Upload(UploadReason::SizeChanged);
    }
    // The remote still holds the base's version, and this cache's own record of the file it
    // left (the base's `localMtime`) no longer matches its stat: the file was written here since.
    // That is evidence of a local change whatever the remote entry recorded; an entry rebuilt
    // from a listing records neither a hash nor an mtime, and trusting its silence kept a
    // same-size edit (swamp's one-byte `latest` markers) from ever being pushed.
    if let Some(b) = base.filter(|b| b.local_mtime.is_some() && same_version(b, entry)) {
        if !stat_matches(b, size, mtime) {
            return match (b.sha256.as_ref().or(entry.sha256.as_ref()), hash) {
                (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
                    Compared::HashMatched
                }
                (Some(_), Some(_)) => Compared::Upload(UploadReason::ContentChanged),
                (Some(_), None) => Compared::NeedsHash,
                // Nothing recorded to hash against: the bytes may be the same, but re-sending
                // them costs one upload where missing an edit loses it.
                (None, _) => Compared::Upload(UploadReason::MtimeChanged),
            };
        }
    }
    let recorded = entry.local_mtime.as_deref().and_then(parse_iso_millis);
    if recorded.is_some() && recorded == mtime && entry.sha256.is_none() {
        // Same size and the recorded mtime, nothing to hash against: unchanged (the rclone
        // default).
        return Compared::Unchanged;
    }
    match (&entry.sha256, hash) {
        (Some(expected), Some(actual)) if expected.eq_ignore_ascii_case(actual) => {
            Compared::HashMatched
        }
        (Some(_), Some(_)) => Compared::Upload(UploadReason::ContentChanged),
        (Some(_), None) => Compared::NeedsHash,
        // Nothing recorded to compare against: the extension leaves such a file alone.
        (None, _) if recorded.is_none() => Compared::Unchanged,
        (None, _) => Compared::Upload(UploadReason::MtimeChanged),
    }
}
