//! [`ShortText`]: a string kept inside its owner when it is short.
//!
//! An index of 10^6 entries holds two timestamps per entry (`lastModified`, `localMtime`, 24
//! bytes each in the ISO-8601 form every writer uses). As `String`s they were two heap
//! allocations per entry: parsing paid for them, dropping the index freed them one by one, and a
//! plan that compared every `localMtime` missed the cache on each. Kept inline they cost nothing
//! to allocate and sit beside the entry's size.

use std::fmt;
use std::ops::Deref;

/// Bytes kept inline; longer text goes to the heap. 30 makes the whole value 32 bytes, the size
/// of an `Option<String>` plus one word, and holds any ISO-8601 timestamp with milliseconds.
const INLINE_BYTES: usize = 30;

/// An immutable string, inline when at most `INLINE_BYTES` long, on the heap otherwise.
///
/// Equality, ordering and hashing are those of the text: the representation is chosen by length
/// alone, so equal texts are always stored alike.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ShortText(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// `bytes[..len]` is the text; the rest stays zero, so the derived equality is the text's.
    Inline {
        len: u8,
        bytes: [u8; INLINE_BYTES],
    },
    Heap(Box<str>),
}

impl ShortText {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // The bytes were copied from a `&str` whole (see `From<&str>`), so they are UTF-8;
            // checking again costs a few nanoseconds for 24 bytes and keeps `unsafe` out of
            // this module. The fallback cannot be reached.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(text) => text,
        }
    }
}

impl From<&str> for ShortText {
    fn from(text: &str) -> ShortText {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE_BYTES => {
                let mut bytes = [0; INLINE_BYTES];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                ShortText(Repr::Inline { len, bytes })
            }
            _ => ShortText(Repr::Heap(text.into())),
        }
    }
}

impl From<String> for ShortText {
    fn from(text: String) -> ShortText {
        if text.len() <= INLINE_BYTES {
            ShortText::from(text.as_str())
        } else {
            ShortText(Repr::Heap(text.into_boxed_str()))
        }
    }
}

impl From<&String> for ShortText {
    fn from(text: &String) -> ShortText {
        ShortText::from(text.as_str())
    }
}

impl Deref for ShortText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ShortText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for ShortText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ShortText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ShortText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_text_at_every_length_around_the_inline_limit() {
        for len in [0, 1, 23, 24, 29, 30, 31, 64, 300] {
            let text: String = "é2026-08-01T12:00:00.000Z"
                .chars()
                .cycle()
                .take(len)
                .collect();
            let short = ShortText::from(text.as_str());
            assert_eq!(short.as_str(), text);
            assert_eq!(ShortText::from(text.clone()), short);
            assert_eq!(format!("{short:?}"), format!("{text:?}"));
        }
    }

    #[test]
    fn equal_texts_compare_equal_whichever_constructor_built_them() {
        let long = "x".repeat(INLINE_BYTES + 1);
        assert_eq!(
            ShortText::from(long.as_str()),
            ShortText::from(long.clone())
        );
        assert_ne!(ShortText::from("a"), ShortText::from("ab"));
        assert_ne!(ShortText::from("a\0"), ShortText::from("a"));
    }

    #[test]
    fn a_timestamp_stays_inline() {
        let stamp = ShortText::from("2026-08-01T12:00:00.000Z");
        assert!(matches!(stamp.0, Repr::Inline { len: 24, .. }));
        assert_eq!(std::mem::size_of::<Option<ShortText>>(), 32);
    }
}
