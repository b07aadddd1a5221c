//! Writing an index back, in the field order the extension writes: borrowed views that serialise the monolith and each shard in key
//! order with their unknown fields, without copying the entries.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Index, IndexEntry};

pub(super) struct EntryView<'a>(&'a str, &'a IndexEntry);

impl Serialize for EntryView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let EntryView(rel, entry) = self;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("key", rel)?;
        map.serialize_entry("size", &entry.size)?;
        if let Some(v) = &entry.last_modified {
            map.serialize_entry("lastModified", v)?;
        }
        if let Some(v) = &entry.local_mtime {
            map.serialize_entry("localMtime", v)?;
        }
        if let Some(v) = &entry.sha256 {
            map.serialize_entry("sha256", v)?;
        }
        if let Some(extra) = &entry.extra {
            for (k, v) in extra.iter() {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// The `entries` object of a document: the given entries, in the order given.
// Takes the entries themselves, not rels to look up: the monolith serialised every entry through
// a map look-up of its own key (17 string compares per entry at 10^5), a third of what
// publishing an index cost.
pub(super) struct EntriesView<I>(I);

impl<'a, I: Clone + Iterator<Item = (&'a String, &'a IndexEntry)>> Serialize for EntriesView<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (rel, entry) in self.0.clone() {
            map.serialize_entry(rel, &EntryView(rel, entry))?;
        }
        map.end()
    }
}

pub(super) struct MonolithView<'a>(pub(super) &'a Index);

impl Serialize for MonolithView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let index = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("version", &1)?;
        if let Some(v) = &index.last_pulled {
            map.serialize_entry("lastPulled", v)?;
        }
        map.serialize_entry("entries", &EntriesView(index.entries.iter()))?;
        for (k, v) in &index.extra {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

pub(super) struct ShardView<'a> {
    pub(super) index: &'a Index,
    pub(super) rels: &'a [String],
    pub(super) extra: &'a Map<String, Value>,
}

impl Serialize for ShardView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + self.extra.len()))?;
        map.serialize_entry("version", &1)?;
        let entries = self
            .rels
            .iter()
            .filter_map(|rel| self.index.entries.get_key_value(rel));
        map.serialize_entry("entries", &EntriesView(entries))?;
        for (name, value) in self.extra {
            if name != "version" && name != "entries" {
                map.serialize_entry(name, value)?;
            }
        }
        map.end()
    }
}
