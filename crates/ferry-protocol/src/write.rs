//! JSON strings written by hand on the message path, byte for byte what serde_json writes.
//!
//! serde_json's escaper looks every byte up in a table. This one tests eight bytes at a time
//! and copies the runs between escapes, which is faster for plain text and for text with
//! frequent escapes alike: `cargo bench -p ferry-mcp-protocol -- "tool result"` measures it
//! against serde_json.

use crate::read::text::{is_special, special_mask};

/// Append `text` to `out` as a JSON string, exactly as `serde_json::to_writer` would.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    escape_into(text, out);
    out.push(b'"');
}

/// [`write_str`] into a `String` (no UTF-8 check of the result needed).
pub(crate) fn push_str(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    escape_into(text, out);
    out.push('"');
}

/// Where escaped text goes.
trait Sink {
    fn run(&mut self, run: &str);
    /// A two-character escape: `\` and `second`.
    fn short(&mut self, second: u8);
}

impl Sink for Vec<u8> {
    fn run(&mut self, run: &str) {
        self.extend_from_slice(run.as_bytes());
    }
    fn short(&mut self, second: u8) {
        self.extend_from_slice(&[b'\\', second]);
    }
}

impl Sink for String {
    fn run(&mut self, run: &str) {
        self.push_str(run);
    }
    fn short(&mut self, second: u8) {
        self.push('\\');
        self.push(char::from(second));
    }
}

/// `text` escaped into `out`. Eight bytes are tested at once; in a word that holds an
/// escape, the first one is found from the test's bits.
fn escape_into(text: &str, out: &mut impl Sink) {
    let bytes = text.as_bytes();
    let mut run = 0; // start of the bytes not yet written
    let mut at = 0;
    while at < bytes.len() {
        let found = match bytes.get(at..at + 8).map(<[u8; 8]>::try_from) {
            Some(Ok(word)) => match special_mask(u64::from_le_bytes(word)) {
                0 => {
                    at += 8;
                    continue;
                }
                // The lowest flagged byte is a real match (a borrow only runs upwards).
                mask => at + (mask.trailing_zeros() / 8) as usize,
            },
            // The last few bytes, one by one.
            _ => match bytes[at..].iter().position(|&b| is_special(b)) {
                Some(offset) => at + offset,
                None => break,
            },
        };
        if let Some(escape) = escape(bytes[found]) {
            // `found` is an ASCII byte: a character boundary.
            out.run(&text[run..found]);
            match escape.as_bytes() {
                [b'\\', second] => out.short(*second),
                _ => out.run(escape),
            }
            run = found + 1;
        }
        at = found + 1;
    }
    out.run(&text[run..]);
}

/// The escape serde_json writes for `byte`, if it needs one.
fn escape(byte: u8) -> Option<&'static str> {
    /// The control characters' escapes: a short form where JSON has one, else `\u00XX`.
    const CONTROL: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    match byte {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0x00..=0x1F => Some(CONTROL[usize::from(byte)]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, text);
        let mut pushed = String::new();
        push_str(&mut pushed, text);
        assert_eq!(out, pushed.as_bytes());
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut texts: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        texts.extend(
            [
                "",
                "plain text longer than one word of eight bytes",
                "quote \" in the middle of a long line, and a \\ too",
                "\u{0}\u{1f}\u{7f}é ü 漢字 🦀 at odd places across words",
                "12345678\"12345678\n1234567\t",
                "ends with an escape after a full word\u{1}",
            ]
            .map(String::from),
        );
        // Every control character, quote and backslash at every offset of a word.
        for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{8}'] {
            for offset in 0..17 {
                let mut text = "é".repeat(offset / 2) + &"a".repeat(offset % 2);
                text.push(special);
                text.push_str("tail of the text");
                texts.push(text);
            }
        }
        for text in texts {
            let serde = serde_json::to_string(&text).expect("serializes");
            assert_eq!(written(&text), serde, "{text:?}");
        }
    }
}
