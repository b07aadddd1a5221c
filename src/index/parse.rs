//! Reading an index document from bytes: the fast scan first, then serde's visitors, strict
//! where a wrong reading could lose data (see the module doc of [`crate::index`]).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::Deserializer;
use serde_json::{Map, Value};

use crate::bytes::key_sort::{sorted_positions, TooMany};
use crate::error::{CoreError, CoreResult};

use super::{Entries, IndexEntry, MAX_SAFE_INTEGER};

/// The top level of an index or shard document, before version checks.
pub(super) struct RawDocument {
    pub(super) version: Option<Value>,
    pub(super) last_pulled: Option<Value>,
    /// As read, in document order (see [`entries_by_rel`]).
    pub(super) entries: Option<Vec<(String, IndexEntry)>>,
    pub(super) extra: Map<String, Value>,
}

/// The file name a monolith's errors name.
pub(super) const MONOLITH_FILE: &str = ".datastore-index.json";

/// The entries of a document by rel. They are sorted once into the list [`Entries`] keeps until
/// its shape changes. (Inserted one by one into a tree, as once, an index in insertion order (the
/// extension's) left the tree's nodes part-empty and scattered, and every plan's walk over it
/// paid for that; bulk-built into a tree, as later, they were moved once more than now, and a
/// plan's walk over the tree, and dropping it, cost more than over a list.) A key that appears twice shows as two neighbours
/// once sorted: `index-corrupt`, naming the first such key in key order. As the whole document
/// has been read by then, one with both a repeated key and a malformed entry reports the
/// malformed entry.
pub(super) fn entries_by_rel(
    mut entries: Vec<(String, IndexEntry)>,
    file: &str,
) -> CoreResult<Entries> {
    // An index this core wrote is in order already: one pass over neighbours says so.
    if entries.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        return Ok(Entries::from_sorted_unique(entries));
    }
    // The order is found on positions (see `key_sort`: a comparison sort of the entries read
    // two keys' bytes at each of ~20 comparisons per entry, ~40 % of a 10^6-entry load) and the
    // entries are moved into a second list in it, which is kept. Both
    // lists live at once only after the document's bytes, which were larger, were dropped
    // (`parse_owned`): WASM memory at 10^6 entries stayed at its peak of 387 MiB.
    let order = sorted_positions(&entries, |(rel, _)| rel.as_bytes())
        .map_err(|TooMany| CoreError::corrupt(format!("{file}: 2^32 entries or more")))?;
    if order.has_equal {
        let twice = order.positions.windows(2).find_map(|pair| {
            let (a, b) = (&entries[pair[0] as usize].0, &entries[pair[1] as usize].0);
            (a == b).then_some(a)
        });
        if let Some(rel) = twice {
            return Err(CoreError::corrupt(format!(
                "{file}: entry {rel:?} appears twice"
            )));
        }
    }
    // Moved out in key order; what stays behind is empty and dropped with the list.
    Ok(Entries::from_sorted_unique(
        order
            .positions
            .into_iter()
            .map(|position| std::mem::take(&mut entries[position as usize]))
            .collect(),
    ))
}

/// Reads a monolith's document from bytes it owns, which are dropped as soon as they are read
/// (see [`Index::parse_owned`]).
pub(super) fn document_of_owned(bytes: Vec<u8>, limit: usize) -> CoreResult<RawDocument> {
    let document = parse_document(&bytes, MONOLITH_FILE, limit)?;
    drop(bytes);
    Ok(document)
}

/// Reads a document: the common shape by [`scan::scan_document`], anything else (and every error)
/// by serde. A document the scanner gives up on late (an unknown field in its last entry) is read
/// twice; one whose writer adds fields to every entry is given up on at the first. A document
/// of more than `limit` entries is `index-too-large`, refused as it is read (so the entries past
/// the limit never take memory).
pub(super) fn parse_document(bytes: &[u8], file: &str, limit: usize) -> CoreResult<RawDocument> {
    match super::scan::scan_document(bytes, limit) {
        Some(document) => Ok(document),
        None => parse_document_fully(bytes, file, limit),
    }
}

