//! Subset comparison of a plan against a spec's `expected`, shared by the pull and push spec
//! runners.

use serde_json::Value;

/// Where `actual` differs from `expected` (subset semantics for objects), as readable lines.
pub fn differences(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, want_value) in want {
                let here = format!("{path}.{key}");
                match got.get(key) {
                    Some(got_value) => differences(&here, want_value, got_value, out),
                    None => out.push(format!("{here}: missing (plan has no such field)")),
                }
            }
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                out.push(format!(
                    "{path}: expected {} items, got {}:\n      expected {}\n      actual   {}",
                    want.len(),
                    got.len(),
                    expected,
                    actual
                ));
                return;
            }
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                differences(&format!("{path}[{i}]"), w, g, out);
            }
        }
        _ => {
            if expected != actual {
                out.push(format!("{path}: expected {expected}, got {actual}"));
            }
        }
    }
}

/// Reads a spec file into `T`, refusing (as `bad spec: …`) one whose `description` is empty, whose
/// `expected` names nothing (it would pass on a runner's invariants alone), or names a field that
/// is not in `fields`.
pub fn read_spec<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    fields: &[&str],
) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("bad spec: {e}"))?;
    if value["description"]
        .as_str()
        .is_none_or(|d| d.trim().is_empty())
    {
        return Err("bad spec: empty description".into());
    }
    let expected = value["expected"].as_object().cloned().unwrap_or_default();
    if expected.is_empty() {
        return Err("bad spec: `expected` names nothing".into());
    }
    if let Some(key) = expected.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(format!(
            "bad spec: `expected.{key}` is not one of {fields:?}"
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("bad spec: {e}"))
}

/// Compares `actual` with a spec's `expected` (see [`differences`]), adds what `invariants`
/// finds, and says every disagreement under the spec's description.
pub fn judge(
    description: &str,
    root: &str,
    expected: &serde_json::Map<String, Value>,
    actual: &Value,
    invariants: impl FnOnce(&mut Vec<String>),
) -> Result<(), String> {
    let mut out = Vec::new();
    differences(root, &Value::Object(expected.clone()), actual, &mut out);
    invariants(&mut out);
    if out.is_empty() {
        Ok(())
    } else {
        Err(format!("{description}\n    {}", out.join("\n    ")))
    }
}
