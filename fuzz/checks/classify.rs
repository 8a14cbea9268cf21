//! `classify`: the hand-written JSON readers on the message path against serde_json.
//!
//! - `classify` never accepts what serde_json does not read as JSON, answers `-32700` to
//!   what it does not, and on valid JSON reads the message a reference built from serde_json
//!   (the members as serde reads them, then JSON-RPC 2.0's rules as `classify` documents
//!   them) reads: same kind, id, method, params text, same error code and reply flag.
//! - the envelope's own reading (`envelope::read`), where it accepts, reads what the
//!   general reading reads;
//! - the params skim (`skim::value_end`, `skim::structured`) ends where serde_json ends;
//! - `read_head`, on the whole message and on every cut of it, names no id but the one
//!   the message has; `read_heads` of a batch is `read_head` of each member serde finds;
//! - the `tools/call` members scan (`read::find_members`) and the params' landmarks
//!   (`read::landmarks`) find the values serde finds, and `read::tool_call` reads what
//!   `CallToolRequestParams` reads;
//! - the byte searches (`read::scan`, `read::special_byte`) agree with plain loops.
//!
//! Intended differences, encoded exactly:
//! - lone surrogates (`"\ud800"`) are refused in `id` and `method` (`-32700`) but pass in
//!   `params`, `result` and other members, which are kept raw (serde_json's skim of a raw
//!   value does not decode escapes); the reference reads raw members the same way;
//! - `read_head` reads cut text and cannot tell a number's JSON validity: it is checked on
//!   messages serde_json reads, and only when the id it names is readable.

// The reference answers as `classify` does: `Rejected` is large, as there.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;

use ferry_protocol::jsonrpc::{
    Inbound, Message, Rejected, Request, RequestId, classify, read_head, read_heads,
};
use ferry_protocol::read::{self as hand, scan};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Check every property on `data`.
pub fn check(data: &[u8]) {
    let inbound = classify(data);
    let Ok(text) = std::str::from_utf8(data) else {
        assert_eq!(code(&inbound), Some(-32700), "invalid UTF-8: {inbound:?}");
        return;
    };
    check_classify(text, &inbound);
    check_head(text);
    check_heads(text);
    check_skim(text);
    check_searches(data);
    // The `tools/call` readings on every params object `classify` accepted.
    let messages: Vec<&Message> = match &inbound {
        Inbound::Single(message) => vec![message],
        Inbound::Batch(entries) => entries.iter().filter_map(|e| e.as_ref().ok()).collect(),
        Inbound::Rejected(_) => Vec::new(),
    };
    for message in messages {
        if let Message::Request(request) = message {
            check_call(request);
        }
    }
    // The params of a `tools/call` built around the input, if it is an object.
    if text.trim_start().starts_with('{') && serde_json::from_str::<&RawValue>(text).is_ok() {
        let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{text}}}"#);
        if let Inbound::Single(Message::Request(request)) = classify(frame.as_bytes()) {
            check_call(&request);
        }
    }
}

fn code(inbound: &Inbound) -> Option<i64> {
    match inbound {
        Inbound::Rejected(r) => Some(r.code()),
        _ => None,
    }
}

/// What a message reads as: `Debug` of the message or of the refusal (code, id, reply).
fn outcome(result: &Result<Message, Rejected>) -> String {
    match result {
        Ok(message) => format!("{message:?}"),
        Err(r) => format!(
            "refused {} id {:?} reply {}",
            r.code(),
            r.response.id,
            r.reply
        ),
    }
}