/// Reads a document with serde: any valid JSON, every error located; more than `limit`
/// entries is `index-too-large`.
pub(super) fn parse_document_fully(
    bytes: &[u8],
    file: &str,
    limit: usize,
) -> CoreResult<RawDocument> {
    let over = Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let raw = deserializer
        .deserialize_map(DocumentVisitor { limit, over: &over })
        .and_then(|raw| deserializer.end().map(|()| raw))
        .map_err(|e| {
            if over.get() {
                CoreError::IndexTooLarge {
                    file: file.to_string(),
                    limit: limit as u64,
                }
            } else {
                CoreError::corrupt(format!("{file}: {e}"))
            }
        })?;
    Ok(raw)
}

pub(super) fn expect_version(version: &Option<Value>, file: &str, known: &[u64]) -> CoreResult<()> {
    let version = match version {
        // Writers before versioning omitted the field; their shape is v1's.
        None => 1,
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| CoreError::corrupt(format!("{file}: \"version\" must be an integer")))?,
        Some(_) => {
            return Err(CoreError::corrupt(format!(
                "{file}: \"version\" must be an integer"
            )))
        }
    };
    if known.contains(&version) {
        Ok(())
    } else {
        Err(CoreError::IndexVersionUnsupported {
            file: file.to_string(),
            version,
        })
    }
}

pub(super) fn optional_string(value: Option<Value>, field: &str) -> CoreResult<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(CoreError::corrupt(format!("\"{field}\" must be a string"))),
    }
}

/// Reads a document's top level; `over` is set when `entries` holds more than `limit`.
pub(super) struct DocumentVisitor<'a> {
    pub(super) limit: usize,
    pub(super) over: &'a Cell<bool>,
}

impl<'de> Visitor<'de> for DocumentVisitor<'_> {
    type Value = RawDocument;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an index object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDocument, A::Error> {
        let mut raw = RawDocument {
            version: None,
            last_pulled: None,
            entries: None,
            extra: Map::new(),
        };
        while let Some(field) = map.next_key::<String>()? {
            let duplicate = match field.as_str() {
                "version" => raw.version.replace(map.next_value()?).is_some(),
                "lastPulled" => raw.last_pulled.replace(map.next_value()?).is_some(),
                "entries" => raw
                    .entries
                    .replace(map.next_value_seed(EntriesSeed {
                        limit: self.limit,
                        over: self.over,
                    })?)
                    .is_some(),
                _ => {
                    let value = map.next_value::<Value>()?;
                    raw.extra.insert(field.clone(), value).is_some()
                }
            };
            if duplicate {
                return Err(de::Error::custom(format_args!(
                    "field {field:?} appears twice"
                )));
            }
        }
        Ok(raw)
    }
}

/// Reads `entries`, at most `limit` of them (`over` is set at the one past it).
pub(super) struct EntriesSeed<'a> {
    pub(super) limit: usize,
    pub(super) over: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for EntriesSeed<'_> {
    type Value = Vec<(String, IndexEntry)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(EntriesVisitor {
            limit: self.limit,
            over: self.over,
        })
    }
}

pub(super) struct EntriesVisitor<'a> {
    limit: usize,
    over: &'a Cell<bool>,
}

impl<'de> Visitor<'de> for EntriesVisitor<'_> {
    type Value = Vec<(String, IndexEntry)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"entries\" as an object of entries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Kept in document order; `entries_by_rel` sorts them and refuses a repeated key.
        let mut entries = Vec::new();
        while let Some(rel) = map.next_key::<String>()? {
            if entries.len() == self.limit {
                self.over.set(true);
                return Err(de::Error::custom("too many entries"));
            }
            let entry = map.next_value_seed(EntryFieldsSeed { rel: &rel })?;
            entries.push((rel, entry));
        }
        Ok(entries)
    }
}

/// Reads one entry object straight into an [`IndexEntry`]: known fields are typed as they
/// arrive (no intermediate map per entry: indexes reach 10^6 entries), unknown ones are kept.
pub(super) struct EntryFieldsSeed<'a> {
    pub(super) rel: &'a str,
}

impl<'de> DeserializeSeed<'de> for EntryFieldsSeed<'_> {
    type Value = IndexEntry;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// An entry's field name: the known ones without allocating.
