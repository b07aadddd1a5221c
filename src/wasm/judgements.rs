//! Single decisions the shim asks for between steps: object conditions, guards, breakers, the
//! migration plan, what a pull keeps aside.

use wasm_bindgen::prelude::*;

use crate::error::CoreError;
use crate::model::paths::PathModel;
use crate::runs::outcome::{self, ReportFacts};
use crate::runs::pull::aside::{self, CopyFound, FileContent};
use crate::runs::push::race;
use crate::safety::delete_version::{self, ProvenVersion};
use crate::safety::object_condition::{self, ExpectedVersion, ObjectFacts, OurBytes};

use super::convert::*;

/// Plans the remote side of a solo → namespaced migrate from one listing of the whole bucket
/// (`key\0size\0etag\0lastModified\0` records, `migrateListing`), the solo index and the
/// namespace's index (raw bytes, when they exist); `now` dates index entries built from copies
/// listed without a date. An index that does not parse is `index-corrupt`, never read as empty.
#[wasm_bindgen(js_name = planMigrate, unchecked_return_type = "MigratePlan")]
pub fn plan_migrate(
    namespace: String,
    prefix: Option<String>,
    listing: &[u8],
    solo_index: Option<Vec<u8>>,
    ns_index: Option<Vec<u8>>,
    #[wasm_bindgen(unchecked_param_type = "Date")] now: JsValue,
) -> Result<JsValue, JsValue> {
    let now_iso = date_iso(&now, "now")?;
    let model =
        PathModel::new(Some(&namespace), prefix.as_deref().unwrap_or("")).map_err(to_js_error)?;
    if model.namespace().is_none() {
        return Err(to_js_error(CoreError::input("migrate needs a namespace")));
    }
    let listed = crate::wire::listing::decode_remote(listing).map_err(to_js_error)?;
    let parse = |bytes: Option<Vec<u8>>| {
        bytes
            .as_deref()
            .map(crate::index::Index::parse)
            .transpose()
            .map_err(to_js_error)
    };
    let solo = parse(solo_index)?;
    let ns = parse(ns_index)?;
    to_parsed_json(&crate::runs::migrate::plan::plan_migrate(
        &model,
        crate::runs::migrate::plan::MigrateInputs {
            listing: &listed,
            solo_index: solo.as_ref(),
            ns_index: ns.as_ref(),
            now_iso: &now_iso,
        },
    ))
}

/// What follows losing publish attempt `lostAttempt` (from 1), given `jitter` drawn from [0, 1):
/// `{step: "retry", pauseMs}` or `{step: "giveUp", attempts}` (see `runs::push::race`).
#[wasm_bindgen(js_name = afterLostRace, unchecked_return_type = "RaceStep")]
pub fn after_lost_race(lost_attempt: f64, jitter: f64) -> Result<JsValue, JsValue> {
    let lost = u32::try_from(count(lost_attempt, "lostAttempt")?)
        .map_err(|_| to_js_error(CoreError::input("lostAttempt is too large")))?;
    to_js(&race::after_lost_race(lost, jitter).map_err(to_js_error)?)
}

/// Judges a replacement by `ours` (`{sha256, size}`; `undefined`: a delete) of an object
/// expected to hold `expected`, from a HEAD's answer (see `object_condition::judge_existing`):
/// `{verdict: "proceed", ifMatch}`, `"create"`, `"conflict"`, `"settled"` or `"readContent"`.
#[wasm_bindgen(js_name = judgeExisting, unchecked_return_type = "ObjectVerdict")]
pub fn judge_existing(
    #[wasm_bindgen(unchecked_param_type = "ExpectedVersion")] expected: JsValue,
    #[wasm_bindgen(unchecked_param_type = "OurBytes | undefined")] ours: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ObjectFacts")] head: JsValue,
) -> Result<JsValue, JsValue> {
    let expected: ExpectedVersion = from_js(expected, "expected")?;
    let ours: Option<OurBytes> = if ours.is_undefined() || ours.is_null() {
        None
    } else {
        Some(from_js(ours, "ours")?)
    };
    let head: ObjectFacts = from_js(head, "head")?;
    to_js(&object_condition::judge_existing(
        &expected,
        ours.as_ref(),
        &head,
    ))
}

