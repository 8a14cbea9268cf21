//! `ferry bridge --http` against the server it fronts: the same hostile requests, posted
//! to `ferry serve --http` and to the bridge over `ferry serve` (a child per session, and
//! `--shared`), must get the same answers — HTTP status, JSON-RPC id, result or error code.
//! A request the bridge cannot read into a tree (arguments nested deeper than serde_json
//! reads) is the case this found: every request gets exactly one answer, and its id is free
//! again afterwards.

mod bridge_support;

use bridge_support::{FERRY, Served, bridge_http, serve_http};
use serde_json::Value;

const ACCEPT: &str = "application/json, text/event-stream";

/// A `tools/call` of `echo` whose `text` nests `depth` objects, with id `id`.
fn nested_call(id: u64, depth: usize, meta: &str) -> String {
    let text = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{text}}}{meta}}}}}"#
    )
}

const STATELESS_META: &str = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}"#;

/// What is compared of an answer: the status, and the body's id with its result's text or
/// its error code.
async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let body: Value = if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
        serde_json::from_str(data).expect("an SSE event of JSON")
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    let outcome = match (&body["result"], &body["error"]) {
        (Value::Null, error) => serde_json::json!({"error": error["code"]}),
        (result, _) => serde_json::json!({"text": result["content"][0]["text"]}),
    };
    (
        status,
        serde_json::json!({"id": body["id"], "outcome": outcome}),
    )
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: String,
) -> (u16, Value) {
    post_bytes(http, url, headers, body.into_bytes()).await
}

async fn post_bytes(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, Value) {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .timeout(std::time::Duration::from_secs(20))
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    answer(request.send().await.expect("an answer, not a timeout")).await
}

/// Open a 2025-06-18 session on `url`: its id.
async fn session(http: &reqwest::Client, url: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(init)
        .send()
        .await
        .expect("initialize");
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = response.text().await;
    let initialized = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .expect("initialized");
    assert_eq!(initialized.status(), 202);
    id
}

/// Bodies posted as they are inside a session: the classify fuzz target's corpus (every
/// kind of malformed and odd message), and odd ids and huge numbers.
fn raw_bodies() -> Vec<(String, Vec<u8>)> {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/classify");
    let mut bodies: Vec<(String, Vec<u8>)> = std::fs::read_dir(corpus)
        .expect("fuzz/corpus/classify")
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (format!("corpus {name}"), std::fs::read(&path).unwrap())
        })
        .collect();
    bodies.sort();
    assert!(bodies.len() >= 20, "the corpus is there");
    let echo = |id: &str, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{text}}}}}}}"#
        )
    };
    for (name, id, text) in [
        ("id -1", "-1", r#""a""#),
        ("id 0", "0", r#""a""#),
        ("id u64 max", "18446744073709551615", r#""a""#),
        ("id past u64", "123456789012345678901234567890", r#""a""#),
        ("id 1e3", "1e3", r#""a""#),
        ("id escaped string", r#""a"bé""#, r#""a""#),
        ("id empty string", r#""""#, r#""a""#),
        ("id object", r#"{"a":1}"#, r#""a""#),
        ("huge number argument", "11", &"9".repeat(5000)),
        ("huge float argument", "12", "1e400"),
    ] {
        bodies.push((name.to_owned(), echo(id, text).into_bytes()));
    }
    bodies
}

/// Every case's answer from `target`, in order.
async fn answers(target: &Served) -> Vec<(String, (u16, Value))> {
    let http = reqwest::Client::new();
    let mut out = Vec::new();
    let sid = session(&http, &target.url).await;
    let in_session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    for depth in [1, 126, 127, 128, 200, 5_000] {
        let got = post(&http, &target.url, &in_session, nested_call(7, depth, "")).await;
        out.push((format!("session era, depth {depth}"), got));
    }
    // Id 7 is free again: answered each time, never "already in flight".
    let echo = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}"#;
    let got = post(&http, &target.url, &in_session, echo.to_owned()).await;
    out.push(("session era, id 7 again".to_owned(), got));
    for (name, body) in raw_bodies() {
        let got = post_bytes(&http, &target.url, &in_session, body).await;
        out.push((name, got));
    }
    let stateless = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    for depth in [1, 127, 128, 200, 5_000] {
        let got = post(
            &http,
            &target.url,
            &stateless,
            nested_call(9, depth, STATELESS_META),
        )
        .await;
        out.push((format!("stateless era, depth {depth}"), got));
    }
    out
}

#[tokio::test]
async fn the_bridge_answers_what_the_server_answers() {
    let server = serve_http();
    let expected = answers(&server).await;
    // The server itself answers every case, and the deep ones with -32602.
    let deep = &expected
        .iter()
        .find(|(case, _)| case == "session era, depth 5000")
        .unwrap()
        .1;
    assert_eq!(deep.1["outcome"]["error"], -32602, "{expected:#?}");
    assert_eq!(deep.1["id"], 7);
    for mode in [&[][..], &["--shared"][..]] {
        let bridge = bridge_http(mode, &[FERRY, "serve"]);
        let got = answers(&bridge).await;
        for ((case, want), (_, have)) in expected.iter().zip(&got) {
            assert_eq!(have, want, "bridge {mode:?}, {case}");
        }
    }
}
