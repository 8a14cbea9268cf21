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
        for message in messages(frame) {
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
        for message in messages(frame) {
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

/// The messages of a frame: one, or a batch's members (nothing for what does not parse).
fn messages(frame: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(frame) {
        Ok(Value::Array(batch)) => batch,
        Ok(value @ Value::Object(_)) => vec![value],
        _ => Vec::new(),
    }
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
}
