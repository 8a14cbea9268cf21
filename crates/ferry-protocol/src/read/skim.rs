//! A request's `params` validated by hand and kept raw without a second reading.
//!
//! Why: serde_json skims a `&RawValue` with its general reader (`ignore_value`), a large
//! share of a short `tools/call`'s cost, to learn only that the text is valid JSON and
//! where it ends. [`value_end`] finds that for much less (figures in
//! bench/results/profile.md). Making a `RawValue` of the text without reading it again
//! takes serde_json's `RawValue::from_string_unchecked`, which is `unsafe`: the one
//! `unsafe` of the workspace (its lint is `deny`, allowed in this module only).
//!
//! [`value_end`] is deliberately narrower than JSON: it accepts no `\u` escapes, no
//! control characters, no nesting deeper than [`MAX_DEPTH`], so that what it accepts is
//! simple to check; everything it declines is skimmed by serde_json as before, which gives
//! the definitive answer. Tests compare the two on every input one byte away from a set
//! of documents, and debug builds (every test run) re-read each value made here
//! (`from_string_unchecked` asserts that it is one well-formed JSON value).
#![allow(unsafe_code)]

use serde_json::value::RawValue;

use super::text::special_byte;

/// The deepest nesting [`value_end`] follows (one bit per open object or array).
const MAX_DEPTH: u32 = 128;

