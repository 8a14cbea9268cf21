//! Helpers shared by the sample modules: typed messages of the library's method enums as
//! samples, error replies, values only one era carries, and common small values.

use ferry_protocol::conform::{Conform, NotInRevision};
use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorResponse;
use ferry_protocol::methods::{
    ClientNotification, ClientRequest, ServerNotification, ServerRequest,
};
use ferry_protocol::types::*;
use ferry_protocol::{Era, ErrorObject, ProtocolVersion, RequestId};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::schema::Sample;

/// Definitions every request message satisfies.
pub const REQUEST_MESSAGE: &[&str] = &["JSONRPCRequest", "JSONRPCMessage", "Request"];
/// Definitions every notification message satisfies.
pub const NOTIFICATION_MESSAGE: &[&str] =
    &["JSONRPCNotification", "JSONRPCMessage", "Notification"];
/// Definitions every result response satisfies.
pub const RESULT_MESSAGE: &[&str] = &["JSONRPCResponse", "JSONRPCResultResponse", "JSONRPCMessage"];

/// A typed message of one of the library's method enums, sent as its params. Conforming
/// goes through the enum, which refuses a method the revision does not have.
#[derive(Clone)]
pub struct Via<M>(pub M);

/// The method name and params of a typed message.
pub trait Params {
    fn method_name(&self) -> &'static str;
    fn params(&self) -> Value;
}

macro_rules! params_of {
    ($($ty:ty),*) => {$(
        impl Params for $ty {
            fn method_name(&self) -> &'static str {
                self.method()
            }
            fn params(&self) -> Value {
                self.params_value()
            }
        }
    )*};
}
params_of!(
    ClientRequest,
    ServerRequest,
    ClientNotification,
    ServerNotification
);

impl<M: Conform> Conform for Via<M> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.0.conform(v)
    }
}

impl<M: Params> Serialize for Via<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.params().serialize(serializer)
    }
}

/// A value only one era carries: a client's JSON-RPC result (session era), an input request
/// or input response inside an `input_required` round trip (stateless era).
#[derive(Clone)]
pub struct Only<T> {
    era: Era,
    value: T,
}

/// `value`, as the session era carries it.
pub fn session<T>(value: T) -> Only<T> {
    Only {
        era: Era::Session,
        value,
    }
}

/// `value`, as the stateless era carries it.
pub fn stateless<T>(value: T) -> Only<T> {
    Only {
        era: Era::Stateless,
        value,
    }
}

impl<T: Conform> Conform for Only<T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.era() != self.era {
            return Err(NotInRevision {
                what: format!("a value of the {:?} era", self.era).into(),
                version: v,
            });
        }
        self.value.conform(v)
    }
}

impl<T: Serialize> Serialize for Only<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// A whole error response: expressible where its code may be emitted and its `data` can be
/// expressed.
#[derive(Clone)]
pub struct ErrorReply<D = Value> {
    pub response: ErrorResponse,
    /// Typed `data`, conformed and serialized into the error object.
    pub data: Option<D>,
}

/// An error response with an untyped (or no) `data`.
pub fn error_reply(id: impl Into<RequestId>, error: ErrorObject) -> ErrorReply {
    ErrorReply {
        response: ErrorResponse::new(Some(id.into()), error),
        data: None,
    }
}

impl<D: Conform> Conform for ErrorReply<D> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !error_codes::allowed_in(self.response.error.code, v) {
            return Err(NotInRevision {
                what: format!("error code {}", self.response.error.code).into(),
                version: v,
            });
        }
        self.data.conform(v)
    }
}

impl<D: Serialize> Serialize for ErrorReply<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.data {
            None => self.response.serialize(serializer),
            Some(data) => {
                let mut response = self.response.clone();
                response.error.data = Some(serde_json::to_value(data).expect("serializes"));
                response.serialize(serializer)
            }
        }
    }
}

