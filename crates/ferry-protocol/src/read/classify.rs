//! Classification of untrusted input: one line in, a valid message or the exact error
//! response it deserves out. Never panics.
//!
//! The usual request or notification is read in one pass by hand ([`envelope`], with the
//! params validated by [`skim`]); anything else, or anything that reading declines, is
//! parsed into an envelope of borrowed raw members, each member then checked by JSON-RPC
//! 2.0's rules, and only `params` / `result` are copied out, still raw.

// `Rejected` (an error response) is large, but it is the rare path and is moved once;
// boxing it would add an allocation to the path without saving one.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::envelope;

use crate::jsonrpc::{
    ErrorObject, ErrorResponse, JsonRpcVersion, Message, Notification, RawJson, Request, RequestId,
    Response, ResultResponse,
};

/// The default largest message accepted: 4 MiB, the figure the official TypeScript SDK uses.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The default largest message a client accepts: 64 MiB. A server's answers carry file
/// contents and images as base64 (4/3 of their size), sometimes twice (`content` and
/// `structuredContent`): 64 MiB holds a 24 MB file sent both ways, where 4 MiB failed on
/// a 3 MB one. A client holds one such message at a time per call.
pub const DEFAULT_CLIENT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// What a line of input turned out to be.
#[derive(Debug)]
pub enum Inbound {
    /// One valid message.
    Single(Message),
    /// A non-empty batch; each entry is classified on its own.
    Batch(Vec<Result<Message, Rejected>>),
    /// Input that is not a valid message (or batch).
    Rejected(Rejected),
}

/// Input that cannot be processed, with the error response it deserves.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// The error response (id `null` when the id could not be read).
    pub response: ErrorResponse,
    /// Whether the response should be sent. `false` when the input was shaped like a
    /// response (it has `result` or `error` and no `method`): JSON-RPC never answers a
    /// response, so the receiver should log it and drop it.
    pub reply: bool,
}

impl Rejected {
    fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        Rejected {
            response: ErrorResponse::new(id, error),
            reply: true,
        }
    }

    fn silent(id: Option<RequestId>, error: ErrorObject) -> Self {
        Rejected {
            response: ErrorResponse::new(id, error),
            reply: false,
        }
    }

    /// The error code of the response.
    pub fn code(&self) -> i64 {
        self.response.error.code
    }
}

/// Limits applied while classifying.
#[derive(Clone, Copy, Debug)]
pub struct ClassifyLimits {
    /// Largest accepted input in bytes; larger input is rejected with `-32600` before any
    /// parsing. Default: [`DEFAULT_MAX_MESSAGE_BYTES`].
    pub max_message_bytes: usize,
}

