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
