//! Deleting only the version a run proved redundant (`safety::delete_version`): by ETag,
//! quoted or not; by size only where the listing gave no ETag; nothing proven, nothing deleted.

use s3sync_core::safety::delete_version::{version_at_key, ProvenVersion, VersionAtKey};
use s3sync_core::safety::object_condition::ObjectFacts;

fn head(etag: Option<&str>, size: Option<u64>) -> ObjectFacts {
    ObjectFacts {
        exists: true,
        size,
        etag: etag.map(str::to_string),
        sha256: None,
    }
}

fn proven(etag: Option<&str>, size: Option<u64>) -> ProvenVersion {
    ProvenVersion {
        etag: etag.map(str::to_string),
        size,
    }
}

#[test]
fn a_key_with_nothing_there_is_gone() {
    let gone = ObjectFacts::default();
    assert_eq!(
        version_at_key(&gone, &proven(Some("\"a\""), Some(1))),
        VersionAtKey::Gone
    );
}

#[test]
fn the_etag_decides_quoted_or_not_and_the_size_does_not_count_beside_it() {
    let there = head(Some("\"a\""), Some(3));
    assert_eq!(
        version_at_key(&there, &proven(Some("\"a\""), None)),
        VersionAtKey::Same
    );
    assert_eq!(
        version_at_key(&there, &proven(Some("a"), Some(99))),
        VersionAtKey::Same
    );
    assert_eq!(
        version_at_key(&there, &proven(Some("\"b\""), Some(3))),
        VersionAtKey::Changed
    );
    // A HEAD without an ETag cannot show the proven one.
    let bare = head(None, Some(3));
    assert_eq!(
        version_at_key(&bare, &proven(Some("\"a\""), Some(3))),
        VersionAtKey::Changed
    );
}

#[test]
fn without_an_etag_the_size_decides() {
    let there = head(Some("\"x\""), Some(3));
    assert_eq!(
        version_at_key(&there, &proven(None, Some(3))),
        VersionAtKey::Same
    );
    assert_eq!(
        version_at_key(&there, &proven(None, Some(4))),
        VersionAtKey::Changed
    );
    assert_eq!(
        version_at_key(&head(None, None), &proven(None, Some(3))),
        VersionAtKey::Changed
    );
}

#[test]
fn a_version_with_neither_proves_nothing_so_nothing_is_deleted() {
    assert_eq!(
        version_at_key(&head(None, None), &proven(None, None)),
        VersionAtKey::Changed
    );
    assert_eq!(
        version_at_key(&head(Some("\"a\""), Some(1)), &proven(None, None)),
        VersionAtKey::Changed
    );
}
