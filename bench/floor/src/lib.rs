//! The floor: an MCP `echo` server doing the least work a correct one can, with serde_json
//! only. Both binaries answer through [`answer`]: `initialize` (any revision, answered with
//! the revision asked for), `ping`, `tools/list`, `tools/call echo`; notifications get no
//! answer; anything else a JSON-RPC error.

#![forbid(unsafe_code)]

use serde::Deserialize;
use serde_json::value::RawValue;

/// The parts of a message the floor looks at; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Option<&'a str>,
    #[serde(borrow)]
    name: Option<&'a str>,
    #[serde(borrow)]
    arguments: Option<Arguments<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    /// Borrowed as the raw JSON string (quotes and escapes included): it is copied back as is.
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

const TOOLS: &str = r#"{"tools":[{"name":"echo","description":"Echo the text back","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#;

/// Append the answer to one JSON-RPC message (plus a newline) to `out`; nothing for a
/// notification. Returns what the message was, for the HTTP floor's status codes.
pub fn answer(line: &[u8], out: &mut Vec<u8>) -> Kind {
    let Ok(message) = serde_json::from_slice::<Message<'_>>(line) else {
        out.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        );
        out.push(b'\n');
        return Kind::Request;
    };
    let Some(id) = message.id else {
        return Kind::Notification;
    };
    if message.method.is_none() {
        return Kind::Notification; // a response to us: we never ask anything
    }
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    match (message.method, message.params) {
        (
            Some("tools/call"),
            Some(Params {
                name: Some("echo"),
                arguments: Some(Arguments { text: Some(text) }),
                ..
            }),
        ) => {
            out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
            out.extend_from_slice(text.get().as_bytes());
            out.extend_from_slice(br#"}],"isError":false}}"#);
        }
        (Some("initialize"), params) => {
            let version = params
                .and_then(|p| p.protocol_version)
                .unwrap_or("2025-06-18");
            out.extend_from_slice(br#","result":{"protocolVersion":""#);
            out.extend_from_slice(version.as_bytes());
            out.extend_from_slice(
                br#"","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"0.1.0"}}}"#,
            );
        }
        (Some("tools/list"), _) => {
            out.extend_from_slice(br#","result":"#);
            out.extend_from_slice(TOOLS.as_bytes());
            out.push(b'}');
        }
        (Some("ping"), _) => out.extend_from_slice(br#","result":{}}"#),
        _ => out.extend_from_slice(br#","error":{"code":-32601,"message":"Method not found"}}"#),
    }
    out.push(b'\n');
    Kind::Request
}

/// What a message was.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A request (answered).
    Request,
    /// A notification or a response (not answered).
    Notification,
}
