//! What the transport needs to know about a frame the engine sends: its kind, id and
//! method, the stateless era's request metadata headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) and whether a request may be sent twice.
//!
//! The frame itself is posted unchanged; only what the headers mirror is read from it.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferry_protocol::RequestId;
use ferry_protocol::types::keys;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::Value;

use crate::engine::Frame;

/// One frame the engine sends, read once.
#[derive(Clone, Debug)]
pub(crate) struct Outgoing {
    /// The frame as the engine wrote it (posted unchanged).
    pub(crate) body: bytes::Bytes,
    pub(crate) kind: Kind,
    pub(crate) method: Option<String>,
    pub(crate) params: Option<Value>,
}

/// What a frame is.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// A request: it gets exactly one response frame back.
    Request(RequestId),
    /// A notification.
    Notification,
    /// A response (to a server's request) or a batch.
    Other,
}

#[derive(Deserialize)]
struct Shape {
    id: Option<RequestId>,
    method: Option<String>,
    params: Option<Value>,
}

impl Outgoing {
    /// Read a frame; `None` for something that is not a JSON object we can classify (it is
    /// then posted as is, as `Kind::Other`).
    pub(crate) fn parse(frame: Frame) -> Outgoing {
        let shape = serde_json::from_slice::<Shape>(&frame).ok();
        let body = bytes::Bytes::from(frame);
        let Some(shape) = shape else {
            return Outgoing {
                body,
                kind: Kind::Other,
                method: None,
                params: None,
            };
        };
        let kind = match (&shape.id, &shape.method) {
            (Some(id), Some(_)) => Kind::Request(id.clone()),
            (None, Some(_)) => Kind::Notification,
            _ => Kind::Other,
        };
        Outgoing {
            body,
            kind,
            method: shape.method,
            params: shape.params,
        }
    }

    /// The method, or `""`.
    pub(crate) fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("")
    }

    /// The 2026-07-28 revision this request names in `_meta`, if it is a stateless one.
    pub(crate) fn stateless_version(&self) -> Option<&str> {
        self.params
            .as_ref()?
            .get("_meta")?
            .get(keys::PROTOCOL_VERSION)?
            .as_str()
    }

    /// A string member of `params`.
    pub(crate) fn param_str(&self, key: &str) -> Option<&str> {
        self.params.as_ref()?.get(key)?.as_str()
    }

    /// `notifications/cancelled`'s `requestId`.
    pub(crate) fn cancelled_id(&self) -> Option<RequestId> {
        let id = self.params.as_ref()?.get("requestId")?;
        serde_json::from_value(id.clone()).ok()
    }

    /// The stateless era's metadata headers for this request (`tools` gives the
    /// `x-mcp-header` annotations learnt from `tools/list`).
    pub(crate) fn metadata_headers(
        &self,
        version: &str,
        tools: &HashMap<String, ToolInfo>,
    ) -> Vec<(HeaderName, HeaderValue)> {
        let mut out = Vec::new();
        push(&mut out, "mcp-protocol-version", version);
        let method = self.method();
        push(&mut out, "mcp-method", method);
        let name = match method {
            "tools/call" | "prompts/get" => self.param_str("name"),
            "resources/read" => self.param_str("uri"),
            _ => None,
        };
        if let Some(name) = name {
            push(&mut out, "mcp-name", &encode(name));
        }
        if method == "tools/call"
            && let Some(tool) = name.and_then(|n| tools.get(n))
        {
            let arguments = self.params.as_ref().and_then(|p| p.get("arguments"));
            for (header, path) in &tool.headers {
                let value = path
                    .iter()
                    .try_fold(arguments, |v, key| Some(v?.get(key)))
                    .flatten();
                let text = match value {
                    Some(Value::String(s)) => encode(s),
                    Some(Value::Bool(b)) => b.to_string(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => continue,
                };
                push(&mut out, &format!("mcp-param-{header}"), &text);
            }
        }
        out
    }

    /// Whether this request may be sent again after the session it was sent on expired:
    /// every request but `tools/call`, and `tools/call` of a tool the server annotated
    /// `readOnlyHint` or `idempotentHint` (the only signal the protocol has).
    pub(crate) fn idempotent(&self, tools: &HashMap<String, ToolInfo>) -> bool {
        match self.method() {
            "tools/call" => self
                .param_str("name")
                .and_then(|n| tools.get(n))
                .is_some_and(|t| t.idempotent),
            "initialize" => false,
            _ => true,
        }
    }
}

fn push(out: &mut Vec<(HeaderName, HeaderValue)>, name: &str, value: &str) {
    match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
        (Ok(name), Ok(value)) => out.push((name, value)),
        _ => tracing::debug!("header {name} cannot carry {value:?}; not sent"),
    }
}

/// A header value per the 2026-07-28 value encoding: as is when it is plain visible ASCII
/// (space and tab allowed inside) and does not look like the sentinel, otherwise
/// `=?base64?...?=`.
pub(crate) fn encode(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(value))
    }
}

