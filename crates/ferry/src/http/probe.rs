//! The usual stateless-era request's `params` as the HTTP layer needs them: `_meta`'s
//! version and stream options, and the members its `Mcp-*` headers are checked against,
//! taken from the landmarks the one scan of the params found
//! (`ferry_protocol::read::landmarks`), without a `serde_json::Value` of the body (a large
//! share of a stateless `tools/call`'s work: its `_meta` carries the client's capabilities
//! and identity on every request; measured:
//! bench/results/profile.md#the-stateless-post-body-read-once).
//!
//! The probe answers only for what it reads exactly as `Value` would: `params` and `_meta`
//! absent or objects. Anything else is `None`, and the caller reads the body as a `Value`.

use std::borrow::Cow;

use ferry_protocol::read::Landmarks;
use serde_json::value::RawValue;

use super::headers::Checked;

/// What the stateless POST path reads from a request's `params`.
pub(crate) struct Probe<'a> {
    /// `params._meta`'s protocol version, if the member is there (any JSON value's text).
    pub(crate) meta_version: Option<&'a str>,
    /// `params._meta` names a progress token or a log level (so the answer may stream).
    pub(crate) streams: bool,
    /// The members the `Mcp-Name` and `Mcp-Param-*` headers are checked against.
    pub(crate) checked: Checked<'a>,
}

impl<'a> Probe<'a> {
    /// A request's `params` (as the classification left them) read through `found`, their
    /// landmarks, or `None` when only a `Value` reads them right (see the module docs).
    pub(crate) fn params(params: Option<&'a RawValue>, found: &Landmarks) -> Option<Probe<'a>> {
        let Some(params) = params else {
            return Some(Probe {
                meta_version: None,
                streams: false,
                checked: Checked::Value(None),
            });
        };
        let params = params.get();
        if !params.starts_with('{') {
            return None;
        }
        if found.meta.is_some_and(|m| !m.text(params).starts_with('{')) {
            return None;
        }
        let text = |member: Option<ferry_protocol::read::Member>| member.map(|m| m.text(params));
        Some(Probe {
            meta_version: text(found.protocol_version),
            streams: found.progress_token.is_some() || found.log_level.is_some(),
            checked: Checked::Raw {
                name: text(found.name),
                uri: text(found.uri),
                arguments: text(found.arguments),
            },
        })
    }

    /// `_meta`'s protocol version as a string (`Some(None)`: there, but not a string).
    pub(crate) fn meta_version(&self) -> Option<Option<Cow<'a, str>>> {
        self.meta_version
            .map(|raw| serde_json::from_str::<Cow<'a, str>>(raw).ok())
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
                m.insert(key.into(), serde_json::from_str(raw).unwrap());
            }
        }
        Some(Value::Object(m))
    }

    /// The probe of a body's params, the envelope read by the engine's classification.
    fn probe(body: &str) -> Option<(Option<Value>, bool, Option<Value>)> {
        let Inbound::Single(Message::Request(request)) = classify(body.as_bytes()) else {
            panic!("not a request: {body}");
        };
        let params = request.params.as_deref();
        let found = ferry_protocol::read::landmarks(params.map(|p| p.get()))?;
        let probe = Probe::params(params, &found)?;
        Some((
            probe.meta_version.map(|r| serde_json::from_str(r).unwrap()),
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
            r#"{"jsonrpc":"2.0","method":"x","id":4,"params":{"other":[1,{"a":2}],"name":"n"}}"#,
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
            // A key with an escape might spell a member: `Value` decides.
            r#"{"jsonrpc":"2.0","method":"x","id":4,"params":{"n\u0061me":"escaped key"}}"#,
        ];
        for body in declined {
            assert!(probe(body).is_none(), "{body}");
        }
    }
}
