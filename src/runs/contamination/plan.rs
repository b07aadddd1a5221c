//! Namespace contamination: objects of another namespace written under this one
//! (`{ns}/{other}/{rel}`, the extension's bug #1250 family), found from a bucket listing, and
//! what may be removed without losing the only copy of anything.
//!
//! A contaminating object may be removed only when its home copy (`{other}/{rel}`) is proven to
//! hold the same bytes: same size and the same non-multipart ETag (a multipart ETag is no content
//! hash). Anything else is kept and reported: a person decides, the planner never guesses.

use std::collections::BTreeMap;
use tsify_next::Tsify;

use serde::Serialize;

use crate::model::paths::{foreign_namespaces_in, strip_first_segment, Namespace};
use crate::wire::listing::RemoteObject;

/// One object of another namespace found under the bound one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ForeignObject {
    /// Its key (relative to the prefix): `{ns}/{other}/{rel}`.
    pub key: String,
    /// Where it belongs: `{other}/{rel}`.
    pub home_key: String,
    /// Its size.
    pub size: u64,
    /// Its ETag as the listing showed it: a removal is conditional on it.
    pub etag: Option<String>,
    /// What the listing showed of its home copy, and so what may be done with it.
    pub verdict: ForeignVerdict,
}

/// What may be done with one contaminating object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "kebab-case")]
pub enum ForeignVerdict {
    /// The home copy has the same size and content ETag: removing this one loses nothing.
    Redundant,
    /// There is no home copy: this may be the only one. Kept.
    OnlyCopy,
    /// The home copy differs in size or ETag. Kept.
    Differs,
    /// Sizes agree but an ETag is missing or multipart, so content equality is unproven. Kept.
    Unproven,
    /// Proven redundant by the listing, but another version was there when it was to be removed
    /// (its conditional delete failed). Kept.
    ChangedSinceListing,
}

/// Contamination of one other namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ForeignNamespace {
    /// The other namespace.
    pub namespace: String,
    /// How many of its objects sit under the bound namespace.
    pub object_count: u64,
}

/// The findings of a contamination scan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
#[serde(rename_all = "camelCase")]
pub struct ContaminationReport {
    /// Per other namespace, in name order.
    pub foreign_namespaces: Vec<ForeignNamespace>,
    /// All contaminating objects, in key order.
    pub objects: Vec<ForeignObject>,
}

/// True when an ETag is a content hash (quoted hex, not a multipart `-N` ETag).
fn content_etag(etag: Option<&str>) -> Option<&str> {
    let etag = etag?.trim_matches('"');
    (!etag.is_empty() && !etag.contains('-')).then_some(etag)
}

/// Scans a listing of the whole bucket (keys relative to the prefix) for objects of other
/// namespaces under `own`. The other namespaces are those with a top-level
/// `{other}/.namespace.json` marker, or a marker nested at `{own}/{other}/.namespace.json`.
pub fn find_contamination(own: &Namespace, listing: &[RemoteObject<'_>]) -> ContaminationReport {
    let nested_markers = listing
        .iter()
        .filter_map(|o| strip_first_segment(o.key, own.as_str()));
    let mut known = foreign_namespaces_in(listing.iter().map(|o| o.key), Some(own));
    known.extend(foreign_namespaces_in(nested_markers, Some(own)));

    let by_key: BTreeMap<&str, &RemoteObject<'_>> = listing.iter().map(|o| (o.key, o)).collect();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut objects = Vec::new();
    for object in listing {
        let Some(inner) = strip_first_segment(object.key, own.as_str()) else {
            continue;
        };
        let Some((other, _)) = inner.split_once('/') else {
            continue;
        };
        if !known.contains(other) {
            continue;
        }
        *counts.entry(other.to_string()).or_default() += 1;
        let verdict = match by_key.get(inner) {
            None => ForeignVerdict::OnlyCopy,
            Some(home) if home.size != object.size => ForeignVerdict::Differs,
            Some(home) => match (content_etag(home.etag), content_etag(object.etag)) {
                (Some(a), Some(b)) if a == b => ForeignVerdict::Redundant,
                (Some(_), Some(_)) => ForeignVerdict::Differs,
                _ => ForeignVerdict::Unproven,
            },
        };
        objects.push(ForeignObject {
            key: object.key.to_string(),
            home_key: inner.to_string(),
            size: object.size,
            etag: object.etag.map(str::to_string),
            verdict,
        });
    }
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    ContaminationReport {
        foreign_namespaces: counts
            .into_iter()
            .map(|(namespace, object_count)| ForeignNamespace {
                namespace,
                object_count,
            })
            .collect(),
        objects,
    }
}
