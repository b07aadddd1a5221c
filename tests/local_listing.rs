//! The local listing buffer (a cache walk in columns, `src/wire/listing.rs`): what `encode_local`
//! writes reads back unchanged, and any buffer, however damaged, is read or refused exactly as a
//! plain reading of the layout would, with the same error for the same fault. Native only:
//! proptest does not build for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;

use s3sync_core::error::CoreError;
use s3sync_core::wire::listing::{decode_local, encode_local};

const SAFE: f64 = 9_007_199_254_740_991.0;

/// A file as the tests hold one: path, size, mtime.
type File = (String, u64, Option<i64>);

fn decoded(buffer: &[u8]) -> Result<Vec<File>, String> {
    decode_local(buffer)
        .map(|files| {
            files
                .into_iter()
                .map(|f| (f.path.to_string(), f.size, f.mtime_ms))
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// The layout read plainly: every check of the frame in turn, all paths split up front, then
/// each record's mtime before its size.
fn decode_plainly(buffer: &[u8]) -> Result<Vec<File>, String> {
    let input = |detail: String| CoreError::InvalidInput { detail }.to_string();
    if buffer.len() < 12 {
        return Err(input(format!(
            "local listing is {} bytes, too short for its 12-byte trailer",
            buffer.len()
        )));
    }
    let trailer = &buffer[buffer.len() - 12..];
    if &trailer[8..] != b"s3l2" {
        return Err(input(
            "local listing does not end with its \"s3l2\" trailer (not a buffer of this \
             format: encode walks with encodeLocalListing)"
                .into(),
        ));
    }
    let paths_len = u32::from_le_bytes(trailer[0..4].try_into().unwrap()) as usize;
    let count = u32::from_le_bytes(trailer[4..8].try_into().unwrap()) as usize;
    if paths_len + 16 * count + 12 != buffer.len() {
        return Err(input(format!(
            "local listing is {} bytes, its trailer says {paths_len} bytes of paths and {count} files",
            buffer.len()
        )));
    }
    let paths = std::str::from_utf8(&buffer[..paths_len])
        .map_err(|e| input(format!("local listing paths are not utf-8: {e}")))?;
    let paths: Vec<&str> = if paths.is_empty() {
        Vec::new()
    } else {
        let body = paths
            .strip_suffix('\0')
            .ok_or_else(|| input("local listing paths do not end with a nul separator".into()))?;
        body.split('\0').collect()
    };
    if paths.len() != count {
        return Err(input(format!(
            "local listing holds {} paths, its trailer says {count}",
            paths.len()
        )));
    }
    let number = |at: usize| f64::from_le_bytes(buffer[at..at + 8].try_into().unwrap());
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let (size, mtime) = (number(paths_len + 16 * i), number(paths_len + 16 * i + 8));
            let mtime = if mtime.is_nan() {
                None
            } else if mtime == mtime.trunc() && (-SAFE..=SAFE).contains(&mtime) {
                Some(mtime as i64)
            } else {
                return Err(input(format!(
                    "local listing: mtime {mtime:?} of {path:?} is not an integer in -(2^53-1)..=2^53-1"
                )));
            };
            if !(size == size.trunc() && (0.0..=SAFE).contains(&size)) {
                return Err(input(format!(
                    "local listing: size {size:?} of {path:?} is not an integer in 0..=2^53-1"
                )));
            }
            Ok((path.to_string(), size as u64, mtime))
        })
        .collect()
}

fn files() -> impl Strategy<Value = Vec<File>> {
    proptest::collection::vec(
        (
            "[a-zé中😀/._-]{0,12}",
            prop_oneof![Just(0u64), Just((1 << 53) - 1), 0u64..(1 << 53)],
            proptest::option::of(prop_oneof![
                Just(0i64),
                Just((1 << 53) - 1),
                Just(-(1 << 53) + 1),
                -(1i64 << 53) + 1..(1 << 53),
            ]),
        ),
        0..12,
    )
}

/// Numbers worth writing over a size or an mtime: the edges of what is accepted and just past.
const ODD_NUMBERS: [f64; 13] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    -0.0,
    0.5,
    1.5,
    SAFE,
    SAFE + 1.0,
    -SAFE,
    -SAFE - 1.0,
    1e300,
    1_785_585_600_123.0,
];

/// One way to damage a buffer.
#[derive(Debug, Clone)]
enum Damage {
    /// Set the byte at (position mod length) to a value.
    Byte(usize, u8),
    /// Drop the last n bytes.
    Cut(usize),
    /// Insert a byte at (position mod length).
    Insert(usize, u8),
    /// Write an odd number over file (i mod count)'s size (false) or mtime (true).
    Number(usize, bool, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    let byte = prop::sample::select(vec![0u8, 0xff, b'a', 0x80, 0xc3, 0x7f, b'2', 1]);
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(at, b)| Damage::Byte(at, b)),
        (0usize..20).prop_map(Damage::Cut),
        (any::<usize>(), byte).prop_map(|(at, b)| Damage::Insert(at, b)),
        (any::<usize>(), any::<bool>(), 0..ODD_NUMBERS.len())
            .prop_map(|(i, which, n)| Damage::Number(i, which, n)),
    ]
}

