//! Compact listings that cross the WASM boundary as one buffer.
//!
//! A cache walk of 10^5–10^6 files would cost seconds as 10^6 JS objects through
//! `serde-wasm-bindgen`; as one buffer it costs one copy.
//!
//! - Local listing (a cache walk), in columns, so the shim writes each column the cheapest way
//!   it can (the paths a few hundred at a time with one `TextEncoder.encodeInto`, the numbers
//!   straight into a `Float64Array`) and nothing is turned into decimal text and back:
//!
//!   | part    | bytes                 | content                                              |
//!   | ------- | --------------------- | ---------------------------------------------------- |
//!   | paths   | `P`                   | each path as UTF-8 followed by a NUL, in file order  |
//!   | numbers | `16 × count`          | per file its size and mtimeMs, little-endian `f64`s; |
//!   |         |                       | an mtime of NaN is unknown                           |
//!   | trailer | 12                    | `P` and `count` as little-endian `u32`s, `s3l2`      |
//!
//!   Before the columns, the walk was written as `path\0size\0mtimeMs\0` text: its numbers'
//!   digits were a third of the shim's cost of a 10^5-file listing. A buffer of that format has
//!   no trailer and is refused as such.
//! - Remote listing page: `key \0 size \0 etag \0 lastModified \0` per object (`etag` and
//!   `lastModified` may be empty). Built a page at a time, from the SDK's objects.
//!
//! NUL separates paths and fields because it is the one byte no file name or S3 key used here
//! may contain (the path rules refuse control characters, so a NUL inside a name cannot be
//! smuggled through either: it would split one path in two, and the path count would not match
//! the trailer's).

use crate::bytes::swar;
use crate::error::{CoreError, CoreResult};
use crate::index::MAX_SAFE_INTEGER;

/// One file found by the cache walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFile<'a> {
    /// Cache-relative path, `/`-separated.
    pub path: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in epoch milliseconds, when the walk could read it.
    pub mtime_ms: Option<i64>,
}

/// One object from a bucket listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteObject<'a> {
    /// Key relative to the bucket prefix.
    pub key: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// The ETag as listed (quotes and all), when the server sent one.
    pub etag: Option<&'a str>,
    /// Last-modified time as an ISO-8601 string, when the server sent one.
    pub last_modified: Option<&'a str>,
}

/// Splits a NUL-separated buffer into records of `WIDTH` fields, borrowing every field. The
/// whole buffer is checked (UTF-8, final separator, field count) before any record is handed
/// out, so a bad buffer fails the same way wherever its fault lies.
fn records<'a, const WIDTH: usize>(
    buffer: &'a [u8],
    what: &str,
) -> CoreResult<impl Iterator<Item = [&'a str; WIDTH]>> {
    let body = listing_body(buffer, what)?;
    if let Some(body) = body {
        check_field_count::<WIDTH>(body, what)?;
    }
    let mut split = body.map(nul_fields);
    Ok(std::iter::from_fn(move || {
        let split = split.as_mut()?;
        let first = split.next()?;
        let mut record = [first; WIDTH];
        for field in record.iter_mut().skip(1) {
            *field = split.next()?;
        }
        Some(record)
    }))
}

