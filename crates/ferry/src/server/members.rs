//! The members of a JSON object that has already been validated, found by scanning its
//! text instead of parsing it again.
//!
//! A `tools/call`'s params are checked once by the classification (serde_json skims the
//! whole message) and were then parsed again by serde to find `name` and `arguments`:
//! ~1,000 instructions of the echo benchmark's ~12,000 per call (callgrind), for a few
//! member names and the spans of their values. This scan does it in ~200. It relies on
//! the text being valid JSON, and declines (`None`) whatever it does not read the way
//! serde would (a key with an escape, a member given twice, not an object): the caller
//! then parses with serde, which decides.

/// Where a value is in the object's text.
pub(crate) type Span<'a> = &'a str;

/// The values of `object`'s members named in `names`, in that order (`None` for an absent
/// one). `None` if `object` is not an object, if a wanted member appears twice, or if a
/// key has an escape (it might spell a wanted name).
pub(crate) fn find<'a, const N: usize>(
    object: &'a str,
    names: [&str; N],
) -> Option<[Option<Span<'a>>; N]> {
    let mut found = [None; N];
    let mut scan = Scan {
        text: object,
        at: 0,
    };
    scan.skip_space();
    scan.expect(b'{')?;
    scan.skip_space();
    if scan.peek() == Some(b'}') {
        return Some(found);
    }
    loop {
        scan.skip_space();
        let key = scan.string()?;
        // Escapes in a key: serde compares its decoded text.
        if key.contains('\\') {
            return None;
        }
        let key = &key[1..key.len() - 1];
        scan.skip_space();
        scan.expect(b':')?;
        scan.skip_space();
        let value = scan.value()?;
        if let Some(slot) = names.iter().position(|name| *name == key) {
            if found[slot].is_some() {
                return None;
            }
            found[slot] = Some(value);
        }
        scan.skip_space();
        match scan.next()? {
            b',' => {}
            b'}' => return Some(found),
            _ => return None,
        }
    }
}

/// The text of a JSON string span without its quotes, when it has no escapes.
pub(crate) fn plain_string(span: Span<'_>) -> Option<&str> {
    let inner = span.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
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

    /// The string starting here, quotes included.
    fn string(&mut self) -> Option<Span<'a>> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            let rest = self.bytes().get(self.at..)?;
            let found = crate::engine::scan::find_either(b'"', b'\\', rest)?;
            self.at += found + 1;
            if rest[found] == b'"' {
                return self.text.get(start..self.at);
            }
            // A backslash: the next byte is escaped (a `u` escape's hex digits need no care).
            self.at += 1;
        }
    }

    /// The value starting here.
    fn value(&mut self) -> Option<Span<'a>> {
        let start = self.at;
        match self.peek()? {
            b'"' => return self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
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
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            // A number, `true`, `false` or `null`: up to what follows it.
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
            }
        }
        self.text.get(start..self.at)
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
            let found = find(object, NAMES)
                .expect("found")
                .map(|v| v.filter(|v| *v != "null"));
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
            assert_eq!(find(object, NAMES), None, "{object}");
        }
        // A key given twice that is not wanted is serde's to skip, as here.
        assert!(find(r#"{"x":1,"x":2,"name":"a"}"#, NAMES).is_some());
    }

    #[test]
    fn plain_strings() {
        assert_eq!(plain_string(r#""echo""#), Some("echo"));
        assert_eq!(plain_string(r#""a\"b""#), None);
        assert_eq!(plain_string("null"), None);
    }
}
