//! A request's result as the engine sends it: JSON text.

use ferry_protocol::jsonrpc::{ENVELOPE_ROOM, RawJson, RequestId, ResultResponse};

/// The result of an incoming request as JSON text, ready for the response: raw JSON (from
/// `serde_json::value::to_raw_value`, or received), or text Ferry's own writers produced
/// (such as a tool's result, written without serde's escaper: see
/// [`CallToolResult::to_json`](ferry_protocol::types::CallToolResult::to_json)).
#[derive(Clone, Debug)]
pub struct ResultJson(Text);

#[derive(Clone, Debug)]
enum Text {
    Raw(RawJson),
    /// Valid JSON by construction: a `RawValue` would have to parse it again to be made.
    /// (Only the server's writers make it.)
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    Written(String),
}

impl ResultJson {
    /// Text a tested writer produced; the engine sends it as it is.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn written(json: String) -> Self {
        ResultJson(Text::Written(json))
    }

    /// `value` serialized.
    pub fn from_value<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        serde_json::value::to_raw_value(value).map(Self::from)
    }

    /// The result response to request `id`: written text becomes the frame itself, the
    /// envelope put around it (one allocation and one copy of the result fewer per
    /// response).
    pub(crate) fn into_response(self, id: &RequestId) -> Vec<u8> {
        match self.0 {
            Text::Written(text) => ResultResponse::wrap(text, id),
            Text::Raw(raw) => {
                let mut frame = Vec::with_capacity(raw.get().len() + ENVELOPE_ROOM);
                ResultResponse::write(&mut frame, id, raw.get());
                frame
            }
        }
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        match &self.0 {
            Text::Raw(raw) => raw.get(),
            Text::Written(text) => text,
        }
    }
}

impl From<RawJson> for ResultJson {
    fn from(raw: RawJson) -> Self {
        ResultJson(Text::Raw(raw))
    }
}
