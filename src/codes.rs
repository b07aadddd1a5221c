//! The stable codes a plan, a doctor or a refusal carries, as types.
//!
//! Scripts match on these strings (`--json`, `SyncError.code`), so each is an enum variant with
//! exactly one spelling, listed once: a typo cannot compile, and the shim checks its own lists
//! against these (through the WASM export `codeLists`), so neither side can add a code the other
//! does not know.

use serde::{Serialize, Serializer};
use tsify_next::Tsify;

use crate::error::{CoreError, PathRefusal};

/// Declares a code enum: variants with their kebab-case spelling, `as_str`, `ALL`, and
/// serialization as that string.
macro_rules! codes {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every code of this kind.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stable spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

codes! {
    /// Why a plan withheld or held back something, or needs a person: the code of a
    /// [`crate::safety::Verdict`].
    GuardCode {
        /// Namespaced, with data trees also at the cache root (deletes withheld).
        MixedLayout => "mixed-layout",
        /// The index has entries, the bound tree is empty (deletes withheld).
        NamespaceTreeMissing => "namespace-tree-missing",
        /// More deletes than the caps allow (withheld).
        DeleteCap => "delete-cap",
        /// A metadata-only pull left files remote (deletes withheld).
        LazyHydration => "lazy-hydration",
        /// The sync-state sidecar cannot be read (deletes withheld).
        SidecarUnreadable => "sidecar-unreadable",
        /// The walk or the listing failed (deletes withheld).
        WalkError => "walk-error",
        /// The catalog export would shrink a much larger remote copy (held back).
        CatalogShrink => "catalog-shrink",
        /// Folders of the cache are symlinks (never followed; deletes withheld).
        SymlinkInPath => "symlink-in-path",
        /// Changed here and in the bucket since the last sync.
        Conflict => "conflict",
        /// A local file where the index has a folder, or the reverse (not uploaded).
        PathConflict => "path-conflict",
        /// Local names no key may carry (not uploaded).
        UnsafeLocalPaths => "unsafe-local-paths",
        /// Deletes nobody confirmed (withheld; push again with `--yes`).
        ConfirmationRequired => "confirmation-required",
        /// Bucket keys a rebuild could not index (they cannot be safe cache paths).
        UnsafeKeys => "unsafe-keys",
        /// Index entries a pull did not download (path rules, case or file/folder clashes).
        RefusedEntries => "refused-entries",
        /// Indexed files absent here, kept in the bucket for want of evidence (a warning).
        MissingNotDeleted => "missing-not-deleted",
        /// Index entries whose objects are gone, removed from the index by a pull (a warning).
        EntriesPruned => "entries-pruned",
    }
}

codes! {
    /// What the doctor found: the code of a [`crate::runs::repair::plan::Problem`].
    ProblemCode {
        /// Data trees at the cache root beside the namespace folder.
        MixedLayout => "mixed-layout",
        /// Folders of other namespaces in the cache.
        ForeignNamespaceDir => "foreign-namespace-dir",
        /// Bookkeeping inside the synced tree.
        InternalFileInTree => "internal-file-in-tree",
        /// Names that differ only in case or unicode form.
        CaseCollision => "case-collision",
        /// Indexed files absent from the cache.
        IndexDrift => "index-drift",
        /// Local names the datastore cannot sync.
        UnsafePath => "unsafe-path",
        /// Index entries whose keys cannot be cache paths.
        UnsafeIndexEntry => "unsafe-index-entry",
        /// Index entries where one file needs another's name as a folder.
        IndexPathConflict => "index-path-conflict",
        /// Conflict copies waiting for `s3sync resolve`.
        ConflictCopies => "conflict-copies",
        /// The sync-state sidecar cannot be read.
        SidecarUnreadable => "sidecar-unreadable",
        /// A symlinked folder in the cache.
        SymlinkInPath => "symlink-in-path",
        /// The remote index exists but cannot be read.
        IndexCorrupt => "index-corrupt",
        /// The v2 meta names a partition that is not one safe segment (no shard is read).
        PartitionNameUnsafe => "partition-name-unsafe",
        /// Parts of the cache could not be read.
        WalkError => "walk-error",
        /// Symlinked files in the cache (never followed, so never pushed).
        SymlinkedFile => "symlinked-file",
        /// Our temporary files a killed run left, untouched for over an hour.
        LeftoverTempFiles => "leftover-temp-files",
    }
}

codes! {
    /// A doctor note's code: a fact worth knowing that is not a problem.
    NoteCode {
        /// Our temporary files written within the hour (a run may still be going).
        RecentTempFiles => "recent-temp-files",
    }
}

codes! {
    /// Why an index entry or a bucket key is not acted on, beyond the path rules
    /// ([`PathRefusal`]); see [`RefusalCode`].
    EntryRefusal {
        /// Names that differ only in case on a case-insensitive file system.
        CaseCollision => "case-collision",
        /// A file where another key needs a folder.
        PathConflict => "path-conflict",
        /// A shard partition name that is not one safe segment.
        PartitionNameUnsafe => "partition-name-unsafe",
        /// A value no index may hold (a size out of range, a key that is not text).
        InvalidInput => "invalid-input",
    }
}

/// Why an index entry or a bucket key is refused: a path rule, or an entry-level reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalCode {
    /// A path rule ([`PathRefusal::code`]).
    Path(PathRefusal),
    /// An entry-level reason.
    Entry(EntryRefusal),
}

