//! What crosses the WASM boundary as one buffer instead of many values.

pub mod listing;
