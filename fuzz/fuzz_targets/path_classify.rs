//! The path model on arbitrary strings. Input fields (0xFF-separated): a namespace, a bucket
//! prefix, then up to eight paths. Each path goes through every name mapping under three models
//! (solo, `ns`, and the input's namespace when it is valid): accepted rels map to keys and back,
//! and nothing the model hands out can leave the folder it is joined under.
#![no_main]

use std::collections::BTreeSet;

use fuzz_support::{assert_contained, escapes, fields, text};
use libfuzzer_sys::fuzz_target;
use s3sync_core::model::paths::{
    find_collisions, fold_key, foreign_namespaces_in, is_internal, is_lazy_skippable,
    is_never_synced, partition_key, CachePlace, ForeignNamespaces, Namespace, PathModel, RelPath,
    MAX_KEY_BYTES,
};
use s3sync_core::safety::normalize_tombstone;

const MAX_PATHS: usize = 8;

fuzz_target!(|data: &[u8]| {
    let parts = fields(data);
    let ns_text = text(parts[0]);
    let prefix = parts.get(1).map(|p| text(p)).unwrap_or_default();
    // A few paths per input keep each run cheap (coverage tracing makes every byte compare
    // count); the interplay between paths (markers, collisions) needs only a few.
    let paths: Vec<String> = parts
        .iter()
        .skip(2)
        .take(MAX_PATHS)
        .map(|p| text(p).into_owned())
        .collect();

    let mut models = vec![
        PathModel::new(None, &prefix).expect("solo always binds"),
        PathModel::new(Some("ns"), &prefix).expect("ns is a valid namespace"),
    ];
    match (
        Namespace::parse(&ns_text),
        PathModel::new(Some(&ns_text), &prefix),
    ) {
        (Ok(ns), Ok(model)) => {
            assert_contained("namespace", ns.as_str());
            assert!(!ns.as_str().contains('/'));
            assert_eq!(model.namespace(), Some(&ns));
            models.push(model);
        }
        (Err(_), Err(_)) => {}
        // An empty namespace means solo.
        (Err(_), Ok(model)) => assert!(ns_text.is_empty() && model.namespace().is_none()),
        (Ok(_), Err(e)) => panic!("namespace {ns_text:?} parses but does not bind: {e}"),
    }

    // Each model with the other namespaces' folders that the paths' markers claim.
    let models: Vec<(PathModel, ForeignNamespaces)> = models
        .into_iter()
        .map(|model| {
            let foreign =
                foreign_namespaces_in(paths.iter().map(String::as_str), model.namespace());
            for folder in &foreign {
                assert!(!folder.contains('/') && !folder.is_empty());
            }
            (model, foreign)
        })
        .collect();
    for path in &paths {
        if let Ok(rel) = RelPath::parse(path) {
            assert_contained("rel", rel.as_str());
            assert_eq!(rel.as_str(), path);
            assert!(path.len() <= MAX_KEY_BYTES);
            assert!(!path.chars().any(char::is_control), "{path:?}");
            assert!(!path.ends_with('/'));
        }
        let _ = partition_key(path);
        let _ = is_lazy_skippable(path);
        let _ = fold_key(path);
        for (model, foreign) in &models {
            check_one(model, path, foreign);
        }
    }
    let _ = find_collisions(paths.iter().map(String::as_str));
});

fn check_one(model: &PathModel, path: &str, foreign: &ForeignNamespaces) {
    let ns = model.namespace().map(|n| n.as_str().to_string());
    let under = |name: &str| match &ns {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    };

    // An accepted rel maps to one key and one cache path, both of which map back to it.
    if let Ok(rel) = model.rel(path) {
        let key = model.remote_key(&rel);
        let cache = model.cache_path(&rel);
        assert_eq!(key, cache, "the two sides of a transfer disagree");
        assert_eq!(key, under(path));
        assert_contained("remote key", &key);
        assert!(key.len() <= MAX_KEY_BYTES);
        let back = model
            .rel_from_remote_key(&key)
            .unwrap_or_else(|e| panic!("key {key:?} of rel {path:?} does not map back: {e}"));
        assert_eq!(back, rel);
        if !is_internal(path) && !is_never_synced(path) {
            let place = model.classify_cache_path(&cache, &Default::default());
            assert_eq!(place, CachePlace::Payload(rel.clone()), "{cache:?}");
        }
    }

    // A key that maps to a rel is exactly that rel's key.
    if let Ok(rel) = model.rel_from_remote_key(path) {
        assert_eq!(
            model.remote_key(&rel),
            path,
            "rel_from_remote_key is not an inverse"
        );
        assert_contained("rel of key", rel.as_str());
    }

    // Classification never hands out an escaping name, and payload maps back to the path.
    match model.classify_cache_path(path, foreign) {
        CachePlace::Payload(rel) => {
            assert_contained("payload rel", rel.as_str());
            assert_eq!(
                model.cache_path(&rel),
                path,
                "payload does not map back to its path"
            );
            assert!(!is_internal(rel.as_str()) && !is_never_synced(rel.as_str()));
        }
        CachePlace::RootLayout(rel) => {
            assert!(ns.is_some(), "root layout is a namespaced finding");
            assert_eq!(rel.as_str(), path);
            assert_contained("root-layout rel", rel.as_str());
            assert_contained("root-layout target", &model.cache_path(&rel));
        }
        CachePlace::Internal(name) => assert!(!escapes(&name), "internal {name:?}"),
        CachePlace::ForeignNamespace(name) => {
            assert!(foreign.contains(&name));
            assert_contained("foreign folder", &name);
        }
        CachePlace::Other | CachePlace::Unsafe(_) => {}
    }

    // A tombstone, once normalised, names a payload path inside the bound tree.
    if let Some(tombstone) = normalize_tombstone(model, path) {
        assert_contained("tombstone", &tombstone);
        if let Some(ns) = &ns {
            assert!(
                tombstone.starts_with(&format!("{ns}/")),
                "{tombstone:?} outside {ns}/"
            );
        }
        let none = BTreeSet::new();
        let rel = match &ns {
            Some(ns) => &tombstone[ns.len() + 1..],
            None => tombstone.as_str(),
        };
        assert!(
            !is_internal(rel),
            "tombstone {tombstone:?} names bookkeeping"
        );
        match model.classify_cache_path(&tombstone, &none) {
            CachePlace::Payload(_) => {}
            // A bare `secrets/x`, namespaced: a tombstone that can never cover an entry (the
            // push skips never-synced entries before it looks for evidence).
            CachePlace::Other if is_never_synced(rel) => {}
            other => panic!("tombstone {tombstone:?} (from {path:?}) classifies as {other:?}"),
        }
    }
}
