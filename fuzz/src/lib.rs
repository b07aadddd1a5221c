//! Helpers shared by the fuzz targets.
//!
//! Most targets take several inputs (an index, a listing, some paths, a few options). They are
//! cut out of the fuzzer's bytes with two rules: options and numbers come first, in a header
//! of fixed size; after it, fields are separated by the byte `0xFF`, which never occurs in
//! UTF-8, so a field can hold any text (NUL and control characters included) and seeds are easy
//! to write by hand (see `fuzz/seeds.py`). Text fields are read lossily, so invalid UTF-8 still
//! reaches the code as replacement characters.

use std::borrow::Cow;

/// The field separator of multi-part inputs.
pub const SEP: u8 = 0xFF;

/// Splits `data` into fields on [`SEP`].
pub fn fields(data: &[u8]) -> Vec<&[u8]> {
    data.split(|b| *b == SEP).collect()
}

/// Splits off a fixed-size header (option bytes, numbers) that may hold any byte, 0xFF
/// included; the rest is split into [`fields`]. A short input gives a short header.
pub fn header(data: &[u8], len: usize) -> (&[u8], Vec<&[u8]>) {
    let (head, rest) = data.split_at(len.min(data.len()));
    (head, fields(rest))
}

/// A field as text (invalid UTF-8 becomes U+FFFD).
pub fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The byte at `i`, or 0.
pub fn byte(bytes: &[u8], i: usize) -> u8 {
    bytes.get(i).copied().unwrap_or(0)
}

/// A little-endian integer from up to 8 bytes starting at `i` (missing bytes are 0).
pub fn u64_at(bytes: &[u8], i: usize) -> u64 {
    let mut out = [0u8; 8];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = byte(bytes, i + k);
    }
    u64::from_le_bytes(out)
}

/// The namespace a target binds to, chosen by a selector byte: solo most often, a plain name,
/// and a name that is a prefix of a data tree's name (`dat` against `data/...`) to catch
/// prefix-matching mistakes.
pub fn namespace(selector: u8) -> Option<&'static str> {
    match selector % 4 {
        0 | 1 => None,
        2 => Some("ns"),
        _ => Some("dat"),
    }
}

/// True when `path` has a `..` (or `.`, or empty) segment, starts with `/`, or has a
/// backslash: anything that, joined under a folder, could leave it.
pub fn escapes(path: &str) -> bool {
    path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|s| s == ".." || s == "." || s.is_empty())
}

/// Asserts `path` is a safe relative path (see [`escapes`]), naming `what` on failure.
pub fn assert_contained(what: &str, path: &str) {
    assert!(!escapes(path), "{what} {path:?} could leave its folder");
}

/// The local listing buffer of a planner target. A field ending with the buffer's `s3l2` trailer
/// is used as is (the decoder sees raw, possibly hostile bytes); anything else is read as text
/// records `path \0 size \0 mtimeMs \0` (an empty mtime: unknown) and encoded by
/// `encode_local`, so the fuzzer reaches the planners with walks instead of spending its time on
/// the frame (and the corpus, written when the walk crossed as that text, keeps its worth).
/// Returns `None` when the records do not decode.
pub fn local_listing(field: &[u8]) -> Option<Vec<u8>> {
    if field.ends_with(b"s3l2") {
        return Some(field.to_vec());
    }
    let text = std::str::from_utf8(field).ok()?;
    let body = text.strip_suffix('\0').unwrap_or(text);
    let mut files = Vec::new();
    if !body.is_empty() {
        let parts: Vec<&str> = body.split('\0').collect();
        for record in parts.chunks(3) {
            // A short last record does not decode, as the text decoder refused it.
            let [path, size, mtime] = record else {
                return None;
            };
            let size: u64 = size.parse().ok()?;
            let mtime = if mtime.is_empty() {
                None
            } else {
                Some(mtime.parse::<i64>().ok()?)
            };
            files.push((*path, size, mtime));
        }
    }
    Some(s3sync_core::wire::listing::encode_local(files))
}

/// The index bytes of a planner target. A field starting with `{` is used as is (the parser sees
/// raw, possibly hostile JSON); anything else is read as records `rel \0 size \0 mtimeMs \0
/// sha256 \0` and turned into a well-formed v1 index, so the fuzzer reaches the planners with
/// interesting entries instead of spending its time on JSON syntax. Returns `None` when the
/// records do not decode.
pub fn index_bytes(field: &[u8]) -> Option<Vec<u8>> {
    if field.first() == Some(&b'{') {
        return Some(field.to_vec());
    }
    let text = std::str::from_utf8(field).ok()?;
    let mut entries = serde_json::Map::new();
    let body = text.strip_suffix('\0').unwrap_or(text);
    if !body.is_empty() {
        let parts: Vec<&str> = body.split('\0').collect();
        for record in parts.chunks(4) {
            let rel = record[0];
            let size: u64 = record.get(1)?.parse().ok()?;
            let mut entry = serde_json::json!({
                "key": rel,
                "size": size,
                "lastModified": "2026-08-01T12:00:00.000Z",
            });
            if let Some(mtime) = record.get(2).filter(|m| !m.is_empty()) {
                let mtime: i64 = mtime.parse().ok()?;
                entry["localMtime"] = s3sync_core::model::time::format_iso_millis(mtime).into();
            }
            if let Some(sha) = record.get(3).filter(|s| !s.is_empty()) {
                entry["sha256"] = (*sha).into();
            }
            entries.insert(rel.to_string(), entry);
        }
    }
    serde_json::to_vec(&serde_json::json!({"version": 1, "entries": entries})).ok()
}
