//! `ferry serve --http`: loopback by default, a non-loopback address refused without
//! `--public`, a stateless `tools/call` answered over a real socket, the 2024-11-05
//! HTTP+SSE transport's `endpoint` event, and the client commands talking to it with
//! `--url` (both eras, 2024-11-05, `--header`, an unreachable URL).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

#[test]
fn a_non_loopback_address_needs_public() {
    let status = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--http", "0.0.0.0:1"])
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(2));
}

/// A running `ferry serve --http 127.0.0.1:0`, killed when dropped (a failing assertion
/// does not leave it behind).
struct Served {
    child: std::process::Child,
    /// The address it printed.
    addr: String,
    /// Its second banner line (the 2024-11-05 endpoint).
    legacy: String,
    _stderr: BufReader<std::process::ChildStderr>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http() -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    stderr.read_line(&mut line).expect("banner");
    let mut legacy = String::new();
    stderr.read_line(&mut legacy).expect("banner");
    let addr = line
        .trim()
        .strip_prefix("ferry serve: MCP on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    Served {
        child,
        addr,
        legacy,
        _stderr: stderr,
    }
}

/// Run `ferry ARGS`: exit code, stdout, stderr.
fn ferry(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .output()
        .expect("run ferry");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn client_commands_take_a_url() {
    let served = serve_http();
    let addr = served.addr.clone();
    let url = format!("http://{addr}/mcp");
    let (code, out, err) = ferry(&["call", "echo", "text=over http", "--url", &url]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "over http");
    for version in ["2026-07-28", "2025-11-25", "2025-03-26"] {
        let (code, out, err) = ferry(&[
            "call",
            "echo",
            "text=hi",
            "--json",
            "--protocol-version",
            version,
            "--url",
            &url,
            "--header",
            "Authorization: Bearer x",
            "-v",
        ]);
        assert_eq!(code, Some(0), "{version}: {err}");
        assert!(
            out.contains(r#""text": "hi""#) || out.contains(r#""text":"hi""#),
            "{out}"
        );
        assert!(err.contains(&format!("protocol {version}")), "{err}");
    }
    let (code, out, err) = ferry(&["tools", "--url", &url]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("echo"), "{out}");
    // The 2024-11-05 HTTP+SSE endpoint: POST refused, GET gives the `endpoint` event.
    let sse = format!("http://{addr}/sse");
    let (code, out, err) = ferry(&["call", "echo", "text=legacy", "--url", &sse]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "legacy");
    drop(served);
    // The server is gone: a clean error, exit 1.
    let (code, _, err) = ferry(&["ping", "--url", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&addr), "{err}");
    // Usage errors: a bad header, a header without --url, --url with a command.
    assert_eq!(
        ferry(&["ping", "--url", &url, "--header", "nocolon"]).0,
        Some(2)
    );
    assert_eq!(ferry(&["ping", "--header", "A: b"]).0, Some(2));
    assert_eq!(
        ferry(&["ping", "--url", &url, "--", "node", "x.js"]).0,
        Some(2)
    );
}

#[test]
fn serves_streamable_http_on_loopback() {
    let served = serve_http();
    let (addr, legacy) = (served.addr.clone(), served.legacy.clone());
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over http"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""text":"over http""#), "{response}");

    assert_eq!(
        legacy.trim(),
        format!("ferry serve: 2024-11-05 HTTP+SSE on http://{addr}/sse")
    );
    let mut stream = TcpStream::connect(&addr).expect("connect");
    let request = format!("GET /sse HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&head).contains("sessionId=") {
        stream.read_exact(&mut byte).expect("read");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("event: endpoint\ndata: /messages?sessionId="),
        "{head}"
    );
}
