//! Byte-level helpers that know nothing of datastores: searches and comparison a word at a
//! time, the order of many keys that share long prefixes, short strings kept inline, text from the bucket made safe to show.

pub mod buf;
pub mod compare;
pub mod key_sort;
pub mod printable;
pub mod swar;
pub mod text;
