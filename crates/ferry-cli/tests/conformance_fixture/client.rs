//! The suite's client over stdio, and the helpers the scenarios share.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{SUITE, TIMEOUT};

/// Answers the server's requests to the client: method and params in, result or error out.
pub(crate) type Responder = Box<dyn FnMut(&str, &Value) -> Result<Value, Value>>;

pub(crate) struct Client {
    /// The server process.
    pub(crate) child: Child,
    /// Its stdin; `None` once closed.
    pub(crate) stdin: Option<ChildStdin>,
    /// Every line of its stdout, parsed.
    pub(crate) lines: Receiver<Result<Value, String>>,
    /// The id of the next request.
    pub(crate) next_id: i64,
    /// Responses not claimed yet, by id: a result, or an error.
    pub(crate) responses: HashMap<i64, Result<Value, Value>>,
    /// Notifications, in arrival order.
    pub(crate) notifications: Vec<Value>,
    /// Requests the server sent, in arrival order.
    pub(crate) server_requests: Vec<Value>,
    /// Answers the server's requests.
    pub(crate) responder: Responder,
    /// The `initialize` result.
    pub(crate) initialized: Value,
}

impl Client {
    /// Start the server, initialize at `version` with the suite client's capabilities and
    /// send `notifications/initialized`.
    pub(crate) fn connect(version: &str) -> Client {
        Client::connect_with(version, json!({"sampling": {}, "elicitation": {}}))
    }

    /// [`Client::connect`] declaring `capabilities`.
    pub(crate) fn connect_with(version: &str, capabilities: Value) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--conformance"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferry serve --conformance");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let parsed = match line {
                    Ok(line) => serde_json::from_str(&line)
                        .map_err(|e| format!("non-JSON on stdout {line:?}: {e}")),
                    Err(e) => Err(e.to_string()),
                };
                if tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            responses: HashMap::new(),
            notifications: Vec::new(),
            server_requests: Vec::new(),
            responder: Box::new(|method, _| {
                Err(json!({"code": -32601, "message": format!("unexpected {method}")}))
            }),
            initialized: Value::Null,
        };
        let initialized = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "conformance-test-client", "version": "1.0.0"},
                }),
            )
            .expect("initialize");
        assert_eq!(initialized["protocolVersion"], version, "{initialized}");
        client.notify("notifications/initialized", json!({}));
        client.initialized = initialized;
        client
    }

    /// Answer the server's requests with `responder` from now on.
    pub(crate) fn respond_with(
        &mut self,
        responder: impl FnMut(&str, &Value) -> Result<Value, Value> + 'static,
    ) {
        self.responder = Box::new(responder);
    }

    /// Write one message.
    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
    }

    /// Send a notification.
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request without waiting for its response; returns its id.
    pub(crate) fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Wait for the response to request `id`, handling everything that arrives meanwhile.
    pub(crate) fn wait(&mut self, id: i64) -> Result<Value, Value> {
        loop {
            if let Some(response) = self.responses.remove(&id) {
                return response;
            }
            let message = self
                .lines
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|e| panic!("no response to request {id}: {e}"))
                .unwrap_or_else(|e| panic!("{e}"));
            self.dispatch(message);
        }
    }

    /// Send a request and wait for its response.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.start(method, params);
        self.wait(id)
    }

    /// A request that must succeed: its result.
    pub(crate) fn ok(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params)
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// `tools/call` of `name` with `arguments`: its result.
    pub(crate) fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.ok("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// File one message from the server: a response, a notification, or a request to
    /// answer.
    pub(crate) fn dispatch(&mut self, message: Value) {
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        match (message.get("method"), message.get("id")) {
            (Some(method), Some(id)) => {
                let method = method.as_str().expect("method is a string").to_owned();
                let answer = (self.responder)(&method, &message["params"]);
                let id = id.clone();
                self.server_requests.push(message);
                let reply = match answer {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                };
                self.send(&reply);
            }
            (Some(_), None) => self.notifications.push(message),
            (None, Some(id)) => {
                let id = id
                    .as_i64()
                    .unwrap_or_else(|| panic!("foreign id: {message}"));
                let outcome = match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
                self.responses.insert(id, outcome);
            }
            (None, None) => panic!("neither request, response nor notification: {message}"),
        }
    }

    /// The notifications of `method` received so far.
    pub(crate) fn notifications(&self, method: &str) -> Vec<&Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == method)
            .collect()
    }
}

impl Drop for Client {
    /// Close stdin (the server exits on EOF); kill the server if it lingers.
    fn drop(&mut self) {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `scenario` in a fresh session at every revision the suite lists for it.
pub(crate) fn replay(name: &str, mut scenario: impl FnMut(&mut Client)) {
    let (_, versions, _) = SUITE
        .iter()
        .find(|(n, _, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} is not a scenario of the suite"));
    for version in *versions {
        eprintln!("{name} at {version}");
        let mut client = Client::connect(version);
        scenario(&mut client);
    }
}

/// Decode standard base64 (with padding), as the suite's client would to render media.
pub(crate) fn base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert_eq!(text.len() % 4, 0, "padded base64: {text}");
    let mut bytes = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let value = ALPHABET
            .iter()
            .position(|&a| a == c)
            .unwrap_or_else(|| panic!("not base64: {text}"));
        buffer = (buffer << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
        }
    }
    bytes
}

/// Assert that `block` is a PNG image block.
pub(crate) fn assert_png(block: &Value) {
    assert_eq!(block["mimeType"], "image/png", "{block}");
    let data = base64(block["data"].as_str().expect("data"));
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG: {block}");
}

/// The `text` of a text content block or of text resource contents.
pub(crate) fn text(value: &Value) -> &str {
    value["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {value}"))
}

/// The content block of type `kind` in a tool result (the suite looks up by type).
pub(crate) fn block<'a>(result: &'a Value, kind: &str) -> &'a Value {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("content is an array: {result}"))
        .iter()
        .find(|b| b["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} content: {result}"))
}

/// The suite's answer to `sampling/createMessage`.
pub(crate) fn sampling_answer() -> Value {
    json!({"role": "assistant",
           "content": {"type": "text", "text": "This is a test response from the client"},
           "model": "test-model", "stopReason": "endTurn"})
}
