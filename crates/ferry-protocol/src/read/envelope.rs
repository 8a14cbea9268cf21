//! The usual request or notification, its envelope read by hand.
//!
//! Why not serde's derive: reading the envelope of a `tools/call` (`jsonrpc`, `id`,
//! `method`, the keys) through a derived `Deserialize` is a large share of a short call's
//! cost, most of it in serde_json's string reader (measured:
//! bench/results/profile.md#the-envelope-read-by-hand). The envelope has
//! four known keys and short values, so this reads them directly and leaves the one value
//! that needs a full JSON reader, `params`, to the skim of [`skim`](super::skim) (serde_json
//! where that declines).
//!
//! It accepts only what it fully understands: the four members at most once each, `jsonrpc`
//! spelled `"2.0"`, `method` and a string `id` without escapes or control characters, an
//! integer `id` of at most 18 digits, `params` an object or an array. Anything else
//! (another member, an escape, a fraction, a response, invalid JSON) returns `None`, and the
//! general reading decides with the error the input deserves; a test checks the two agree
//! wherever this one accepts.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::classify::{method_name, request_or_notification};
use crate::jsonrpc::{Message, RawJson, RequestId};

/// The message `text` holds when it is the usual request or notification.
pub(super) fn read(text: &str) -> Option<Message> {
    let mut cursor = Cursor { text, pos: 0 };
    cursor.skip_whitespace();
    cursor.expect(b'{')?;
    let mut version = false;
    let mut id = None;
    let mut method = None;
    let mut params = None;
    loop {
        cursor.skip_whitespace();
        let key = cursor.key()?;
        cursor.skip_whitespace();
        cursor.expect(b':')?;
        cursor.skip_whitespace();
        match key {
            Key::Jsonrpc if !version => {
                cursor.literal(b"\"2.0\"")?;
                version = true;
            }
            Key::Id if id.is_none() => id = Some(cursor.id()?),
            Key::Method if method.is_none() => method = Some(cursor.plain_string()?),
            Key::Params if params.is_none() => params = Some(cursor.structured()?),
            _ => return None,
        }
        cursor.skip_whitespace();
        match cursor.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    cursor.skip_whitespace();
    if cursor.pos != text.len() || !version {
        return None;
    }
    Some(request_or_notification(
        id,
        method_name(Cow::Borrowed(method?)),
        params,
    ))
}

/// The members this reading knows.
#[derive(Clone, Copy)]
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
}

/// A position in the text being read.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn literal(&mut self, literal: &[u8]) -> Option<()> {
        let rest = self.bytes().get(self.pos..)?;
        rest.starts_with(literal).then(|| self.pos += literal.len())
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// One of the known keys, quotes included (matched as they are spelled: compared, not
    /// read as strings first, which is cheaper per key).
    fn key(&mut self) -> Option<Key> {
        let rest = self.bytes().get(self.pos..)?;
        let (key, spelled): (_, &[u8]) = match rest.get(1)? {
            b'j' => (Key::Jsonrpc, b"\"jsonrpc\""),
            b'i' => (Key::Id, b"\"id\""),
            b'm' => (Key::Method, b"\"method\""),
            b'p' => (Key::Params, b"\"params\""),
            _ => return None,
        };
        self.literal(spelled)?;
        Some(key)
    }

    /// A string without escapes or control characters (which JSON forbids raw), borrowed.
    fn plain_string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.pos;
        let rest = self.bytes().get(start..)?;
        let len = super::text::special_byte(rest)?;
        if rest[len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        // Both ends are ASCII quotes, so both are character boundaries.
        self.text.get(start..start + len)
    }

    /// A string id (see [`Cursor::plain_string`]) or an integer of at most 18 digits, which
    /// fits an `i64`; `-0`, leading zeros and longer integers are left to serde_json.
    fn id(&mut self) -> Option<RequestId> {
        if self.peek()? == b'"' {
            return self.plain_string().map(RequestId::from);
        }
        let negative = self.peek()? == b'-';
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        let mut value: i64 = 0;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            if self.pos - start == 18 {
                return None;
            }
            value = value * 10 + i64::from(digit - b'0');
            self.pos += 1;
        }
        let digits = &self.bytes()[start..self.pos];
        match digits {
            [] => None,
            [b'0'] if !negative => Some(RequestId::Number(0)),
            [b'0', ..] => None,
            _ => Some(RequestId::Number(if negative { -value } else { value })),
        }
    }

    /// An object or an array, validated and copied out raw: by [`skim`](super::skim) when
    /// it can, else by serde_json.
    fn structured(&mut self) -> Option<RawJson> {
        if !matches!(self.peek()?, b'{' | b'[') {
            return None;
        }
        let rest = self.text.get(self.pos..)?;
        if let Some(raw) = super::skim::structured(rest) {
            self.pos += raw.get().len();
            return Some(raw);
        }
        let mut deserializer = serde_json::Deserializer::from_str(rest);
        let raw = <&RawValue>::deserialize(&mut deserializer).ok()?;
        // `rest` starts with the value (no whitespace to skip), so the value is its prefix.
        self.pos += raw.get().len();
        Some(raw.to_owned())
    }
}