pub fn client_request(
    name: &str,
    defs: &[&'static str],
    message_defs: &[&'static str],
    request: ClientRequest,
) -> Sample {
    let all = [message_defs, REQUEST_MESSAGE, &["ClientRequest"]].concat();
    Sample::request(request.method(), name, defs, &all, Via(request))
}

pub fn server_request(
    name: &str,
    defs: &[&'static str],
    message_defs: &[&'static str],
    request: ServerRequest,
) -> Sample {
    let all = [message_defs, REQUEST_MESSAGE, &["ServerRequest"]].concat();
    Sample::request(request.method(), name, defs, &all, Via(request))
}

pub fn client_notification(
    name: &str,
    defs: &[&'static str],
    message_defs: &[&'static str],
    notification: ClientNotification,
) -> Sample {
    let all = [message_defs, NOTIFICATION_MESSAGE, &["ClientNotification"]].concat();
    Sample::notification(notification.method(), name, defs, &all, Via(notification))
}

pub fn server_notification(
    name: &str,
    defs: &[&'static str],
    message_defs: &[&'static str],
    notification: ServerNotification,
) -> Sample {
    let all = [message_defs, NOTIFICATION_MESSAGE, &["ServerNotification"]].concat();
    Sample::notification(notification.method(), name, defs, &all, Via(notification))
}

/// A request whose params carry `_meta`. 2024-11-05 .. 2025-06-18 inline most params
/// without `_meta` (the base `Request` reserves it), so only the generic message definitions
/// apply to the whole message; `defs` (the params definitions, from 2025-11-25) do list it.
pub fn request_with_meta<M>(name: &str, defs: &[&'static str], request: M) -> Sample
where
    M: Conform + Params + Clone + 'static,
{
    Sample::request(
        request.method_name(),
        name,
        defs,
        REQUEST_MESSAGE,
        Via(request),
    )
}

/// A notification whose params carry `_meta` (see [`request_with_meta`]).
pub fn notification_with_meta<M>(name: &str, defs: &[&'static str], notification: M) -> Sample
where
    M: Conform + Params + Clone + 'static,
{
    let method = notification.method_name();
    Sample::notification(method, name, defs, NOTIFICATION_MESSAGE, Via(notification))
}

/// A result a server sends: `defs` plus `ServerResult` and `Result`; the response also as
/// `responses` (the 2026-07-28 `*ResultResponse` definitions that carry it).
pub fn server_result<T>(
    name: &str,
    defs: &[&'static str],
    responses: &[&'static str],
    value: T,
) -> Sample
where
    T: Conform + Serialize + Clone + 'static,
{
    let defs = [defs, &["ServerResult", "Result"]].concat();
    let messages = [RESULT_MESSAGE, responses].concat();
    Sample::result(name, &defs, &messages, value)
}

pub fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// Vendor `_meta` of an object (tool, resource, content...).
pub fn meta() -> Meta {
    object(json!({"example.com/key": "value"}))
}

pub fn trace_context() -> JsonObject {
    object(json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}))
}

pub fn icon() -> Icon {
    Icon {
        src: "https://example.com/icon.png".into(),
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["48x48".into()]),
        theme: Some(IconTheme::Light),
    }
}

pub fn annotations() -> Annotations {
    Annotations {
        audience: Some(vec![Role::User, Role::Assistant]),
        priority: Some(0.5),
        last_modified: Some("2025-01-12T15:00:58Z".into()),
    }
}

/// A request `_meta` with a progress token and trace context (every revision).
pub fn progress_meta(token: &str) -> RequestMeta {
    RequestMeta {
        progress_token: Some(ProgressToken::String(token.into())),
        other: trace_context(),
        ..Default::default()
    }
}

/// A result `_meta` with the server's identity (2026-07-28) and trace context.
pub fn result_meta() -> ResultMeta {
    ResultMeta {
        server_info: Some(Implementation::new("example-server", "1.0.0")),
        other: trace_context(),
        ..Default::default()
    }
}

/// A notification `_meta` with a subscription id (2026-07-28) and trace context.
pub fn notification_meta() -> NotificationMeta {
    NotificationMeta {
        subscription_id: Some(RequestId::from("listen-1")),
        other: trace_context(),
        ..Default::default()
    }
}

/// A client's answer to a server request in the session era: a JSON-RPC result.
pub fn client_result<T>(name: &str, defs: &[&'static str], value: T) -> Sample
where
    T: Conform + Serialize + Clone + 'static,
{
    let defs = [defs, &["ClientResult", "Result"]].concat();
    Sample::result(name, &defs, RESULT_MESSAGE, session(value)).revisions(
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::LATEST_SESSION,
    )
}

/// The params of a 2026-07-28 input request (`{ method, params }` inside an
/// `input_required` result); `request` is the method's definition (`CreateMessageRequest`).
pub fn input_request<T>(
    method: &'static str,
    name: &str,
    defs: &[&'static str],
    request: &'static str,
    params: T,
) -> Sample
where
    T: Conform + Serialize + Clone + 'static,
{
    let v = ProtocolVersion::V2026_07_28;
    Sample::request(
        method,
        name,
        defs,
        &[request, "InputRequest"],
        stateless(params),
    )
    .revisions(v, v)
}

/// A client's answer to a 2026-07-28 input request, as carried in `inputResponses`.
pub fn input_response<T>(name: &str, defs: &[&'static str], value: T) -> Sample
where
    T: Conform + Serialize + Clone + 'static,
{
    let v = ProtocolVersion::V2026_07_28;
    let defs = [defs, &["InputResponse"]].concat();
    Sample::object(name, &defs, stateless(value)).revisions(v, v)
}
