//! `ferry serve --conformance` against the server scenarios of the official MCP conformance
//! suite (`@modelcontextprotocol/conformance` 0.1.16), replayed over stdio.
//!
//! The suite itself drives a server over Streamable HTTP only (`conformance server --url
//! <url> [--scenario <name>]`): `tests/conformance_suite/` runs it against `ferry serve
//! --conformance --http`. Here each scenario is replayed over stdio as the suite plays it: a fresh session per scenario (a new process), the suite client's
//! capabilities (`sampling` and `elicitation`), the same requests with the same arguments,
//! the same answers to the server's requests, and at least the same assertions (usually
//! stricter: exact texts, MIME types and data). Each scenario runs at every revision it
//! lists (`specVersions`) that the suite's client can negotiate.
//!
//! [`SUITE`] lists every server scenario of the suite with how it is covered.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Both session-era revisions the suite's scenarios are written for.
const BOTH: &[&str] = &["2025-06-18", "2025-11-25"];

/// Scenarios the suite runs at 2025-11-25 only.
const LATEST: &[&str] = &["2025-11-25"];

/// How long to wait for one message from the server.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How a scenario of the suite is covered here.
#[derive(Debug, PartialEq)]
enum Coverage {
    /// Replayed over stdio in full.
    Replayed,
    /// Its fixture is replayed; the rest checks the Streamable HTTP transport.
    FixtureOnly(&'static str),
    /// Checks only the Streamable HTTP transport: nothing to replay over stdio.
    HttpOnly(&'static str),
}

/// Every server scenario of the suite (`conformance list --server`, 0.1.16), in the
/// suite's order, with its `specVersions` and coverage. `json-schema-2020-12` and
/// `server-sse-polling` are in the suite's `pending` set, the rest in `active`.
const SUITE: &[(&str, &[&str], Coverage)] = &[
    ("server-initialize", BOTH, Coverage::Replayed),
    ("logging-set-level", BOTH, Coverage::Replayed),
    ("ping", BOTH, Coverage::Replayed),
    ("completion-complete", BOTH, Coverage::Replayed),
    ("tools-list", BOTH, Coverage::Replayed),
    ("tools-call-simple-text", BOTH, Coverage::Replayed),
    ("tools-call-image", BOTH, Coverage::Replayed),
    ("tools-call-audio", BOTH, Coverage::Replayed),
    ("tools-call-embedded-resource", BOTH, Coverage::Replayed),
    ("tools-call-mixed-content", BOTH, Coverage::Replayed),
    ("tools-call-with-logging", BOTH, Coverage::Replayed),
    ("tools-call-error", BOTH, Coverage::Replayed),
    ("tools-call-with-progress", BOTH, Coverage::Replayed),
    ("tools-call-sampling", BOTH, Coverage::Replayed),
    ("tools-call-elicitation", BOTH, Coverage::Replayed),
    ("json-schema-2020-12", LATEST, Coverage::Replayed),
    ("elicitation-sep1034-defaults", LATEST, Coverage::Replayed),
    (
        "server-sse-polling",
        LATEST,
        Coverage::FixtureOnly(
            "test_reconnection answers; closing the POST SSE stream mid-call, the priming \
             event, `retry` and resuming with Last-Event-ID need the HTTP transport",
        ),
    ),
    (
        "server-sse-multiple-streams",
        LATEST,
        Coverage::FixtureOnly(
            "three concurrent tools/list are answered; that each comes on its own POST (SSE \
             or JSON) needs the HTTP transport",
        ),
    ),
    ("elicitation-sep1330-enums", LATEST, Coverage::Replayed),
    ("resources-list", BOTH, Coverage::Replayed),
    ("resources-read-text", BOTH, Coverage::Replayed),
    ("resources-read-binary", BOTH, Coverage::Replayed),
    ("resources-templates-read", BOTH, Coverage::Replayed),
    ("resources-subscribe", BOTH, Coverage::Replayed),
    ("resources-unsubscribe", BOTH, Coverage::Replayed),
    ("prompts-list", BOTH, Coverage::Replayed),
    ("prompts-get-simple", BOTH, Coverage::Replayed),
    ("prompts-get-with-args", BOTH, Coverage::Replayed),
    ("prompts-get-embedded-resource", BOTH, Coverage::Replayed),
    ("prompts-get-with-image", BOTH, Coverage::Replayed),
    (
        "dns-rebinding-protection",
        LATEST,
        Coverage::HttpOnly(
            "Host/Origin validation of the HTTP transport (4xx for evil.example.com)",
        ),
    ),
];

/// Answers the server's requests to the client: method and params in, result or error out.
type Responder = Box<dyn FnMut(&str, &Value) -> Result<Value, Value>>;

/// The suite's client, talking to `ferry serve --conformance` over stdio.
struct Client {
    /// The server process.
    child: Child,
    /// Its stdin; `None` once closed.
    stdin: Option<ChildStdin>,
    /// Every line of its stdout, parsed.
    lines: Receiver<Result<Value, String>>,
    /// The id of the next request.
    next_id: i64,
    /// Responses not claimed yet, by id: a result, or an error.
    responses: HashMap<i64, Result<Value, Value>>,
    /// Notifications, in arrival order.
    notifications: Vec<Value>,
    /// Requests the server sent, in arrival order.
    server_requests: Vec<Value>,
    /// Answers the server's requests.
    responder: Responder,
    /// The `initialize` result.
    initialized: Value,
}

impl Client {
    /// Start the server, initialize at `version` with the suite client's capabilities and
    /// send `notifications/initialized`.
    fn connect(version: &str) -> Client {
        Client::connect_with(version, json!({"sampling": {}, "elicitation": {}}))
    }

    /// [`Client::connect`] declaring `capabilities`.
    fn connect_with(version: &str, capabilities: Value) -> Client {
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
    fn respond_with(
        &mut self,
        responder: impl FnMut(&str, &Value) -> Result<Value, Value> + 'static,
    ) {
        self.responder = Box::new(responder);
    }

    /// Write one message.
    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
    }

    /// Send a notification.
    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request without waiting for its response; returns its id.
    fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Wait for the response to request `id`, handling everything that arrives meanwhile.
    fn wait(&mut self, id: i64) -> Result<Value, Value> {
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
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.start(method, params);
        self.wait(id)
    }

    /// A request that must succeed: its result.
    fn ok(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params)
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// `tools/call` of `name` with `arguments`: its result.
    fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.ok("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// File one message from the server: a response, a notification, or a request to
    /// answer.
    fn dispatch(&mut self, message: Value) {
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
    fn notifications(&self, method: &str) -> Vec<&Value> {
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
fn replay(name: &str, mut scenario: impl FnMut(&mut Client)) {
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
fn base64(text: &str) -> Vec<u8> {
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
fn assert_png(block: &Value) {
    assert_eq!(block["mimeType"], "image/png", "{block}");
    let data = base64(block["data"].as_str().expect("data"));
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG: {block}");
}

/// The `text` of a text content block or of text resource contents.
fn text(value: &Value) -> &str {
    value["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {value}"))
}

/// The content block of type `kind` in a tool result (the suite looks up by type).
fn block<'a>(result: &'a Value, kind: &str) -> &'a Value {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("content is an array: {result}"))
        .iter()
        .find(|b| b["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} content: {result}"))
}

/// The suite's answer to `sampling/createMessage`.
fn sampling_answer() -> Value {
    json!({"role": "assistant",
           "content": {"type": "text", "text": "This is a test response from the client"},
           "model": "test-model", "stopReason": "endTurn"})
}

#[test]
fn the_suite_list_is_complete_and_every_scenario_is_accounted_for() {
    assert_eq!(SUITE.len(), 32, "0.1.16 has 32 server scenarios");
    let mut names: Vec<_> = SUITE.iter().map(|(n, _, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), SUITE.len(), "no scenario twice");
    for (name, _, coverage) in SUITE {
        if *coverage != Coverage::Replayed {
            eprintln!("{name}: {coverage:?}");
        }
    }
}

#[test]
fn server_initialize() {
    replay("server-initialize", |c| {
        let result = c.initialized.clone();
        assert_eq!(result["serverInfo"]["name"], "ferry-conformance");
        assert!(result["serverInfo"]["version"].is_string());
        let capabilities = &result["capabilities"];
        for key in ["tools", "resources", "prompts", "logging", "completions"] {
            assert!(capabilities[key].is_object(), "{key}: {result}");
        }
        assert_eq!(capabilities["resources"]["subscribe"], true);
    });
}

#[test]
fn logging_set_level() {
    replay("logging-set-level", |c| {
        assert_eq!(
            c.ok("logging/setLevel", json!({"level": "info"})),
            json!({})
        );
    });
}

#[test]
fn ping() {
    replay("ping", |c| assert_eq!(c.ok("ping", json!({})), json!({})));
}

#[test]
fn completion_complete() {
    replay("completion-complete", |c| {
        let result = c.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "test"}}),
        );
        let values = result["completion"]["values"].as_array().expect("values");
        assert_eq!(values, &[json!("testValue1"), json!("testValue2")]);
        let result = c.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
                   "argument": {"name": "id", "value": "1"}}),
        );
        assert_eq!(result["completion"]["values"], json!(["123"]));
    });
}

