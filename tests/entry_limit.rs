//! The entry limit on every index a session loads (issue 40): an index of more entries than the
//! limit is `index-too-large`, refused as it is read, whichever reader reads it (the fast scan
//! or serde's), whichever index it is (v1, the v2 shards together, the base, another writer's
//! index, one rebuilt from a listing); an index at the limit loads.

use s3sync_core::index::{Index, DEFAULT_MAX_ENTRIES};
use s3sync_core::runs::session::{BaseLoad, Session};
use s3sync_core::wire::listing::encode_remote;

/// An index document of `n` entries; `extra` adds a field the fast scan does not know to each
/// entry, so serde reads it.
fn index(n: usize, extra: bool) -> Vec<u8> {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            let more = if extra { r#","writer":"x""# } else { "" };
            format!(r#""data/f{i}.yaml":{{"key":"data/f{i}.yaml","size":1{more}}}"#)
        })
        .collect();
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(",")).into_bytes()
}

fn shard(n: usize, from: usize) -> Vec<u8> {
    let entries: Vec<String> = (from..from + n)
        .map(|i| format!(r#""data/f{i}.yaml":{{"key":"data/f{i}.yaml","size":1}}"#))
        .collect();
    format!(r#"{{"version":1,"entries":{{{}}}}}"#, entries.join(",")).into_bytes()
}

#[test]
fn the_default_is_the_largest_size_measured() {
    assert_eq!(DEFAULT_MAX_ENTRIES, 1_000_000);
    let session = Session::new(Some("ns"), "").unwrap();
    assert_eq!(session.entry_limit(), DEFAULT_MAX_ENTRIES);
}

#[test]
fn an_index_at_the_limit_loads_and_one_past_it_is_refused_by_either_reader() {
    for extra in [false, true] {
        let at = Index::parse_limited(&index(3, extra), 3).unwrap();
        assert_eq!(at.entries.len(), 3);
        let error = Index::parse_limited(&index(4, extra), 3).unwrap_err();
        assert_eq!(error.code(), "index-too-large", "{error}");
        assert!(error.to_string().contains("more than 3 entries"), "{error}");
        assert!(error.to_string().contains("--max-index-entries"), "{error}");
        // Unlimited, the same document reads.
        assert_eq!(Index::parse(&index(4, extra)).unwrap().entries.len(), 4);
    }
}

#[test]
fn a_corrupt_index_within_the_limit_is_still_corrupt() {
    let error =
        Index::parse_limited(br#"{"version":1,"entries":{"a":{"size":-1}}}"#, 5).unwrap_err();
    assert_eq!(error.code(), "index-corrupt");
}

#[test]
fn a_session_refuses_a_remote_index_past_its_limit_and_keeps_none() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.set_entry_limit(2).unwrap();
    let error = session.load_index(&index(3, false)).unwrap_err();
    assert_eq!(error.code(), "index-too-large");
    assert!(session.index_len().is_err(), "nothing was loaded");
    let error = session.load_index_owned(index(3, true)).unwrap_err();
    assert_eq!(error.code(), "index-too-large");
    session.load_index(&index(2, false)).unwrap();
    assert_eq!(session.index_len().unwrap(), 2);
}

#[test]
fn the_limit_holds_for_the_v2_shards_together() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.set_entry_limit(3).unwrap();
    let meta = br#"{"version":2,"partitions":["a","b"],"commitSeq":4}"#;
    let error = session
        .load_shards(
            meta,
            &[("a".into(), shard(2, 0)), ("b".into(), shard(2, 2))],
        )
        .unwrap_err();
    assert_eq!(error.code(), "index-too-large");
    assert!(error.to_string().contains("v2 shards together"), "{error}");
    assert!(error.to_string().contains("more than 3 entries"), "{error}");
    session.set_entry_limit(4).unwrap();
    session
        .load_shards(
            meta,
            &[("a".into(), shard(2, 0)), ("b".into(), shard(2, 2))],
        )
        .unwrap();
    assert_eq!(session.index_len().unwrap(), 4);
}

#[test]
fn a_base_past_the_limit_is_no_base() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.set_entry_limit(2).unwrap();
    assert_eq!(session.load_base(index(3, false)), BaseLoad::Unreadable);
}

#[test]
fn a_rebuild_stops_at_the_listing_that_passes_the_limit() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.set_entry_limit(2).unwrap();
    session.begin_rebuild("2026-12-01T00:00:00.000Z");
    let page = |keys: &[&str]| encode_remote(keys.iter().map(|k| (*k, 1u64, Some("\"e\""), None)));
    session
        .add_listing_page(&page(&["ns/data/a.yaml", "ns/data/b.yaml"]), &[])
        .unwrap();
    let error = session
        .add_listing_page(&page(&["ns/data/c.yaml"]), &[])
        .unwrap_err();
    assert_eq!(error.code(), "index-too-large");
    assert!(
        error.to_string().contains("rebuilt from the listing"),
        "{error}"
    );
    // The rebuild is over: nothing half-built becomes the index.
    assert_eq!(
        session.finish_rebuild(None).unwrap_err().code(),
        "invalid-input"
    );
    assert!(session.index_len().is_err());
}