/// The params at the start of `text`, an object or an array, copied out raw: `None` when
/// `text` does not start with one that [`value_end`] accepts.
pub(super) fn structured(text: &str) -> Option<Box<RawValue>> {
    if !matches!(text.as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    let end = value_end(text.as_bytes())?;
    let value = text.get(..end)?.to_owned();
    // SAFETY: `value_end` returned the end of one well-formed JSON object or array that
    // starts at the first byte of `text` (checked above): `value` is exactly that value,
    // without surrounding whitespace, as `from_string_unchecked` requires.
    Some(unsafe { RawValue::from_string_unchecked(value) })
}

/// Where the JSON value at the start of `json` ends (the index after its last byte), if it
/// is well-formed and within this reader's limits (see the module's comment); `None`
/// otherwise, including for well-formed values this reader leaves to serde_json.
pub(super) fn value_end(json: &[u8]) -> Option<usize> {
    let mut pos = 0;
    // One bit per open container, the innermost lowest: 1 for an object, 0 for an array.
    let mut objects: u128 = 0;
    let mut depth = 0;
    'value: loop {
        pos = skip_whitespace(json, pos);
        match *json.get(pos)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                let object = open == b'{';
                objects = objects << 1 | u128::from(object);
                depth += 1;
                pos = skip_whitespace(json, pos + 1);
                let close = if object { b'}' } else { b']' };
                if json.get(pos) == Some(&close) {
                    pos += 1;
                    objects >>= 1;
                    depth -= 1;
                } else {
                    if object {
                        pos = key(json, pos)?;
                    }
                    continue 'value;
                }
            }
            b'"' => pos = string_end(json, pos + 1)?,
            b't' => pos = literal(json, pos, b"true")?,
            b'f' => pos = literal(json, pos, b"false")?,
            b'n' => pos = literal(json, pos, b"null")?,
            b'-' | b'0'..=b'9' => pos = number_end(json, pos)?,
            _ => return None,
        }
        // A value has ended: close containers until a comma asks for the next value.
        loop {
            if depth == 0 {
                return Some(pos);
            }
            pos = skip_whitespace(json, pos);
            let in_object = objects & 1 == 1;
            match (*json.get(pos)?, in_object) {
                (b',', true) => {
                    pos = key(json, skip_whitespace(json, pos + 1))?;
                    continue 'value;
                }
                (b',', false) => {
                    pos += 1;
                    continue 'value;
                }
                (b'}', true) | (b']', false) => {
                    pos += 1;
                    objects >>= 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

fn skip_whitespace(json: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = json.get(pos) {
        pos += 1;
    }
    pos
}

/// A member's key and its colon starting at `pos`: the position after the colon.
fn key(json: &[u8], pos: usize) -> Option<usize> {
    if json.get(pos) != Some(&b'"') {
        return None;
    }
    let pos = skip_whitespace(json, string_end(json, pos + 1)?);
    (json.get(pos) == Some(&b':')).then_some(pos + 1)
}

fn literal(json: &[u8], pos: usize, literal: &[u8]) -> Option<usize> {
    json.get(pos..)?
        .starts_with(literal)
        .then_some(pos + literal.len())
}

/// The end of a string whose opening quote is just before `pos` (the index after its
/// closing quote). The escapes of one character are accepted; `\u` and control
/// characters are left to serde_json.
fn string_end(json: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        pos += special_byte(json.get(pos..)?)?;
        match json[pos] {
            b'"' => return Some(pos + 1),
            b'\\' => match json.get(pos + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// The end of the number starting at `pos`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number_end(json: &[u8], mut pos: usize) -> Option<usize> {
    let at = |pos: usize| json.get(pos).copied();
    let digits = |mut pos: usize| {
        let start = pos;
        while at(pos).is_some_and(|b| b.is_ascii_digit()) {
            pos += 1;
        }
        (pos > start).then_some(pos)
    };
    if at(pos) == Some(b'-') {
        pos += 1;
    }
    pos = match at(pos)? {
        b'0' => pos + 1,
        b'1'..=b'9' => digits(pos)?,
        _ => return None,
    };
    if at(pos) == Some(b'.') {
        pos = digits(pos + 1)?;
    }
    if let Some(b'e' | b'E') = at(pos) {
        pos += 1;
        if let Some(b'+' | b'-') = at(pos) {
            pos += 1;
        }
        pos = digits(pos)?;
    }
    Some(pos)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Every text one byte away from `seed`: each byte deleted, and each byte of `alphabet`
    /// put in place of each byte and inserted before each (and at the end).
    pub(in crate::read) fn one_byte_away(seed: &str, alphabet: &[u8]) -> Vec<Vec<u8>> {
        let bytes = seed.as_bytes();
        let mut texts = Vec::new();
        for at in 0..=bytes.len() {
            if at < bytes.len() {
                texts.push([&bytes[..at], &bytes[at + 1..]].concat());
            }
            for &b in alphabet {
                if at < bytes.len() {
                    texts.push([&bytes[..at], &[b], &bytes[at + 1..]].concat());
                }
                texts.push([&bytes[..at], &[b], &bytes[at..]].concat());
            }
        }
        texts
    }

    /// What serde_json finds: the end of the one value at the start of `text`.
    fn serde_end(text: &str) -> Option<usize> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let raw = <&RawValue as serde::Deserialize>::deserialize(&mut deserializer).ok()?;
        let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        Some(start + raw.get().len())
    }

    /// Whether [`value_end`] accepts `text`; where it does, serde_json finds the same end.
    fn agrees(text: &str) -> bool {
        let Some(end) = value_end(text.as_bytes()) else {
            return false;
        };
        assert_eq!(Some(end), serde_end(text), "{text:?}");
        true
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            "{}",
            "[]",
            r#"{"name":"echo","arguments":{"text":"the quick brown fox jumps over the lazy dog"}}"#,
            r#"[1, -2.5e+3, 0, 0.0, 1E9, true, false, null, "a\"b\\c\/d\b\f\n\r\t", [], {}]"#,
            "{ \"a\" :\t[ 1 ,\r\n2 ] , \"b\" : { } }",
            r#"{"é":"日本"}"#,
            r#"{"a":1}, trailing"#,
            "[0]]",
        ] {
            assert!(agrees(text), "declined: {text}");
        }
        for text in [
            "",
            "{",
            "[1,]",
            "[01]",
            "[1.]",
            "[1e]",
            "[-]",
            "[.5]",
            "[+1]",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\" 1}",
            "{1:2}",
            "[\"\\u0041\"]",
            "[\"\\x\"]",
            "[\"a\u{1}b\"]",
            "[tru]",
            "[nul]",
            "{\"a\":1]",
            "[1}",
            "[1 2]",
            "{\"a\":1,}",
        ] {
            assert!(!agrees(text), "accepted: {text}");
        }
        let deep = |n| "[".repeat(n) + &"]".repeat(n);
        assert!(agrees(&deep(128)));
        assert!(!agrees(&deep(129)));
        assert!(!agrees(&"[".repeat(200)));
    }

    /// Every text one byte away from a few documents (a byte deleted, replaced or inserted,
    /// from an alphabet of JSON's structural bytes and a few others): wherever
    /// [`value_end`] accepts one, serde_json finds the same end, and [`structured`] makes a
    /// value that serde_json reads as the same text.
    #[test]
    fn agrees_with_serde_json_on_texts_one_byte_away() {
        let seeds = [
            r#"{"name":"echo","arguments":{"text":"hi \"there\"","n":-12.5e-3}}"#,
            r#"[true,false,null,{"a":[1,{"b":[]}]},"x\\y",0]"#,
            r#"{ "a" : [ 1 , 2 ] , "b" : { "c" : "d" } }"#,
        ];
        let alphabet = b"\"\\{}[],: \t\n-+019eE.tfnulrsx/\x01";
        let mut accepted = 0;
        for seed in seeds {
            for text in one_byte_away(seed, alphabet) {
                let Ok(text) = std::str::from_utf8(&text) else {
                    continue;
                };
                if agrees(text) {
                    accepted += 1;
                    if let Some(raw) = structured(text) {
                        let reread: &RawValue = serde_json::from_str(raw.get()).unwrap();
                        assert_eq!(reread.get(), raw.get());
                    }
                }
            }
        }
        // Not vacuous: many of the texts (other numbers, strings, spacing) are read.
        assert!(accepted > 1000, "only {accepted} texts were read");
    }
}
