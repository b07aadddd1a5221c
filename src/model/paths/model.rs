//! [`PathModel`]: the mapping between a file's three names (rel, remote key, cache path) for
//! one binding, and where a cache path belongs ([`CachePlace`]).

use serde::Serialize;
use tsify_next::Tsify;

use crate::error::{CoreError, CoreResult, PathRefusal};

use super::check::check_relative;
use super::{
    check_partition_name, first_segment_of, is_internal, is_never_synced, strip_first_segment,
    Namespace, PlaceRef, RelPath, RelRef, CONTROL_DIR, DATA_TREES, INDEX_DIR, INTERNAL_EXACT,
    LOCKS_DIR, LOCK_SUFFIX, MAX_KEY_BYTES, META_PARTITION, NAMESPACE_MARKER, SOLO_LOCK_KEY,
};

/// Where a cache-relative path sits, relative to the bound layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CachePlace {
    /// Payload inside the bound tree (the namespace folder, or the cache root solo).
    Payload(RelPath),
    /// Bookkeeping inside the bound tree or at the cache root (never travels).
    Internal(String),
    /// Namespaced mode only: a data tree at the cache root (the seed bug's layout). Carries the
    /// rel the file would have inside the namespace folder.
    RootLayout(RelPath),
    /// Inside the folder of another namespace (one holding a `.namespace.json`).
    ForeignNamespace(String),
    /// Never synced (secrets, bundles, stray files outside the bound tree).
    Other,
    /// Not a safe relative path at all.
    Unsafe(PathRefusal),
}

/// The three names of one datastore file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
#[tsify(missing_as_null, hashmap_as_object)]
pub struct FileNames {
    /// Relative path, the index key.
    pub rel: String,
    /// Index key (always the bare rel).
    pub index_key: String,
    /// Remote key, relative to the bucket prefix.
    pub remote_key: String,
    /// Path relative to the cache folder.
    pub cache_path: String,
}

/// The set of top-level folder names that belong to other namespaces.
pub type ForeignNamespaces = std::collections::BTreeSet<String>;

/// The mapping between the three names, bound to an optional namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathModel {
    namespace: Option<Namespace>,
    prefix_bytes: usize,
}

impl PathModel {
    /// A model for solo mode (no namespace).
    pub fn solo() -> PathModel {
        PathModel {
            namespace: None,
            prefix_bytes: 0,
        }
    }

    /// A model bound to `namespace`.
    pub fn namespaced(namespace: Namespace) -> PathModel {
        PathModel {
            namespace: Some(namespace),
            prefix_bytes: 0,
        }
    }

    /// A model from an optional namespace string (empty or absent means solo) and the bucket
    /// prefix (used only to enforce the key length limit on the full key).
    pub fn new(namespace: Option<&str>, prefix: &str) -> CoreResult<PathModel> {
        let namespace = match namespace {
            None | Some("") => None,
            Some(ns) => Some(Namespace::parse(ns)?),
        };
        let trimmed = prefix.trim_matches('/');
        let prefix_bytes = if trimmed.is_empty() {
            0
        } else {
            trimmed.len() + 1
        };
        Ok(PathModel {
            namespace,
            prefix_bytes,
        })
    }

    /// The bound namespace, if any.
    pub fn namespace(&self) -> Option<&Namespace> {
        self.namespace.as_ref()
    }

    /// Validates `path` as a rel of this model: the rel rules, plus the full remote key
    /// (prefix, namespace and rel) fitting S3's key limit.
    pub fn rel(&self, path: &str) -> CoreResult<RelPath> {
        self.check_rel(path)?;
        Ok(RelPath(path.to_string()))
    }