#[test]
fn another_writers_index_past_the_limit_is_refused_when_adopting_entries() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    session.set_entry_limit(2).unwrap();
    session.load_index(&index(1, false)).unwrap();
    let error = session
        .adopt_entries(&index(3, false), &["data/f2.yaml".to_string()])
        .unwrap_err();
    assert_eq!(error.code(), "index-too-large");
}

#[test]
fn a_limit_of_zero_is_refused() {
    let mut session = Session::new(Some("ns"), "").unwrap();
    assert_eq!(
        session.set_entry_limit(0).unwrap_err().code(),
        "invalid-input"
    );
    assert_eq!(session.entry_limit(), DEFAULT_MAX_ENTRIES);
    session.set_entry_limit(u64::MAX).unwrap();
    session.load_index(&index(5, false)).unwrap();
}

#[test]
fn migrate_reads_its_indexes_within_its_limit() {
    use s3sync_core::bytes::buf::Bytes;
    use s3sync_core::runs::machine::Machine;
    use s3sync_core::runs::migrate::events::MigrateEvent;
    use s3sync_core::runs::migrate::machine::{MigrateRequest, MigrateRun};

    let run_with = |limit: Option<u64>| {
        let request = MigrateRequest {
            apply: false,
            remove_originals: false,
            max_index_entries: limit,
        };
        let mut run = MigrateRun::new("ns", "", request, "2026-12-01T00:00:00.000Z").unwrap();
        let mut events = vec![
            MigrateEvent::Listing {
                listing: Bytes(encode_remote([("data/f0.yaml", 1u64, Some("\"e\""), None)])),
            },
            // Popped from the end: the meta, the solo index, the namespace's, the listing.
            MigrateEvent::Got {
                bytes: None,
                etag: None,
            },
            MigrateEvent::Got {
                bytes: Some(Bytes(index(3, false))),
                etag: Some("\"s\"".into()),
            },
            MigrateEvent::Got {
                bytes: None,
                etag: None,
            },
        ];
        loop {
            let action = Machine::poll(&mut run, &mut ())?;
            if format!("{action:?}").starts_with("Done") {
                return Machine::result(&run).map(|_| ());
            }
            let Some(event) = events.pop() else {
                return Ok(());
            };
            Machine::handle(&mut run, &mut (), event)?;
        }
    };
    let error = run_with(Some(2)).unwrap_err();
    assert_eq!(error.code(), "index-too-large", "{error}");
    run_with(Some(3)).unwrap();
    run_with(None).unwrap();
}

#[test]
fn the_contamination_repair_reads_the_bound_index_within_its_limit() {
    use s3sync_core::runs::contamination::machine::{ContaminationAction, ContaminationRun};

    // A duplicate of another namespace's file under the bound one: proven redundant, so the
    // run reads the bound index before it deletes anything.
    let listing = encode_remote([
        ("dev/.namespace.json", 2u64, Some("\"m\""), None),
        ("dev/data/x.yaml", 3, Some("\"c\""), None),
        ("ns/dev/data/x.yaml", 3, Some("\"c\""), None),
    ]);
    let run_with = |limit: Option<u64>| {
        let mut run = ContaminationRun::new("ns", "", false).unwrap();
        if let Some(limit) = limit {
            run = run.with_entry_limit(limit)?;
        }
        assert!(matches!(run.poll(), ContaminationAction::ListAll));
        run.on_listing(&listing)?;
        assert!(
            matches!(run.poll(), ContaminationAction::Get { .. }),
            "{:?}",
            run.poll()
        );
        run.on_index(Some(&index(3, false)), Some("\"i\"".into()))
    };
    assert_eq!(run_with(Some(2)).unwrap_err().code(), "index-too-large");
    run_with(Some(3)).unwrap();
    run_with(None).unwrap();
    assert_eq!(run_with(Some(0)).unwrap_err().code(), "invalid-input");
}
