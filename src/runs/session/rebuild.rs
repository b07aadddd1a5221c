//! The session's index from other sources than a published index: a rebuild from a listing,
//! an empty index, entries adopted from another index (migration) or removed (repair).

use crate::error::{CoreError, CoreResult};
use crate::index::Index;
use crate::runs::migrate::plan::{plan_migrate, MigrateInputs};
use crate::runs::rebuild::plan::{RebuildBuilder, RebuildReport};
use crate::wire::listing::decode_remote;

use super::Session;

impl Session {
    /// Starts from an empty index (a bucket that has none yet).
    pub fn load_empty_index(&mut self) {
        self.index = Some(Index::default());
        self.pull = None;
        self.homes.clear();
        self.records_in_shards.clear();
    }

    /// Copies into the loaded index the entries of `other` (raw index bytes) for `rels` that it
    /// lacks; an entry already present is never replaced. Returns how many were added.
    pub fn adopt_entries(&mut self, other: &[u8], rels: &[String]) -> CoreResult<u64> {
        let other = Index::parse_limited(other, self.entry_limit)?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        let mut added = 0;
        for rel in rels {
            if index.entries.contains_key(rel) {
                continue;
            }
            if let Some(entry) = other.entries.get(rel) {
                index.entries.insert(rel.clone(), entry.clone());
                added += 1;
            }
        }
        Ok(added)
    }

    /// Migrate: adds to the loaded index (the namespace's) an entry for every copy the migrate
    /// plan finds verified and unindexed in `listing` (a whole-bucket listing buffer), taken
    /// from `solo_index` (raw bytes) where it describes the same bytes, else built from the
    /// copy's listing as a rebuild does. Without this a bucket with no solo index left its
    /// copies in no index, invisible to every pull. Returns how many were added.
    pub fn index_migrated_copies(
        &mut self,
        listing: &[u8],
        solo_index: Option<&[u8]>,
        now_iso: &str,
    ) -> CoreResult<u64> {
        if self.model.namespace().is_none() {
            return Err(CoreError::input("migrate needs a namespace"));
        }
        let solo = solo_index
            .map(|bytes| Index::parse_limited(bytes, self.entry_limit))
            .transpose()?;
        let listed = decode_remote(listing)?;
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        let plan = plan_migrate(
            &self.model,
            MigrateInputs {
                listing: &listed,
                solo_index: solo.as_ref(),
                ns_index: Some(index),
                now_iso,
            },
        );
        let mut added = 0;
        for item in plan.to_index {
            // The plan only lists rels the index lacks; an entry present is never replaced.
            if !index.entries.contains_key(&item.rel) {
                index.entries.insert(item.rel, item.entry);
                added += 1;
            }
        }
        Ok(added)
    }

    /// Removes `rels` from the loaded index; returns how many were there.
    pub fn remove_entries(&mut self, rels: &[String]) -> CoreResult<u64> {
        let index = self
            .index
            .as_mut()
            .ok_or_else(|| CoreError::input("no index loaded in this session"))?;
        Ok(rels
            .iter()
            .filter(|rel| index.entries.remove(rel).is_some())
            .count() as u64)
    }

    /// Starts rebuilding the index from a listing. `now_iso` dates objects listed without one.
    pub fn begin_rebuild(&mut self, now_iso: &str) {
        self.rebuild = Some(RebuildBuilder::new(self.model.clone(), now_iso.to_string()));
    }

    /// Feeds one listing page (see [`crate::wire::listing`] for the buffer format). Keys holding a
    /// NUL cannot travel in that buffer; the shim passes them in `unencodable`, to be counted
    /// and refused.
    pub fn add_listing_page(&mut self, page: &[u8], unencodable: &[String]) -> CoreResult<()> {
        let builder = self
            .rebuild
            .as_mut()
            .ok_or_else(|| CoreError::input("add_listing_page before begin_rebuild"))?;
        builder.add_page(&decode_remote(page)?);
        for key in unencodable {
            builder.add_unencodable(key);
        }
        // A bucket of more objects than an index may name yields no index: refused as the
        // listing arrives, before the rest of it takes memory.
        if builder.kept_len() > self.entry_limit {
            self.rebuild = None;
            return Err(CoreError::IndexTooLarge {
                file: "the index rebuilt from the listing".to_string(),
                limit: self.entry_limit as u64,
            });
        }
        Ok(())
    }

    /// Finishes the rebuild, keeping the rebuilt index as this session's index.
    pub fn finish_rebuild(&mut self, last_pulled: Option<&str>) -> CoreResult<RebuildReport> {
        let builder = self
            .rebuild
            .take()
            .ok_or_else(|| CoreError::input("finish_rebuild before begin_rebuild"))?;
        let (index, report) = builder.finish(last_pulled.map(str::to_string));
        crate::runs::rebuild::plan::nested_datastore(&index)?;
        self.rebuilt = Some(report.clone());
        self.index = Some(index);
        self.pull = None;
        self.homes.clear();
        self.records_in_shards.clear();
        Ok(report)
    }
}