fn check_classify(text: &str, inbound: &Inbound) {
    let valid = serde_json::from_str::<&RawValue>(text).is_ok();
    if !valid {
        // Invalid JSON: a parse error, whatever the reading.
        assert_eq!(code(inbound), Some(-32700), "{text:?}: {inbound:?}");
        return;
    }
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if trimmed.starts_with('[') {
        let entries: Vec<&RawValue> = serde_json::from_str(text).expect("valid");
        match inbound {
            Inbound::Rejected(r) => {
                assert!(entries.is_empty(), "{text:?}: {r:?}");
                assert_eq!(r.code(), -32600);
            }
            Inbound::Batch(got) => {
                assert_eq!(got.len(), entries.len(), "{text:?}");
                for (entry, got) in entries.iter().zip(got) {
                    let mut expected = reference(entry.get());
                    if let Ok(Message::Request(r)) = &expected
                        && r.method == "initialize"
                    {
                        expected = Err(refusal(-32600, Some(r.id.clone()), true));
                    }
                    assert_eq!(
                        outcome(got),
                        outcome(&expected),
                        "entry {entry} of {text:?}"
                    );
                }
            }
            Inbound::Single(m) => panic!("a batch read as one message: {text:?}: {m:?}"),
        }
        return;
    }
    let got = match inbound {
        Inbound::Single(m) => format!("{m:?}"),
        Inbound::Rejected(r) => outcome(&Err(r.clone())),
        Inbound::Batch(_) => panic!("not a batch: {text:?}"),
    };
    assert_eq!(got, outcome(&reference(text)), "{text:?}");
    // The envelope's own reading, where it accepts, reads what the general one reads.
    if let Some(fast) = hand::envelope(text) {
        assert_eq!(
            outcome(&Ok(fast)),
            outcome(&hand::general(text)),
            "{text:?}"
        );
    }
}

fn refusal(code: i64, id: Option<RequestId>, reply: bool) -> Rejected {
    let error = match code {
        -32700 => ferry_protocol::jsonrpc::ErrorObject::parse_error("reference"),
        _ => ferry_protocol::jsonrpc::ErrorObject::invalid_request("reference"),
    };
    Rejected {
        response: ferry_protocol::jsonrpc::ErrorResponse::new(id, error),
        reply,
    }
}

/// The members of an object in order, keys decoded, values raw. With `KNOWN_ONCE`, a
/// member of a message's envelope given twice is an error (a data error, as serde's derive
/// makes it) where it is met.
struct Members<'a, const KNOWN_ONCE: bool = false>(Vec<(Cow<'a, str>, &'a RawValue)>);

const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

impl<'de, const KNOWN_ONCE: bool> serde::Deserialize<'de> for Members<'de, KNOWN_ONCE> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const K: bool>;
        impl<'de, const K: bool> Visitor<'de> for V<K> {
            type Value = Members<'de, K>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de, K>, A::Error> {
                let mut members: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if K && ENVELOPE.contains(&&*key) && members.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom("duplicate field"));
                    }
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V::<KNOWN_ONCE>)
    }
}

/// A string member's text, or `Err(true)` if it is a string that is not Unicode (a lone
/// surrogate), `Err(false)` if it is not a string.
fn string(raw: &RawValue) -> Result<String, bool> {
    if !raw.get().starts_with('"') {
        return Err(false);
    }
    serde_json::from_str::<String>(raw.get()).map_err(|_| true)
}

/// What `classify` should make of one valid JSON text that is not a batch, from serde's
/// reading of its members and the rules of `classify_with`'s documentation.
fn reference(text: &str) -> Result<Message, Rejected> {
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if !trimmed.starts_with('{') {
        return Err(refusal(-32600, None, true));
    }
    let members = match serde_json::from_str::<Members<'_, true>>(text) {
        Ok(Members(members)) => members,
        // A member of the envelope given twice: an invalid request, id unread.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err(refusal(-32600, None, true));
        }
        // A key with a lone surrogate: serde cannot decode it.
        Err(_) => return Err(refusal(-32700, None, true)),
    };
    let mut slots: [Option<&RawValue>; 6] = [None; 6];
    for (key, value) in &members {
        if let Some(i) = ENVELOPE.iter().position(|k| k == key) {
            slots[i] = Some(value);
        }
    }
    let [jsonrpc, id, method, params, result, error] = slots;
    let readable_id = id.and_then(|r| serde_json::from_str::<RequestId>(r.get()).ok());
    let version_ok = jsonrpc.is_some_and(|v| string(v).as_deref() == Ok("2.0"));
    if method.is_none() && (result.is_some() || error.is_some()) {
        let silent = |id| Err(refusal(-32600, id, false));
        if !version_ok {
            return silent(readable_id);
        }
        return match (result, error) {
            (Some(_), Some(_)) => silent(readable_id),
            (Some(result), None) => match readable_id {
                Some(id) => Ok(Message::Response(
                    ferry_protocol::jsonrpc::Response::Result(
                        ferry_protocol::jsonrpc::ResultResponse::new(id, result.to_owned()),
                    ),
                )),
                None => silent(None),
            },
            (None, Some(error)) => {
                let Ok(error) =
                    serde_json::from_str::<ferry_protocol::jsonrpc::ErrorObject>(error.get())
                else {
                    return silent(readable_id);
                };
                match id {
                    Some(raw) if raw.get() == "null" => {
                        Ok(ferry_protocol::jsonrpc::ErrorResponse::new(None, error).into())
                    }
                    Some(_) if readable_id.is_some() => {
                        Ok(ferry_protocol::jsonrpc::ErrorResponse::new(readable_id, error).into())
                    }
                    _ => silent(readable_id),
                }
            }
            (None, None) => unreachable!(),
        };
    }
    // Lone surrogates in `id` or `method`: a parse error.
    if [id, method]
        .into_iter()
        .flatten()
        .any(|r| string(r) == Err(true))
    {
        return Err(refusal(-32700, None, true));
    }
    let invalid = || Err(refusal(-32600, readable_id.clone(), true));
    if !version_ok {
        return invalid();
    }
    let Some(method) = method else {
        return invalid();
    };
    let Ok(method) = string(method) else {
        return invalid();
    };
    if result.is_some() || error.is_some() {
        return invalid();
    }
    let params = match params {
        None => None,
        Some(p) if p.get().starts_with(['{', '[']) => Some(p.to_owned()),
        Some(_) => return invalid(),
    };
    let method = Cow::Owned(method);
    match id {
        None => Ok(Message::Notification(
            ferry_protocol::jsonrpc::Notification {
                jsonrpc: ferry_protocol::jsonrpc::JsonRpcVersion,
                method,
                params,
            },
        )),
        Some(raw) if raw.get() == "null" => invalid(),
        Some(_) => match readable_id.clone() {
            Some(id) => Ok(Message::Request(Request {
                jsonrpc: ferry_protocol::jsonrpc::JsonRpcVersion,
                id,
                method,
                params,
            })),
            None => invalid(),
        },
    }
}

