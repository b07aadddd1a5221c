//! What a datastore is, before any run: the names of a file, the tree a run may act on, the
//! kinds of files swamp keeps, what a cache's layout says, and the datastore's timestamps.

pub mod binding;
pub mod file_class;
pub mod layout;
pub mod paths;
pub mod time;
