//! Where a JSON string's plain characters end, eight bytes at a time: the test the
//! classification's skim of `params` and the string writer share.
//!
//! Why by hand: serde_json's reader and writer test a string's bytes one at a time through
//! a table; a word at a time takes much less work per byte (measured:
//! bench/results/profile.md#strings-tested-a-word-at-a-time).

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` (little-endian) that is a control character, `"` or
/// `\`, and possibly of bytes above the first such one; zero when there is none. The lowest
/// flag is always a real one (a borrow only runs upwards).
pub(crate) fn special_mask(word: u64) -> u64 {
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    control | quote | backslash
}

/// Whether `byte` ends a run of a JSON string's plain characters: a quote, a backslash or
/// a control character (which JSON forbids raw).
pub(crate) fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// The index of the first quote, backslash or control character in `bytes`: within a JSON
/// string, where its text ends or its next escape starts (a control character makes it
/// invalid). `None` when there is none.
///
/// ```
/// assert_eq!(ferry_protocol::read::special_byte(b"plain text\"then"), Some(10));
/// assert_eq!(ferry_protocol::read::special_byte(b"plain"), None);
/// ```
pub fn special_byte(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in chunks.by_ref() {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let mask = special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return Some(offset + mask.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| is_special(b))
        .map(|at| offset + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_bytes_are_found_at_every_offset() {
        for len in 0..20 {
            for at in 0..len {
                for special in [b'"', b'\\', 0x1f, 0] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    assert_eq!(special_byte(&bytes), Some(at));
                }
            }
            let mut plain = vec![b' '; len];
            plain.extend_from_slice(&[0x7f, 0xff, b'!', b'#', b'[', b']']);
            assert_eq!(special_byte(&plain), None);
        }
    }

    #[test]
    fn the_lowest_flag_is_the_first_special_byte() {
        for first in 0..8 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for above in [b'a', 0x00, b'"', 0x01, 0xff] {
                    let mut bytes = *b"abcdefgh";
                    bytes[first] = special;
                    for byte in &mut bytes[first + 1..] {
                        *byte = above;
                    }
                    let mask = special_mask(u64::from_le_bytes(bytes));
                    assert_eq!(mask.trailing_zeros() / 8, first as u32, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn words_without_special_bytes_are_told_apart() {
        let word = |b: &[u8; 8]| special_mask(u64::from_le_bytes(*b)) != 0;
        assert!(!word(b"abcdefgh"));
        assert!(!word(&[0x20, 0x7f, 0x80, 0xff, b'!', b'#', b'[', b']']));
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for at in 0..8 {
                let mut bytes = *b"abcdefgh";
                bytes[at] = special;
                assert!(word(&bytes), "{special:#x} at {at}");
            }
        }
        // The word test and the byte test (the remainder's) agree on every byte.
        for byte in 0..=255u8 {
            let alone = u64::from_le_bytes([byte, b'a', b'a', b'a', b'a', b'a', b'a', b'a']);
            assert_eq!(special_mask(alone) != 0, is_special(byte), "{byte:#x}");
        }
    }
}