    /// [`PathModel::rel`] without allocating: the same checks and the same error, the rel
    /// borrowed from `path`.
    pub fn rel_ref<'a>(&self, path: &'a str) -> CoreResult<RelRef<'a>> {
        self.check_rel(path)?;
        Ok(RelRef(path))
    }

    /// Checks `path` as [`PathModel::rel`] does, with the same error, without allocating: the
    /// planner checks every index key of a plan and keeps only the few it transfers.
    pub fn check_rel(&self, path: &str) -> CoreResult<()> {
        check_relative(path).map_err(|reason| CoreError::UnsafePath {
            path: path.to_string(),
            reason,
        })?;
        if !self.fits_key_limit(path) {
            return Err(CoreError::UnsafePath {
                path: path.to_string(),
                reason: PathRefusal::TooLong,
            });
        }
        Ok(())
    }

    /// Whether the full remote key of `rel` (prefix, namespace and rel) fits S3's key limit.
    fn fits_key_limit(&self, rel: &str) -> bool {
        let ns_bytes = self.namespace.as_ref().map_or(0, |ns| ns.0.len() + 1);
        self.prefix_bytes + ns_bytes + rel.len() <= MAX_KEY_BYTES
    }

    /// The index key of a rel (always the bare rel).
    pub fn index_key<'a>(&self, rel: &'a RelPath) -> &'a str {
        rel.as_str()
    }

    /// The remote key of a rel, relative to the bucket prefix.
    pub fn remote_key(&self, rel: &RelPath) -> String {
        self.under_binding(rel.as_str())
    }

    /// The cache-relative path of a rel. Always the same string as [`PathModel::remote_key`]:
    /// the two sides of a transfer can never disagree.
    /// The three names of `rel`: its index key, its remote key and its cache path.
    pub fn names(&self, rel: &RelPath) -> FileNames {
        FileNames {
            rel: rel.as_str().to_string(),
            index_key: self.index_key(rel).to_string(),
            remote_key: self.remote_key(rel),
            cache_path: self.cache_path(rel),
        }
    }

    pub fn cache_path(&self, rel: &RelPath) -> String {
        self.under_binding(rel.as_str())
    }

    /// The key of the datastore's global lock, relative to the prefix: the key swamp core
    /// takes for this layout (`.datastore.lock` solo, `.locks/{ns}.lock` namespaced). A writer
    /// with no caller (the CLI) must take exactly this key, or it would not exclude core's own
    /// writers on the same repo.
    pub fn lock_key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}{}", LOCKS_DIR, ns.0, LOCK_SUFFIX),
            None => SOLO_LOCK_KEY.to_string(),
        }
    }

    /// The key of the v2 layout's `_index/_meta.json` under the bound tree.
    pub fn meta_key(&self) -> String {
        self.under_binding(&format!("{INDEX_DIR}/{META_PARTITION}.json"))
    }

    /// The key of the v2 shard `partition` under the bound tree, once the partition name is
    /// proven one safe segment (see [`check_partition_name`]).
    pub fn shard_key(&self, partition: &str) -> CoreResult<String> {
        check_partition_name(partition)?;
        Ok(self.under_binding(&format!("{INDEX_DIR}/{partition}.json")))
    }

    /// The folder of small control-plane records under the bound tree (with a trailing `/`).
    pub fn control_folder(&self) -> String {
        self.under_binding(&format!("{CONTROL_DIR}/"))
    }

    /// The rel of a path a caller (swamp core) names a file by: cache-relative (`{ns}/{rel}`) or
    /// a bare rel, both accepted as the extension accepts them; checked by the path rules.
    pub fn rel_from_caller_path(&self, path: &str) -> CoreResult<RelPath> {
        let bare = match &self.namespace {
            Some(ns) => path
                .strip_prefix(ns.0.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(path),
            None => path,
        };
        self.rel(bare)
    }

    /// A name (rel or `_index/...`) under the bound tree: `{ns}/{name}` or `{name}`.
    pub fn under_binding(&self, name: &str) -> String {
        match &self.namespace {
            // Joined by hand: a plan builds two of these per transfer, and `format!`'s
            // machinery was ~1.5 % of a 10^5-entry WASM push.
            Some(ns) => {
                let mut path = String::with_capacity(ns.0.len() + 1 + name.len());
                path.push_str(&ns.0);
                path.push('/');
                path.push_str(name);
                path
            }
            None => name.to_string(),
        }
    }

    /// The remote folder a rebuild lists, relative to the prefix: `{ns}/`, or empty solo (the
    /// whole bucket).
    pub fn listing_prefix(&self) -> String {
        self.under_binding("")
    }

    /// The rel of a remote key (relative to the prefix). Refuses keys outside the bound
    /// namespace and unsafe keys, saying which.
    pub fn rel_from_remote_key(&self, key: &str) -> CoreResult<RelPath> {
        match &self.namespace {
            None => self.rel(key),
            Some(ns) => match strip_first_segment(key, &ns.0) {
                Some(rest) => self.rel(rest),
                None => Err(CoreError::KeyOutsideNamespace {
                    key: key.to_string(),
                    namespace: ns.0.clone(),
                }),
            },
        }
    }

    /// Classifies a cache-relative path. `foreign` names top-level folders that hold another
    /// namespace's marker (see [`foreign_namespaces_in`]).
    pub fn classify_cache_path(&self, path: &str, foreign: &ForeignNamespaces) -> CachePlace {
        match self.place_of(path, foreign) {
            PlaceRef::Payload(rel) => CachePlace::Payload(rel.to_rel_path()),
            PlaceRef::Internal(rel) => CachePlace::Internal(rel.to_string()),
            PlaceRef::RootLayout(rel) => CachePlace::RootLayout(RelPath(rel.to_string())),
            PlaceRef::ForeignNamespace(ns) => CachePlace::ForeignNamespace(ns.to_string()),
            PlaceRef::Other => CachePlace::Other,
            PlaceRef::Unsafe(reason) => CachePlace::Unsafe(reason),
        }
    }

    /// [`PathModel::classify_cache_path`] borrowing from `path`: the survey classifies every
    /// walked file and keeps only slices of the listing buffer. The path rules are checked once,
    /// on the whole path: a rel cut from a path that passed them (its segments after the
    /// namespace folder) passes them too, so only the key length is left to check.
    pub(crate) fn place_of<'a>(&self, path: &'a str, foreign: &ForeignNamespaces) -> PlaceRef<'a> {
        if let Err(reason) = check_relative(path) {
            return PlaceRef::Unsafe(reason);
        }
        if INTERNAL_EXACT.contains(&path) {
            return PlaceRef::Internal(path);
        }
        let first = first_segment_of(path);
        let nested = first.len() < path.len();
        match &self.namespace {
            Some(ns) => {
                if let Some(rest) = strip_first_segment(path, &ns.0) {
                    return self.place_in_bound_tree(rest);
                }
                if path == ns.0 {
                    return PlaceRef::Other;
                }
                if foreign.contains(first) {
                    return PlaceRef::ForeignNamespace(first);
                }
                if DATA_TREES.contains(&first) && nested {
                    return if !self.fits_key_limit(path) {
                        PlaceRef::Unsafe(PathRefusal::TooLong)
                    } else if is_internal(path) {
                        PlaceRef::Internal(path)
                    } else {
                        PlaceRef::RootLayout(path)
                    };
                }
                PlaceRef::Other
            }
            None => {
                if foreign.contains(first) && nested {
                    return PlaceRef::ForeignNamespace(first);
                }
                self.place_in_bound_tree(path)
            }
        }
    }

    /// Places a rel of the bound tree whose path rules were already checked.
    fn place_in_bound_tree<'a>(&self, rel: &'a str) -> PlaceRef<'a> {
        if is_internal(rel) {
            return PlaceRef::Internal(rel);
        }
        if is_never_synced(rel) {
            return PlaceRef::Other;
        }
        if self.fits_key_limit(rel) {
            // Every rule of `check_rel` holds: the path rules were checked on the whole path
            // (a rel inside it breaks none that the whole does not), the key limit just now.
            PlaceRef::Payload(RelRef(rel))
        } else {
            PlaceRef::Unsafe(PathRefusal::TooLong)
        }
    }
}

/// Top-level folders of a listing (cache-relative paths or remote keys) that hold a
/// `.namespace.json` marker, other than `own` (the bound namespace).
pub fn foreign_namespaces_in<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    own: Option<&Namespace>,
) -> ForeignNamespaces {
    paths
        .into_iter()
        .filter_map(|p| p.strip_suffix(NAMESPACE_MARKER)?.strip_suffix('/'))
        .filter(|folder| !folder.is_empty() && !folder.contains('/'))
        .filter(|folder| own.is_none_or(|ns| ns.as_str() != *folder))
        .map(str::to_string)
        .collect()
}
