//! The order of many byte strings that share long prefixes, found without reading each string
//! again at every comparison.
//!
//! An index in insertion order (the extension writes its entries as they were added) has to be
//! sorted once per load. Its keys share long prefixes (`data/aws/ec2/vpc/m-…`), and a comparison
//! sort reads both strings' bytes at each of its ~20 comparisons per key: at 10^6 keys that is a
//! cache miss per comparison, and it was ~280 ms of a 700 ms load through WASM. Here each key
//! contributes a 16-byte chunk copied into the sort's own element, elements are sorted by their
//! chunks alone, and only groups whose chunks tie (and that go on) read their next 16 bytes:
//! about one read of each key per 16 bytes of shared prefix instead of one per comparison.

/// Eight-byte words of a key that one level of the sort compares. Tried with three (a 24-byte
/// chunk, fewer levels for keys sharing folder names): no faster at 10^6 keys through WASM, for
/// elements half as large again.
const WORDS: usize = 2;

/// Bytes of a key that one level of the sort compares.
const CHUNK: usize = WORDS * 8;

/// One key at one depth: its bytes `[depth, depth + CHUNK)` and where it is in the input.
#[derive(Clone, Copy)]
struct Slot {
    /// The chunk as big-endian words (so the integers' order is the bytes' order),
    /// zero-padded past the key's end.
    words: [u64; WORDS],
    /// How many of the key's bytes are left from this depth, capped at `CHUNK + 1`: a key
    /// that ends inside the chunk orders before one that goes on with zero bytes, and
    /// `CHUNK + 1` marks a key that goes on past the chunk.
    left: u32,
    /// The key's position in the input.
    position: u32,
}

impl Slot {
    fn at(key: &[u8], depth: usize, position: u32) -> Slot {
        let rest = key.get(depth..).unwrap_or_default();
        let mut bytes = [0u8; CHUNK];
        let taken = rest.len().min(CHUNK);
        bytes[..taken].copy_from_slice(&rest[..taken]);
        let mut words = [0u64; WORDS];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(chunk);
            *word = u64::from_be_bytes(eight);
        }
        Slot {
            words,
            // At most CHUNK + 1, so it fits.
            left: rest.len().min(CHUNK + 1) as u32,
            position,
        }
    }

    /// The order of two slots at the same depth of keys that agree before it.
    fn order_key(&self) -> ([u64; WORDS], u32) {
        (self.words, self.left)
    }

    /// Whether the key goes on past this chunk.
    fn continues(&self) -> bool {
        self.left as usize > CHUNK
    }
}

/// The sorted order of `items` by `key` (ascending by bytes, as `<[u8]>::cmp` orders them) as
/// positions into `items`, and whether two keys are equal.
///
/// Equal keys end up next to each other; which of them comes first is unspecified.
///
/// # Errors
///
/// Never fails for fewer than 2^32 keys; more than that is refused as `TooMany` (positions are
/// kept as `u32` to keep the sort's elements small).
pub fn sorted_positions<T>(
    items: &[T],
    key: impl Fn(&T) -> &[u8],
) -> Result<SortedPositions, TooMany> {
    let count = u32::try_from(items.len()).map_err(|_| TooMany)?;
    let mut slots: Vec<Slot> = (0..count)
        .zip(items)
        .map(|(position, item)| Slot::at(key(item), 0, position))
        .collect();
    let mut has_equal = false;
    // Groups of slots still to be ordered, each with the depth its chunks were taken at. An
    // explicit stack: a group of keys sharing a long prefix goes one level deeper per 16 bytes,
    // and a hostile index may hold keys of any length.
    let mut pending = vec![(0..slots.len(), 0usize)];
    while let Some((range, depth)) = pending.pop() {
        let group = &mut slots[range.clone()];
        // Ties are put in input order (the position breaks them): the next level re-reads each
        // tied key at its position, and in input order those reads walk the items and their
        // keys' bytes (allocated as read) forwards instead of at random. At 10^6 keys natively,
        // the re-reads 75 -> 35 ms for sorts 39 -> 51 ms, the whole order 130-144 -> 104-124 ms.
        group.sort_unstable_by_key(|slot| (slot.order_key(), slot.position));
        let mut start = 0;
        while start < group.len() {
            let first = group[start];
            let end = start
                + group[start..]
                    .iter()
                    .take_while(|slot| slot.order_key() == first.order_key())
                    .count();
            if end - start > 1 {
                if first.continues() {
                    // They agree so far and go on: the next chunk decides.
                    let deeper = depth + CHUNK;
                    for slot in &mut group[start..end] {
                        let item = &items[slot.position as usize];
                        *slot = Slot::at(key(item), deeper, slot.position);
                    }
                    pending.push((range.start + start..range.start + end, deeper));
                } else {
                    // They ended together, having agreed on every byte.
                    has_equal = true;
                }
            }
            start = end;
        }
    }
    Ok(SortedPositions {
        positions: slots.into_iter().map(|slot| slot.position).collect(),
        has_equal,
    })
}

/// The answer of [`sorted_positions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortedPositions {
    /// Positions into the keys, in the keys' order.
    pub positions: Vec<u32>,
    /// Whether any two keys are equal (they are then neighbours in `positions`).
    pub has_equal: bool,
}

/// More keys than a `u32` position can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany;
