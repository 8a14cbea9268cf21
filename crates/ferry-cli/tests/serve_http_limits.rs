//! Limits of `ferry serve --http` seen from outside: a bounded backlog for a 2024-11-05
//! HTTP+SSE client that stops reading its stream (thousands of 100 KB `echo` calls posted
//! to that session, their answers all due on the stalled stream, are refused once the
//! unread output passes the limit; the process's resident memory stays bounded; other
//! sessions are still served), `--max-sessions-per-client` with `--trusted-proxy`, and a
//! slowloris from one address that does not keep another out.
//! Linux only (the memory is read from `/proc`).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// `ferry serve --http` on a free port; killed when dropped.
struct Serving {
    child: Child,
    addr: String,
}

impl Serving {
    fn start(args: &[&str]) -> Serving {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ferry serve");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("banner");
        let addr = line
            .trim()
            .strip_prefix("ferry serve: MCP on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("banner {line:?}"))
            .to_owned();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Serving { child, addr }
    }

    /// A line of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
    fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|value| value.trim_start_matches(':').trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in {status}"))
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// POST `body` to `path` on a connection of its own; the status and the body, or `None`
/// when no answer came within `wait`.
async fn post(addr: &str, path: &str, body: &str, wait: Duration) -> Option<(u16, String)> {
    post_with(addr, path, "", body, wait).await
}

/// [`post`] with more header lines (each ending in CRLF).
async fn post_with(
    addr: &str,
    path: &str,
    headers: &str,
    body: &str,
    wait: Duration,
) -> Option<(u16, String)> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             {headers}Connection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.ok()?;
        // A refusal may come before the body is read, and the connection close with it.
        let _ = stream.write_all(body.as_bytes()).await;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status = text.get(9..12)?.parse().ok()?;
        let body = text
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_owned();
        Some((status, body))
    };
    tokio::time::timeout(wait, exchange).await.ok().flatten()
}

/// A 2024-11-05 session whose client reads the stream's headers, its `endpoint` event and
/// the `initialize` answer, then never reads again (a 4 KiB receive buffer).
async fn stalled_session(addr: &str) -> (TcpStream, String) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    let request = format!("GET /sse HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let read_until = async |stream: &mut TcpStream, seen: &mut Vec<u8>, what: &str| {
        while !String::from_utf8_lossy(seen).contains(what) {
            let mut buf = [0u8; 512];
            let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
                .await
                .expect("the stream answers in time")
                .unwrap();
            assert!(n > 0, "the stream ended: {}", String::from_utf8_lossy(seen));
            seen.extend_from_slice(&buf[..n]);
        }
    };
    read_until(&mut stream, &mut seen, "sessionId=").await;
    read_until(&mut stream, &mut seen, "\n\n").await;
    let text = String::from_utf8_lossy(&seen).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let endpoint = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the endpoint event")
        .to_owned();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"stalled","version":"1"}}}"#;
    let wait = Duration::from_secs(10);
    assert_eq!(
        post(addr, &endpoint, initialize, wait).await.unwrap().0,
        202
    );
    read_until(&mut stream, &mut seen, "protocolVersion").await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(addr, &endpoint, initialized, wait).await.unwrap().0,
        202
    );
    (stream, endpoint)
}