#[test]
fn tools_list() {
    replay("tools-list", |c| {
        let result = c.ok("tools/list", json!({}));
        let tools = result["tools"].as_array().expect("tools");
        for tool in tools {
            assert!(tool["name"].is_string(), "{tool}");
            assert!(
                tool["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{tool}"
            );
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        }
        let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        for called in [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            "test_reconnection",
        ] {
            assert!(names.contains(&called), "{called} listed: {names:?}");
        }
    });
}

#[test]
fn tools_call_simple_text() {
    replay("tools-call-simple-text", |c| {
        // The suite calls it without `arguments`.
        let result = c.ok("tools/call", json!({"name": "test_simple_text"}));
        assert_eq!(result["content"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            text(block(&result, "text")),
            "This is a simple text response for testing."
        );
        assert!(result.get("isError").is_none_or(|e| e == false));
    });
}

#[test]
fn tools_call_image() {
    replay("tools-call-image", |c| {
        let result = c.call_tool("test_image_content", json!({}));
        assert_png(block(&result, "image"));
    });
}

#[test]
fn tools_call_audio() {
    replay("tools-call-audio", |c| {
        let result = c.call_tool("test_audio_content", json!({}));
        let audio = block(&result, "audio");
        assert_eq!(audio["mimeType"], "audio/wav");
        let data = base64(audio["data"].as_str().expect("data"));
        assert!(
            data.starts_with(b"RIFF") && data[8..12] == *b"WAVE",
            "a WAV: {audio}"
        );
    });
}

#[test]
fn tools_call_embedded_resource() {
    replay("tools-call-embedded-resource", |c| {
        let result = c.call_tool("test_embedded_resource", json!({}));
        let resource = &block(&result, "resource")["resource"];
        assert_eq!(
            resource,
            &json!({"uri": "test://embedded-resource", "mimeType": "text/plain",
                    "text": "This is an embedded resource content."})
        );
    });
}

#[test]
fn tools_call_mixed_content() {
    replay("tools-call-mixed-content", |c| {
        let result = c.call_tool("test_multiple_content_types", json!({}));
        let kinds: Vec<_> = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
        assert_eq!(text(block(&result, "text")), "Multiple content types test:");
        assert_png(block(&result, "image"));
        let resource = &block(&result, "resource")["resource"];
        assert_eq!(resource["uri"], "test://mixed-content-resource");
        assert_eq!(resource["mimeType"], "application/json");
        let data: Value = serde_json::from_str(text(resource)).expect("JSON text");
        assert_eq!(data, json!({"test": "data", "value": 123}));
    });
}

#[test]
fn tools_call_with_logging() {
    replay("tools-call-with-logging", |c| {
        assert_eq!(
            c.ok("logging/setLevel", json!({"level": "debug"})),
            json!({})
        );
        let result = c.call_tool("test_tool_with_logging", json!({}));
        assert!(!text(block(&result, "text")).is_empty());
        let all = c.notifications("notifications/message");
        assert!(all.len() >= 3, "at least 3 log messages: {all:?}");
        // The tool's own messages (the library may forward other events at `debug`).
        let logs: Vec<_> = all
            .into_iter()
            .filter(|n| n["params"]["logger"] == "conformance")
            .collect();
        let data: Vec<_> = logs.iter().map(|n| n["params"]["data"].clone()).collect();
        assert_eq!(
            data,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ],
            "three messages before the result: {logs:?}"
        );
        assert!(logs.iter().all(|n| n["params"]["level"] == "info"));
    });
}

#[test]
fn tools_call_error() {
    replay("tools-call-error", |c| {
        let result = c.call_tool("test_error_handling", json!({}));
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            text(&result["content"][0]),
            "This tool intentionally returns an error for testing"
        );
    });
}

