//! A fast reader for the index documents writers actually produce, which steps aside for the
//! full parser on anything else.
//!
//! Every index this core or the extension writes has the same shape: a top level of `version`,
//! `lastPulled` and `entries`, and entries of `key`, `size` and string (or null) timestamps and
//! hash, with no escapes in any string (keys are paths; timestamps are ISO-8601; hashes hex).
//! serde's reader spends most of a load on generality that shape never uses (it validates each
//! string twice, dispatches every token through its visitor machinery, and reads the `key`
//! field's copy of the rel to compare it). This reader handles that shape only, scanning
//! strings eight bytes at a time, and answers `None` at the first thing outside it: an escape, a
//! control character, an unknown field, a field twice, a missing size, a number that is not a
//! plain non-negative integer below 2^53, a `key` that differs from its rel, a value of the
//! wrong type, a truncated document. The caller then parses the document with serde from the
//! start, so every error, and every document with unknown fields, is exactly what it was.
//!
//! What it returns is what serde's visitor would have built from the same bytes (property test
//! below), so the checks after parsing (version, duplicate keys) run on it unchanged.

use serde_json::{Map, Value};

use super::{IndexEntry, RawDocument, MAX_SAFE_INTEGER};
use crate::bytes::swar;

/// Reads `bytes` as an index document of the common shape, or `None` when it is not one (the
/// document may still be valid: serde decides). A document of more than `limit` entries is left
/// to serde too, which refuses it with its own error.
pub(super) fn scan_document(bytes: &[u8], limit: usize) -> Option<RawDocument> {
    let mut scan = Scanner {
        bytes,
        at: 0,
        limit,
    };
    let mut document = RawDocument {
        version: None,
        last_pulled: None,
        entries: None,
        extra: Map::new(),
    };
    scan.expect(b'{')?;
    if scan.peek()? == b'}' {
        scan.at += 1;
    } else {
        loop {
            match scan.plain_str()?.as_bytes() {
                b"version" if document.version.is_none() => {
                    scan.expect(b':')?;
                    document.version = Some(Value::from(scan.plain_integer()?));
                }
                b"lastPulled" if document.last_pulled.is_none() => {
                    scan.expect(b':')?;
                    document.last_pulled = Some(match scan.nullable_str()? {
                        Some(text) => Value::String(text.to_owned()),
                        None => Value::Null,
                    });
                }
                b"entries" if document.entries.is_none() => {
                    scan.expect(b':')?;
                    document.entries = Some(scan.entries()?);
                }
                _ => return None,
            }
            if !scan.comma_or_close(b'}')? {
                break;
            }
        }
    }
    scan.skip_whitespace();
    (scan.at == bytes.len()).then_some(document)
}

/// A cursor over the document's bytes.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The most entries read before stepping aside.
    limit: usize,
}

