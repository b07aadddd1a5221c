//! Typed errors with stable codes.
//!
//! Every fallible public function of the core returns [`CoreError`]. Each variant carries a
//! stable, kebab-case `code` (what scripts and the CLI match on) and a lowercase, specific
//! message (what a person reads). The WASM boundary turns one into a JS `Error` whose `code`
//! property is [`CoreError::code`]; nothing else crosses.

use thiserror::Error;

/// Why a relative path, key or namespace was refused.
///
/// Kept separate from [`CoreError`] so table tests can name the exact reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathRefusal {
    /// The path is the empty string.
    Empty,
    /// The path starts with `/` (an absolute path or a key with a leading slash).
    Absolute,
    /// A segment is `.` or `..`.
    DotSegment,
    /// Two slashes in a row (an empty segment).
    EmptySegment,
    /// The path ends with `/`, so it names a folder, not a file.
    TrailingSlash,
    /// The path contains a backslash, which Windows would read as a separator.
    Backslash,
    /// The path contains NUL or another control character.
    ControlCharacter,
    /// A segment starts with a Windows drive letter (`C:`).
    DriveLetter,
    /// A segment is a Windows reserved device name (`CON`, `NUL`, `COM1`, ...).
    ReservedName,
    /// The path is longer than S3's 1,024-byte key limit once mapped to a remote key.
    TooLong,
    /// A segment is longer than 255 bytes, the name limit of common file systems (ext4, APFS,
    /// NTFS in UTF-16 units is close): the bucket can hold it, no cache can.
    SegmentTooLong,
    /// A namespace has more than one segment.
    NamespaceNotOneSegment,
    /// A namespace starts with `.` or `_`, which the datastore reserves for its own files.
    NamespaceReservedPrefix,
    /// A namespace is the name of a data tree or a never-synced folder (`data`, `secrets`, ...),
    /// which would make the namespaced layout indistinguishable from the root layout.
    NamespaceReservedName,
}

impl PathRefusal {
    /// Every path refusal.
    pub const ALL: &'static [PathRefusal] = &[
        PathRefusal::Empty,
        PathRefusal::Absolute,
        PathRefusal::DotSegment,
        PathRefusal::EmptySegment,
        PathRefusal::TrailingSlash,
        PathRefusal::Backslash,
        PathRefusal::ControlCharacter,
        PathRefusal::DriveLetter,
        PathRefusal::ReservedName,
        PathRefusal::TooLong,
        PathRefusal::SegmentTooLong,
        PathRefusal::NamespaceNotOneSegment,
        PathRefusal::NamespaceReservedPrefix,
        PathRefusal::NamespaceReservedName,
    ];

    /// The stable code of this refusal.
    pub fn code(self) -> &'static str {
        match self {
            PathRefusal::Empty => "path-empty",
            PathRefusal::Absolute => "path-absolute",
            PathRefusal::DotSegment => "path-dot-segment",
            PathRefusal::EmptySegment => "path-empty-segment",
            PathRefusal::TrailingSlash => "path-trailing-slash",
            PathRefusal::Backslash => "path-backslash",
            PathRefusal::ControlCharacter => "path-control-character",
            PathRefusal::DriveLetter => "path-drive-letter",
            PathRefusal::ReservedName => "path-reserved-name",
            PathRefusal::TooLong => "path-too-long",
            PathRefusal::SegmentTooLong => "path-segment-too-long",
            PathRefusal::NamespaceNotOneSegment => "namespace-not-one-segment",
            PathRefusal::NamespaceReservedPrefix => "namespace-reserved-prefix",
            PathRefusal::NamespaceReservedName => "namespace-reserved-name",
        }
    }

    /// A short, lowercase description of the refusal.
    pub fn describe(self) -> &'static str {
        match self {
            PathRefusal::Empty => "is empty",
            PathRefusal::Absolute => "is absolute (starts with '/')",
            PathRefusal::DotSegment => "has a '.' or '..' segment",
            PathRefusal::EmptySegment => "has an empty segment ('//')",
            PathRefusal::TrailingSlash => "ends with '/'",
            PathRefusal::Backslash => "contains a backslash",
            PathRefusal::ControlCharacter => "contains a nul or control character",
            PathRefusal::DriveLetter => "has a windows drive letter ('c:') as a segment",
            PathRefusal::ReservedName => "has a windows reserved device name as a segment",
            PathRefusal::TooLong => "is longer than the 1024-byte s3 key limit",
            PathRefusal::SegmentTooLong => {
                "has a segment longer than 255 bytes, which no common file system can hold"
            }
            PathRefusal::NamespaceNotOneSegment => "must be a single path segment",
            PathRefusal::NamespaceReservedPrefix => "must not start with '.' or '_'",
            PathRefusal::NamespaceReservedName => {
                "must not be the name of a data tree or 'secrets'"
            }
        }
    }
}