#[test]
fn tools_call_with_progress() {
    replay("tools-call-with-progress", |c| {
        // The suite's client (TypeScript SDK, `onprogress`) sends the request id as the
        // progress token; a string token travels the same way.
        for token in [json!(c.next_id), json!("progress-test-1")] {
            let before = c.notifications("notifications/progress").len();
            let result = c.ok(
                "tools/call",
                json!({"name": "test_tool_with_progress", "arguments": {},
                       "_meta": {"progressToken": token}}),
            );
            assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
            let progress: Vec<_> = c.notifications("notifications/progress")[before..]
                .iter()
                .map(|n| n["params"].clone())
                .collect();
            assert!(progress.iter().all(|p| p["progressToken"] == token));
            let values: Vec<_> = progress.iter().map(|p| p["progress"].as_f64()).collect();
            assert_eq!(values, [Some(0.0), Some(50.0), Some(100.0)], "{progress:?}");
            assert!(progress.iter().all(|p| p["total"] == 100.0));
        }
    });
}

#[test]
fn tools_call_sampling() {
    replay("tools-call-sampling", |c| {
        c.respond_with(|method, _| match method {
            "sampling/createMessage" => Ok(sampling_answer()),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool(
            "test_sampling",
            json!({"prompt": "Test prompt for sampling"}),
        );
        assert_eq!(c.server_requests.len(), 1, "sampling requested");
        let asked = &c.server_requests[0]["params"];
        assert_eq!(asked["maxTokens"], 100);
        assert_eq!(
            asked["messages"],
            json!([{"role": "user",
                    "content": {"type": "text", "text": "Test prompt for sampling"}}])
        );
        assert_eq!(
            text(block(&result, "text")),
            "LLM response: This is a test response from the client"
        );
    });
}

#[test]
fn sampling_without_the_capability_is_a_tool_error() {
    let mut c = Client::connect_with("2025-06-18", json!({}));
    let result = c.call_tool("test_sampling", json!({"prompt": "x"}));
    assert_eq!(result["isError"], true, "{result}");
    let result = c.call_tool("test_elicitation", json!({"message": "x"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(c.server_requests.is_empty());
}

#[test]
fn tools_call_elicitation() {
    replay("tools-call-elicitation", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept",
                "content": {"username": "testuser", "email": "test@example.com"}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool(
            "test_elicitation",
            json!({"message": "Please provide your information"}),
        );
        assert_eq!(c.server_requests.len(), 1, "elicitation requested");
        let asked = &c.server_requests[0]["params"];
        assert_eq!(asked["message"], "Please provide your information");
        let schema = &asked["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["username"]["type"], "string");
        assert_eq!(schema["properties"]["email"]["type"], "string");
        assert_eq!(schema["required"], json!(["username", "email"]));
        assert_eq!(
            text(block(&result, "text")),
            r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#
        );
    });
}

#[test]
fn json_schema_2020_12() {
    replay("json-schema-2020-12", |c| {
        let result = c.ok("tools/list", json!({}));
        let tool = result["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == "json_schema_2020_12_tool")
            .expect("json-schema-2020-12-tool-found");
        let schema = &tool["inputSchema"];
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "json-schema-2020-12-$schema"
        );
        assert_eq!(
            schema["additionalProperties"], false,
            "json-schema-2020-12-additionalProperties"
        );
        // json-schema-2020-12-$defs: `$defs.address`, referenced by `properties.address`.
        assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
        let address = &schema["$defs"]["address"];
        for field in ["street", "city"] {
            assert!(address["properties"][field].is_object(), "{schema}");
        }
        let called = c.call_tool(
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "address": {"city": "London"}}),
        );
        assert_eq!(
            text(block(&called, "text")),
            r#"JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"London"}}"#
        );
    });
}

#[test]
fn elicitation_sep1034_defaults() {
    replay("elicitation-sep1034-defaults", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {
                "name": "Jane Smith", "age": 25, "score": 88, "status": "inactive",
                "verified": false}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool("test_elicitation_sep1034_defaults", json!({}));
        assert_eq!(c.server_requests.len(), 1, "elicitation-sep1034-general");
        let fields = &c.server_requests[0]["params"]["requestedSchema"]["properties"];
        let expect = [
            ("name", "string", json!("John Doe")),
            ("age", "integer", json!(30)),
            ("score", "number", json!(95.5)),
            ("status", "string", json!("active")),
            ("verified", "boolean", json!(true)),
        ];
        for (name, kind, default) in expect {
            assert_eq!(fields[name]["type"], kind, "{name}: {fields}");
            assert_eq!(fields[name]["default"], default, "{name}: {fields}");
        }
        let choices = fields["status"]["enum"].as_array().expect("status enum");
        assert!(
            choices.contains(&json!("active")),
            "default among the choices"
        );
        assert_eq!(
            text(block(&result, "text")),
            r#"Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}"#
        );
    });
}

/// Assert that `options` are `const`/`title` string pairs.
fn assert_titled(options: &Value) {
    let options = options.as_array().expect("an array of options");
    assert!(!options.is_empty());
    for option in options {
        assert!(
            option["const"].is_string() && option["title"].is_string(),
            "{option}"
        );
    }
}

#[test]
fn elicitation_sep1330_enums() {
    replay("elicitation-sep1330-enums", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {
                "untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool("test_elicitation_sep1330_enums", json!({}));
        assert_eq!(c.server_requests.len(), 1, "elicitation-sep1330-general");
        let fields = &c.server_requests[0]["params"]["requestedSchema"]["properties"];

        let untitled = &fields["untitledSingle"];
        assert_eq!(untitled["type"], "string");
        assert!(untitled["enum"].is_array());
        assert!(untitled.get("oneOf").is_none() && untitled.get("enumNames").is_none());

        let titled = &fields["titledSingle"];
        assert_eq!(titled["type"], "string");
        assert_titled(&titled["oneOf"]);
        assert!(titled.get("enum").is_none());

        let legacy = &fields["legacyEnum"];
        assert_eq!(legacy["type"], "string");
        let (values, names) = (legacy["enum"].as_array(), legacy["enumNames"].as_array());
        assert_eq!(values.map(Vec::len), Some(3));
        assert_eq!(names.map(Vec::len), Some(3));

        let multi = &fields["untitledMulti"];
        assert_eq!(multi["type"], "array");
        assert_eq!(multi["items"]["type"], "string");
        assert!(multi["items"]["enum"].is_array());
        assert!(multi["items"].get("anyOf").is_none());

        let titled_multi = &fields["titledMulti"];
        assert_eq!(titled_multi["type"], "array");
        assert_titled(&titled_multi["items"]["anyOf"]);
        assert!(titled_multi["items"].get("enum").is_none());

        assert!(
            text(block(&result, "text")).starts_with("Elicitation completed: action=accept, "),
            "{result}"
        );
    });
}

#[test]
fn server_sse_polling_fixture() {
    replay("server-sse-polling", |c| {
        let result = c.call_tool("test_reconnection", json!({}));
        assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
        assert!(text(block(&result, "text")).starts_with("Reconnection test completed"));
    });
}

#[test]
fn server_sse_multiple_streams_fixture() {
    replay("server-sse-multiple-streams", |c| {
        let ids: Vec<_> = (0..3).map(|_| c.start("tools/list", json!({}))).collect();
        for id in ids {
            let result = c.wait(id).expect("tools/list");
            assert!(result["tools"].is_array());
        }
    });
}

#[test]
fn resources_list() {
    replay("resources-list", |c| {
        let result = c.ok("resources/list", json!({}));
        let resources = result["resources"].as_array().expect("resources");
        for resource in resources {
            assert!(resource["uri"].is_string() && resource["name"].is_string());
            assert!(resource["description"].is_string(), "{resource}");
        }
        let uris: Vec<_> = resources
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource"
            ],
            "direct resources only, no templates"
        );
        let templates = c.ok("resources/templates/list", json!({}));
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "test://template/{id}/data"
        );
    });
}

