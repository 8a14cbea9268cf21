//! JSON-RPC 2.0 messages: requests, notifications, responses and the error object.
//!
//! Every message type is generic over its payload. The default payload is
//! `Box<RawValue>`: what arrives off the wire stays raw until its method is known, then is
//! parsed once, straight into the handler's type. Outgoing messages use typed payloads
//! (`Request<CallToolParams>`) and serialize without an intermediate `Value`.

use std::borrow::Cow;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::id::RequestId;
use crate::error_codes;

/// A raw JSON value, kept as text until its type is known.
pub type RawJson = Box<RawValue>;

/// The `"jsonrpc": "2.0"` member; a zero-sized marker that only (de)serializes `"2.0"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(deserializer)?;
        if s == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(de::Error::custom(format!(
                "jsonrpc must be \"2.0\", not {s:?}"
            )))
        }
    }
}

/// A request: a method call that expects exactly one response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<P = RawJson> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: Cow<'static, str>,
    /// The parameters, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> Request<P> {
    /// A request with the given id, method and params.
    pub fn new(id: impl Into<RequestId>, method: impl Into<Cow<'static, str>>, params: P) -> Self {
        Request {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A notification: a one-way message that never gets a response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Notification<P = RawJson> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name, e.g. `notifications/progress`.
    pub method: Cow<'static, str>,
    /// The parameters, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> Notification<P> {
    /// A notification with the given method and params.
    pub fn new(method: impl Into<Cow<'static, str>>, params: P) -> Self {
        Notification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A successful response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultResponse<R = RawJson> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

impl<R> ResultResponse<R> {
    /// A result response for request `id`.
    pub fn new(id: RequestId, result: R) -> Self {
        ResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

impl ResultResponse<RawJson> {
    /// Append the JSON of a result response for request `id` with the raw `result` to
    /// `out`: the bytes `serde_json::to_writer(out, &ResultResponse::new(id, result))`
    /// writes, without the serializer (its member names and `"2.0"` each took a pass
    /// through the string escaper, on every response). `result` must be
    /// one JSON text (a [`RawValue`]'s, say); it is copied as it is.
    pub fn write(out: &mut Vec<u8>, id: &RequestId, result: &str) {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        match id {
            RequestId::Number(n) => {
                out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes())
            }
            RequestId::String(s) => crate::write::write_str(out, s),
        }
        out.extend_from_slice(br#","result":"#);
        out.extend_from_slice(result.as_bytes());
        out.push(b'}');
    }

    /// The result response to request `id` around `result` (one JSON text): the bytes
    /// [`write`](Self::write) produces, in `result`'s own buffer, without copying the
    /// result to another (the envelope goes around it; with a number id and
    /// [`ENVELOPE_ROOM`] spare capacity, without an allocation either).
    pub fn wrap(result: String, id: &RequestId) -> Vec<u8> {
        let RequestId::Number(n) = id else {
            let mut out = Vec::with_capacity(result.len() + ENVELOPE_ROOM);
            Self::write(&mut out, id, &result);
            return out;
        };
        let mut digits = itoa::Buffer::new();
        let parts: [&[u8]; 3] = [
            br#"{"jsonrpc":"2.0","id":"#,
            digits.format(*n).as_bytes(),
            br#","result":"#,
        ];
        let head: usize = parts.iter().map(|p| p.len()).sum();
        let mut frame = result.into_bytes();
        let len = frame.len();
        frame.reserve(head + 1);
        frame.resize(len + head, 0);
        frame.copy_within(..len, head);
        let mut at = 0;
        for part in parts {
            frame[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        frame.push(b'}');
        frame
    }
}

/// Spare capacity a result written for a response leaves after it, so that
/// [`ResultResponse::wrap`] puts the envelope of a number id around it without growing it.
pub const ENVELOPE_ROOM: usize = 64;

/// An error response.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers; `None` (serialized as `null`) when the request's
    /// id could not be read.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// An error response for request `id` (`None` when the id could not be read).
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse { id, error }
    }
}

impl Serialize for ErrorResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ErrorResponse", 3)?;
        s.serialize_field("jsonrpc", &JsonRpcVersion)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("error", &self.error)?;
        s.end()
    }
}

/// A response: a result xor an error.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Response<R = RawJson> {
    /// A successful response.
    Result(ResultResponse<R>),
    /// An error response.
    Error(ErrorResponse),
}

impl<R> Response<R> {
    /// The id this response answers (`None` for an error whose request id was unreadable).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Response::Result(r) => Some(&r.id),
            Response::Error(e) => e.id.as_ref(),
        }
    }
}

/// The error object of an error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`crate::error_codes`]).
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Additional information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