impl<'a> Scanner<'a> {
    /// Skips JSON whitespace (a pretty-printed local copy has plenty).
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.at).copied()
    }

    /// Consumes `byte` after whitespace.
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// After a member: `true` past a comma (another member follows), `false` past `close`.
    fn comma_or_close(&mut self, close: u8) -> Option<bool> {
        let next = self.peek()?;
        self.at += 1;
        match next {
            b',' => Some(true),
            _ if next == close => Some(false),
            _ => None,
        }
    }

    /// A string with no escape and no control character, as valid UTF-8.
    fn plain_str(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let rest = &self.bytes[self.at..];
        let length = plain_prefix(rest);
        if rest.get(length) != Some(&b'"') {
            // An escape, a control character, or the end of the input.
            return None;
        }
        let text = std::str::from_utf8(&rest[..length]).ok()?;
        self.at += length + 1;
        Some(text)
    }

    /// The string `text` (a plain string already read): its bytes and the closing quote, with
    /// no scan (the `key` field repeats its rel).
    fn same_str(&mut self, text: &str) -> Option<()> {
        self.expect(b'"')?;
        let end = self.at + text.len();
        if self.bytes.get(self.at..end)? != text.as_bytes() || self.bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        Some(())
    }

    /// One of an entry's known field names, matched in place (unknown names, and names
    /// written with escapes, step aside).
    fn entry_field(&mut self) -> Option<EntryField> {
        self.expect(b'"')?;
        let rest = &self.bytes[self.at..];
        let (field, name): (_, &[u8]) = match rest.first()? {
            b'k' => (EntryField::Key, b"key\""),
            b's' if rest.get(1) == Some(&b'i') => (EntryField::Size, b"size\""),
            b's' => (EntryField::Sha256, b"sha256\""),
            b'l' if rest.get(1) == Some(&b'a') => (EntryField::LastModified, b"lastModified\""),
            b'l' => (EntryField::LocalMtime, b"localMtime\""),
            _ => return None,
        };
        if !rest.starts_with(name) {
            return None;
        }
        self.at += name.len();
        Some(field)
    }

    /// `null` as `None`, or a plain string.
    fn nullable_str(&mut self) -> Option<Option<&'a str>> {
        if self.peek()? == b'n' {
            let rest = &self.bytes[self.at..];
            if !rest.starts_with(b"null") {
                return None;
            }
            self.at += 4;
            // `nullx` is not JSON; what follows must end the value.
            return self.ends_value().then_some(None);
        }
        self.plain_str().map(Some)
    }

    /// Whether the next byte (if any) may follow a literal or a number.
    fn ends_value(&self) -> bool {
        matches!(
            self.bytes.get(self.at),
            None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
        )
    }

    /// A non-negative integer in plain form (no sign, fraction, exponent or leading zero), at
    /// most 2^53 - 1.
    fn plain_integer(&mut self) -> Option<u64> {
        self.skip_whitespace();
        let digits = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        // 16 digits hold 2^53 - 1; more, or a leading zero, or none: serde decides.
        if digits == 0 || digits > 16 || (digits > 1 && self.bytes[self.at] == b'0') {
            return None;
        }
        let value = self.bytes[self.at..self.at + digits]
            .iter()
            .fold(0u64, |value, digit| value * 10 + u64::from(digit - b'0'));
        self.at += digits;
        (value <= MAX_SAFE_INTEGER && self.ends_value()).then_some(value)
    }

    /// The `entries` object, in document order.
    fn entries(&mut self) -> Option<Vec<(String, IndexEntry)>> {
        self.expect(b'{')?;
        let mut entries = Vec::new();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(entries);
        }
        loop {
            if entries.len() == self.limit {
                return None;
            }
            let rel = self.plain_str()?;
            self.expect(b':')?;
            let entry = self.entry(rel)?;
            entries.push((rel.to_owned(), entry));
            if !self.comma_or_close(b'}')? {
                return Some(entries);
            }
        }
    }

    /// One entry's object: known fields only, each at most once, `key` equal to `rel`.
    fn entry(&mut self, rel: &str) -> Option<IndexEntry> {
        self.expect(b'{')?;
        let mut entry = IndexEntry::default();
        let mut size = None;
        let mut seen_key = false;
        // `Some(None)` is a field read as null: seen, so at a second one this reader steps aside
        // (and serde refuses the repeat).
        let mut last_modified: Option<Option<&str>> = None;
        let mut local_mtime: Option<Option<&str>> = None;
        let mut sha256: Option<Option<&str>> = None;
        if self.peek()? == b'}' {
            // No size: serde reports it.
            return None;
        }
        loop {
            let field = self.entry_field()?;
            self.expect(b':')?;
            match field {
                EntryField::Key if !seen_key => {
                    seen_key = true;
                    self.same_str(rel)?;
                }
                EntryField::Size if size.is_none() => size = Some(self.plain_integer()?),
                EntryField::LastModified if last_modified.is_none() => {
                    last_modified = Some(self.nullable_str()?);
                }
                EntryField::LocalMtime if local_mtime.is_none() => {
                    local_mtime = Some(self.nullable_str()?);
                }
                EntryField::Sha256 if sha256.is_none() => sha256 = Some(self.nullable_str()?),
                _ => return None,
            }
            if !self.comma_or_close(b'}')? {
                break;
            }
        }
        entry.size = size?;
        entry.last_modified = last_modified.flatten().map(Into::into);
        entry.local_mtime = local_mtime.flatten().map(Into::into);
        entry.sha256 = sha256.flatten().map(str::to_owned);
        Some(entry)
    }
}