#[test]
fn resources_read_text() {
    replay("resources-read-text", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://static-text"}));
        assert_eq!(
            result["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}])
        );
    });
}

#[test]
fn resources_read_binary() {
    replay("resources-read-binary", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://static-binary"}));
        let contents = &result["contents"][0];
        assert_eq!(contents["uri"], "test://static-binary");
        assert_eq!(contents["mimeType"], "image/png");
        let blob = base64(contents["blob"].as_str().expect("blob"));
        assert!(blob.starts_with(b"\x89PNG\r\n\x1a\n"));
    });
}

#[test]
fn resources_templates_read() {
    replay("resources-templates-read", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://template/123/data"}));
        let contents = &result["contents"][0];
        assert_eq!(contents["uri"], "test://template/123/data");
        assert_eq!(contents["mimeType"], "application/json");
        let data: Value = serde_json::from_str(text(contents)).expect("JSON text");
        assert_eq!(
            data,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
    });
}

#[test]
fn resources_subscribe() {
    replay("resources-subscribe", |c| {
        let result = c.ok(
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        );
        assert_eq!(result, json!({}));
    });
}

#[test]
fn resources_unsubscribe() {
    replay("resources-unsubscribe", |c| {
        let uri = json!({"uri": "test://watched-resource"});
        assert_eq!(c.ok("resources/subscribe", uri.clone()), json!({}));
        assert_eq!(c.ok("resources/unsubscribe", uri), json!({}));
    });
}

