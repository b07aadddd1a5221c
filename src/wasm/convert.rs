//! Conversions at the boundary: core errors to JS errors with their code, results to JS
//! values or JSON, JS values to Rust shapes, and the checks on numbers that cross as `f64`.

use serde::Serialize;
use tsify_next::Tsify;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::CoreError;

/// Turns a core error into a JS `Error` with a `code` property.
pub(super) fn to_js_error(error: CoreError) -> JsValue {
    let js_error = js_sys::Error::new(&error.to_string());
    // Setting a property on a fresh Error object cannot fail; if it somehow did, the message
    // still carries the meaning.
    let _ = js_sys::Reflect::set(&js_error, &"code".into(), &error.code().into());
    js_error.into()
}

/// Serializes a small result into a plain JS object (bytes as one `Uint8Array`, not an array
/// of numbers).
pub(super) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(
            &serde_wasm_bindgen::Serializer::json_compatible().serialize_bytes_as_arrays(false),
        )
        .map_err(|e| to_js_error(CoreError::input(e.to_string())))
}

/// Serializes a large result (a plan) as one JSON string, which `JSON.parse` reads faster than
/// thousands of objects built one by one across the boundary.
pub(super) fn to_json<T: Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| to_js_error(CoreError::input(e.to_string())))
}

pub(super) fn options<T: Default + serde::de::DeserializeOwned>(
    value: JsValue,
) -> Result<T, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    from_js(value, "options")
}

/// A value from JS in the shape `T` declares; a wrong shape is `invalid-input` naming `what`.
pub(super) fn from_js<T: serde::de::DeserializeOwned>(
    value: JsValue,
    what: &str,
) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| to_js_error(CoreError::input(format!("{what}: {e}"))))
}

/// A large result (a plan) as a JS value: serialized to one JSON string in the core and read by
/// `JSON.parse` on the other side, which is faster than thousands of objects built one by one
/// across the boundary.
pub(super) fn to_parsed_json<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(&to_json(value)?)
}

/// The entries of a JS `Map`, every key a string and every value read by `value`; anything
/// else is `invalid-input` naming `what`. The map is walked with the iterator protocol through
/// `js_sys::try_iter`, which catches what a hostile iterator throws.
pub(super) fn map_entries<V>(
    map: &JsValue,
    what: &str,
    value: impl Fn(JsValue) -> Option<V>,
) -> Result<Vec<(String, V)>, JsValue> {
    let refuse = |why: &str| to_js_error(CoreError::input(format!("{what}: {why}")));
    if !map.is_instance_of::<js_sys::Map>() {
        return Err(refuse("not a Map"));
    }
    // What a hostile iterator throws is caught and refused with the code, never passed on.
    let entries = js_sys::try_iter(map)
        .ok()
        .flatten()
        .ok_or_else(|| refuse("not iterable"))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|_| refuse("its iterator threw"))?;
        let entry: js_sys::Array = entry.dyn_into().map_err(|_| refuse("not a Map entry"))?;
        let key = entry
            .get(0)
            .as_string()
            .ok_or_else(|| refuse("a key is not a string"))?;
        let found = value(entry.get(1)).ok_or_else(|| refuse("a value has the wrong type"))?;
        out.push((key, found));
    }
    Ok(out)
}

/// A `Map<string, string>` from JS (hashes by path) as a sorted map.
pub(super) fn string_map(
    map: &JsValue,
    what: &str,
) -> Result<std::collections::BTreeMap<String, String>, JsValue> {
    Ok(map_entries(map, what, |v| v.as_string())?
        .into_iter()
        .collect())
}

/// A `Map<string, Uint8Array>` from JS (shards by partition), each value copied once.
pub(super) fn bytes_map(map: &JsValue, what: &str) -> Result<Vec<(String, Vec<u8>)>, JsValue> {
    map_entries(map, what, |v| {
        v.dyn_into::<js_sys::Uint8Array>()
            .ok()
            .map(|bytes| bytes.to_vec())
    })
}

