//! [`Bytes`]: an owned byte buffer that a run's event or action carries across the boundary.

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use serde::{Serialize, Serializer};

/// Bytes an event carries (an index as read, a listing buffer). From JS it is a `Uint8Array`,
/// which serde-wasm-bindgen hands over as one byte buffer; a plain array of numbers is also
/// read (a test or a hand-written event), each checked to be a byte. It exists so events can be
/// plain serde enums without a dependency for one small type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    /// The bytes, borrowed.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(bytes: Vec<u8>) -> Bytes {
        Bytes(bytes)
    }
}

// Written as a byte buffer: a `Uint8Array` through serde-wasm-bindgen, not an array of numbers.
impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        deserializer.deserialize_byte_buf(BytesVisitor)
    }
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Bytes;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a byte buffer (Uint8Array)")
    }

    fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Bytes, E> {
        Ok(Bytes(bytes.to_vec()))
    }

    fn visit_byte_buf<E: Error>(self, bytes: Vec<u8>) -> Result<Bytes, E> {
        Ok(Bytes(bytes))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        Ok(Bytes(bytes))
    }
}

/// Numbers an event carries in bulk (each walked file's change time and inode): the bytes of a
/// `Float64Array`, which cross the boundary in one copy where an array of numbers would cross
/// one value at a time. Little-endian, as WebAssembly's memory and every JS engine's typed
/// arrays on the platforms Deno runs on are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct F64s(pub Vec<f64>);

impl<'de> Deserialize<'de> for F64s {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<F64s, D::Error> {
        let Bytes(bytes) = Bytes::deserialize(deserializer)?;
        if bytes.len() % 8 != 0 {
            return Err(D::Error::custom(format!(
                "{} bytes are not a whole number of 8-byte floats",
                bytes.len()
            )));
        }
        Ok(F64s(
            bytes
                .chunks_exact(8)
                .map(|chunk| {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(chunk);
                    f64::from_le_bytes(word)
                })
                .collect(),
        ))
    }
}