#[test]
fn prompts_list() {
    replay("prompts-list", |c| {
        let result = c.ok("prompts/list", json!({}));
        let prompts = result["prompts"].as_array().expect("prompts");
        for prompt in prompts {
            assert!(prompt["name"].is_string(), "{prompt}");
            assert!(prompt["description"].is_string(), "{prompt}");
        }
        let names: Vec<_> = prompts
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image"
            ]
        );
        let arguments = &prompts[1]["arguments"];
        assert_eq!(arguments[0]["name"], "arg1");
        assert_eq!(arguments[0]["required"], true);
        assert_eq!(arguments[1]["name"], "arg2");
        assert_eq!(prompts[2]["arguments"][0]["name"], "resourceUri");
    });
}

#[test]
fn prompts_get_simple() {
    replay("prompts-get-simple", |c| {
        let result = c.ok("prompts/get", json!({"name": "test_simple_prompt"}));
        assert_eq!(
            result["messages"],
            json!([{"role": "user",
                    "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
    });
}

#[test]
fn prompts_get_with_args() {
    replay("prompts-get-with-args", |c| {
        let result = c.ok(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
        );
        assert_eq!(
            text(&result["messages"][0]["content"]),
            "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
        );
    });
}

#[test]
fn prompts_get_embedded_resource() {
    replay("prompts-get-embedded-resource", |c| {
        let result = c.ok(
            "prompts/get",
            json!({"name": "test_prompt_with_embedded_resource",
                   "arguments": {"resourceUri": "test://example-resource"}}),
        );
        assert_eq!(
            result["messages"],
            json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": "test://example-resource", "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text",
                    "text": "Please process the embedded resource above."}}
            ])
        );
    });
}

#[test]
fn prompts_get_with_image() {
    replay("prompts-get-with-image", |c| {
        let result = c.ok("prompts/get", json!({"name": "test_prompt_with_image"}));
        let messages = result["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[0]["content"]["type"], "image");
        assert_png(&messages[0]["content"]);
        assert_eq!(
            messages[1]["content"],
            json!({"type": "text", "text": "Please analyze the image above."})
        );
    });
}
