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

/// Calls the built-in `method` (as found on the prototype of `builtin`, a fresh instance of the
/// built-in) with `target` as `this`, through `Reflect`, whose throws come back as `Err`. A
/// subclass's or a Proxy's own `method` is never called: hostile input cannot throw through
/// the core's frames (which would leave a borrowed session unusable) or feed it a changing
/// answer, and a value the built-in does not accept (a Proxy, a plain object) is an `Err`.
fn call_builtin(builtin: &JsValue, method: &str, target: &JsValue) -> Result<JsValue, JsValue> {
    let prototype = js_sys::Reflect::get_prototype_of(builtin)?;
    let function: js_sys::Function =
        js_sys::Reflect::get(&prototype, &method.into())?.dyn_into()?;
    js_sys::Reflect::apply(&function, target, &js_sys::Array::new())
}

/// The entries of a JS `Map`, every key a string and every value read by `value`; anything
/// else is `invalid-input` naming `what`. The entries are read with the built-in
/// `Map.prototype.entries` and its iterator ([`call_builtin`]), from the map's own slots.
pub(super) fn map_entries<V>(
    map: &JsValue,
    what: &str,
    value: impl Fn(JsValue) -> Option<V>,
) -> Result<Vec<(String, V)>, JsValue> {
    let refuse = |why: &str| to_js_error(CoreError::input(format!("{what}: {why}")));
    let entries =
        call_builtin(&js_sys::Map::new(), "entries", map).map_err(|_| refuse("not a Map"))?;
    let mut out = Vec::new();
    loop {
        let step = call_builtin(&entries, "next", &entries).map_err(|_| refuse("not a Map"))?;
        let field = |name: &str| js_sys::Reflect::get(&step, &name.into());
        if field("done").map_err(|_| refuse("not a Map"))?.is_truthy() {
            return Ok(out);
        }
        // A fresh `[key, value]` array the built-in iterator made.
        let entry = field("value").map_err(|_| refuse("not a Map"))?;
        let at = |i: u32| js_sys::Reflect::get_u32(&entry, i).map_err(|_| refuse("not a Map"));
        let key = at(0)?
            .as_string()
            .ok_or_else(|| refuse("a key is not a string"))?;
        let found = value(at(1)?).ok_or_else(|| refuse("a value has the wrong type"))?;
        out.push((key, found));
    }
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

/// A `Map<string, Uint8Array>` from JS (shards by partition), each value copied once: through
/// a fresh built-in `Uint8Array` made from it, so a subclass's `length` getter is never read.
pub(super) fn bytes_map(map: &JsValue, what: &str) -> Result<Vec<(String, Vec<u8>)>, JsValue> {
    let constructor = js_sys::Uint8Array::new_with_length(0).constructor();
    map_entries(map, what, |v| {
        if !v.is_instance_of::<js_sys::Uint8Array>() {
            return None;
        }
        let copy = js_sys::Reflect::construct(&constructor, &js_sys::Array::of1(&v)).ok()?;
        Some(copy.dyn_into::<js_sys::Uint8Array>().ok()?.to_vec())
    })
}

/// A JS `Date` as an ISO-8601 instant; anything else, or an invalid date, is `invalid-input`.
/// Its time is read with the built-in `Date.prototype.getTime` ([`call_builtin`]) and formatted
/// in the core (`toISOString` throws on an invalid date).
pub(super) fn date_iso(date: &JsValue, what: &str) -> Result<String, JsValue> {
    let epoch_ms = call_builtin(&js_sys::Date::new_0().into(), "getTime", date)
        .ok()
        .and_then(|ms| ms.as_f64())
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
