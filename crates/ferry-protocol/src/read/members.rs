//! The members of a JSON object that has already been validated, found by scanning its
//! text instead of parsing it again.
//!
//! A `tools/call`'s params are checked once by the classification (serde_json skims the
//! whole message); parsing them again with serde to find `name` and `arguments` is a full
//! parse for a few member names and the spans of their values, where this scan costs a
//! small part of that (measured: bench/results/profile.md#the-members-scan). It relies on
//! the text being valid JSON, and declines (`None`) whatever it does not read the way
//! serde would (a key with an escape, a member given twice, not an object): the caller
//! then parses with serde, which decides.
//!
//! On the way it notes whether a value has an escape or an exponent, the only places
//! where parsing valid JSON into a map can still fail (see [`tool_call`](super::tool_call)), which spares
//! two more passes over the tool's arguments on every call.

/// Where a member's value is in the object's text, and what the scan saw in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span<'a> {
    /// The value's text.
    pub text: &'a str,
    /// The value has no escape (a backslash in a string) and no exponent (an `e` or `E`
    /// right after a digit, outside strings).
    pub plain: bool,
}

/// The values of `object`'s members named in `names`, in that order (`None` for an absent
/// one). `None` if `object` is not an object, if a wanted member appears twice, or if a
/// key has an escape (it might spell a wanted name).
///
/// `object` must be valid JSON (as the classification leaves `params`): the scan does not
/// validate what it skips.
///
/// ```
/// use ferry_protocol::read::find_members;
///
/// let [name, missing] = find_members(r#"{"name":"echo","arguments":{}}"#, ["name", "uri"]).unwrap();
/// assert_eq!(name.unwrap().text, r#""echo""#);
/// assert!(missing.is_none());
/// assert!(find_members(r#"{"name":1,"name":2}"#, ["name"]).is_none());
/// ```
pub fn find_members<'a, const N: usize>(
    object: &'a str,
    names: [&str; N],
) -> Option<[Option<Span<'a>>; N]> {
    let mut found = [None; N];
    each_member(object, |key, value| {
        if let Some(slot) = names.iter().position(|name| *name == key) {
            if found[slot].is_some() {
                return None;
            }
            found[slot] = Some(value);
        }
        Some(())
    })?;
    Some(found)
}

/// Every member of `object` (valid JSON) in order, its key (without quotes) and its value,
/// until `member` says `None`; `None` then, or if `object` is not an object, or if a key
/// has an escape (serde compares its decoded text).
#[inline(always)]
pub(super) fn each_member<'a>(
    object: &'a str,
    mut member: impl FnMut(&'a str, Span<'a>) -> Option<()>,
) -> Option<()> {
    let mut scan = Scan {
        text: object,
        at: 0,
    };
    scan.skip_space();
    scan.expect(b'{')?;
    scan.skip_space();
    if scan.peek() == Some(b'}') {
        return Some(());
    }
    loop {
        scan.skip_space();
        let key = scan.string()?;
        if !key.plain {
            return None;
        }
        let key = &key.text[1..key.text.len() - 1];
        scan.skip_space();
        scan.expect(b':')?;
        scan.skip_space();
        let value = scan.value()?;
        member(key, value)?;
        scan.skip_space();
        match scan.next()? {
            b',' => {}
            b'}' => return Some(()),
            _ => return None,
        }
    }
}

/// The text of a JSON string span without its quotes, when it has no escapes.
///
/// ```
/// use ferry_protocol::read::{Span, plain_string};
///
/// assert_eq!(plain_string(Span { text: r#""echo""#, plain: true }), Some("echo"));
/// assert_eq!(plain_string(Span { text: r#""a\nb""#, plain: false }), None);
/// ```
pub fn plain_string(span: Span<'_>) -> Option<&str> {
    let inner = span.text.strip_prefix('"')?.strip_suffix('"')?;
    span.plain.then_some(inner)
}

struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The span from `start` to here.
    fn span(&self, start: usize, plain: bool) -> Option<Span<'a>> {
        let text = self.text.get(start..self.at)?;
        Some(Span { text, plain })
    }

    /// The string starting here, quotes included (`plain`: without an escape).
    fn string(&mut self) -> Option<Span<'a>> {
        let start = self.at;
        self.expect(b'"')?;
        let mut plain = true;
        loop {
            let rest = self.bytes().get(self.at..)?;
            let found = super::scan::find_either(b'"', b'\\', rest)?;
            self.at += found + 1;
            if rest[found] == b'"' {
                return self.span(start, plain);
            }
            // A backslash: the next byte is escaped (a `u` escape's hex digits need no care).
            plain = false;
            self.at += 1;
        }
    }

    /// The value starting here.
    #[inline(always)]
    fn value(&mut self) -> Option<Span<'a>> {
        let start = self.at;
        let mut plain = true;
        match self.peek()? {
            b'"' => return self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            plain &= self.string()?.plain;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                self.at += 1;
                                break;
                            }
                        }
                        b'e' | b'E' => plain &= !self.after_digit(),
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            // A number, `true`, `false` or `null`: up to what follows it.
            _ => loop {
                match self.peek() {
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') => break,
                    Some(b'e' | b'E') => plain &= !self.after_digit(),
                    Some(_) => {}
                }
                self.at += 1;
            },
        }
        self.span(start, plain)
    }

    /// Whether the byte before this one is a digit.
    fn after_digit(&self) -> bool {
        self.at
            .checked_sub(1)
            .and_then(|before| self.bytes().get(before))
            .is_some_and(u8::is_ascii_digit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["name", "arguments", "_meta"];

    #[test]
    fn members_are_found_as_serde_reads_them() {
        #[derive(serde::Deserialize)]
        struct Wire<'a> {
            #[serde(borrow, default)]
            name: Option<&'a serde_json::value::RawValue>,
            #[serde(borrow, default)]
            arguments: Option<&'a serde_json::value::RawValue>,
            #[serde(rename = "_meta", borrow, default)]
            meta: Option<&'a serde_json::value::RawValue>,
        }
        let objects = [
            r#"{"name":"echo","arguments":{"text":"hi"}}"#,
            r#" { "arguments" : [1, {"a": "}]\"\\"}, -2.5e3] , "name" : "x\"y" } "#,
            r#"{}"#,
            r#"{ }"#,
            r#"{"other":{"name":1},"name":null,"_meta":{"progressToken":"t"},"x":true}"#,
            r#"{"name":"a","arguments":"{\"not\":\"an object\"}","z":[[[]]],"_meta":false}"#,
            r#"{"arguments":{"deep":[{"x":[{"y":"]}"}]}]},"name":"é🦀"}"#,
        ];
        for object in objects {
            let wire: Wire<'_> = serde_json::from_str(object).expect("valid");
            // serde reads `null` as an absent `Option`.
            let found = find_members(object, NAMES)
                .expect("found")
                .map(|v| v.map(|v| v.text).filter(|v| *v != "null"));
            let serde = [wire.name, wire.arguments, wire.meta].map(|v| v.map(|v| v.get()));
            assert_eq!(found, serde, "{object}");
        }
    }

    #[test]
    fn what_serde_might_read_otherwise_is_declined() {
        for object in [
            r#"{"name":"a","name":"b"}"#,
            r#"{"n\u0061me":"a"}"#,
            r#"["echo",{}]"#,
            r#""text""#,
        ] {
            assert_eq!(find_members(object, NAMES), None, "{object}");
        }
        // A key given twice that is not wanted is serde's to skip, as here.
        assert!(find_members(r#"{"x":1,"x":2,"name":"a"}"#, NAMES).is_some());
    }

    #[test]
    fn plain_strings() {
        let string = |object| find_members(object, ["s"]).expect("an object")[0].expect("s");
        assert_eq!(plain_string(string(r#"{"s":"echo"}"#)), Some("echo"));
        assert_eq!(plain_string(string(r#"{"s":"a\"b"}"#)), None);
        assert_eq!(plain_string(string(r#"{"s":null}"#)), None);
    }

    /// A value is plain unless it has an escape or an exponent: what the scans of the
    /// whole text (`engine::scan`) find, except in strings, where an `e` after a digit is
    /// text.
    #[test]
    fn escapes_and_exponents_are_noted() {
        let plain = |value: &str| {
            let object = format!(r#"{{"v":{value}}}"#);
            find_members(&object, ["v"]).expect("an object")[0]
                .expect("v")
                .plain
        };
        for value in [
            r#"{"text":"the quick brown fox"}"#,
            r#"{"t":true,"f":false,"n":null,"x":-1.5}"#,
            r#"["2e5 in a string",{"e":"E"}]"#,
            "12",
            "true",
            r#""plain""#,
        ] {
            assert!(plain(value), "{value}");
        }
        for value in [
            r#"{"text":"a\nb"}"#,
            r#"{"big":1e400}"#,
            r#"[1.5E+3]"#,
            r#"{"a":[{"b":2e-1}]}"#,
            "1e5",
            r#""\ud800""#,
        ] {
            assert!(!plain(value), "{value}");
        }
    }
}
