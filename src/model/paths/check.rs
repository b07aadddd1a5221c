//! Whether a path is a safe relative path, segment by segment: the checks behind every
//! [`super::RelPath`] and cache path, with a word-at-a-time fast path for the common case.

use crate::bytes::swar;
use crate::error::PathRefusal;

use super::{MAX_KEY_BYTES, MAX_SEGMENT_BYTES};

/// Checks every rule of a relative path; shared by [`RelPath`] and [`Namespace`].
///
/// The rules are checked in a fixed order (whole-path rules first, then each segment in turn),
/// so a path breaking several always reports the same one. This runs for every index key and
/// every walked file of a plan (10^6 of each), so the common case is one quick pass that steps
/// eight bytes at a time ([`swar`]) to the next byte [`BYTE_CLASS`] does not call plain: `/` (a
/// segment ends: its rules are checked) or suspect (a backslash, a control character, or the
/// `0xC2` that may start a C1 control). A suspect byte or a segment fault sends the path to the
/// full check, which reports the rule the fixed order names first; most paths never go there.
pub(super) fn check_relative(path: &str) -> Result<(), PathRefusal> {
    if path.is_empty() {
        return Err(PathRefusal::Empty);
    }
    if path.len() > MAX_KEY_BYTES {
        return Err(PathRefusal::TooLong);
    }
    let bytes = path.as_bytes();
    if bytes[0] == b'/' {
        return Err(PathRefusal::Absolute);
    }
    let mut start = 0;
    while let Some(found) = swar::position(&bytes[start..], marks_slash_or_suspect, |b| {
        BYTE_CLASS[usize::from(b)] != PLAIN
    }) {
        let end = start + found;
        if bytes[end] != b'/' || check_segment(&path[start..end]).is_err() {
            return check_relative_in_full(path);
        }
        start = end + 1;
    }
    if start == bytes.len() {
        return Err(PathRefusal::TrailingSlash);
    }
    check_segment(&path[start..])
}

/// Marks the bytes of a word [`BYTE_CLASS`] does not call plain: the quick pass steps eight bytes
/// at a time to the next separator or suspect byte.
pub(super) fn marks_slash_or_suspect(word: u64) -> u64 {
    swar::below(word, 0x20)
        | swar::equal_to(word, b'/')
        | swar::equal_to(word, b'\\')
        | swar::equal_to(word, 0x7f)
        | swar::equal_to(word, 0xc2)
}

/// [`BYTE_CLASS`]: a byte no whole-path rule is about.
pub(super) const PLAIN: u8 = 0;

/// [`BYTE_CLASS`]: the separator.
pub(super) const SLASH: u8 = 1;

/// [`BYTE_CLASS`]: a backslash, a C0 control or DEL, or `0xC2` (which starts every C1 control,
/// and other characters too: the full check tells them apart).
pub(super) const SUSPECT: u8 = 2;

/// Each byte's class for [`check_relative`]'s quick pass.
pub(super) const BYTE_CLASS: [u8; 256] = {
    let mut table = [PLAIN; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = SUSPECT;
        b += 1;
    }
    table[0x7f] = SUSPECT;
    table[b'\\' as usize] = SUSPECT;
    table[0xc2] = SUSPECT;
    table[b'/' as usize] = SLASH;
    table
};

/// [`check_relative`] for a path that may break a whole-path character rule (its first checks
/// already passed).
pub(super) fn check_relative_in_full(path: &str) -> Result<(), PathRefusal> {
    let bytes = path.as_bytes();
    let mut backslash = false;
    let mut control = false;
    let mut segment_fault = None;
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'/' {
            if segment_fault.is_none() {
                segment_fault = check_segment(&path[start..i]).err();
            }
            start = i + 1;
        } else if b < 0x20 || b == 0x7f {
            control = true;
        } else if b == b'\\' {
            backslash = true;
        } else if b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            // `U+0080`–`U+009F` (C1), which `char::is_control` also counts; in valid UTF-8
            // `0xC2` only ever starts a character, so the pair is exactly one of them.
            control = true;
        }
    }
    if backslash {
        return Err(PathRefusal::Backslash);
    }
    if control {
        return Err(PathRefusal::ControlCharacter);
    }
    if bytes[bytes.len() - 1] == b'/' {
        return Err(PathRefusal::TrailingSlash);
    }
    if let Some(fault) = segment_fault {
        return Err(fault);
    }
    check_segment(&path[start..])
}

pub(super) fn check_segment(segment: &str) -> Result<(), PathRefusal> {
    if segment.is_empty() {
        return Err(PathRefusal::EmptySegment);
    }
    if segment == "." || segment == ".." {
        return Err(PathRefusal::DotSegment);
    }
    if segment.len() > MAX_SEGMENT_BYTES {
        return Err(PathRefusal::SegmentTooLong);
    }
    let bytes = segment.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(PathRefusal::DriveLetter);
    }
    if is_windows_device_name(segment) {
        return Err(PathRefusal::ReservedName);
    }
    Ok(())
}

/// Windows refuses these names with or without an extension (`CON`, `con.txt`, `LPT1.log`).
pub(super) fn is_windows_device_name(segment: &str) -> bool {
    // Every device name starts with one of these letters; most segments stop here.
    if !segment
        .as_bytes()
        .first()
        .is_some_and(|b| matches!(b.to_ascii_uppercase(), b'C' | b'P' | b'A' | b'N' | b'L'))
    {
        return false;
    }
    let stem = match segment.as_bytes().iter().position(|&b| b == b'.') {
        Some(dot) => &segment[..dot],
        None => segment,
    }
    .trim_end_matches(' ');
    let b = stem.as_bytes();
    // Compared in place: this runs for every segment of every path of a plan.
    match b.len() {
        3 => ["CON", "PRN", "AUX", "NUL"]
            .iter()
            .any(|name| stem.eq_ignore_ascii_case(name)),
        4 => {
            (b[..3].eq_ignore_ascii_case(b"COM") || b[..3].eq_ignore_ascii_case(b"LPT"))
                && (b'1'..=b'9').contains(&b[3])
        }
        _ => false,
    }
}
