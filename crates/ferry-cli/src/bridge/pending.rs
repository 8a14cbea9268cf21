//! The host's requests `ferry bridge --stdio` has read and not yet answered on stdout, so
//! that when stdin closes it can wait for their answers, and answer those that do not come
//! in time with an error of its own: every request gets exactly one response.

use std::collections::HashMap;

use ferry::protocol::error_codes::INTERNAL_ERROR;
use serde_json::{Value, json};

/// Requests read from stdin, by id (as JSON text), not yet answered on stdout.
#[derive(Default)]
pub(crate) struct Pending {
    requests: HashMap<String, Value>,
}

impl Pending {
    /// Note what the host sent: its requests now wait for an answer; a
    /// `notifications/cancelled` means the named one will get none (the HTTP transport
    /// drops the exchange, and MCP sends no response to a cancelled request).
    pub(crate) fn host_sent(&mut self, frame: &[u8]) {
        let Ok(messages) = messages(frame) else {
            // Too deep to read into a tree: its requests still wait, known by their heads.
            for head in ferry::protocol::jsonrpc::read_heads(frame) {
                if let (true, Some(id)) = (head.method, head.id) {
                    let id = serde_json::to_value(id).unwrap_or(Value::Null);
                    self.requests.insert(id.to_string(), id);
                }
            }
            return;
        };
        for message in messages {
            match (message.get("method"), message.get("id")) {
                (Some(_), Some(id)) => {
                    self.requests.insert(id.to_string(), id.clone());
                }
                (Some(method), None) if method == "notifications/cancelled" => {
                    if let Some(id) = message.get("params").and_then(|p| p.get("requestId")) {
                        self.requests.remove(&id.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    /// Note what goes to the host: the responses in it answer their requests.
    pub(crate) fn server_sent(&mut self, frame: &[u8]) {
        if self.requests.is_empty() {
            return;
        }
        for message in messages(frame).unwrap_or_default() {
            if message.get("method").is_none()
                && let Some(id) = message.get("id")
            {
                self.requests.remove(&id.to_string());
            }
        }
    }

    /// Whether every request has been answered.
    pub(crate) fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// How many requests wait.
    pub(crate) fn len(&self) -> usize {
        self.requests.len()
    }

    /// A JSON-RPC error (`-32603`) for each request still waiting, saying `why`; none
    /// waits afterwards.
    pub(crate) fn fail_all(&mut self, why: &str) -> Vec<Vec<u8>> {
        self.requests
            .drain()
            .map(|(_, id)| {
                json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": INTERNAL_ERROR, "message": why}})
                .to_string()
                .into_bytes()
            })
            .collect()
    }
}

/// The messages of a frame: one, or a batch's members (none for what is not an object or
/// an array); an error for what does not parse.
fn messages(frame: &[u8]) -> Result<Vec<Value>, serde_json::Error> {
    Ok(match serde_json::from_slice::<Value>(frame)? {
        Value::Array(batch) => batch,
        value @ Value::Object(_) => vec![value],
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_wait_until_answered_or_cancelled() {
        let mut pending = Pending::default();
        pending.host_sent(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        pending.host_sent(br#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#);
        pending.host_sent(br#"{"jsonrpc":"2.0","id":"c","method":"tools/call"}"#);
        pending.host_sent(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
        assert_eq!(pending.len(), 3);
        // A server's request with the same id as one of ours is not an answer.
        pending.server_sent(br#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#);
        pending.server_sent(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        pending.host_sent(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}"#,
        );
        assert_eq!(pending.len(), 1);
        let errors = pending.fail_all("too late");
        assert!(pending.is_empty());
        let error: Value = serde_json::from_slice(&errors[0]).unwrap();
        assert_eq!(error["id"], "a");
        assert_eq!(error["error"]["code"], INTERNAL_ERROR);
        assert_eq!(error["error"]["message"], "too late");
    }

    #[test]
    fn a_request_too_deep_to_read_still_waits() {
        let mut pending = Pending::default();
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"a":{}1{}}},"id":"deep"}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        pending.host_sent(deep.as_bytes());
        assert_eq!(pending.len(), 1);
        pending
            .server_sent(br#"{"jsonrpc":"2.0","id":"deep","error":{"code":-32602,"message":"x"}}"#);
        assert!(pending.is_empty());
    }
}
