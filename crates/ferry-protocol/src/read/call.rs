//! A `tools/call`'s params read by hand: the tool's name, its arguments' raw text, and the
//! members most calls lack parsed only when present, so that the arguments can be parsed
//! straight into the tool's type without a `serde_json::Map` in between.

use serde::Deserialize;
use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};

use super::members::{Span, find_members, plain_string};
use super::params::Landmarks;
use crate::jsonrpc::Request;
use crate::types::{InputResponses, RequestMeta};

/// An optional member's value parsed as a `T`: `None` when absent or `null`; `Err` when it
/// does not parse. The check inline, the parse out of line: most calls have none of these
/// members, and the parse inlined at its three uses would spread every call's hot code over
/// more cache lines (measured: bench/results/profile.md#rare-call-members-parsed-out-of-line).
#[inline(always)]
fn parse_present<T: DeserializeOwned>(span: Option<Span<'_>>) -> Result<Option<T>, ()> {
    match present(span) {
        None => Ok(None),
        Some(span) => parse_member(span.text).map(Some),
    }
}

#[inline(never)]
fn parse_member<T: DeserializeOwned>(text: &str) -> Result<T, ()> {
    serde_json::from_str(text).map_err(drop)
}

/// An optional member's value: `None` when absent or `null` (as serde reads an `Option`).
fn present(span: Option<Span<'_>>) -> Option<Span<'_>> {
    span.filter(|span| span.text != "null")
}

/// Not more opening brackets than this cannot reach serde_json's nesting limit (128), which
/// the general path applies to the arguments and a skipped raw value does not.
const SHALLOW: usize = 100;

/// Whether `text` is shallow enough that no nesting limit applies.
fn shallow(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Nesting takes two bytes a level: short text cannot be deep.
    bytes.len() < 2 * SHALLOW || super::scan::count_either(b'{', b'[', bytes, SHALLOW) <= SHALLOW
}

/// Any JSON value, parsed (not skimmed) and dropped: numbers out of range and strings with
/// lone surrogates fail as they do when parsed into a map; a member the tool's type ignores
/// would only be skimmed by the direct parse.
struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Valid)
    }
}

impl<'de> Visitor<'de> for Valid {
    type Value = Valid;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_unit<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_key::<Valid>()?.is_some() {
            map.next_value::<Valid>()?;
        }
        Ok(Valid)
    }
}

/// Whether parsing `arguments` (valid JSON: the classification skimmed it) into a map
/// could fail: only a number out of `f64`'s range (an exponent, or more than 308 digits)
/// or a lone surrogate (an escape) can. Most arguments have neither (the scan that found
/// them noted both), and are spared the [`Valid`] parse.
fn may_be_refused(arguments: Span<'_>) -> bool {
    arguments.text.len() > 308 || !arguments.plain
}

/// A `tools/call` read by [`tool_call`]: its name (borrowed), its raw arguments, and the
/// rest of its params.
#[derive(Debug)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The arguments' raw text: a JSON object that parses into a map, or `None`.
    pub arguments: Option<&'a str>,
    /// `inputResponses`, when present.
    pub input_responses: Option<InputResponses>,
    /// `requestState`, when present.
    pub request_state: Option<String>,
    /// `_meta`, when present.
    pub meta: Option<RequestMeta>,
}

/// The params of a `tools/call` request with its arguments raw, when the general parse
/// would accept them and the call is not run as a task; `None` means: take the general path
/// (parse the params as [`CallToolRequestParams`](crate::types::CallToolRequestParams)).
///
/// `found` is what [`landmarks`](super::landmarks) found in this request's params, when a
/// transport read them (HTTP): the members are not read again. Without (stdio), the six
/// members a call needs are found by [`find_members`](super::find_members) alone, which
/// costs less than the landmarks, all of which only a transport needs (measured:
/// bench/results/profile.md#the-params-landmarks). Only the members most calls lack are
/// parsed, when present.
///
/// ```
/// use ferry_protocol::jsonrpc::{Inbound, Message, classify};
/// use ferry_protocol::read::{landmarks, tool_call};
///
/// let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}"#;
/// let Inbound::Single(Message::Request(request)) = classify(line) else { panic!() };
/// let call = tool_call(&request, None).unwrap();
/// assert_eq!((call.name, call.arguments), ("echo", Some(r#"{"m":"hi"}"#)));
/// let found = landmarks(request.params.as_deref().map(|p| p.get())).unwrap();
/// assert_eq!(tool_call(&request, Some(&found)).unwrap().name, "echo");
/// ```
#[inline]
pub fn tool_call<'a>(request: &'a Request, found: Option<&Landmarks>) -> Option<ToolCall<'a>> {
    if request.method != "tools/call" {
        return None;
    }
    let text = request.params.as_deref()?.get();
    if !shallow(text) {
        return None;
    }
    let [name, arguments, task, input_responses, request_state, meta] = match found {
        Some(found) => [
            found.name,
            found.arguments,
            found.task,
            found.input_responses,
            found.request_state,
            found.meta,
        ]
        .map(|member| member.map(|m| m.span(text))),
        None => find_members(
            text,
            [
                "name",
                "arguments",
                "task",
                "inputResponses",
                "requestState",
                "_meta",
            ],
        )?,
    };
    let name = plain_string(name?)?;
    let arguments = present(arguments);
    if present(task).is_some()
        || arguments.is_some_and(|a| {
            !a.text.starts_with('{')
                || (may_be_refused(a) && serde_json::from_str::<Valid>(a.text).is_err())
        })
    {
        return None;
    }
    Some(ToolCall {
        name,
        arguments: arguments.map(|a| a.text),
        input_responses: parse_present(input_responses).ok()?,
        request_state: parse_present(request_state).ok()?,
        meta: parse_present(meta).ok()?,
    })
}
