//! A test client for `ferry serve` as a real process: send lines, read replies as they
//! arrive (with their arrival order), call tools after the session-era handshake.

#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for any one reply before failing.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// One `ferry serve` process and its connection.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Value>,
    /// Replies read but not yet asked for, in arrival order.
    pending: VecDeque<Value>,
}

impl Client {
    /// Start `ferry serve` and complete the handshake (2025-06-18).
    pub fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferry serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, replies) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("non-JSON on stdout {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            stdin: child.stdin.take(),
            child,
            replies,
            pending: VecDeque::new(),
        };
        client.send(
            json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        );
        let init = client.reply("init");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        client.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        client
    }

    /// Write one message.
    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// Send `tools/call` of `tool` with `arguments` as request `id`.
    pub fn call(&mut self, id: impl Into<Value>, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc":"2.0","id":id.into(),"method":"tools/call",
            "params":{"name": tool, "arguments": arguments}}));
    }

    /// The next reply, whatever its id.
    pub fn next(&mut self) -> Value {
        if let Some(reply) = self.pending.pop_front() {
            return reply;
        }
        self.replies
            .recv_timeout(PATIENCE)
            .expect("a reply within the patience")
    }

    /// The next reply, or `None` if nothing arrives within `wait`.
    pub fn next_within(&mut self, wait: Duration) -> Option<Value> {
        if let Some(reply) = self.pending.pop_front() {
            return Some(reply);
        }
        match self.replies.recv_timeout(wait) {
            Ok(reply) => Some(reply),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        }
    }

    /// The reply to request `id` (other replies are kept for later).
    pub fn reply(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        if let Some(at) = self.pending.iter().position(|r| r["id"] == id) {
            return self.pending.remove(at).expect("present");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .replies
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no reply to {id}: {e}"));
            if reply["id"] == id {
                return reply;
            }
            self.pending.push_back(reply);
        }
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
    pub fn finish(mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().expect("wait").success()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
