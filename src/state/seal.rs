//! The stat seal: how a push that has nothing to do sends nothing.
//!
//! Swamp core pushes after every command, in a new process. When nothing changed, a push used to
//! read the remote index (two requests) and walk the cache to learn so. A push that ends with
//! nothing left to send (everything uploaded, nothing failed, withheld or missing here; files
//! behind the bucket or never pulled do not count, see [`crate::runs::push::run`]) now records
//! a seal in the sidecar: a digest of every payload file's path, size, mtime, change time and
//! inode as its walk saw them, and when that walk began. The next push walks first; when no
//! tombstone or dirty mark waits and the walk's digest is the seal's, nothing can have changed
//! that a push would send, and it ends with no request.
//!
//! The change time and inode are what git's index keeps for the same reason: a rewrite in place
//! or a restored mtime (`touch -r`, `cp -p`, `rsync -t`) cannot keep the change time, and a file
//! replaced by a rename gets a new inode, so any write since the seal changes the digest and
//! takes the normal path. A file changed within its racy window before the seal's walk
//! ([`RACY_FINE_MS`] for a time with a fraction of a second, [`RACY_TRUNCATED_MS`] for a
//! change time cut to its second beside such an mtime, else [`RACY_MS`]) may have been
//! changed again within the same timestamp tick ("racily clean" in git's words): the seal cannot
//! vouch for such a file ([`racy_files`]), so the next push hashes it, with no request, and ends
//! on the seal only when every such file still holds the bytes this cache last synced (the
//! local index's SHA-256); anything else takes the normal path, with those hashes. Swamp core
//! pushes right after each command that wrote files, so its next push always meets the files
//! that command wrote within the window. A walk that could not read every stat, met errors or
//! symlinked folders seals nothing.
//!
//! Derived files ([`crate::model::file_class::FileClass::Derived`], swamp's catalog export) are
//! vouched for by their bytes, not their stats: swamp core rewrites the export and marks it dirty
//! before every push, with the same bytes when nothing changed, so a seal over its stats never
//! held on a namespaced clone (each push read the index). The digest takes only a derived file's
//! path (a removal still breaks the seal), every push ending on the seal hashes them like racy
//! files ([`derived_files`]), and a dirty mark that names only derived files present here does
//! not keep a push from its seal.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::model::file_class::is_derived;
use crate::model::layout::Survey;

/// How close to the seal's walk a file's change may be before the seal is not trusted: above
/// the timestamp granularity of every common file system (FAT's 2 s included).
pub const RACY_MS: i64 = 2_000;

/// The same for a timestamp that shows a fraction of a second, which only a clock keeping
/// sub-second times gives (ext4, XFS, Btrfs, APFS, NTFS: nanoseconds or 100 ns; exFAT: 10 ms;
/// never FAT or HFS+, whose times are whole seconds). Two writes there share a timestamp only
/// within one tick of the kernel's coarse clock (at most 10 ms); a tenth of a second covers that
/// with room. Each timestamp is judged by its own fraction: Deno reports a file's change time
/// in whole seconds even where its mtime has nanoseconds, and a rewrite that put the mtime back
/// then shows only in a change time up to a second later than the one reported.
pub const RACY_FINE_MS: i64 = 100;

/// The window of a whole-second change time reported beside an mtime with a fraction: the file
/// system keeps sub-second times (the mtime shows it), so the change time was only cut to its
/// second on the way (Deno does so) and stands for an instant of that one second, a change
/// within it still one coarse tick from the next write: a second and [`RACY_FINE_MS`]. Swamp
/// core pushes about a second after the command that wrote, which the two-second window of a
/// true whole-second clock made hash every file that command wrote.
pub const RACY_TRUNCATED_MS: i64 = 1_000 + RACY_FINE_MS;

/// The racy window of a timestamp `at_ms` (see [`RACY_FINE_MS`]): a whole-second one may stand
/// for any instant of its second, or of the two seconds FAT rounds to.
pub fn racy_window_ms(at_ms: i64) -> i64 {
    if at_ms.rem_euclid(1_000) != 0 {
        RACY_FINE_MS
    } else {
        RACY_MS
    }
}