impl RefusalCode {
    /// The stable spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::Path(reason) => reason.code(),
            RefusalCode::Entry(reason) => reason.as_str(),
        }
    }

    /// The refusal spelled `text`, if there is one.
    pub fn parse(text: &str) -> Option<RefusalCode> {
        PathRefusal::ALL
            .iter()
            .find(|r| r.code() == text)
            .map(|r| RefusalCode::Path(*r))
            .or_else(|| {
                EntryRefusal::ALL
                    .iter()
                    .find(|r| r.as_str() == text)
                    .map(|r| RefusalCode::Entry(*r))
            })
    }

    /// The refusal a [`crate::error::CoreError`] stands for, when it is about one entry.
    pub fn of_error(error: &crate::error::CoreError) -> RefusalCode {
        use crate::error::CoreError;
        match error {
            CoreError::UnsafePath { reason, .. } | CoreError::InvalidNamespace { reason, .. } => {
                RefusalCode::Path(*reason)
            }
            CoreError::UnsafePartition { .. } => {
                RefusalCode::Entry(EntryRefusal::PartitionNameUnsafe)
            }
            _ => RefusalCode::Entry(EntryRefusal::InvalidInput),
        }
    }
}

impl From<PathRefusal> for RefusalCode {
    fn from(reason: PathRefusal) -> RefusalCode {
        RefusalCode::Path(reason)
    }
}

impl From<EntryRefusal> for RefusalCode {
    fn from(reason: EntryRefusal) -> RefusalCode {
        RefusalCode::Entry(reason)
    }
}

impl Serialize for RefusalCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for RefusalCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for RefusalCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Every stable code the core uses, by kind (sorted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Tsify)]
#[tsify(missing_as_null, hashmap_as_object)]
pub struct CodeLists {
    /// Guard (verdict) codes.
    pub guard: Vec<&'static str>,
    /// Doctor problem codes.
    pub problem: Vec<&'static str>,
    /// Refusal codes (path rules and entry-level reasons).
    pub refusal: Vec<&'static str>,
    /// Core error codes.
    pub error: Vec<&'static str>,
}

/// Every stable code the core uses, by kind, each list sorted: what the shim's own lists are
/// checked against.
pub fn code_lists() -> CodeLists {
    let sorted = |mut list: Vec<&'static str>| {
        list.sort_unstable();
        list
    };
    CodeLists {
        guard: sorted(GuardCode::ALL.iter().map(|c| c.as_str()).collect()),
        problem: sorted(ProblemCode::ALL.iter().map(|c| c.as_str()).collect()),
        refusal: sorted(
            PathRefusal::ALL
                .iter()
                .map(|r| r.code())
                .chain(EntryRefusal::ALL.iter().map(|r| r.as_str()))
                .collect(),
        ),
        error: sorted(
            CoreError::CODES
                .iter()
                .copied()
                .chain(PathRefusal::ALL.iter().map(|r| r.code()))
                .collect(),
        ),
    }
}
