//! What the first bytes of a message too large to read say about it: its id and whether
//! it is a request or a response, so a refusal (or a failed call) can name the id instead
//! of answering with `"id": null`.

use crate::jsonrpc::RequestId;

/// What [`read_head`] found among a message's top-level members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// `id`, when its whole value (a number or a string without escapes) was in the head.
    pub id: Option<RequestId>,
    /// A `method` member was seen: a request or a notification.
    pub method: bool,
    /// A `result` or `error` member was seen: a response.
    pub response: bool,
}

/// Read the top-level members of a JSON object from its first bytes (`head`, possibly cut
/// anywhere), skipping nested values, until the head ends or is not what a JSON-RPC
/// message starts with. Never fails: what it cannot tell is left out.
///
/// ```
/// use ferry_protocol::jsonrpc::{read_head, RequestId};
///
/// let head = read_head(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"te"#);
/// assert_eq!(head.id, Some(RequestId::Number(7)));
/// assert!(head.response && !head.method);
/// ```
pub fn read_head(head: &[u8]) -> Head {
    let mut found = Head::default();
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return found;
    }
    at += 1;
    loop {
        at = skip_space(head, at);
        let Some((key, after)) = string(head, at) else {
            return found;
        };
        at = skip_space(head, after);
        if head.get(at) != Some(&b':') {
            return found;
        }
        at = skip_space(head, at + 1);
        // The kind is known from the key (its value may be cut); the id needs its value.
        match key {
            b"method" => found.method = true,
            b"result" | b"error" => found.response = true,
            _ => {}
        }
        let Some(end) = skip_value(head, at) else {
            return found;
        };
        if key == b"id" {
            found.id = id(&head[at..end]);
        }
        at = skip_space(head, end);
        match head.get(at) {
            Some(b',') => at += 1,
            _ => return found,
        }
    }
}

/// [`read_head`] of a whole message or of each member of a batch (`[...]`), for a
/// message whose tree cannot be built (nested deeper than serde_json reads): each request
/// among them can still be answered with its id. Never fails; a member cut off or not an
/// object gives a [`Head`] with nothing found.
///
/// ```
/// use ferry_protocol::jsonrpc::{read_heads, RequestId};
///
/// let heads = read_heads(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#);
/// assert_eq!(heads[0].id, Some(RequestId::Number(1)));
/// assert!(heads[1].method && heads[1].id.is_none());
/// ```
pub fn read_heads(text: &[u8]) -> Vec<Head> {
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'[') {
        return vec![read_head(text)];
    }
    let mut heads = Vec::new();
    at += 1;
    loop {
        at = skip_space(text, at);
        let Some(end) = skip_value(text, at) else {
            return heads;
        };
        heads.push(read_head(&text[at..end]));
        at = skip_space(text, end);
        match text.get(at) {
            Some(b',') => at += 1,
            _ => return heads,
        }
    }
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// A string's contents (escapes left as they are) and the index after its closing quote.
fn string(text: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some((&text[at + 1..i], i + 1)),
            _ => i += 1,
        }
    }
    None
}

/// The index after the value starting at `at`, if the whole value is in `text`.
fn skip_value(text: &[u8], at: usize) -> Option<usize> {
    match *text.get(at)? {
        b'"' => string(text, at).map(|(_, end)| end),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < text.len() {
                match text[i] {
                    b'"' => {
                        i = string(text, i)?.1;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            // A number or a literal: up to the next delimiter, which must be there.
            let len = text[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            (len > 0).then_some(at + len)
        }
    }
}

/// A request id from its JSON text: an integer or a string without escapes.
fn id(value: &[u8]) -> Option<RequestId> {
    if value.first() == Some(&b'"') {
        let inner = &value[1..value.len() - 1];
        if inner.contains(&b'\\') {
            return None;
        }
        return std::str::from_utf8(inner)
            .ok()
            .map(|s| RequestId::String(s.into()));
    }
    // As the id's JSON reading has it: `-0` (a float to JSON readers) and integers out of
    // `i64` are not ids (`str::parse` took `-0` for 0, so a refusal named a request 0).
    serde_json::from_slice::<RequestId>(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_kinds_are_read_from_any_cut() {
        let message = br#"{"jsonrpc": "2.0", "params": {"a": [1, {"id": 9}], "b": "x\"}"}, "id": "r-1", "method": "tools/call"}"#;
        let full = read_head(message);
        assert_eq!(full.id, Some(RequestId::String("r-1".into())));
        assert!(full.method && !full.response);
        // Every cut says nothing false: an id, when given, is the right one.
        for cut in 0..message.len() {
            let head = read_head(&message[..cut]);
            if let Some(id) = head.id {
                assert_eq!(id, RequestId::String("r-1".into()), "cut at {cut}");
            }
        }
        let response = read_head(br#"{"jsonrpc":"2.0","id":-3,"error":{"code":1"#);
        assert_eq!(response.id, Some(RequestId::Number(-3)));
        assert!(response.response);
        for text in [
            &b""[..],
            b"[",
            b"{\"id\":",
            b"{\"id\":12",
            b"{\"id\":\"a\\\"b\",",
            b"{\"id\":1.5,",
            b"{\"id\":null,",
            b"{\"id\":-0,",
            b"{\"id\":9223372036854775808,",
            b"{\"id\":true,",
            b"nonsense",
            b"{\"id\" 3,",
        ] {
            assert_eq!(
                read_head(text).id,
                None,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn no_bytes_make_it_panic() {
        // Pseudo-random texts over JSON's punctuation (a fixed LCG: reproducible).
        let alphabet = br#"{}[]:,"\ idmethodresulterror0123456789-.e"#;
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let len = (state >> 58) as usize;
            let text: Vec<u8> = (0..len)
                .map(|i| {
                    let x = state.rotate_left(i as u32 * 7) >> 32;
                    alphabet[x as usize % alphabet.len()]
                })
                .collect();
            let _ = read_head(&text);
        }
    }

    #[test]
    fn the_heads_of_a_deep_message_and_of_each_batch_member() {
        // Params nested far deeper than a tree is built for, the id after them.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"arguments":{}1{}}},"id":7}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let heads = read_heads(deep.as_bytes());
        assert_eq!(heads.len(), 1);
        assert_eq!(heads[0].id, Some(RequestId::Number(7)));
        assert!(heads[0].method);
        let batch = format!(
            r#" [ {deep} , {{"jsonrpc":"2.0","id":"b","method":"ping"}}, {{"jsonrpc":"2.0","method":"n"}} ] "#
        );
        let heads = read_heads(batch.as_bytes());
        let ids: Vec<_> = heads.iter().map(|h| h.id.clone()).collect();
        assert_eq!(
            ids,
            [
                Some(RequestId::Number(7)),
                Some(RequestId::String("b".into())),
                None
            ]
        );
        // A batch cut off keeps the members whole before the cut.
        let third = batch.find(r#"{"jsonrpc":"2.0","method":"n"}"#).unwrap();
        assert_eq!(read_heads(&batch.as_bytes()[..third + 5]).len(), 2);
        assert!(read_heads(b"[").is_empty());
    }
}
