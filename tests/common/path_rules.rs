//! Two segment rules stated independently of the implementation, for the property tests that
//! check it (`tests/properties.rs`, `tests/plan_equivalence.rs`).

/// A Windows device name, with or without an extension, ignoring case and trailing spaces.
pub fn is_device_name(segment: &str) -> bool {
    let stem = match segment.find('.') {
        Some(dot) => &segment[..dot],
        None => segment,
    };
    let stem = stem.trim_end_matches(' ').to_ascii_uppercase();
    ["CON", "PRN", "AUX", "NUL"].contains(&stem.as_str())
        || (1..=9).any(|n| stem == format!("COM{n}") || stem == format!("LPT{n}"))
}

/// A drive-letter segment (`c:`, `Z:anything`).
pub fn is_drive_segment(segment: &str) -> bool {
    let mut chars = segment.chars();
    matches!((chars.next(), chars.next()), (Some(c), Some(':')) if c.is_ascii_alphabetic())
}