/// The fields of a listing body, as `body.split('\0')` gives them, found eight bytes a step
/// (`str::split` went through a generic searcher and, in the WASM build, a `memchr` four bytes a
/// step: ~6 % of a plan at 10^5 files).
fn nul_fields(body: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(body);
    std::iter::from_fn(move || {
        let text = rest?;
        match swar::position(text.as_bytes(), |word| swar::equal_to(word, 0), |b| b == 0) {
            Some(at) => {
                // A NUL is one byte of ASCII, so both sides are whole UTF-8.
                rest = Some(&text[at + 1..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// The fields of a listing buffer without its final separator (`None`: an empty listing), once
/// it is known to be UTF-8 and to end with a separator.
fn listing_body<'a>(buffer: &'a [u8], what: &str) -> CoreResult<Option<&'a str>> {
    let text = std::str::from_utf8(buffer)
        .map_err(|e| CoreError::input(format!("{what} is not utf-8: {e}")))?;
    if text.is_empty() {
        return Ok(None);
    }
    text.strip_suffix('\0')
        .map(Some)
        .ok_or_else(|| CoreError::input(format!("{what} does not end with a nul separator")))
}

/// Refuses a listing body whose field count is not a multiple of `WIDTH`.
fn check_field_count<const WIDTH: usize>(body: &str, what: &str) -> CoreResult<()> {
    let fields = body.bytes().filter(|&b| b == 0).count() + 1;
    if fields.is_multiple_of(WIDTH) {
        Ok(())
    } else {
        Err(CoreError::input(format!(
            "{what} has {fields} fields, not a multiple of {WIDTH}"
        )))
    }
}

fn parse_size(text: &str, what: &str, path: &str) -> CoreResult<u64> {
    match text.parse::<u64>() {
        Ok(size) if size <= MAX_SAFE_INTEGER => Ok(size),
        _ => Err(CoreError::input(format!(
            "{what}: size {text:?} of {path:?} is not an integer in 0..=2^53-1"
        ))),
    }
}

/// The last bytes of a local listing buffer: it ends with them, after `P` and `count`.
const LOCAL_MAGIC: [u8; 4] = *b"s3l2";

/// Bytes of a local listing's trailer: `P`, `count`, [`LOCAL_MAGIC`].
const LOCAL_TRAILER: usize = 12;

/// Bytes of one file's numbers: its size and its mtime, an `f64` each.
const LOCAL_NUMBERS: usize = 16;

/// What a local listing's errors call it.
const LOCAL_LISTING: &str = "local listing";

/// Decodes a local listing buffer (the layout is in the module's docs).
///
/// The frame is checked first (trailer, lengths, UTF-8, final separator), then the records in
/// one pass. When a record is at fault, the paths are counted before it is reported, so a
/// buffer whose path count disagrees with its trailer fails as such wherever its other faults
/// lie (counting them up front was a pass of its own over a 60 MB walk of 10^6 files).
pub fn decode_local(buffer: &[u8]) -> CoreResult<Vec<LocalFile<'_>>> {
    let (paths, numbers, count) = local_columns(buffer)?;
    let mut files = Vec::with_capacity(count);
    let mut names = paths.map(nul_fields);
    let found = || paths.map_or(0, |p| p.bytes().filter(|&b| b == 0).count() + 1);
    let wrong_count = |found: usize| {
        CoreError::input(format!(
            "{LOCAL_LISTING} holds {found} paths, its trailer says {count}"
        ))
    };
    for pair in numbers.chunks_exact(LOCAL_NUMBERS) {
        let Some(path) = names.as_mut().and_then(Iterator::next) else {
            return Err(wrong_count(found()));
        };
        let (size, mtime) = pair.split_at(8);
        match local_file(path, f64_at(size), f64_at(mtime)) {
            Ok(file) => files.push(file),
            Err(fault) => {
                let found = found();
                return Err(if found == count {
                    fault
                } else {
                    wrong_count(found)
                });
            }
        }
    }
    if names.as_mut().and_then(Iterator::next).is_some() {
        return Err(wrong_count(found()));
    }
    Ok(files)
}

/// The columns of a local listing once its frame holds: the paths without their final
/// separator (`None`: no paths), the numbers, and the file count.
fn local_columns(buffer: &[u8]) -> CoreResult<(Option<&str>, &[u8], usize)> {
    let Some(body_len) = buffer.len().checked_sub(LOCAL_TRAILER) else {
        return Err(CoreError::input(format!(
            "{LOCAL_LISTING} is {} bytes, too short for its {LOCAL_TRAILER}-byte trailer",
            buffer.len()
        )));
    };
    let (body, trailer) = buffer.split_at(body_len);
    if trailer[8..] != LOCAL_MAGIC {
        return Err(CoreError::input(format!(
            "{LOCAL_LISTING} does not end with its \"s3l2\" trailer (not a buffer of this format: \
             encode walks with encodeLocalListing)"
        )));
    }
    let u32_at = |at: usize| {
        let mut four = [0u8; 4];
        four.copy_from_slice(&trailer[at..at + 4]);
        u32::from_le_bytes(four) as u64
    };
    let (paths_len, count) = (u32_at(0), u32_at(4));
    // In u64, where neither product nor sum can overflow from two u32s.
    if paths_len + count * LOCAL_NUMBERS as u64 != body_len as u64 {
        return Err(CoreError::input(format!(
            "{LOCAL_LISTING} is {} bytes, its trailer says {paths_len} bytes of paths and {count} files",
            buffer.len()
        )));
    }
    // Both fit: their sum is the body's length.
    let (paths, numbers) = body.split_at(paths_len as usize);
    let paths = std::str::from_utf8(paths)
        .map_err(|e| CoreError::input(format!("{LOCAL_LISTING} paths are not utf-8: {e}")))?;
    let paths = if paths.is_empty() {
        None
    } else {
        Some(paths.strip_suffix('\0').ok_or_else(|| {
            CoreError::input(format!(
                "{LOCAL_LISTING} paths do not end with a nul separator"
            ))
        })?)
    };
    Ok((paths, numbers, count as usize))
}

/// The little-endian `f64` in eight bytes.
fn f64_at(bytes: &[u8]) -> f64 {
    let mut eight = [0u8; 8];
    eight.copy_from_slice(bytes);
    f64::from_le_bytes(eight)
}

/// One record of a local listing: its mtime judged before its size.
fn local_file(path: &str, size: f64, mtime: f64) -> CoreResult<LocalFile<'_>> {
    let safe = MAX_SAFE_INTEGER as f64;
    let mtime_ms = if mtime.is_nan() {
        None
    } else if mtime.fract() == 0.0 && mtime.abs() <= safe {
        // An integer within ±(2^53 - 1): exact as an i64.
        Some(mtime as i64)
    } else {
        return Err(CoreError::input(format!(
            "local listing: mtime {mtime:?} of {path:?} is not an integer in -(2^53-1)..=2^53-1"
        )));
    };
    // `!(size >= 0.0)` also refuses NaN.
    if !(size >= 0.0 && size.fract() == 0.0 && size <= safe) {
        return Err(CoreError::input(format!(
            "local listing: size {size:?} of {path:?} is not an integer in 0..=2^53-1"
        )));
    }
    Ok(LocalFile {
        path,
        // An integer in 0..=2^53-1: exact as a u64.
        size: size as u64,
        mtime_ms,
    })
}

/// Decodes one page of a remote listing. Sizes outside the safe range are not refused here:
/// the rebuild reports such objects as unsafe instead of failing the whole listing.
pub fn decode_remote(buffer: &[u8]) -> CoreResult<Vec<RemoteListed<'_>>> {
    records::<4>(buffer, "remote listing")?
        .map(|r| {
            Ok(RemoteListed {
                key: r[0],
                size: r[1],
                etag: (!r[2].is_empty()).then_some(r[2]),
                last_modified: (!r[3].is_empty()).then_some(r[3]),
            })
        })
        .collect()
}

/// A remote listing record whose size has not been checked yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteListed<'a> {
    /// Key relative to the bucket prefix.
    pub key: &'a str,
    /// Size as listed, unparsed.
    pub size: &'a str,
    /// ETag as listed.
    pub etag: Option<&'a str>,
    /// Last-modified time as listed.
    pub last_modified: Option<&'a str>,
}

impl<'a> RemoteListed<'a> {
    /// Checks the size, giving a [`RemoteObject`].
    pub fn checked(&self) -> CoreResult<RemoteObject<'a>> {
        Ok(RemoteObject {
            key: self.key,
            size: parse_size(self.size, "remote listing", self.key)?,
            etag: self.etag,
            last_modified: self.last_modified,
        })
    }
}