pub(super) enum Field {
    Key,
    Size,
    LastModified,
    LocalMtime,
    Sha256,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "key" => Field::Key,
                    "size" => Field::Size,
                    "lastModified" => Field::LastModified,
                    "localMtime" => Field::LocalMtime,
                    "sha256" => Field::Sha256,
                    other => Field::Other(other.to_string()),
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Visitor<'de> for EntryFieldsSeed<'_> {
    type Value = IndexEntry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "entry {:?} to be an object", self.rel)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let rel = self.rel;
        let fail = |what: &str| de::Error::custom(format_args!("entry {rel:?}: {what}"));
        let twice = |name: &str| {
            de::Error::custom(format_args!("entry {rel:?}: field {name:?} appears twice"))
        };
        let mut seen_key = false;
        let mut size: Option<u64> = None;
        let mut entry = IndexEntry::default();
        let (mut seen_last_modified, mut seen_local_mtime, mut seen_sha256) = (false, false, false);
        // Generic over the slot's type: the timestamps are kept as [`ShortText`] (built from
        // the borrowed input, no allocation), the hash as a `String`.
        // `seen` is apart from the slot: a field read as null leaves the slot empty, and a
        // second one must still be refused (it was not, when the slot alone was asked).
        fn text<T: for<'s> From<&'s str>, E: de::Error>(
            slot: &mut Option<T>,
            seen: &mut bool,
            name: &str,
            value: Scalar,
            twice: impl Fn(&str) -> E,
            fail: impl Fn(&str) -> E,
        ) -> Result<(), E> {
            if std::mem::replace(seen, true) {
                return Err(twice(name));
            }
            match value {
                Scalar::Null => Ok(()),
                Scalar::Str(s) => {
                    *slot = Some(T::from(s.as_ref()));
                    Ok(())
                }
                _ => Err(fail(&format!("{name:?} must be a string"))),
            }
        }
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Key => {
                    if std::mem::replace(&mut seen_key, true) {
                        return Err(twice("key"));
                    }
                    match map.next_value_seed(ScalarSeed)? {
                        Scalar::Str(key) if key == rel => {}
                        Scalar::Str(key) => {
                            return Err(fail(&format!("\"key\" is {key:?}, not its map key")))
                        }
                        _ => return Err(fail("\"key\" must be a string")),
                    }
                }
                Field::Size => {
                    if size.is_some() {
                        return Err(twice("size"));
                    }
                    size = Some(match map.next_value_seed(ScalarSeed)? {
                        Scalar::Unsigned(v) if v <= MAX_SAFE_INTEGER => v,
                        Scalar::Unsigned(_) => return Err(fail("\"size\" is larger than 2^53-1")),
                        Scalar::Negative => return Err(fail("\"size\" is negative")),
                        _ => return Err(fail("\"size\" must be a non-negative integer")),
                    });
                }
                Field::LastModified => text(
                    &mut entry.last_modified,
                    &mut seen_last_modified,
                    "lastModified",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::LocalMtime => text(
                    &mut entry.local_mtime,
                    &mut seen_local_mtime,
                    "localMtime",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::Sha256 => text(
                    &mut entry.sha256,
                    &mut seen_sha256,
                    "sha256",
                    map.next_value_seed(ScalarSeed)?,
                    twice,
                    fail,
                )?,
                Field::Other(name) => {
                    let value = map.next_value::<Value>()?;
                    let extra = entry.extra.get_or_insert_with(Default::default);
                    if extra.insert(name.clone(), value).is_some() {
                        return Err(twice(&name));
                    }
                }
            }
        }
        entry.size = size.ok_or_else(|| fail("missing \"size\""))?;
        Ok(entry)
    }
}

/// A known field's value as far as the entry's checks need it, read without building a
/// [`Value`]: a string borrowed from the input where it has no escapes (the `key` is compared,
/// never kept), a number by its kind. Whatever else it is (an array, an object, a boolean) is
/// read to its end as a [`Value`] would be and reported as [`Scalar::Other`], so the same
/// documents are refused, with the same error at the same place, as when every value was
/// parsed whole first.
pub(super) enum Scalar<'de> {
    Null,
    Str(Cow<'de, str>),
    /// A non-negative integer (what `Number::as_u64` gave).
    Unsigned(u64),
    /// A negative integer (what `Number::as_i64` alone gave).
    Negative,
    Other,
}

pub(super) struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Unsigned(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        // As `Number::from(i64)` does: a non-negative one is an unsigned number.
        Ok(match u64::try_from(v) {
            Ok(v) => Scalar::Unsigned(v),
            Err(_) => Scalar::Negative,
        })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_string())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Read as a whole value would be (same checks, same depth limit).
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<String, Value>()?.is_some() {}
        Ok(Scalar::Other)
    }
}
