//! Test support: `ferry serve` as a child process driven line by line over real stdio, and
//! validators built from the spec's `schema.json` of each revision.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// How long a test waits for one message before it fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// A `ferry serve` process.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Messages read but not yet claimed (notifications, server requests, other replies).
    pub backlog: Vec<Value>,
    /// Answers to server-to-client requests, by method.
    pub answers: HashMap<String, Value>,
}

impl Server {
    /// Spawn `ferry serve` with `args`.
    pub fn spawn(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferry serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            backlog: Vec::new(),
            answers: HashMap::new(),
        }
    }

    /// Write one line.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Write raw bytes and a newline.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next message on stdout (every line must be JSON); `None` when nothing comes
    /// within [`WAIT`] or stdout closed.
    pub fn read(&mut self) -> Option<Value> {
        self.read_within(WAIT).ok().flatten()
    }

    /// The next message within `wait`: `Ok(None)` when nothing came in time, `Err(())`
    /// when stdout closed.
    #[allow(clippy::result_unit_err)]
    pub fn read_within(&mut self, wait: Duration) -> Result<Option<Value>, ()> {
        let line = match self.lines.recv_timeout(wait) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => return Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(()),
        };
        Ok(Some(serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!("non-JSON on stdout {line:?}: {e}")
        })))
    }

    /// Read until the response to `id`, answering server requests from [`Self::answers`]
    /// (an unknown method gets `-32601`) and keeping everything else in the backlog.
    pub fn response(&mut self, id: &Value) -> Value {
        if let Some(i) = self.backlog.iter().position(|m| is_response_to(m, id)) {
            return self.backlog.remove(i);
        }
        loop {
            let message = self
                .read()
                .unwrap_or_else(|| panic!("no response to {id}; backlog {:#?}", self.backlog));
            if is_response_to(&message, id) {
                return message;
            }
            if let (Some(method), Some(request_id)) = (message.get("method"), message.get("id")) {
                let method = method.as_str().unwrap_or_default();
                let reply = match self.answers.get(method) {
                    Some(result) => json!({"jsonrpc": "2.0", "id": request_id, "result": result}),
                    None => json!({"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": -32601, "message": "not answered in this test"}}),
                };
                self.send(&reply);
            }
            self.backlog.push(message);
        }
    }

    /// Send a request and wait for its response.
    pub fn call(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&id)
    }

    /// Close stdin, read everything left, and wait for the exit status.
    pub fn finish(mut self) -> (Vec<Value>, bool) {
        drop(self.stdin.take());
        let mut rest = std::mem::take(&mut self.backlog);
        while let Some(message) = self.read() {
            rest.push(message);
        }
        let status = self.child.wait().expect("wait");
        (rest, status.success())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

/// The session-era handshake; returns the `initialize` result.
pub fn initialize(server: &mut Server, version: &str, capabilities: Value) -> Value {
    let response = server.call(
        json!("init"),
        "initialize",
        json!({"protocolVersion": version, "capabilities": capabilities,
               "clientInfo": {"name": "ferry-tests", "version": "1"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    response
}

/// A session-era client of `ferry serve` (2025-06-18) that calls tools and reads replies
/// in arrival order.
pub struct Client(pub Server);

impl Client {
    /// Start `ferry serve` and complete the handshake.
    pub fn start() -> Client {
        let mut server = Server::spawn(&[]);
        let init = initialize(&mut server, "2025-06-18", json!({}));
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        Client(server)
    }

    /// Write one message.
    pub fn send(&mut self, message: Value) {
        self.0.send(&message);
    }

    /// Send `tools/call` of `tool` with `arguments` as request `id`, without waiting.
    pub fn call(&mut self, id: impl Into<Value>, tool: &str, arguments: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
        );
    }

    /// The next message, whatever it is (kept ones first).
    pub fn next(&mut self) -> Value {
        if !self.0.backlog.is_empty() {
            return self.0.backlog.remove(0);
        }
        self.0.read().expect("a message in time")
    }

    /// The next message, or `None` if nothing arrives within `wait`.
    pub fn next_within(&mut self, wait: Duration) -> Option<Value> {
        if !self.0.backlog.is_empty() {
            return Some(self.0.backlog.remove(0));
        }
        self.0.read_within(wait).expect("the server closed stdout")
    }

    /// The reply to request `id` (other messages are kept for later).
    pub fn reply(&mut self, id: impl Into<Value>) -> Value {
        self.0.response(&id.into())
    }

    /// Call `tool` and return the `result` of its reply.
    pub fn call_result(&mut self, id: impl Into<Value>, tool: &str, arguments: Value) -> Value {
        let id = id.into();
        self.call(id.clone(), tool, arguments);
        let reply = self.reply(id);
        reply
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("not a result: {reply}"))
    }

    /// Close stdin and wait for the process; whether it exited successfully.
    pub fn finish(self) -> bool {
        self.0.finish().1
    }
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
}

/// Whether a tool result is an error.
pub fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// One revision's schema, with a validator per definition name, built on demand.
pub struct Schema {
    /// The revision.
    pub version: String,
    defs_key: &'static str,
    draft: jsonschema::Draft,
    root: Value,
    validators: HashMap<String, jsonschema::Validator>,
}

impl Schema {
    /// Load `schemas/<version>.json`, the spec's schema `ferry check` embeds.
    pub fn load(version: &str) -> Schema {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("schemas")
            .join(format!("{version}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let root: Value = serde_json::from_str(&text).expect("schema.json");
        let (defs_key, draft) = if root.get("$defs").is_some() {
            ("$defs", jsonschema::Draft::Draft202012)
        } else {
            ("definitions", jsonschema::Draft::Draft7)
        };
        Schema {
            version: version.to_owned(),
            defs_key,
            draft,
            root,
            validators: HashMap::new(),
        }
    }

    /// Whether the revision defines `def`.
    pub fn has(&self, def: &str) -> bool {
        self.root[self.defs_key].get(def).is_some()
    }

    /// Validation errors of `value` against definition `def`.
    pub fn errors(&mut self, def: &str, value: &Value) -> Vec<String> {
        assert!(self.has(def), "{} has no definition {def}", self.version);
        let validator = self.validators.entry(def.to_owned()).or_insert_with(|| {
            let doc = json!({
                self.defs_key: self.root[self.defs_key],
                "allOf": [{"$ref": format!("#/{}/{def}", self.defs_key)}],
            });
            jsonschema::options()
                .with_draft(self.draft)
                .build(&doc)
                .unwrap_or_else(|e| panic!("{def}: {e}"))
        });
        validator
            .iter_errors(value)
            .map(|e| format!("at {}: {e}", e.instance_path()))
            .collect()
    }

    /// Panic unless `value` is a valid `def`.
    pub fn assert_valid(&mut self, def: &str, value: &Value) {
        let errors = self.errors(def, value);
        assert!(
            errors.is_empty(),
            "{}: not a valid {def}: {errors:#?}\n{value:#}",
            self.version
        );
    }
}