/// `read_head` on the whole text and every cut of it names no id but the message's.
fn check_head(text: &str) {
    let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(text) else {
        // Not a JSON object: the head may still be read, it must not panic.
        let _ = read_head(text.as_bytes());
        return;
    };
    let ids: Vec<&&RawValue> = members
        .iter()
        .filter(|(k, _)| k == "id")
        .map(|(_, v)| v)
        .collect();
    // With the key `id` spelled with an escape, or given twice, the head may read another.
    let spelled_plainly = text.matches("\"id\"").count() == ids.len();
    let id = match ids.as_slice() {
        [raw] => serde_json::from_str::<RequestId>(raw.get()).ok(),
        _ => None,
    };
    let full = read_head(text.as_bytes());
    let method = members.iter().any(|(k, _)| k == "method");
    let response = members.iter().any(|(k, _)| k == "result" || k == "error");
    if spelled_plainly && text.matches("\"method\"").count() == usize::from(method) {
        assert!(!full.method || method, "{text:?}: {full:?}");
    }
    if !spelled_plainly || ids.len() > 1 {
        return;
    }
    let _ = response;
    // The head names an id only when the message has that one.
    for cut in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
        let head = read_head(&text.as_bytes()[..cut]);
        if let Some(named) = &head.id {
            assert_eq!(Some(named), id.as_ref(), "cut at {cut} of {text:?}");
        }
    }
    // The whole message names its id when it is an integer or a string without escapes,
    // at the top level.
    if let (Some(expected), [raw]) = (&id, ids.as_slice())
        && !raw.get().contains('\\')
        && !raw.get().contains(['.', 'e', 'E'])
    {
        assert_eq!(full.id.as_ref(), Some(expected), "{text:?}");
    }
}

/// `read_heads` never panics; of a JSON array it reads each member as `read_head` does,
/// and of anything else it is `read_head` of the whole.
fn check_heads(text: &str) {
    let heads = read_heads(text.as_bytes());
    match serde_json::from_str::<Vec<&RawValue>>(text) {
        Ok(members) => {
            let each: Vec<_> = members
                .iter()
                .map(|m| read_head(m.get().as_bytes()))
                .collect();
            assert_eq!(heads, each, "{text:?}");
        }
        Err(_) if !text.trim_start().starts_with('[') => {
            assert_eq!(heads, vec![read_head(text.as_bytes())], "{text:?}");
        }
        Err(_) => {}
    }
}

/// What serde_json finds: the end of the one value at the start of `text`.
fn serde_end(text: &str) -> Option<usize> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let raw = <&RawValue as serde::Deserialize>::deserialize(&mut deserializer).ok()?;
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    Some(start + raw.get().len())
}