/// Encodes a local listing (the shim's `encodeLocalListing` writes the same bytes; used by
/// tests and benchmarks on the Rust side). A size or mtime beyond 2^53 - 1 is written as the
/// nearest `f64`, which [`decode_local`] refuses.
///
/// # Panics
///
/// Never through WASM (only tests and benchmarks call it): at 2^32 bytes of paths or files, which
/// the trailer cannot state.
pub fn encode_local<'a>(files: impl IntoIterator<Item = (&'a str, u64, Option<i64>)>) -> Vec<u8> {
    let mut paths = Vec::new();
    let mut numbers = Vec::new();
    let mut count = 0u32;
    for (path, size, mtime) in files {
        paths.extend_from_slice(path.as_bytes());
        paths.push(0);
        numbers.extend_from_slice(&(size as f64).to_le_bytes());
        numbers.extend_from_slice(&mtime.map_or(f64::NAN, |m| m as f64).to_le_bytes());
        count = count.checked_add(1).expect("fewer than 2^32 files");
    }
    let paths_len = u32::try_from(paths.len()).expect("fewer than 2^32 bytes of paths");
    let mut out = paths;
    out.extend_from_slice(&numbers);
    out.extend_from_slice(&paths_len.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&LOCAL_MAGIC);
    out
}

/// Encodes a remote listing page (used by tests and benchmarks on the Rust side).
pub fn encode_remote<'a>(
    objects: impl IntoIterator<Item = (&'a str, u64, Option<&'a str>, Option<&'a str>)>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, size, etag, modified) in objects {
        push_record(
            &mut out,
            [
                key,
                &size.to_string(),
                etag.unwrap_or(""),
                modified.unwrap_or(""),
            ],
        );
    }
    out
}

/// Encodes remote listing records whose fields are already text (`key`, size as listed, ETag,
/// last-modified; empty for none): a listing re-encoded after HEADs filled in what it lacked
/// keeps every other field byte for byte.
pub fn encode_remote_fields<'a>(records: impl IntoIterator<Item = [&'a str; 4]>) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        push_record(&mut out, record);
    }
    out
}

fn push_record(out: &mut Vec<u8>, fields: [&str; 4]) {
    for field in fields {
        out.extend_from_slice(field.as_bytes());
        out.push(0);
    }
}