/// What the transport remembers of one tool from `tools/list`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolInfo {
    /// `Mcp-Param-{name}` headers and the argument path each mirrors.
    pub(crate) headers: Vec<(String, Vec<String>)>,
    /// The server says calling it twice does no harm (`readOnlyHint` or
    /// `idempotentHint`).
    pub(crate) idempotent: bool,
}

/// Read a `tools/list` result: each valid tool's annotations. A tool whose `x-mcp-header`
/// annotations break the 2026-07-28 rules is returned in the second list (by name): the
/// client must not use it.
pub(crate) fn read_tools(result: &Value) -> (Vec<(String, ToolInfo)>, Vec<String>) {
    let mut valid = Vec::new();
    let mut invalid = Vec::new();
    let Some(tools) = result.get("tools").and_then(Value::as_array) else {
        return (valid, invalid);
    };
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let annotations = tool.get("annotations");
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let mut headers = Vec::new();
        let ok = match tool.get("inputSchema") {
            Some(schema) => collect_headers(schema, &mut Vec::new(), &mut headers, false),
            None => true,
        } && unique(&headers);
        if ok {
            let info = ToolInfo {
                headers,
                idempotent: hint("readOnlyHint") || hint("idempotentHint"),
            };
            valid.push((name.to_owned(), info));
        } else {
            tracing::warn!("tool {name:?} has invalid x-mcp-header annotations; it is left out");
            invalid.push(name.to_owned());
        }
    }
    (valid, invalid)
}

/// Collect `x-mcp-header` annotations reachable through `properties` only; false when one
/// is invalid (bad token, non-primitive or `number` type, or reachable otherwise).
fn collect_headers(
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(String, Vec<String>)>,
    elsewhere: bool,
) -> bool {
    let Value::Object(object) = schema else {
        return true;
    };
    for (key, value) in object {
        match key.as_str() {
            "x-mcp-header" => {
                let Some(name) = value.as_str() else {
                    return false;
                };
                let primitive = matches!(
                    object.get("type").and_then(Value::as_str),
                    Some("string" | "integer" | "boolean")
                );
                if elsewhere || path.is_empty() || !token(name) || !primitive {
                    return false;
                }
                out.push((name.to_owned(), path.clone()));
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                for (property, sub) in properties {
                    path.push(property.clone());
                    let ok = collect_headers(sub, path, out, elsewhere);
                    path.pop();
                    if !ok {
                        return false;
                    }
                }
            }
            // Annotations anywhere else (items, composition, $defs...) are invalid.
            _ if value.is_object() || value.is_array() => {
                let children: Vec<&Value> = match value {
                    Value::Array(items) => items.iter().collect(),
                    other => vec![other],
                };
                for child in children {
                    if !collect_headers(child, &mut Vec::new(), &mut Vec::new(), true) {
                        return false;
                    }
                }
            }
            _ => {}
        }
    }
    true
}

/// RFC 9110 `token`.
fn token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn unique(headers: &[(String, Vec<String>)]) -> bool {
    let mut seen: Vec<String> = headers
        .iter()
        .map(|(n, _)| n.to_ascii_lowercase())
        .collect();
    seen.sort();
    seen.windows(2).all(|w| w[0] != w[1])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn encodes_values_per_the_spec_table() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn reads_annotations_and_rejects_invalid_tools() {
        let result = json!({"tools": [
            {"name": "sql", "annotations": {"readOnlyHint": true}, "inputSchema": {
                "type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "deep": {"type": "object", "properties": {
                        "n": {"type": "integer", "x-mcp-header": "N"}}}}}},
            {"name": "bad_type", "inputSchema": {"type": "object", "properties": {
                "x": {"type": "number", "x-mcp-header": "X"}}}},
            {"name": "bad_place", "inputSchema": {"type": "object", "properties": {
                "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}},
            {"name": "dup", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"}}}},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ]});
        let (valid, invalid) = read_tools(&result);
        assert_eq!(invalid, ["bad_type", "bad_place", "dup"]);
        assert_eq!(valid.len(), 2);
        assert_eq!(
            valid[0].1,
            ToolInfo {
                headers: vec![
                    ("Region".into(), vec!["region".into()]),
                    ("N".into(), vec!["deep".into(), "n".into()])
                ],
                idempotent: true
            }
        );
        assert!(!valid[1].1.idempotent);
    }

    #[test]
    fn mirrors_the_body_into_headers() {
        let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sql", "arguments": {"region": "eu", "deep": {"n": 42}},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let message = Outgoing::parse(serde_json::to_vec(&frame).unwrap());
        assert_eq!(message.stateless_version(), Some("2026-07-28"));
        let tools = HashMap::from([(
            "sql".to_owned(),
            ToolInfo {
                headers: vec![
                    ("Region".into(), vec!["region".into()]),
                    ("N".into(), vec!["deep".into(), "n".into()]),
                ],
                idempotent: false,
            },
        )]);
        let headers: Vec<(String, String)> = message
            .metadata_headers("2026-07-28", &tools)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        let expected: Vec<(String, String)> = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "sql"),
            ("mcp-param-region", "eu"),
            ("mcp-param-n", "42"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(headers, expected);
        assert!(!message.idempotent(&tools));
    }
}