fn apply(buffer: &mut Vec<u8>, files: &[File], damage: &Damage) {
    match *damage {
        Damage::Byte(at, b) if !buffer.is_empty() => {
            let len = buffer.len();
            buffer[at % len] = b;
        }
        Damage::Cut(n) => buffer.truncate(buffer.len().saturating_sub(n)),
        Damage::Insert(at, b) => {
            let at = at % (buffer.len() + 1);
            buffer.insert(at, b);
        }
        Damage::Number(i, mtime, n) if !files.is_empty() => {
            let paths_len: usize = files.iter().map(|f| f.0.len() + 1).sum();
            let at = paths_len + 16 * (i % files.len()) + if mtime { 8 } else { 0 };
            if at + 8 <= buffer.len() {
                buffer[at..at + 8].copy_from_slice(&ODD_NUMBERS[n].to_le_bytes());
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    /// What `encode_local` writes reads back as it was given.
    #[test]
    fn a_walk_reads_back_as_written(files in files()) {
        let buffer = encode_local(files.iter().map(|(p, s, m)| (p.as_str(), *s, *m)));
        prop_assert_eq!(decoded(&buffer), Ok(files.clone()));
        prop_assert_eq!(decode_plainly(&buffer), Ok(files));
    }

    /// A damaged buffer is read or refused as the plain reading does, with the same error,
    /// whichever fault comes first.
    #[test]
    fn a_damaged_buffer_reads_as_read_plainly(
        files in files(),
        damages in proptest::collection::vec(damage(), 1..4),
    ) {
        let mut buffer = encode_local(files.iter().map(|(p, s, m)| (p.as_str(), *s, *m)));
        for d in &damages {
            apply(&mut buffer, &files, d);
        }
        prop_assert_eq!(decoded(&buffer), decode_plainly(&buffer), "{:?}", buffer);
    }
}

/// The cases a reader should see spelled out, each with the error it gets.
#[test]
fn the_frame_and_the_numbers_are_refused_by_name() {
    let one = encode_local([("ns/a", 3, Some(5))]);
    let text = b"ns/data/a.yaml\x003\x005\x00";
    assert!(decoded(text)
        .unwrap_err()
        .contains("does not end with its \"s3l2\" trailer"));
    assert!(decoded(b"").unwrap_err().contains("0 bytes, too short"));
    assert_eq!(decoded(&encode_local([])), Ok(vec![]));
    assert_eq!(encode_local([]).len(), 12);

    // A NUL inside a path splits it: one path more than the trailer says.
    let split = encode_local([("ns/a\0b", 3, None)]);
    assert!(decoded(&split)
        .unwrap_err()
        .contains("holds 2 paths, its trailer says 1"));

    // The path count is reported before a bad number, wherever the number lies.
    let mut both = encode_local([("ns/a\0b", 3, None), ("ns/c", 4, None)]);
    let at = "ns/a\0b\0ns/c\0".len();
    both[at..at + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    assert!(decoded(&both)
        .unwrap_err()
        .contains("holds 3 paths, its trailer says 2"));

    let with_size = |size: f64| {
        let mut buffer = one.clone();
        buffer[5..13].copy_from_slice(&size.to_le_bytes());
        decoded(&buffer)
    };
    for bad in [f64::NAN, -1.0, 0.5, SAFE + 1.0, f64::INFINITY] {
        let error = with_size(bad).unwrap_err();
        assert!(
            error.contains("size") && error.contains("\"ns/a\""),
            "{bad}: {error}"
        );
    }
    // Numbers are named short (1e300, not three hundred digits).
    assert!(with_size(1e300).unwrap_err().contains("size 1e300 of"));
    assert_eq!(with_size(-0.0), Ok(vec![("ns/a".into(), 0, Some(5))]));
    assert_eq!(
        with_size(SAFE),
        Ok(vec![("ns/a".into(), SAFE as u64, Some(5))])
    );

    let with_mtime = |mtime: f64| {
        let mut buffer = one.clone();
        buffer[13..21].copy_from_slice(&mtime.to_le_bytes());
        decoded(&buffer)
    };
    assert_eq!(with_mtime(f64::NAN), Ok(vec![("ns/a".into(), 3, None)]));
    assert_eq!(
        with_mtime(-SAFE),
        Ok(vec![("ns/a".into(), 3, Some(-(SAFE as i64)))])
    );
    for bad in [f64::INFINITY, 1.5, SAFE + 1.0, -SAFE - 1.0] {
        let error = with_mtime(bad).unwrap_err();
        assert!(
            error.contains("mtime") && error.contains("\"ns/a\""),
            "{bad}: {error}"
        );
    }

    // Lengths that disagree with the trailer, each way.
    let mut short = one.clone();
    short.remove(0);
    assert!(decoded(&short)
        .unwrap_err()
        .contains("its trailer says 5 bytes of paths and 1 files"));
    let mut bad_utf8 = one.clone();
    bad_utf8[0] = 0xff;
    assert!(decoded(&bad_utf8)
        .unwrap_err()
        .contains("paths are not utf-8"));
    let mut unended = one;
    unended[4] = b'x';
    assert!(decoded(&unended)
        .unwrap_err()
        .contains("do not end with a nul separator"));
}

/// Every error is an input error (the shim maps it to a stable code).
#[test]
fn refusals_are_input_errors() {
    for buffer in [
        &b"junk"[..],
        b"ns/a\x003\x005\x00",
        &encode_local([("a\0b", 1, None)]),
    ] {
        let error = decode_local(buffer).unwrap_err();
        assert!(matches!(error, CoreError::InvalidInput { .. }), "{error:?}");
    }
}
