//! `ferry serve --http` shuts down gracefully on SIGTERM: a call in flight (a stateless
//! `countdown` streaming its progress) still gets its result, then the process exits 0
//! and the port is closed. Unix only (the signal is sent with `kill`).
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_answers_the_call_in_flight_then_exits() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("banner");
    let addr = line
        .trim()
        .strip_prefix("ferry serve: MCP on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    // The rest of stderr, read on (the server must never block on it).
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countdown","arguments":{"steps":4,"interval_ms":250},"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: countdown\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).expect("send");
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let mut signalled = false;
    loop {
        let n = stream.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        received.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&received);
        // The call is running (its first progress arrived): ask the server to stop.
        if !signalled && text.contains("notifications/progress") {
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(status.success());
            signalled = true;
        }
    }
    let text = String::from_utf8_lossy(&received);
    assert!(signalled, "no progress came: {text}");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains("counted 4 steps"),
        "the call was answered: {text}"
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ferry serve did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let said = rest.join().unwrap();
    assert!(said.contains("shutting down"), "{said}");
    assert!(TcpStream::connect(&addr).is_err(), "the port is closed");
}