/// The one error type of the core.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CoreError {
    /// A relative path (index key, cache path, remote key after mapping) was refused.
    #[error("unsafe path {path:?}: {}", .reason.describe())]
    UnsafePath {
        /// The refused input, as given.
        path: String,
        /// Why it was refused.
        reason: PathRefusal,
    },
    /// A namespace was refused.
    #[error("invalid namespace {namespace:?}: {}", .reason.describe())]
    InvalidNamespace {
        /// The refused namespace, as given.
        namespace: String,
        /// Why it was refused.
        reason: PathRefusal,
    },
    /// A remote key does not belong to the bound namespace.
    #[error("key {key:?} is outside namespace {namespace:?}")]
    KeyOutsideNamespace {
        /// The remote key.
        key: String,
        /// The bound namespace.
        namespace: String,
    },
    /// The remote index exists but cannot be read. Never treated as empty.
    #[error("index is corrupt: {detail}")]
    IndexCorrupt {
        /// What is wrong, naming the entry where there is one.
        detail: String,
    },
    /// The remote index a run read and was about to publish over is gone: another writer
    /// deleted or moved it mid-run. Nothing is published over a copy that no longer exists.
    #[error("{detail}")]
    IndexVanished {
        /// Which index, and when it went.
        detail: String,
    },
    /// A catalog export would replace a much larger remote copy (an emptied catalog): held
    /// back, nothing written.
    #[error("{detail}")]
    CatalogShrink {
        /// Which export, and the two sizes.
        detail: String,
    },
    /// Another writer's catalog export landed between our HEAD and our write: theirs stays,
    /// nothing was written.
    #[error("{detail}")]
    ExportConflict {
        /// Which export, and where.
        detail: String,
    },
    /// The server ignores conditional writes, and the push did not waive them: nothing was
    /// written (a concurrent writer's objects could be overwritten without a trace).
    #[error("{detail}")]
    ConditionalWritesUnsupported {
        /// What was found, and what to do.
        detail: String,
    },
    /// An index or meta file declares a version this core does not know.
    #[error("unsupported index version {version} in {file}")]
    IndexVersionUnsupported {
        /// Which file (`.datastore-index.json`, `_index/_meta.json`, a shard).
        file: String,
        /// The version it declares.
        version: u64,
    },
    /// An index names more entries than the run accepts: it is not loaded. A genuine index
    /// that large needs the limit raised; a hostile one would otherwise cost memory in
    /// proportion (and a pull, a GET per entry).
    #[error("{file} names more than {limit} entries, the most this run loads: nothing was read from it. If the index is genuine, raise the limit (--max-index-entries, or maxIndexEntries)")]
    IndexTooLarge {
        /// The index file.
        file: String,
        /// The limit.
        limit: u64,
    },
    /// An input from the shim (a listing, options, a result batch) is malformed.
    #[error("invalid input: {detail}")]
    InvalidInput {
        /// What is wrong.
        detail: String,
    },
    /// `_index/_meta.json` names a partition that is not a safe single segment. Its shard key
    /// `_index/{partition}.json` could then name an object outside `_index/` (a `..` that a URL
    /// normalizer collapses), so no shard of that meta is read and nothing is written.
    #[error("unsafe partition name {partition:?} in _index/_meta.json: {detail}")]
    UnsafePartition {
        /// The partition name as listed.
        partition: String,
        /// Why it was refused.
        detail: String,
    },
    /// A saved plan no longer matches the plan a push would run now (the bucket or the cache
    /// changed since it was made).
    #[error("the bucket or the cache changed since the plan was made; make a new plan with `s3sync plan`")]
    PlanStale,
    /// A repair's move found a file at its target that appeared after the plan was made; it
    /// is never overwritten, and the repair stops so that a new plan can account for it.
    #[error("{path} appeared while repairing; run `s3sync repair` again")]
    RepairConflict {
        /// The target cache path.
        path: String,
    },
    /// The namespace uses the sharded (v2) index, which migrate does not write: its readers
    /// would ignore the copies' entries, so removing originals would leave them unindexed.
    #[error("{namespace}/ uses the sharded (v2) index, which migrate does not write: nothing was copied or removed. Migrate before moving the namespace to shards, or copy the objects and run `s3sync rebuild-index --apply --force`")]
    MigrateV2Unsupported {
        /// The namespace.
        namespace: String,
    },
    /// An index changed between the read and a publish that must not overwrite it.
    #[error("{what}; run it again")]
    PublishConflict {
        /// Which index changed, and during what.
        what: String,
    },
    /// The pull `resolve` runs first failed for some files: nothing is resolved, since a
    /// conflict it did not set aside would be settled blind.
    #[error(
        "the pull before resolving failed for {failed} files ({examples}); nothing was resolved"
    )]
    ResolvePullFailed {
        /// How many failed.
        failed: u64,
        /// Up to three of them.
        examples: String,
    },
    /// The cache cannot all be read (permissions), so no repair can be planned on it.
    #[error("cannot repair while the cache cannot be read: {detail}")]
    CacheUnreadable {
        /// The first error of the walk.
        detail: String,
    },
    /// A file the plan asked to hash is gone: the cache changed while it was being planned.
    #[error("{path} vanished while planning the repair")]
    FileVanished {
        /// The cache path.
        path: String,
    },
    /// A run given no namespace on a cache that holds namespaces and nothing at its root: a
    /// solo run would read the namespace's index as the root's and replace it (see
    /// [`crate::model::binding`]). Nothing was read or written.
    #[error("this cache holds the namespaced layout ({}) and nothing at its root: pass the namespace (--namespace {}); nothing was done", .namespaces.join(", "), .namespaces.first().map_or("<ns>", String::as_str))]
    NamespaceRequired {
        /// The namespaces the cache holds, sorted.
        namespaces: Vec<String>,
    },
    /// A listing under the bound tree holds another datastore's index: the prefix or the
    /// namespace is not the one its files were written with, and a rebuild would index that
    /// datastore's bookkeeping as payload.
    #[error("{key} is another datastore's index: this prefix holds a datastore under {folder}/ (a namespace, or a longer prefix); pass the --namespace or --prefix it was written with; nothing was written")]
    NestedDatastore {
        /// The index key found, relative to the bound tree.
        key: String,
        /// The folder that datastore lives in.
        folder: String,
    },
    /// Another writer held the datastore lock for longer than the run waits.
    #[error("{message}")]
    LockTimeout {
        /// Who holds it, since when, and how to clear it (text from the bucket escaped).
        message: String,
    },
    /// The lease of a held lock was lost (another writer's lock replaced ours).
    #[error("{message}")]
    LockLost {
        /// Who took it, or how it was lost.
        message: String,
    },
    /// So many objects the index names were missing in a row that the index does not describe
    /// this bucket: the pull stops reading it (and prunes nothing more).
    #[error("{in_a_row} objects the index names were missing in a row (each read twice), so the index does not describe this bucket: check --endpoint, --bucket and --prefix; `s3sync rebuild-index --apply` indexes what the bucket holds; --max-missing 0 reads every entry")]
    ObjectsMissing {
        /// How many were missing in a row before the pull stopped.
        in_a_row: u64,
    },
    /// A sync-state sidecar that exists but cannot be read.
    #[error("sync state is corrupt: {detail}")]
    SyncStateCorrupt {
        /// What is wrong.
        detail: String,
    },
}