fn check_skim(text: &str) {
    // At the start and after a prefix the skim may be handed (params start with a bracket).
    for start in [0, text.find(['{', '[']).unwrap_or(0)] {
        let rest = &text[start..];
        if let Some(end) = hand::value_end(rest.as_bytes()) {
            // Intended difference: a number with a leading zero followed by a digit at the
            // top level (`00`): the skim ends after the zero, serde_json calls the number
            // invalid. Unreachable from `structured`, which starts at a bracket.
            let value = rest.trim_start_matches([' ', '\t', '\r', '\n']);
            let digits = value.strip_prefix('-').unwrap_or(value).as_bytes();
            if let [b'0', b'0'..=b'9', ..] = digits {
                assert_eq!(serde_end(rest), None, "{rest:?}");
                assert_eq!(end, rest.len() - digits.len() + 1, "{rest:?}");
            } else {
                assert_eq!(Some(end), serde_end(rest), "{rest:?}");
            }
        }
        if let Some(raw) = hand::structured(rest) {
            let end = serde_end(rest).expect("serde_json reads it");
            assert_eq!(raw.get(), &rest[..end], "{rest:?}");
            let reread: &RawValue = serde_json::from_str(raw.get()).expect("one value");
            assert_eq!(reread.get(), raw.get());
        }
    }
}

fn check_searches(data: &[u8]) {
    let special = data
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
    assert_eq!(hand::special_byte(data), special);
    let (a, b) = match data {
        [a, b, ..] => (*a, *b),
        _ => (b'{', b'['),
    };
    assert_eq!(scan::find(a, data), data.iter().position(|&x| x == a));
    assert_eq!(
        scan::find_either(a, b, data),
        data.iter().position(|&x| x == a || x == b)
    );
    let limit = data.len() % 7;
    let count = data.iter().filter(|&&x| x == a || x == b).count();
    assert_eq!(scan::count_either(a, b, data, limit), count.min(limit + 1));
    // `may_hold`: true where the key is, or at any backslash.
    let holds = data.contains(&b'\\') || data.windows(13).any(|w| w == b"progressToken");
    assert_eq!(
        scan::may_hold(data, b"progress", b"oken"),
        holds,
        "{data:?}"
    );
}

