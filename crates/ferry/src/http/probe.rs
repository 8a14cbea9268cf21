//! The usual stateless-era request's `params` read in one borrowed, typed pass: what the
//! HTTP layer needs of them (`_meta`'s version and stream options, and the members its
//! `Mcp-*` headers are checked against) without building a `serde_json::Value`. A `Value`
//! of the whole body is a large share of a stateless `tools/call`'s work (its `_meta`
//! carries the client's capabilities and identity on every request; measured:
//! bench/results/profile.md#the-stateless-post-body-read-once). With the envelope read by
//! the engine's classification, handed on to the engine, and `params` read here in one
//! pass, the body is read once.
//!
//! The probe answers only for what it reads exactly as `Value` would: `params` and `_meta`
//! absent or objects, no member it reads twice (serde's derive refuses a repeated field
//! where `Value` keeps the last). Anything else is `None`, and the caller reads the body
//! as a `Value`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::headers::Checked;

/// What the stateless POST path reads from a request's `params`.
pub(crate) struct Probe<'a> {
    /// `params._meta`'s protocol version, if the member is there (any JSON value).
    pub(crate) meta_version: Option<&'a RawValue>,
    /// `params._meta` names a progress token or a log level (so the answer may stream).
    pub(crate) streams: bool,
    /// The members the `Mcp-Name` and `Mcp-Param-*` headers are checked against.
    pub(crate) checked: Checked<'a>,
}

/// A member's raw value; `Some` even for `null` (as `Value::get` sees it).
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A member that must be a JSON object, read as `T` (serde's derive reads a struct from an
/// array too, which `Value::get` would not see members in).
fn object_of<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    struct Object<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(Object(PhantomData)).map(Some)
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default, deserialize_with = "object_of")]
    meta: Option<Meta<'a>>,
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
    /// Read a request's `params` (as the classification left them), or `None` when only a
    /// `Value` reads them right (see the module docs).
    pub(crate) fn params(params: Option<&'a RawValue>) -> Option<Probe<'a>> {
        debug_assert_eq!(
            ferry_protocol::types::keys::PROTOCOL_VERSION,
            "io.modelcontextprotocol/protocolVersion"
        );
        debug_assert_eq!(
            ferry_protocol::types::keys::LOG_LEVEL,
            "io.modelcontextprotocol/logLevel"
        );
        let mut probe = Probe {
            meta_version: None,
            streams: false,
            checked: Checked::Value(None),
        };
        let Some(params) = params else {
            return Some(probe);
        };
        if !object(params) {
            return None;
        }
        let params: Params<'a> = serde_json::from_str(params.get()).ok()?;
        if let Some(meta) = params.meta {
            probe.meta_version = meta.version;
            probe.streams = meta.progress_token.is_some() || meta.log_level.is_some();
        }
        probe.checked = Checked::Raw {
            name: params.name,
            uri: params.uri,
            arguments: params.arguments,
        };
        Some(probe)
    }

    /// `_meta`'s protocol version as a string (`Some(None)`: there, but not a string).
    pub(crate) fn meta_version(&self) -> Option<Option<std::borrow::Cow<'a, str>>> {
        self.meta_version
            .map(|raw| serde_json::from_str::<std::borrow::Cow<'a, str>>(raw.get()).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_protocol::jsonrpc::{Inbound, Message, classify};
    use serde_json::Value;

    /// What the `Value` reading of the stateless path takes from `body`'s params.
    fn by_value(body: &str) -> (Option<Value>, bool, Option<Value>) {
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
            meta.and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                .cloned(),
            meta.is_some_and(|m| {
                m.get("progressToken").is_some()
                    || m.get("io.modelcontextprotocol/logLevel").is_some()
            }),
            checked,
        )
    }

    /// The raw members as the `Value` object `by_value` builds.
    fn as_value(checked: Checked<'_>) -> Option<Value> {
        let Checked::Raw {
            name,
            uri,
            arguments,
        } = checked
        else {
            return None;
        };
        let mut m = serde_json::Map::new();
        for (key, raw) in [("name", name), ("uri", uri), ("arguments", arguments)] {
            if let Some(raw) = raw {
                m.insert(key.into(), serde_json::from_str(raw.get()).unwrap());
            }
        }
        Some(Value::Object(m))
    }

    /// The probe of a body's params, the envelope read by the engine's classification.
    fn probe(body: &str) -> Option<(Option<Value>, bool, Option<Value>)> {
        let Inbound::Single(Message::Request(request)) = classify(body.as_bytes()) else {
            panic!("not a request: {body}");
        };
        let probe = Probe::params(request.params.as_deref())?;
        Some((
            probe
                .meta_version
                .map(|r| serde_json::from_str(r.get()).unwrap()),
            probe.streams,
            as_value(probe.checked),
        ))
    }

    #[test]
    fn the_probe_reads_what_value_reads_or_declines() {
        let read = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"resources/read","id":2,"params":{"uri":"file:///x","_meta":{"progressToken":null}}}"#,
            r#"{"jsonrpc":"2.0","method":"prompts/get","id":3,"params":{"name":7,"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/logLevel":"info"}}}"#,
            r#"{"jsonrpc":"2.0","method":"x","id":4,"params":{"n\u0061me":"escaped key","other":[1,{"a":2}]}}"#,
            r#"{"jsonrpc":"2.0","method":"x","id":5,"params":{"_meta":{"unrelated":1,"unrelated":2}}}"#,
            r#"{"jsonrpc":"2.0","method":"x","id":6,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"_meta":{"progressToken":1}}}}"#,
        ];
        for body in read {
            let probed = probe(body).unwrap_or_else(|| panic!("{body}"));
            assert_eq!(probed, by_value(body), "{body}");
        }
        let declined = [
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"v"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":[1,2,3]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{},"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1,"progressToken":2}}}"#,
        ];
        for body in declined {
            assert!(probe(body).is_none(), "{body}");
        }
    }
}