impl Default for ClassifyLimits {
    fn default() -> Self {
        ClassifyLimits {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// Classify one line of input with the default limits. See [`classify_with`].
pub fn classify(input: &[u8]) -> Inbound {
    classify_with(input, &ClassifyLimits::default())
}

/// Classify one line of input (a single message or a batch).
///
/// - larger than the limit -> `-32600`, id `null`;
/// - invalid UTF-8, invalid JSON (including strings with lone surrogates, which have no
///   Unicode reading) -> `-32700`, id `null`;
/// - nesting: the envelope members (`jsonrpc`, `id`, `method`) are parsed with serde_json's
///   128-level limit; `params`, `result` and unknown members stay raw and are only skimmed
///   here (without recursion, so no depth can overflow the stack); parsing them into their
///   type later applies the same 128-level limit and answers `-32602`;
/// - valid JSON that is not a valid message -> `-32600`, with the id when it can be read;
/// - an empty batch -> `-32600`; each batch entry is classified like a single message, and
///   an `initialize` request inside a batch is rejected with `-32600` (the lifecycle forbids
///   batching it).
pub fn classify_with(input: &[u8], limits: &ClassifyLimits) -> Inbound {
    if input.len() > limits.max_message_bytes {
        return Inbound::Rejected(Rejected::new(
            None,
            ErrorObject::invalid_request(format!(
                "message of {} bytes exceeds the limit of {} bytes",
                input.len(),
                limits.max_message_bytes
            )),
        ));
    }
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            return Inbound::Rejected(Rejected::new(
                None,
                ErrorObject::parse_error(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
            ));
        }
    };
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if trimmed.starts_with('[') {
        classify_batch(text)
    } else {
        match classify_one(text) {
            Ok(message) => Inbound::Single(message),
            Err(rejected) => Inbound::Rejected(rejected),
        }
    }
}

fn classify_batch(text: &str) -> Inbound {
    let entries: Vec<&RawValue> = match serde_json::from_str(text) {
        Ok(entries) => entries,
        Err(e) => return Inbound::Rejected(Rejected::new(None, json_error(&e))),
    };
    if entries.is_empty() {
        return Inbound::Rejected(Rejected::new(
            None,
            ErrorObject::invalid_request("empty batch"),
        ));
    }
    let classified = entries
        .into_iter()
        .map(|entry| match classify_one(entry.get()) {
            Ok(Message::Request(r)) if r.method == "initialize" => Err(Rejected::new(
                Some(r.id),
                ErrorObject::invalid_request("initialize must not be part of a batch"),
            )),
            other => other,
        })
        .collect();
    Inbound::Batch(classified)
}

/// The members of a message, each kept as borrowed raw JSON; `Some` even for `null`, so
/// an explicit `"id": null` can be told apart from a missing id.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn json_error(e: &serde_json::Error) -> ErrorObject {
    use serde_json::error::Category;
    match e.classify() {
        Category::Syntax | Category::Eof | Category::Io => ErrorObject::parse_error(e),
        Category::Data => ErrorObject::invalid_request(e),
    }
}

/// The id, if it is readable as a valid request id.
fn readable_id(raw: Option<&RawValue>) -> Option<RequestId> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
}

/// A JSON string whose escapes do not decode to Unicode (a lone surrogate).
fn not_unicode(raw: &RawValue) -> bool {
    // Valid UTF-8 without an escape is valid Unicode.
    raw.get().starts_with('"')
        && raw.get().contains('\\')
        && serde_json::from_str::<Cow<'_, str>>(raw.get())
            .is_err_and(|e| e.classify() == serde_json::error::Category::Syntax)
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// `params` copied out when it is an object or an array (`Err` when it is another value).
fn structured(params: Option<&RawValue>) -> Result<Option<RawJson>, ()> {
    match params {
        None => Ok(None),
        Some(p) if p.get().starts_with('{') || p.get().starts_with('[') => Ok(Some(p.to_owned())),
        Some(_) => Err(()),
    }
}

/// A request when there is an id, else a notification.
pub(super) fn request_or_notification(
    id: Option<RequestId>,
    method: Cow<'static, str>,
    params: Option<RawJson>,
) -> Message {
    match id {
        Some(id) => Message::Request(Request {
            jsonrpc: JsonRpcVersion,
            id,
            method,
            params,
        }),
        None => Message::Notification(Notification {
            jsonrpc: JsonRpcVersion,
            method,
            params,
        }),
    }
}

/// One message: the envelope's own reading first, the general one for what it declines.
fn classify_one(text: &str) -> Result<Message, Rejected> {
    match envelope::read(text) {
        Some(message) => Ok(message),
        None => classify_general(text),
    }
}

/// Any message, each member first read as raw text and then checked, so that every kind
/// of invalid input gets its own error.
pub(super) fn classify_general(text: &str) -> Result<Message, Rejected> {
    if !text
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .starts_with('{')
    {
        // Valid JSON that is not an object is an invalid request; anything else a parse error.
        let error = match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => ErrorObject::invalid_request("a message must be a JSON object"),
            Err(e) => json_error(&e),
        };
        return Err(Rejected::new(None, error));
    }
    let env: Envelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) => {
            // A syntax error anywhere is a parse error; an object that repeats a member is
            // an invalid request. The envelope's reading stops at the first of the two, so
            // a repeated member before a syntax error is checked for the latter.
            let e = match e.classify() {
                serde_json::error::Category::Data => {
                    serde_json::from_str::<serde::de::IgnoredAny>(text)
                        .err()
                        .unwrap_or(e)
                }
                _ => e,
            };
            return Err(Rejected::new(None, json_error(&e)));
        }
    };
    if env.method.is_none() && (env.result.is_some() || env.error.is_some()) {
        return classify_response(&env);
    }
    if let Some(bad) = [env.id, env.method]
        .into_iter()
        .flatten()
        .find(|r| not_unicode(r))
    {
        return Err(Rejected::new(
            None,
            ErrorObject::parse_error(format!("string {} is not valid Unicode", bad.get())),
        ));
    }
    let id = readable_id(env.id);
    let invalid = |detail: &str| {
        Err(Rejected::new(
            id.clone(),
            ErrorObject::invalid_request(detail),
        ))
    };
    match env.jsonrpc {
        None => return invalid("missing \"jsonrpc\": \"2.0\""),
        // The usual spelling is compared as is; any other is parsed (it may use escapes).
        Some(v)
            if v.get() != "\"2.0\"" && serde_json::from_str::<JsonRpcVersion>(v.get()).is_err() =>
        {
            return invalid("\"jsonrpc\" must be exactly \"2.0\"");
        }
        Some(_) => {}
    }
    let Some(method_raw) = env.method else {
        return invalid("missing \"method\"");
    };
    let method = match json_str(method_raw) {
        Some(m) => method_name(m),
        None => return invalid("\"method\" must be a string"),
    };
    if env.result.is_some() || env.error.is_some() {
        return invalid("a request must not carry \"result\" or \"error\"");
    }
    let Ok(params) = structured(env.params) else {
        return invalid("\"params\" must be an object or an array");
    };
    match env.id {
        None => Ok(request_or_notification(None, method, params)),
        Some(raw) if is_null(raw) => invalid("a request id must not be null"),
        Some(_) if id.is_some() => Ok(request_or_notification(id, method, params)),
        Some(_) => invalid("a request id must be a string or an integer that fits in 64 bits"),
    }
}

