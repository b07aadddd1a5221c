//! Byte-string comparison eight bytes a step, and the WASM build's `memcmp` and `bcmp`.
//!
//! On `wasm32-unknown-unknown` the standard library's `memcmp` and `bcmp` come from
//! `compiler_builtins` as a loop over single bytes (there is no libc to supply a tuned one).
//! Every `String` comparison goes through them: the index map's ordering, the sort of a parsed
//! index, the walk's hash look-ups, the joins of a plan. Index keys share long prefixes
//! (`data/@org/model-type/<uuid>/...`), so at 10^6 entries the byte loop was the largest single
//! item of a WASM plan's profile. `compiler_builtins` defines both symbols weakly, so the strong
//! definitions below take their place in the WASM build only; native builds keep the platform's.
//!
//! The comparison itself is safe code; the only `unsafe` is turning the C arguments into
//! slices, for which the caller's contract (both regions readable for `n` bytes) is exactly
//! `memcmp`'s.
#![allow(unsafe_code)]

use std::cmp::Ordering;

/// Orders two byte strings as `<[u8]>::cmp` does (lexicographically by unsigned byte, a proper
/// prefix first), comparing eight bytes at a time.
///
/// It is written without slice equality or slice ordering, which would call `memcmp` or `bcmp`
/// and so, in the WASM build, itself.
// Not inlined: link-time optimisation otherwise copied it into every string comparison of the
// WASM build (+390 KB of code), for no measured gain.
#[inline(never)]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.len().min(b.len());
    let (a_words, a_tail) = a[..common].split_at(common - common % 8);
    let (b_words, b_tail) = b[..common].split_at(common - common % 8);
    for (x, y) in a_words.chunks_exact(8).zip(b_words.chunks_exact(8)) {
        // Big-endian: the first byte that differs decides the order of the words, as it
        // decides the order of the strings.
        let x = u64::from_be_bytes(word(x));
        let y = u64::from_be_bytes(word(y));
        if x != y {
            return x.cmp(&y);
        }
    }
    for (x, y) in a_tail.iter().zip(b_tail) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Eight bytes of a chunk from `chunks_exact(8)` as an array.
fn word(chunk: &[u8]) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(chunk);
    bytes
}

/// The C `memcmp`: negative, zero or positive as the first `n` bytes at `left` order before,
/// equal to or after those at `right`.
///
/// # Safety
///
/// Both pointers must be valid for reads of `n` bytes (unless `n` is 0), as for C's `memcmp`.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    if n == 0 {
        // No slice from a pointer C allows to be null or dangling here.
        return 0;
    }
    // SAFETY: the caller guarantees both regions are readable for `n` bytes (memcmp's
    // contract); they are only read, and not beyond this call.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(left, n),
            std::slice::from_raw_parts(right, n),
        )
    };
    compare_bytes(a, b) as i32
}

/// The C `bcmp`: zero exactly when the first `n` bytes at `left` and `right` are equal. LLVM
/// calls it for equality tests of slices and strings.
///
/// # Safety
///
/// As for [`memcmp`].
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn bcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    // SAFETY: the same contract as memcmp's, passed on unchanged.
    unsafe { memcmp(left, right, n) }
}