#[tokio::test]
async fn a_stalled_legacy_stream_holds_bounded_memory() {
    let serving = Serving::start(&[]);
    let addr = serving.addr.clone();
    let (stalled, endpoint) = stalled_session(&addr).await;
    let before = serving.memory_kib("VmRSS");

    // 2,000 calls echoing 100 KB each, 16 at a time; each answer is due on the stalled stream.
    let text = "x".repeat(100 * 1024);
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut refusal = String::new();
    let mut calls = tokio::task::JoinSet::new();
    for id in 1..=2000u32 {
        if calls.len() >= 16
            && let Some(done) = calls.join_next().await
        {
            let (status, body): (String, String) = done.unwrap();
            if status == "503" {
                refusal = body;
            }
            *statuses.entry(status).or_default() += 1;
        }
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
        );
        let (addr, endpoint) = (addr.clone(), endpoint.clone());
        calls.spawn(async move {
            match post(&addr, &endpoint, &body, Duration::from_secs(5)).await {
                Some((status, body)) => (status.to_string(), body),
                None => ("no answer".to_owned(), String::new()),
            }
        });
    }
    while let Some(done) = calls.join_next().await {
        let (status, body) = done.unwrap();
        if status == "503" {
            refusal = body;
        }
        *statuses.entry(status).or_default() += 1;
    }
    let after = serving.memory_kib("VmRSS");
    let peak = serving.memory_kib("VmHWM");
    eprintln!(
        "2,000 POSTs of 100 KB to a stalled HTTP+SSE session: {statuses:?}; \
         VmRSS {before} KiB before, {after} KiB after, VmHWM {peak} KiB"
    );

    // Past the backlog limit the session's POSTs are refused, and say why.
    assert!(
        statuses.get("503").is_some_and(|&n| n > 1000),
        "{statuses:?}"
    );
    assert!(refusal.contains("not being read"), "{refusal}");
    assert!(!statuses.contains_key("no answer"), "{statuses:?}");
    // What the server holds for the stalled client is bounded: far less than the 200 MB
    // of answers it was asked for.
    assert!(
        peak < before + 64 * 1024,
        "VmHWM {peak} KiB against {before} KiB before the calls"
    );

    // Another session is still served meanwhile.
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other","version":"1"}}}"#;
    let (status, body) = post(&addr, "/mcp", initialize, Duration::from_secs(10))
        .await
        .expect("answered");
    assert_eq!(status, 200, "{body}");

    drop(stalled);
}

#[tokio::test]
async fn max_sessions_per_client_and_trusted_proxy_flags() {
    let serving = Serving::start(&[
        "--max-sessions-per-client",
        "1",
        "--trusted-proxy",
        "127.0.0.1",
    ]);
    let addr = serving.addr.as_str();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let wait = Duration::from_secs(10);
    let open = async |forwarded: &str| {
        let header = format!("X-Forwarded-For: {forwarded}\r\n");
        post_with(addr, "/mcp", &header, initialize, wait)
            .await
            .expect("answered")
    };
    assert_eq!(open("10.0.0.1").await.0, 200);
    let (status, body) = open("10.0.0.1").await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("limit 1 per client"), "{body}");
    // Another client behind the same proxy has a place of its own.
    assert_eq!(open("10.0.0.2").await.0, 200);
    // The HTTP+SSE transport counts against the same limit.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /sse HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
         X-Forwarded-For: 10.0.0.2\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(wait, stream.read_to_end(&mut answer))
        .await
        .expect("answered and closed")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
}

/// A connection to `addr` from the local address `from` (any of 127.0.0.0/8 on Linux).
async fn connect_from(from: &str, addr: &str) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(format!("{from}:0").parse().unwrap())?;
    socket.connect(addr.parse().unwrap()).await
}

/// A slowloris from 127.0.0.2 (600 connections, more than the 512 slots, each sending half
/// a request line and a byte more every second) does not keep a client on 127.0.0.1 out:
/// every one of its 100 calls, each on a new connection, is answered. Then SIGTERM ends the
/// server at once: connections that never finished a request do not hold the shutdown.
#[tokio::test]
async fn a_slowloris_from_one_address_does_not_keep_another_out() {
    let mut server = Serving::start(&[]);
    let addr = server.addr.clone();
    let attack = tokio::spawn({
        let addr = addr.clone();
        async move {
            let mut open = Vec::new();
            for _ in 0..600 {
                if let Ok(mut stream) = connect_from("127.0.0.2", &addr).await
                    && stream
                        .write_all(b"POST /mcp HTTP/1.1\r\nX-a: ")
                        .await
                        .is_ok()
                {
                    open.push(stream);
                }
            }
            // Trickle a byte on each; reopen what the server closed, as the attack would.
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                for stream in &mut open {
                    if stream.write_all(b"a").await.is_err()
                        && let Ok(mut fresh) = connect_from("127.0.0.2", &addr).await
                        && fresh
                            .write_all(b"POST /mcp HTTP/1.1\r\nX-a: ")
                            .await
                            .is_ok()
                    {
                        *stream = fresh;
                    }
                }
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut answered = 0;
    for _ in 0..100 {
        if let Some((200, _)) = post(&addr, "/mcp", init, Duration::from_secs(10)).await {
            answered += 1;
        }
    }
    assert_eq!(answered, 100, "calls answered during the slowloris");
    // SIGTERM while the slow connections are open: the process exits, and does not wait
    // for their 30 s header timeout.
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "still running after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    attack.abort();
}