/// A JSON string's text: borrowed when it has no escapes (serde's `Cow<str>` always
/// allocates), `None` if `raw` is not a string.
fn json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(text) => Some(Cow::Borrowed(text)),
        // Escapes need decoding into a string of their own.
        Err(_) => serde_json::from_str::<String>(raw.get())
            .ok()
            .map(Cow::Owned),
    }
}

/// The method name, without an allocation for the methods of every call.
pub(super) fn method_name(method: Cow<'_, str>) -> Cow<'static, str> {
    match &*method {
        "tools/call" => Cow::Borrowed("tools/call"),
        "notifications/progress" => Cow::Borrowed("notifications/progress"),
        "notifications/cancelled" => Cow::Borrowed("notifications/cancelled"),
        "resources/read" => Cow::Borrowed("resources/read"),
        "prompts/get" => Cow::Borrowed("prompts/get"),
        "ping" => Cow::Borrowed("ping"),
        "initialize" => Cow::Borrowed("initialize"),
        "notifications/initialized" => Cow::Borrowed("notifications/initialized"),
        "tools/list" => Cow::Borrowed("tools/list"),
        "resources/list" => Cow::Borrowed("resources/list"),
        "prompts/list" => Cow::Borrowed("prompts/list"),
        "completion/complete" => Cow::Borrowed("completion/complete"),
        _ => Cow::Owned(method.into_owned()),
    }
}

fn classify_response(env: &Envelope<'_>) -> Result<Message, Rejected> {
    let id = readable_id(env.id);
    let invalid = |detail: &str| {
        Err(Rejected::silent(
            id.clone(),
            ErrorObject::invalid_request(detail),
        ))
    };
    match env.jsonrpc {
        Some(v) if serde_json::from_str::<JsonRpcVersion>(v.get()).is_ok() => {}
        _ => return invalid("a response must carry \"jsonrpc\": \"2.0\""),
    }
    match (env.result, env.error) {
        (Some(_), Some(_)) => invalid("a response must not carry both \"result\" and \"error\""),
        (Some(result), None) => match id {
            Some(id) => Ok(Message::Response(Response::Result(ResultResponse::new(
                id,
                result.to_owned(),
            )))),
            None => invalid("a result response needs a string or integer id"),
        },
        (None, Some(error)) => {
            let Ok(error) = serde_json::from_str::<ErrorObject>(error.get()) else {
                return invalid(
                    "\"error\" must be an object with an integer \"code\" and a string \"message\"",
                );
            };
            match env.id {
                Some(raw) if is_null(raw) => Ok(ErrorResponse::new(None, error).into()),
                Some(_) if id.is_some() => Ok(ErrorResponse::new(id, error).into()),
                _ => invalid("an error response needs an id (null when it could not be read)"),
            }
        }
        (None, None) => invalid("a response needs \"result\" or \"error\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the envelope's own reading accepts `input`; where it does, the general
    /// reading must read the same message.
    fn agrees(input: &str) -> bool {
        let Some(fast) = envelope::read(input) else {
            return false;
        };
        assert_eq!(
            format!("{:?}", Ok::<_, Rejected>(fast)),
            format!("{:?}", classify_general(input)),
            "{input}"
        );
        true
    }

    /// Everything the envelope's reading declines is left to the general one (covered by
    /// tests/malformed.rs).
    #[test]
    fn the_envelope_reading_agrees_with_the_general_one() {
        let accepted = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"method":"x/y","params":{},"jsonrpc":"2.0"}"#,
            r#"  {"jsonrpc":"2.0","id":2,"method":"ping"}  "#,
            "{ \"jsonrpc\" :\t\"2.0\" ,\r\n\"id\" : \"a b\" , \"method\":\"ping\",\"params\": [1, {\"a\": \"\\u0041\"}] }",
            r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":999999999999999999,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-999999999999999999,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"","method":"é"}"#,
        ];
        for input in accepted {
            assert!(agrees(input), "not read by the envelope's reading: {input}");
        }
        let declined = [
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1000000000000000000,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2\u002e0","id":2,"method":"too\u006cs/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":"\udc00","method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}x"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping",}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","error":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","extra":[1,{"a":"\ud800"}]}"#,
            r#"{"jsonrpc":"2.0","id":2}"#,
            r#"{"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"m\u0065thod":"ping"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"pi\u{1}ng\"}",
            r#"["2.0",1,"ping"]"#,
            "{}",
            "",
        ];
        for input in declined {
            assert!(!agrees(input), "read by the envelope's reading: {input}");
        }
        // Escapes in `jsonrpc` or `method` are decoded by the general path.
        match classify_one(declined[10]) {
            Ok(Message::Request(r)) => assert_eq!(r.method, "tools/list"),
            other => panic!("{other:?}"),
        }
    }

    /// Found by the `classify` fuzz target: serde's reading of the envelope stopped at the
    /// repeated member and answered `-32600` to text that is not JSON.
    #[test]
    fn a_repeated_member_before_a_syntax_error_is_a_parse_error() {
        let code = |text: &str| match classify(text.as_bytes()) {
            Inbound::Rejected(r) => r.code(),
            other => panic!("{other:?}"),
        };
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":}"#), -32700);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            -32600
        );
    }

    /// Every input one byte away from a few messages (a byte deleted, replaced or
    /// inserted, from an alphabet of JSON's structural bytes and a few others): wherever
    /// the envelope's reading accepts one, the general reading reads the same message.
    #[test]
    fn the_envelope_reading_agrees_on_inputs_one_byte_away() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            r#"{"jsonrpc": "2.0", "id": "x", "method": "ping", "params": [1, -2.5e3, true, null]}"#,
            r#"{"method":"notifications/progress","jsonrpc":"2.0","params":{"progress":1}}"#,
        ];
        let alphabet = b"\"\\{}[],: \t\n-019eE.aunlx\x01";
        let mut accepted = 0;
        for seed in seeds {
            for mutant in crate::read::skim::tests::one_byte_away(seed, alphabet) {
                if let Ok(text) = std::str::from_utf8(&mutant) {
                    accepted += usize::from(agrees(text));
                }
            }
        }
        // Not vacuous: many of the mutants (other ids, spaces, other strings) are read.
        assert!(accepted > 500, "only {accepted} mutants were read");
    }
}