/// The fields of an entry this reader knows.
#[derive(Clone, Copy)]
enum EntryField {
    Key,
    Size,
    LastModified,
    LocalMtime,
    Sha256,
}

/// How many leading bytes of `bytes` may sit inside a JSON string as they are: everything but
/// `"`, `\` and control characters (below 0x20). Eight bytes a step: this is most of the scan.
fn plain_prefix(bytes: &[u8]) -> usize {
    swar::position(
        bytes,
        |word| swar::below(word, 0x20) | swar::equal_to(word, b'"') | swar::equal_to(word, b'\\'),
        |b| b < 0x20 || b == b'"' || b == b'\\',
    )
    .unwrap_or(bytes.len())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::index::{parse_document_fully, Index};

    /// The slow, plain form of [`plain_prefix`].
    fn plain_prefix_bytewise(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
            .count()
    }

    /// A word of eight bytes with a stop byte at each place (and bytes around the stop values)
    /// finds the first stop byte, wherever the flags of later bytes fall.
    #[test]
    fn plain_prefix_finds_the_first_stop_byte() {
        let interesting = [
            0u8, 0x1f, 0x20, 0x21, b'"', b'#', b'\\', b']', 0x7f, 0x80, 0xff, b'a',
        ];
        for &first in &interesting {
            for &second in &interesting {
                for place in 0..12 {
                    let mut bytes = vec![b'x'; 20];
                    bytes[place] = first;
                    bytes[place + 1] = second;
                    assert_eq!(
                        plain_prefix(&bytes),
                        plain_prefix_bytewise(&bytes),
                        "{bytes:?}"
                    );
                }
            }
        }
    }

    /// Documents built to pass every check but one of the reader's: each must step aside (serde
    /// refuses some and keeps the unknown field of others).
    #[test]
    fn near_misses_step_aside() {
        for doc in [
            // The `key` value repeats the rel and goes on, unterminated: only its closing quote
            // tells it from a document that would otherwise close cleanly.
            r#"{"entries":{"ab":{"size":1,"key":"abX}}}"#,
            // A field name of a known name's length, one byte off.
            r#"{"entries":{"ab":{"size":1,"kez":"ab"}}}"#,
            r#"{"entries":{"ab":{"sizf":1}}}"#,
            // A value that runs into the next token.
            r#"{"entries":{"ab":{"size":1,"sha256":nullnull}}}"#,
            r#"{"version":1"entries":{}}"#,
        ] {
            assert!(scan_document(doc.as_bytes(), usize::MAX).is_none(), "{doc}");
        }
    }

    /// Field values of every kind the scanner meets or must step aside for.
    fn value() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "0",
            "1",
            "12",
            "01",
            "-1",
            "1.5",
            "1e3",
            "9007199254740991",
            "9007199254740992",
            "12345678901234567",
            "null",
            "nul",
            "nullx",
            "true",
            "\"\"",
            "\"a\"",
            "\"a/b\"",
            "\"data/x\"",
            "\"2026-01-01T00:00:00.000Z\"",
            "\"\\u0061\"",
            "\"a\\\"b\"",
            "\"é\"",
            "\"\t\"",
            "[]",
            "{}",
            "\"x",
            "1 ",
            " 1",
        ])
        .prop_map(str::to_owned)
    }

    fn field() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec![
            "key",
            "size",
            "lastModified",
            "localMtime",
            "sha256",
            "etag",
            "k\\u0065y",
            "",
            // The length of a known name, one byte off.
            "kez",
            "sizf",
            "sha257",
            "lastModifiex",
            "localMtimf",
            "keys",
            "s",
            "si",
            "sizes",
            "sha",
            "l",
            "la",
            "lo",
            "localMtim",
            "lastModifiedX",
        ]);
        let space = prop::sample::select(vec!["", " ", "\n  "]);
        (name, space, value()).prop_map(|(name, space, value)| format!("\"{name}\":{space}{value}"))
    }

    fn entry() -> impl Strategy<Value = String> {
        let rel = prop::sample::select(vec!["a", "a/b", "data/x", "é", "a\\/b", ""]);
        (rel, prop::collection::vec(field(), 0..6), any::<bool>()).prop_map(
            |(rel, fields, key_first)| {
                let mut fields = fields;
                if key_first {
                    fields.insert(0, format!("\"key\":\"{rel}\""));
                    fields.insert(1, "\"size\":3".to_owned());
                }
                format!("\"{rel}\":{{{}}}", fields.join(","))
            },
        )
    }

    fn document() -> impl Strategy<Value = String> {
        let top = prop::collection::vec(
            prop_oneof![
                prop::collection::vec(entry(), 0..4)
                    .prop_map(|entries| format!("\"entries\":{{{}}}", entries.join(","))),
                value().prop_map(|v| format!("\"version\":{v}")),
                value().prop_map(|v| format!("\"lastPulled\":{v}")),
                Just("\"writer\":{}".to_owned()),
            ],
            0..4,
        );
        let tail = prop::sample::select(vec!["", " ", "\n", "x", ",", "}"]);
        (top, tail).prop_map(|(top, tail)| format!("{{{}}}{tail}", top.join(",")))
    }

    /// Whatever serde's visitor makes of the same bytes, compared field by field.
    fn assert_same(scanned: &RawDocument, bytes: &[u8]) {
        let parsed = parse_document_fully(bytes, "f", usize::MAX)
            .expect("serde accepts what the scanner read");
        assert_eq!(scanned.version, parsed.version);
        assert_eq!(scanned.last_pulled, parsed.last_pulled);
        assert_eq!(scanned.entries, parsed.entries);
        assert_eq!(scanned.extra, parsed.extra);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// On any document the scanner either steps aside or reads what serde reads.
        #[test]
        fn reads_what_serde_reads_or_steps_aside(doc in document()) {
            if let Some(scanned) = scan_document(doc.as_bytes(), usize::MAX) {
                assert_same(&scanned, doc.as_bytes());
            }
        }

        /// A document cut short anywhere (where the reader's state is most varied): read as
        /// serde reads it (a cut in trailing whitespace leaves a whole document), or not at all.
        #[test]
        fn cut_documents_are_read_as_serde_reads_them(doc in document(), cut in 0usize..200) {
            let bytes = &doc.as_bytes()[..cut.min(doc.len())];
            if let Some(scanned) = scan_document(bytes, usize::MAX) {
                assert_same(&scanned, bytes);
            }
        }

        /// What this core writes, compact or pretty, is the shape the scanner reads.
        #[test]
        fn reads_this_cores_own_output(
            rels in prop::collection::btree_set("[a-z/é]{1,12}", 0..20),
            hashed in any::<bool>(),
        ) {
            let mut index = Index {
                last_pulled: Some("2026-01-01T00:00:00.000Z".to_owned()),
                ..Index::default()
            };
            for (i, rel) in rels.into_iter().enumerate() {
                index.entries.insert(rel, IndexEntry {
                    size: i as u64,
                    last_modified: Some("2026-01-01T00:00:00.000Z".into()),
                    local_mtime: (i % 2 == 0).then(|| "2026-01-02T00:00:00.000Z".into()),
                    sha256: hashed.then(|| format!("{i:064x}")),
                    extra: None,
                });
            }
            for bytes in [index.to_compact_json(), index.to_pretty_json()] {
                let scanned = scan_document(&bytes, usize::MAX);
                prop_assert!(scanned.is_some(), "{}", String::from_utf8_lossy(&bytes));
                if let Some(scanned) = scanned {
                    assert_same(&scanned, &bytes);
                }
            }
        }
    }
}
