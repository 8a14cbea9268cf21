//! The usual stateless-era POST read in one borrowed, typed pass: what the HTTP layer needs
//! of a request (its method, id, `_meta`'s version and stream options, and the members its
//! `Mcp-*` headers are checked against) without building a `serde_json::Value` of the whole
//! body. That `Value` was 19k of the 114k instructions of a stateless `tools/call` (its
//! `_meta` carries the client's capabilities and identity on every request).
//!
//! The probe answers only for what it reads exactly as `Value` would: one JSON object with
//! a string `method`, a valid request `id`, `params` and `_meta` absent or objects, no member
//! it reads twice (serde's derive refuses a repeated field where `Value` keeps the last).
//! Anything else is `None`, and the caller reads the body as a `Value`.

use std::borrow::Cow;

use ferry_protocol::RequestId;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// What the stateless POST path reads from one request.
pub(crate) struct Probe<'a> {
    /// `method`.
    pub(crate) method: Cow<'a, str>,
    /// `id`.
    pub(crate) id: RequestId,
    /// `params._meta`'s protocol version, if the member is there (any JSON value).
    pub(crate) meta_version: Option<&'a RawValue>,
    /// `params._meta` names a progress token or a log level (so the answer may stream).
    pub(crate) streams: bool,
    /// `params`' `name`, `uri` and `arguments`, the members the `Mcp-Name` and
    /// `Mcp-Param-*` headers are checked against, as a `Value` object; `None` without
    /// `params`.
    pub(crate) checked: Option<Value>,
}

/// A member's raw value; `Some` even for `null` (as `Value::get` sees it).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    name: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

/// The members of a request's `_meta` the HTTP layer reads (the session layer's skim too).
#[derive(Deserialize)]
pub(crate) struct Meta<'a> {
    /// `io.modelcontextprotocol/protocolVersion`: a stateless-era request.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) version: Option<&'a RawValue>,
    /// `progressToken`.
    #[serde(rename = "progressToken")]
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) progress_token: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) log_level: Option<&'a RawValue>,
}

/// Whether a raw JSON value is an object.
pub(crate) fn object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

impl<'a> Probe<'a> {
    /// Read `body`, or `None` when only a `Value` reads it right (see the module docs).
    pub(crate) fn read(body: &'a [u8]) -> Option<Probe<'a>> {
        debug_assert_eq!(
            ferry_protocol::types::keys::PROTOCOL_VERSION,
            "io.modelcontextprotocol/protocolVersion"
        );
        debug_assert_eq!(
            ferry_protocol::types::keys::LOG_LEVEL,
            "io.modelcontextprotocol/logLevel"
        );
        let text = std::str::from_utf8(body).ok()?;
        // serde's derive reads a struct from an array too: objects only.
        if !text.trim_start().starts_with('{') {
            return None;
        }
        let body: Body<'a> = serde_json::from_str(text).ok()?;
        let id = serde_json::from_str::<RequestId>(body.id?.get()).ok()?;
        let mut probe = Probe {
            method: body.method,
            id,
            meta_version: None,
            streams: false,
            checked: None,
        };
        let Some(params) = body.params else {
            return Some(probe);
        };
        if !object(params) {
            return None;
        }
        let params: Params<'a> = serde_json::from_str(params.get()).ok()?;
        if let Some(meta) = params.meta {
            if !object(meta) {
                return None;
            }
            let meta: Meta<'a> = serde_json::from_str(meta.get()).ok()?;
            probe.meta_version = meta.version;
            probe.streams = meta.progress_token.is_some() || meta.log_level.is_some();
        }
        let mut checked = serde_json::Map::new();
        for (key, raw) in [
            ("name", params.name),
            ("uri", params.uri),
            ("arguments", params.arguments),
        ] {
            if let Some(raw) = raw {
                checked.insert(key.to_owned(), serde_json::from_str(raw.get()).ok()?);
            }
        }
        probe.checked = Some(Value::Object(checked));
        Some(probe)
    }

    /// `_meta`'s protocol version as a string (`Some(None)`: there, but not a string).
    pub(crate) fn meta_version(&self) -> Option<Option<Cow<'a, str>>> {
        self.meta_version
            .map(|raw| serde_json::from_str::<Cow<'a, str>>(raw.get()).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the `Value` reading of the stateless path takes from `body`.
    fn by_value(body: &str) -> (String, Value, Option<Value>, bool, Option<Value>) {
        let v: Value = serde_json::from_str(body).unwrap();
        let params = v.get("params");
        let meta = params.and_then(|p| p.get("_meta"));
        let checked = params.map(|p| {
            let mut m = serde_json::Map::new();
            for key in ["name", "uri", "arguments"] {
                if let Some(x) = p.get(key) {
                    m.insert(key.into(), x.clone());
                }
            }
            Value::Object(m)
        });
        (
            v["method"].as_str().unwrap().to_owned(),
            v["id"].clone(),
            meta.and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                .cloned(),
            meta.is_some_and(|m| {
                m.get("progressToken").is_some()
                    || m.get("io.modelcontextprotocol/logLevel").is_some()
            }),
            checked,
        )
    }

    #[test]
    fn the_probe_reads_what_value_reads_or_declines() {
        let read = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"id":"a","method":"tools/list"}"#,
            r#" {"method":"resources/read","id":2,"params":{"uri":"file:///x","_meta":{"progressToken":null}}}"#,
            r#"{"method":"prompts/get","id":3,"params":{"name":7,"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/logLevel":"info"}}}"#,
            r#"{"method":"x","id":4,"params":{"n\u0061me":"escaped key","other":[1,{"a":2}]}}"#,
            r#"{"method":"x","id":5,"params":{"_meta":{"unrelated":1,"unrelated":2}}}"#,
        ];
        for body in read {
            let probe = Probe::read(body.as_bytes()).unwrap_or_else(|| panic!("{body}"));
            let (method, id, version, streams, checked) = by_value(body);
            assert_eq!(probe.method, method, "{body}");
            assert_eq!(serde_json::to_value(&probe.id).unwrap(), id, "{body}");
            let probed: Option<Value> = probe
                .meta_version
                .map(|r| serde_json::from_str(r.get()).unwrap());
            assert_eq!(probed, version, "{body}");
            assert_eq!(probe.streams, streams, "{body}");
            assert_eq!(probe.checked, checked, "{body}");
        }
        let declined = [
            r#"[{"id":1,"method":"tools/list"}]"#,
            r#"["tools/list",1]"#,
            r#"{"method":"tools/list"}"#,
            r#"{"id":null,"method":"tools/list"}"#,
            r#"{"id":1.5,"method":"tools/list"}"#,
            r#"{"id":1,"method":5}"#,
            r#"{"id":1,"method":"a","method":"b"}"#,
            r#"{"id":1,"method":"x","params":[1]}"#,
            r#"{"id":1,"method":"x","params":{"_meta":"v"}}"#,
            r#"{"id":1,"method":"x","params":{"name":"a","name":"b"}}"#,
            r#"{"id":1,"method":"x","params":{"_meta":{"progressToken":1,"progressToken":2}}}"#,
            r#"{"id":1,"method":"x""#,
        ];
        for body in declined {
            assert!(Probe::read(body.as_bytes()).is_none(), "{body}");
        }
    }
}
