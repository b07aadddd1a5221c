//! Compact listings that cross the WASM boundary as one buffer.
//!
//! A cache walk of 10^5–10^6 files would cost seconds as 10^6 JS objects through
//! `serde-wasm-bindgen`; as one UTF-8 buffer it costs one copy. Records are fields separated by
//! NUL, because NUL is the one byte no file name or S3 key used here may contain (the path rules
//! refuse control characters, so a NUL inside a name cannot be smuggled through either).
//!
//! - Local listing: `path \0 size \0 mtimeMs \0` per file (`mtimeMs` may be empty: unknown).
//! - Remote listing page: `key \0 size \0 etag \0 lastModified \0` per object (`etag` and
//!   `lastModified` may be empty).

use crate::error::{CoreError, CoreResult};
use crate::index::MAX_SAFE_INTEGER;
use crate::swar;

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

/// Decodes a local listing buffer.
///
/// Records are read as the fields are split, in one pass: a cache walk of 10^6 files is a
/// 60 MB buffer, and counting its separators first was a pass of its own (about 50 ms through
/// WASM). The count is taken only when something is wrong, so a buffer fails as [`records`]
/// would fail it: a field count that is no multiple of three before any field's fault.
pub fn decode_local(buffer: &[u8]) -> CoreResult<Vec<LocalFile<'_>>> {
    const WHAT: &str = "local listing";
    let Some(body) = listing_body(buffer, WHAT)? else {
        return Ok(Vec::new());
    };
    let mut fields = nul_fields(body);
    let mut files = Vec::new();
    while let Some(path) = fields.next() {
        let (Some(size), Some(mtime)) = (fields.next(), fields.next()) else {
            return Err(check_field_count::<3>(body, WHAT)
                .err()
                .unwrap_or_else(|| CoreError::input(format!("{WHAT} ends inside a record"))));
        };
        match local_file(path, size, mtime) {
            Ok(file) => files.push(file),
            Err(fault) => return Err(check_field_count::<3>(body, WHAT).err().unwrap_or(fault)),
        }
    }
    Ok(files)
}

/// One record of a local listing: its mtime judged before its size.
fn local_file<'a>(path: &'a str, size: &str, mtime: &str) -> CoreResult<LocalFile<'a>> {
    let mtime_ms =
        if mtime.is_empty() {
            None
        } else {
            Some(mtime.parse::<i64>().map_err(|_| {
                CoreError::input(format!("local listing: mtime {mtime:?} of {path:?}"))
            })?)
        };
    Ok(LocalFile {
        path,
        size: parse_size(size, "local listing", path)?,
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

/// Encodes a local listing (used by tests and benchmarks on the Rust side).
pub fn encode_local<'a>(files: impl IntoIterator<Item = (&'a str, u64, Option<i64>)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, size, mtime) in files {
        out.extend_from_slice(path.as_bytes());
        out.push(0);
        out.extend_from_slice(size.to_string().as_bytes());
        out.push(0);
        if let Some(m) = mtime {
            out.extend_from_slice(m.to_string().as_bytes());
        }
        out.push(0);
    }
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
