//! Byte searches eight bytes a step ("SIMD within a register").
//!
//! The WASM build has no vector instructions to lean on and its `memchr` steps four bytes at a
//! time (`usize` is 32 bits there); the scans of an index, a listing and every path of a plan
//! read hundreds of megabytes at 10^6 entries. A search here tests a whole `u64` word for the
//! bytes it stops at and looks at single bytes only in the last, partial word.
//!
//! Each test marks a matching byte by setting its high bit. The marks are exact for the first
//! (lowest-addressed) matching byte of a word; bytes after it may be marked falsely (a borrow
//! runs on). OR-ing tests keeps the first mark exact, so only the lowest mark is ever read.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Marks the bytes of `word` equal to `byte`.
pub fn equal_to(word: u64, byte: u8) -> u64 {
    let diff = word ^ (ONES * u64::from(byte));
    diff.wrapping_sub(ONES) & !diff & HIGHS
}

/// Marks the bytes of `word` below `bound` (which must be at most 0x80).
pub fn below(word: u64, bound: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(bound)) & !word & HIGHS
}

/// The position of the first byte of `bytes` that `marks` marks in its word, or that `stops`
/// accepts in the last partial word; `None` when there is none.
///
/// `marks` and `stops` must agree: the lowest byte `marks(word)` marks is the first byte of the
/// word that `stops` accepts (marks after it may be false, see the module's note).
#[inline]
pub fn position(
    bytes: &[u8],
    marks: impl Fn(u64) -> u64,
    stops: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let marked = marks(u64::from_le_bytes(word));
        if marked != 0 {
            return Some(at + (marked.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| stops(b))
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of neighbouring bytes, at every place in a word and across its edge: the
    /// first stop is found as a plain byte loop finds it (a false mark after the first match
    /// must never be read).
    #[test]
    fn finds_the_first_stop_as_a_byte_loop_does() {
        let interesting = [
            0u8, 1, 0x1f, 0x20, 0x21, b'/', b'0', b'\\', 0x7f, 0x80, 0xc2, 0xff,
        ];
        let marks = |w| below(w, 0x20) | equal_to(w, b'/') | equal_to(w, 0xc2);
        let stops = |b: u8| b < 0x20 || b == b'/' || b == 0xc2;
        for &first in &interesting {
            for &second in &interesting {
                for place in 0..19 {
                    let mut bytes = [b'x'; 20];
                    bytes[place] = first;
                    bytes[place + 1] = second;
                    for len in [place + 1, place + 2, 20] {
                        let bytes = &bytes[..len];
                        let expected = bytes.iter().position(|&b| stops(b));
                        assert_eq!(position(bytes, marks, stops), expected, "{bytes:?}");
                    }
                }
            }
        }
    }
}