impl CoreError {
    /// The codes of the errors that are not path refusals (those are [`PathRefusal::ALL`]).
    pub const CODES: &'static [&'static str] = &[
        "catalog-shrink",
        "conditional-writes-unsupported",
        "conflict",
        "download-failed",
        "key-outside-namespace",
        "index-corrupt",
        "index-too-large",
        "index-vanished",
        "index-version-unsupported",
        "invalid-input",
        "lock-lost",
        "lock-timeout",
        "migrate-v2-unsupported",
        "namespace-required",
        "nested-datastore",
        "objects-missing",
        "partition-name-unsafe",
        "plan-stale",
        "publish-conflict",
        "repair-conflict",
        "sync-state-corrupt",
        "walk-error",
    ];

    /// The stable code of this error, e.g. `index-corrupt` or `path-dot-segment`.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::UnsafePath { reason, .. } | CoreError::InvalidNamespace { reason, .. } => {
                reason.code()
            }
            CoreError::KeyOutsideNamespace { .. } => "key-outside-namespace",
            CoreError::IndexCorrupt { .. } => "index-corrupt",
            CoreError::IndexTooLarge { .. } => "index-too-large",
            CoreError::IndexVanished { .. } => "index-vanished",
            CoreError::ConditionalWritesUnsupported { .. } => "conditional-writes-unsupported",
            CoreError::CatalogShrink { .. } => "catalog-shrink",
            CoreError::ExportConflict { .. } => "conflict",
            CoreError::IndexVersionUnsupported { .. } => "index-version-unsupported",
            CoreError::InvalidInput { .. } => "invalid-input",
            CoreError::UnsafePartition { .. } => "partition-name-unsafe",
            CoreError::PlanStale => "plan-stale",
            CoreError::RepairConflict { .. } => "repair-conflict",
            CoreError::MigrateV2Unsupported { .. } => "migrate-v2-unsupported",
            CoreError::PublishConflict { .. } => "publish-conflict",
            CoreError::ResolvePullFailed { .. } => "download-failed",
            CoreError::FileVanished { .. } | CoreError::CacheUnreadable { .. } => "walk-error",
            CoreError::SyncStateCorrupt { .. } => "sync-state-corrupt",
            CoreError::NamespaceRequired { .. } => "namespace-required",
            CoreError::NestedDatastore { .. } => "nested-datastore",
            CoreError::LockTimeout { .. } => "lock-timeout",
            CoreError::LockLost { .. } => "lock-lost",
            CoreError::ObjectsMissing { .. } => "objects-missing",
        }
    }

    /// Shorthand for [`CoreError::IndexCorrupt`].
    pub(crate) fn corrupt(detail: impl Into<String>) -> Self {
        CoreError::IndexCorrupt {
            detail: detail.into(),
        }
    }

    /// Shorthand for [`CoreError::InvalidInput`].
    pub(crate) fn input(detail: impl Into<String>) -> Self {
        CoreError::InvalidInput {
            detail: detail.into(),
        }
    }
}

/// The result type of the core.
pub type CoreResult<T> = Result<T, CoreError>;
