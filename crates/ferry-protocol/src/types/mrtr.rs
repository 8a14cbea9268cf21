//! Multi round-trip requests (2026-07-28): instead of sending the client a request, the
//! server answers `input_required` with the requests it needs answered; the client retries
//! the original request with `inputResponses` and the opaque `requestState`.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};

use super::common::{RequestParams, ResultType};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::meta::{RequestMeta, ResultMeta};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// Requests the server needs answered, keyed by a server-chosen name.
pub type InputRequests = IndexMap<String, InputRequest>;

/// Answers to [`InputRequests`], under the same keys.
pub type InputResponses = IndexMap<String, InputResponse>;

/// One thing the server needs from the client: `{ method, params }` (`params` omitted for
/// a `roots/list` without `_meta`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list`.
    ListRoots(RequestParams),
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
}

impl Serialize for InputRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("method", self.method())?;
        match self {
            InputRequest::CreateMessage(p) => map.serialize_entry("params", p)?,
            InputRequest::ListRoots(p) if p.meta.is_none() => {}
            InputRequest::ListRoots(p) => map.serialize_entry("params", p)?,
            InputRequest::Elicit(p) => map.serialize_entry("params", p)?,
        }
        map.end()
    }
}

impl InputRequest {
    /// The method the client would run to answer.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::CreateMessage(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
            InputRequest::Elicit(_) => "elicitation/create",
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Raw {
            method: String,
            #[serde(default)]
            params: Option<serde_json::Value>,
        }
        let raw = Raw::deserialize(deserializer)?;
        let params = raw
            .params
            .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        let parsed = match raw.method.as_str() {
            "sampling/createMessage" => serde_json::from_value(params).map(Self::CreateMessage),
            "roots/list" => serde_json::from_value(params).map(Self::ListRoots),
            "elicitation/create" => serde_json::from_value(params).map(Self::Elicit),
            other => {
                return Err(D::Error::custom(format!(
                    "unsupported input request method {other:?}"
                )));
            }
        };
        parsed.map_err(D::Error::custom)
    }
}

/// The client's answer to one [`InputRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

/// The `input_required` result (2026-07-28). At least one of `inputRequests` and
/// `requestState` is present.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// What the server needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client must echo on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The MRTR members of a retried request (`inputResponses`, `requestState`) with `_meta`:
/// the schema's `InputResponseRequestParams`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Answers to the server's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The server's `requestState`, echoed exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}
