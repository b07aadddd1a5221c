//! `doctor`: what is wrong with a cache (problems) and what is worth knowing (notes), as a run.
//! Which facts are looked at, in what order, and what each means for a person are decided in
//! [`machine`]; the shim reads the index, walks the cache, stats our temporary files and reads
//! the sidecar ([`events`]). The layout's own problems are the survey's
//! ([`crate::runs::repair::plan::diagnose`]).

pub mod events;
pub mod machine;