/// The message and the code, e.g. `unknown tool "x" (JSON-RPC error -32602)`.
impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (JSON-RPC error {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

impl ErrorObject {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` attached.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: invalid JSON.
    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        ErrorObject::new(error_codes::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600`: not a valid JSON-RPC message.
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        ErrorObject::new(
            error_codes::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// `-32601`: unknown method.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            error_codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602`: the params did not fit the method.
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// `-32603`: something went wrong inside the receiver.
    pub fn internal_error(detail: impl std::fmt::Display) -> Self {
        ErrorObject::new(
            error_codes::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }

    /// "Resource not found" in `version`'s code (`-32002` until 2025-11-25, `-32602`
    /// after), `data.uri` the URI asked for. The message quotes the URI cut to
    /// [`QUOTED_MAX_BYTES`], so a huge URI is not sent back twice.
    ///
    /// ```
    /// use ferry_protocol::jsonrpc::ErrorObject;
    /// use ferry_protocol::version::ProtocolVersion;
    ///
    /// let error = ErrorObject::resource_not_found(ProtocolVersion::V2025_06_18, "notes://7");
    /// assert_eq!(error.code, -32002);
    /// assert_eq!(error.message, "resource not found: notes://7");
    /// assert_eq!(error.data.unwrap()["uri"], "notes://7");
    /// ```
    pub fn resource_not_found(version: crate::version::ProtocolVersion, uri: &str) -> Self {
        ErrorObject::new(
            error_codes::resource_not_found(version),
            format!("resource not found: {}", quoted(uri)),
        )
        .with_data(serde_json::json!({ "uri": uri }))
    }
}

/// How much of a name or URI from the peer an error message quotes; the whole value goes
/// in the error's `data`.
pub const QUOTED_MAX_BYTES: usize = 128;

/// `text` for an error message: whole up to [`QUOTED_MAX_BYTES`], else cut at a character
/// boundary with `…` appended.
///
/// ```
/// use ferry_protocol::jsonrpc::quoted;
///
/// assert_eq!(quoted("notes://7"), "notes://7");
/// assert_eq!(quoted(&"x".repeat(1000)).len(), 128 + "…".len());
/// ```
pub fn quoted(text: &str) -> Cow<'_, str> {
    if text.len() <= QUOTED_MAX_BYTES {
        return Cow::Borrowed(text);
    }
    let mut end = QUOTED_MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// Any single JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Message<P = RawJson> {
    /// A request.
    Request(Request<P>),
    /// A notification.
    Notification(Notification<P>),
    /// A response.
    Response(Response<P>),
}

impl<P> Message<P> {
    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

impl<P> From<Request<P>> for Message<P> {
    fn from(r: Request<P>) -> Self {
        Message::Request(r)
    }
}

impl<P> From<Notification<P>> for Message<P> {
    fn from(n: Notification<P>) -> Self {
        Message::Notification(n)
    }
}

impl<P> From<ResultResponse<P>> for Message<P> {
    fn from(r: ResultResponse<P>) -> Self {
        Message::Response(Response::Result(r))
    }
}

impl<P> From<ErrorResponse> for Message<P> {
    fn from(e: ErrorResponse) -> Self {
        Message::Response(Response::Error(e))
    }
}

/// Parse raw JSON text into a typed payload, mapping failure to `-32602`.
///
/// This is the "parse once" step: call it when the method is known.
pub fn parse_params<T: serde::de::DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(ErrorObject::invalid_params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Number ids at both ends, string ids plain and needing escapes.
    fn every_kind_of_id() -> [RequestId; 6] {
        [
            RequestId::Number(0),
            RequestId::Number(-5),
            RequestId::Number(i64::MAX),
            RequestId::Number(i64::MIN),
            RequestId::String("a-1".into()),
            RequestId::String("quote \" and \\ and \u{1} and é".into()),
        ]
    }

    #[test]
    fn a_written_result_response_is_what_serde_writes() {
        let result = RawValue::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.into())
            .expect("raw");
        for id in every_kind_of_id() {
            let mut written = Vec::new();
            ResultResponse::write(&mut written, &id, result.get());
            let serde = serde_json::to_vec(&ResultResponse::new(id.clone(), result.clone()))
                .expect("serialize");
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(serde).unwrap(),
                "{id}"
            );
        }
    }

    #[test]
    fn a_wrapped_result_is_the_written_response() {
        let result = r#"{"content":[{"type":"text","text":"hi"}]}"#;
        for id in every_kind_of_id() {
            let mut written = Vec::new();
            ResultResponse::write(&mut written, &id, result);
            let mut text = String::with_capacity(result.len() + ENVELOPE_ROOM);
            text.push_str(result);
            let before = text.as_ptr();
            let frame = ResultResponse::wrap(text, &id);
            assert_eq!(
                String::from_utf8(frame.clone()).unwrap(),
                String::from_utf8(written).unwrap(),
                "{id}"
            );
            if let RequestId::Number(_) = id {
                assert_eq!(frame.as_ptr(), before, "{id}: wrapped in place");
            }
        }
    }

    #[test]
    fn typed_request_serializes_directly() {
        let req = Request::new(1, "tools/list", serde_json::json!({"cursor": "c"}));
        assert_eq!(
            serde_json::to_string(&req).expect("serializes"),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#
        );
    }

    #[test]
    fn error_response_with_null_id() {
        let resp = ErrorResponse::new(None, ErrorObject::parse_error("oops"));
        assert_eq!(
            serde_json::to_string(&resp).expect("serializes"),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: oops"}}"#
        );
    }
}