/// `landmarks` of a params object against serde's members: each found member's text is
/// the one serde finds under its name (in params, or in an object `_meta`); a declined
/// object has an escaped key or one of the names twice.
fn check_landmarks(params: &str) {
    const TOP: [&str; 8] = [
        "name",
        "uri",
        "arguments",
        "task",
        "inputResponses",
        "requestState",
        "requestId",
        "_meta",
    ];
    const META: [&str; 3] = [
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/logLevel",
    ];
    let Ok(Members(top)) = serde_json::from_str::<Members<'_>>(params) else {
        return;
    };
    let values = |all: &[(Cow<'_, str>, &RawValue)], name: &str| -> Vec<String> {
        all.iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.get().to_owned())
            .collect()
    };
    let meta = top
        .iter()
        .rev()
        .find(|(k, _)| k == "_meta")
        .map(|(_, v)| v.get())
        .filter(|m| m.starts_with('{'))
        .and_then(|m| serde_json::from_str::<Members<'_>>(m).ok())
        .map(|Members(all)| all);
    let Some(found) = hand::landmarks(Some(params)) else {
        let escaped =
            |all: &[(Cow<'_, str>, &RawValue)]| all.iter().any(|(k, _)| matches!(k, Cow::Owned(_)));
        let twice = |all: &[(Cow<'_, str>, &RawValue)], names: &[&str]| {
            names.iter().any(|n| values(all, n).len() > 1)
        };
        let in_meta = meta
            .as_deref()
            .is_some_and(|m| escaped(m) || twice(m, &META));
        assert!(
            escaped(&top) || twice(&top, &TOP) || in_meta,
            "landmarks declined: {params:?}"
        );
        return;
    };
    let top_found = [
        found.name,
        found.uri,
        found.arguments,
        found.task,
        found.input_responses,
        found.request_state,
        found.request_id,
        found.meta,
    ];
    for (name, member) in TOP.iter().zip(top_found) {
        let expected = values(&top, name);
        assert_eq!(
            member.map(|m| m.text(params).to_owned()),
            expected.first().cloned(),
            "{name} in {params:?}"
        );
    }
    let meta_found = [
        found.progress_token,
        found.protocol_version,
        found.log_level,
    ];
    for (name, member) in META.iter().zip(meta_found) {
        let expected = meta.as_deref().map(|m| values(m, name)).unwrap_or_default();
        assert_eq!(
            member.map(|m| m.text(params).to_owned()),
            expected.first().cloned(),
            "_meta.{name} in {params:?}"
        );
    }
}

/// The `tools/call` readings of `request`'s params against serde's.
fn check_call(request: &Request) {
    let Some(params) = request.params.as_deref().map(RawValue::get) else {
        return;
    };
    let names = [
        "name",
        "arguments",
        "task",
        "inputResponses",
        "requestState",
        "_meta",
    ];
    let serde_members = serde_json::from_str::<Members<'_>>(params).ok();
    match hand::find_members(params, names) {
        Some(found) => {
            let found = found.map(|f| f.map(|s| (s.text, s.plain)));
            let Members(all) = serde_members.expect("an object");
            for (name, found) in names.iter().zip(found) {
                let values: Vec<&str> = all
                    .iter()
                    .filter(|(k, _)| k == name)
                    .map(|(_, v)| v.get())
                    .collect();
                assert!(values.len() <= 1, "{name} twice, found: {params:?}");
                assert_eq!(
                    found.map(|f| f.0),
                    values.first().copied(),
                    "{name} in {params:?}"
                );
                if let Some((value, plain)) = found {
                    if plain {
                        // Plain: nothing in it that parsing it into a map could refuse.
                        assert!(!value.contains('\\'), "{value:?}");
                        let shallow = value.len() < 200
                            || value.bytes().filter(|b| matches!(b, b'{' | b'[')).count() <= 100;
                        if value.len() <= 308 && shallow {
                            serde_json::from_str::<serde_json::Value>(value)
                                .unwrap_or_else(|e| panic!("plain {value:?} refused: {e}"));
                        }
                    }
                    if let Some(s) = hand::plain_string(hand::Span { text: value, plain }) {
                        assert_eq!(
                            serde_json::from_str::<String>(value).ok().as_deref(),
                            Some(s)
                        );
                    }
                }
            }
        }
        None => {
            // Declined: not an object, a key with an escape, or a wanted member twice.
            if let Some(Members(all)) = serde_members {
                let escaped_key = all.iter().any(|(k, _)| matches!(k, Cow::Owned(_)));
                let twice = names
                    .iter()
                    .any(|n| all.iter().filter(|(k, _)| k == n).count() > 1);
                assert!(escaped_key || twice, "declined: {params:?}");
            }
        }
    }
    check_landmarks(params);
    if request.method != "tools/call" {
        return;
    }
    // Read from the members alone (stdio) and from the landmarks (HTTP): the same call.
    let found = hand::landmarks(Some(params));
    let alone = hand::tool_call(request, None);
    if let Some(found) = &found {
        let through = hand::tool_call(request, Some(found));
        assert_eq!(
            through.as_ref().map(|c| (c.name, c.arguments)),
            alone.as_ref().map(|c| (c.name, c.arguments)),
            "{params:?}"
        );
    }
    let Some(fast) = alone else {
        return;
    };
    // The fast path is taken only where the general parse agrees.
    let general: ferry_protocol::types::CallToolRequestParams = serde_json::from_str(params)
        .unwrap_or_else(|e| panic!("fast path took params serde refuses: {params:?}: {e}"));
    assert_eq!(fast.name, general.name, "{params:?}");
    assert!(general.task.is_none(), "{params:?}");
    let arguments = fast.arguments.map(|a| {
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(a)
            .unwrap_or_else(|e| panic!("raw arguments {a:?} do not parse into a map: {e}"))
    });
    assert_eq!(arguments, general.arguments, "{params:?}");
    assert_eq!(fast.request_state, general.request_state, "{params:?}");
    assert_eq!(
        fast.meta.map(|m| serde_json::to_value(m).expect("writes")),
        general
            .meta
            .map(|m| serde_json::to_value(m).expect("writes")),
        "{params:?}"
    );
    assert_eq!(
        fast.input_responses
            .map(|m| serde_json::to_value(m).expect("writes")),
        general
            .input_responses
            .map(|m| serde_json::to_value(m).expect("writes")),
        "{params:?}"
    );
}
