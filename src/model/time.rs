//! ISO-8601 timestamps as the datastore writes them, without a clock.
//!
//! The index stores times as JavaScript `Date.toISOString()` strings
//! (`2026-08-01T12:00:00.512Z`). The core compares them as epoch milliseconds and writes new
//! ones in the same shape, so files written by either implementation read the same.

/// Parses an RFC 3339 / ISO-8601 date-time (`YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`) into epoch
/// milliseconds. Returns `None` for anything else: callers treat an unreadable time as
/// "unknown", never as a match.
pub fn parse_iso_millis(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || (b[10] != b'T' && b[10] != b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut millis = 0i64;
    if let Some((&b'.', fraction)) = rest.split_first() {
        let len = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        // Keep millisecond precision; finer digits are truncated, as JavaScript does.
        let mut scale = 100;
        for &d in fraction.iter().take(len.min(3)) {
            millis += i64::from(d - b'0') * scale;
            scale /= 10;
        }
        rest = &fraction[len..];
    }
    let offset_minutes = match rest {
        [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = digits(&[*h1, *h2])?;
            let m = digits(&[*m1, *m2])?;
            let total = h * 60 + m;
            if *sign == b'+' {
                total
            } else {
                -total
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1_000 + millis)
}

/// Formats epoch milliseconds as `Date.toISOString()` does: `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn format_iso_millis(epoch_millis: i64) -> String {
    let days = epoch_millis.div_euclid(86_400_000);
    let in_day = epoch_millis.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let hour = in_day / 3_600_000;
    let minute = in_day / 60_000 % 60;
    let second = in_day / 1_000 % 60;
    let millis = in_day % 1_000;
    if !(0..=9_999).contains(&year) {
        // Outside four-digit years (no file system dates a file there) the general formatter.
        return format!(
            "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z"
        );
    }
    // Written digit by digit: a pull formats one per recorded mtime, and `format!`'s padding
    // machinery was ~1 % of a 10^5-entry WASM pull.
    let mut text = *b"0000-00-00T00:00:00.000Z";
    put_digits(&mut text[0..4], year);
    put_digits(&mut text[5..7], month);
    put_digits(&mut text[8..10], day);
    put_digits(&mut text[11..13], hour);
    put_digits(&mut text[14..16], minute);
    put_digits(&mut text[17..19], second);
    put_digits(&mut text[20..23], millis);
    // Only ASCII digits and separators were written: nothing is replaced.
    String::from_utf8_lossy(&text).into_owned()
}

/// Writes `value` into `out` in decimal, zero-padded on the left. `value` is non-negative and
/// has at most as many digits as `out` has bytes (the callers' fields are bounded).
fn put_digits(out: &mut [u8], mut value: i64) {
    for slot in out.iter_mut().rev() {
        // `value % 10` is 0..=9 for the non-negative values given here.
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

fn digits(bytes: &[u8]) -> Option<i64> {
    let mut value = 0i64;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
    }
    Some(value)
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_javascript_iso_strings() {
        for text in [
            "1970-01-01T00:00:00.000Z",
            "2026-08-01T12:00:00.512Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.001Z",
        ] {
            let millis = parse_iso_millis(text).expect(text);
            assert_eq!(format_iso_millis(millis), text);
        }
    }

    #[test]
    fn reads_offsets_and_missing_fractions() {
        assert_eq!(parse_iso_millis("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_iso_millis("1970-01-01T00:00:01Z"), Some(1_000));
        assert_eq!(parse_iso_millis("1970-01-01T00:00:00.123456Z"), Some(123));
    }

    #[test]
    fn refuses_what_is_not_a_date_time() {
        for text in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "yesterday",
            "2026-08-01",
        ] {
            assert_eq!(parse_iso_millis(text), None, "{text}");
        }
    }
}