/// True when a file whose mtime and change time are `mtime_ms` and `ctime_ms` is too close to a
/// walk begun at `walked_at_ms` (or after it) for that walk's stats to vouch for its bytes:
/// either time within its window before the walk, or after it. A missing time is racy. A
/// whole-second change time beside an mtime with a fraction gets [`RACY_TRUNCATED_MS`]; an
/// mtime that happens to fall on a whole second leaves both at [`RACY_MS`], the safe side.
pub fn is_racy(mtime_ms: Option<i64>, ctime_ms: Option<i64>, walked_at_ms: i64) -> bool {
    let fine_clock = mtime_ms.is_some_and(|at| racy_window_ms(at) == RACY_FINE_MS);
    let window = |at: i64| match racy_window_ms(at) {
        RACY_MS if fine_clock => RACY_TRUNCATED_MS,
        window => window,
    };
    let close = |at: Option<i64>| at.is_none_or(|at| at >= walked_at_ms - window(at));
    close(mtime_ms) || close(ctime_ms)
}

/// The seal a verified push leaves in the sidecar (`s3syncSeal`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct StatSeal {
    /// 128-bit digest (hex) of the payload files' stats.
    pub digest: String,
    /// When the walk behind it began (epoch ms).
    pub walked_at_ms: i64,
}

/// What a walk says for the seal: the digest of its payload files' stats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStamp {
    /// Digest of the payload files' stats.
    pub digest: String,
}

/// The stamp of a surveyed walk, with `changes` holding each walked file's change time and
/// inode (`[ctime0, ino0, ctime1, ino1, …]`, in walk order). `None` when a payload file lacks
/// any of its stats (an in-memory cache, a file system without them): nothing is sealed then.
pub fn stamp(survey: &Survey<'_>, changes: &[f64]) -> Option<WalkStamp> {
    let mut low = DefaultHasher::new();
    let mut high = DefaultHasher::new();
    0x5ea1_u32.hash(&mut high);
    for (rel, file) in survey.payload.iter() {
        if is_derived(rel) {
            // Vouched for by its bytes (see the module's doc): only its presence counts here.
            for hasher in [&mut low, &mut high] {
                rel.hash(hasher);
            }
            continue;
        }
        let ctime = *changes.get(file.slot * 2)?;
        let ino = *changes.get(file.slot * 2 + 1)?;
        let mtime = file.mtime_ms?;
        if !ctime.is_finite() || !ino.is_finite() {
            return None;
        }
        let ctime = ctime as i64;
        for hasher in [&mut low, &mut high] {
            rel.hash(hasher);
            file.size.hash(hasher);
            mtime.hash(hasher);
            ctime.hash(hasher);
            (ino as u64).hash(hasher);
        }
    }
    Some(WalkStamp {
        digest: format!("{:016x}{:016x}", high.finish(), low.finish()),
    })
}

/// A payload file the seal cannot vouch for: its rel and cache path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RacyFile {
    /// The file's rel (its index key).
    pub rel: String,
    /// Its cache path (what the shim hashes).
    pub cache_path: String,
    /// Its size as walked.
    pub size: u64,
}

/// The payload files of a surveyed walk (`changes` as for [`stamp`]) whose mtime or change
/// time is within their racy window ([`racy_window_ms`]) before `seal`'s walk, or after it: a change within the same
/// timestamp tick as the sealing walk's stat would not show in the digest. A file lacking a
/// stat counts as racy. Derived files are left out: [`derived_files`] are hashed every time.
pub fn racy_files(seal: &StatSeal, survey: &Survey<'_>, changes: &[f64]) -> Vec<RacyFile> {
    survey
        .payload
        .iter()
        .filter(|(rel, _)| !is_derived(rel))
        .filter(|(_, file)| {
            let ctime = changes
                .get(file.slot * 2)
                .copied()
                .filter(|c| c.is_finite())
                .map(|c| c as i64);
            is_racy(file.mtime_ms, ctime, seal.walked_at_ms)
        })
        .map(|(rel, file)| RacyFile {
            rel: rel.to_string(),
            cache_path: file.cache_path.to_string(),
            size: file.size,
        })
        .collect()
}

/// The derived files of a walk, which a push ending on the seal hashes whatever their stats say
/// (see the module's doc): in the form of [`racy_files`].
pub fn derived_files(survey: &Survey<'_>) -> Vec<RacyFile> {
    survey
        .payload
        .iter()
        .filter(|(rel, _)| is_derived(rel))
        .map(|(rel, file)| RacyFile {
            rel: rel.to_string(),
            cache_path: file.cache_path.to_string(),
            size: file.size,
        })
        .collect()
}