/// Judges a write whose precondition failed, from a HEAD taken right after (see
/// `object_condition::judge_lost_condition`): settled over our own bytes, else a conflict.
#[wasm_bindgen(js_name = judgeLostCondition, unchecked_return_type = "ObjectVerdict")]
pub fn judge_lost_condition(
    ours_sha256: &str,
    ours_size: f64,
    #[wasm_bindgen(unchecked_param_type = "ObjectFacts")] head: JsValue,
) -> Result<JsValue, JsValue> {
    let head: ObjectFacts = from_js(head, "head")?;
    let size = count(ours_size, "size")?;
    to_js(&object_condition::judge_lost_condition(
        ours_sha256,
        size,
        &head,
    ))
}

/// Whether the version a run proved redundant (`{etag, size}`) is still what a HEAD of its key
/// found (`{exists, size, etag}`): `"gone"`, `"same"` (delete it) or `"changed"` (keep it). See
/// `safety::delete_version`.
#[wasm_bindgen(js_name = versionAtKey, unchecked_return_type = "VersionAtKey")]
pub fn version_at_key(
    #[wasm_bindgen(unchecked_param_type = "ObjectFacts")] head: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ProvenVersion")] version: JsValue,
) -> Result<JsValue, JsValue> {
    let head: ObjectFacts = from_js(head, "head")?;
    let version: ProvenVersion = from_js(version, "version")?;
    to_js(&delete_version::version_at_key(&head, &version))
}

/// What a pull does with the `local` file (`{size, sha256}`; undefined: none) before `incoming`
/// replaces it (undefined: not hashed), given the base's hash and what is already at the
/// conflict copy's name (`{size, sha256?}`): `"nothing"`, `"reuse"`, `"copy"` or `"occupied"`
/// (see `runs::pull::aside`).
#[wasm_bindgen(js_name = judgeAside, unchecked_return_type = "AsideStep")]
pub fn judge_aside(
    #[wasm_bindgen(unchecked_param_type = "FileContent | undefined")] local: JsValue,
    #[wasm_bindgen(unchecked_param_type = "FileContent | undefined")] incoming: JsValue,
    base_sha256: Option<String>,
    #[wasm_bindgen(unchecked_param_type = "CopyFound | undefined")] copy: JsValue,
) -> Result<JsValue, JsValue> {
    fn optional<T: serde::de::DeserializeOwned>(
        value: JsValue,
        what: &str,
    ) -> Result<Option<T>, JsValue> {
        match value.is_undefined() || value.is_null() {
            true => Ok(None),
            false => from_js(value, what).map(Some),
        }
    }
    let local: Option<FileContent> = optional(local, "local")?;
    let incoming: Option<FileContent> = optional(incoming, "incoming")?;
    let copy: Option<CopyFound> = optional(copy, "copy")?;
    to_js(&aside::judge_aside(
        local.as_ref(),
        incoming.as_ref(),
        base_sha256.as_deref(),
        copy.as_ref(),
    ))
}

/// What a finished pull's or push's report (`ReportFacts`) answers the service's caller: the
/// lines to tell, and the error to throw after them (see `runs::outcome`).
#[wasm_bindgen(js_name = callOutcome, unchecked_return_type = "CallOutcome")]
pub fn call_outcome(
    #[wasm_bindgen(unchecked_param_type = "ReportFacts")] facts: JsValue,
) -> Result<JsValue, JsValue> {
    let facts: ReportFacts = from_js(facts, "facts")?;
    to_js(&outcome::call_outcome(&facts))
}

/// What a download does after its `notFound`-th 404 (see `runs/pull/lookup.rs`):
/// `{next: "read", key, atBareKey}` or `{next: "missing"}`.
#[wasm_bindgen(js_name = afterNotFound, unchecked_return_type = "AfterNotFound")]
pub fn after_not_found(
    remote_key: &str,
    rel: &str,
    namespaced: bool,
    not_found: f64,
) -> Result<JsValue, JsValue> {
    let not_found = u32::try_from(count(not_found, "notFound")?).unwrap_or(u32::MAX);
    to_js(&crate::runs::pull::lookup::after_not_found(
        remote_key, rel, namespaced, not_found,
    ))
}

/// Throws `objects-missing` when `missingInARow` confirmed-missing objects stop a pull: past
/// `limit` (the core's default when undefined; 0 never stops).
#[wasm_bindgen(js_name = checkMissingInARow)]
pub fn check_missing_in_a_row(missing_in_a_row: f64, limit: Option<f64>) -> Result<(), JsValue> {
    let missing_in_a_row = count(missing_in_a_row, "missingInARow")?;
    let limit = limit.map(|l| count(l, "limit")).transpose()?;
    crate::runs::pull::lookup::check_missing_in_a_row(missing_in_a_row, limit).map_err(to_js_error)
}