/// A JS `Date` as an ISO-8601 instant; anything else, or an invalid date, is `invalid-input`.
/// Formatted in the core from the epoch time: `toISOString` throws on an invalid date.
pub(super) fn date_iso(date: &JsValue, what: &str) -> Result<String, JsValue> {
    let epoch_ms = date
        .dyn_ref::<js_sys::Date>()
        .map(|d| d.get_time())
        .filter(|ms| ms.is_finite())
        .ok_or_else(|| to_js_error(CoreError::input(format!("{what} is not a valid Date"))))?;
    Ok(crate::model::time::format_iso_millis(millis(
        epoch_ms, what,
    )?))
}

/// Epoch milliseconds from JS (a number) as an integer; NaN and infinities are refused.
pub(super) fn millis(value: f64, what: &str) -> Result<i64, JsValue> {
    if value.is_finite() && value.abs() < 9.0e15 {
        Ok(value.trunc() as i64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what} is not a time in epoch milliseconds"
        ))))
    }
}

/// A duration in ms from JS as an integer.
/// A count from JS (a whole number of things, not negative).
pub(super) fn count(value: f64, what: &str) -> Result<u64, JsValue> {
    if value.is_finite() && (0.0..9.0e15).contains(&value) && value.fract() == 0.0 {
        Ok(value as u64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what}: {value} is not a count"
        ))))
    }
}

pub(super) fn duration(value: f64, what: &str) -> Result<u64, JsValue> {
    if value.is_finite() && (0.0..9.0e15).contains(&value) {
        Ok(value.trunc() as u64)
    } else {
        Err(to_js_error(CoreError::input(format!(
            "{what} is not a duration in milliseconds"
        ))))
    }
}

/// Refuses a time that is not an ISO-8601 instant, naming the argument.
pub(super) fn iso_time(text: &str, what: &str) -> Result<(), JsValue> {
    crate::model::time::parse_iso_millis(text)
        .map(|_| ())
        .ok_or_else(|| to_js_error(CoreError::input(format!("{what}: {text:?} is not a time"))))
}

/// Options of a push plan: the user's delete policy and the run's facts (flat for JS).
#[derive(Default, serde::Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
// Every field is an Option: JS callers pass `{flag: undefined}`, which serde-wasm-bindgen reads
// as a present unit value, not as a missing field.
pub(super) struct PushOptions {
    /// Delete entries absent locally even without a tombstone (still through every guard).
    pub(super) delete_missing: Option<bool>,
    /// Cap on deletes (default 500).
    pub(super) max_deletes: Option<u64>,
    /// Cap on deletes as a percentage of the index, above 10 deletes (default 25).
    pub(super) max_delete_percent: Option<f64>,
    /// Let the catalog export shrink.
    pub(super) allow_catalog_shrink: Option<bool>,
    /// Errors met walking the cache.
    pub(super) walk_errors: Option<u64>,
    /// Errors met listing the bucket.
    pub(super) listing_errors: Option<u64>,
    /// A metadata-only pull left files remote.
    pub(super) lazy_pull_active: Option<bool>,
    /// The sidecar exists but cannot be read (deletes are then withheld).
    pub(super) sidecar_unreadable: Option<bool>,
    /// Folders of the cache that are symlinks, never walked (deletes are then withheld).
    pub(super) symlinked_folders: Option<u64>,
}

/// Options of a pull plan, flat for JS (see `PushOptions` on why every field is optional).
#[derive(Default, serde::Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct PullOptions {
    /// Lazy hydration: skip the bytes of `raw` files of the data trees, create their folders.
    // (No `**/` here: this comment becomes a TypeScript doc comment, which `*/` would close.)
    pub(super) metadata_only: Option<bool>,
    /// The cache is on a case-insensitive file system.
    pub(super) case_insensitive: Option<bool>,
    /// Download only absent files; keep local files that differ.
    pub(super) keep_existing: Option<bool>,
    /// Scoped pull: only rels under these folders (empty: everything).
    pub(super) scope: Option<Vec<String>>,
    /// Normalised tombstones: files deleted here and not yet pushed are not brought back.
    pub(super) tombstones: Option<Vec<String>>,
}
