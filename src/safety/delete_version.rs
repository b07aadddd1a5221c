//! Deleting one version of an object, not whatever is at its key: what a contamination repair
//! and a migrate's removal of originals do with an object they proved redundant. The core names
//! the version (the ETag, or for a listing without ETags the size, that proved it); after a HEAD
//! of the key, [`version_at_key`] says whether that version is still there to delete.

use serde::{Deserialize, Serialize};
use tsify_next::Tsify;

use crate::safety::object_condition::ObjectFacts;

/// The version a run proved redundant, as its listing (or a HEAD) showed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct ProvenVersion {
    /// Its ETag; absent when the listing gave none (some servers list none).
    #[tsify(optional)]
    pub etag: Option<String>,
    /// Its size, which stands for the version only when there is no ETag.
    #[tsify(optional)]
    pub size: Option<u64>,
}

/// What a HEAD found at the key, against the version proved redundant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "kebab-case")]
pub enum VersionAtKey {
    /// Nothing is there: the delete is done already (another run removed it).
    Gone,
    /// The proven version is there: delete it (`If-Match` its ETag where the store has that).
    Same,
    /// Another version is there (a writer replaced it since the listing): keep it.
    Changed,
}

/// Compares what a HEAD found with the proven version: by ETag when the version has one
/// (quoted or not: servers and clients differ in whether they keep the quotes), else by size.
/// A version with neither proves nothing about what is there, so anything there is `Changed`.
pub fn version_at_key(head: &ObjectFacts, version: &ProvenVersion) -> VersionAtKey {
    if !head.exists {
        return VersionAtKey::Gone;
    }
    let bare = |tag: &str| tag.trim_matches('"').to_string();
    let same = match (&version.etag, version.size) {
        (Some(etag), _) => head.etag.as_deref().map(bare) == Some(bare(etag)),
        (None, Some(size)) => head.size == Some(size),
        (None, None) => false,
    };
    if same {
        VersionAtKey::Same
    } else {
        VersionAtKey::Changed
    }
}
