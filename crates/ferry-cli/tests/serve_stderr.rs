//! `ferry serve` (HTTP and stdio) with its stderr gone, logging everything
//! (`FERRY_LOG=trace`): a stderr pipe whose reader has hung up (every write fails with
//! EPIPE: `eprintln!` and `tracing`'s report of a failed write panicked, and the server
//! died), and a closed stderr (`2>&-`: fd 2 is free, so a file the process opens could
//! take it; Rust's runtime puts `/dev/null` there first, and this keeps it checked).
//! Logging must never panic, kill the server, or write into one of its sockets: the
//! server keeps answering calls whose handlers log.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The child, killed when dropped (a failing assertion does not leave it behind).
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Run `ferry ARGS` (the client commands): exit code, stdout, stderr.
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

/// Calls whose handlers log (through `tracing` and to the client), then a plain one, each
/// answered; and the server is still running.
fn keeps_serving(served: &mut Served, addr: &str) {
    let url = format!("http://{addr}/mcp");
    for version in ["2026-07-28", "2025-11-25"] {
        for round in 0..3 {
            let text = format!("log {round}");
            let message = format!("message={text}");
            let (code, out, err) = ferry(&[
                "call",
                "log",
                &message,
                "--url",
                &url,
                "--protocol-version",
                version,
            ]);
            assert_eq!(code, Some(0), "{version}: {err}");
            assert!(out.contains("log messages"), "{out}");
        }
    }
    // A request for a path that does not exist, and a malformed body: more log lines.
    let mut stream = TcpStream::connect(addr).expect("connect");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 5\r\n\
         Connection: close\r\n\r\n{{nope"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    let (code, out, err) = ferry(&["call", "echo", "text=still here", "--url", &url]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "still here");
    assert!(
        served.0.try_wait().expect("wait").is_none(),
        "the server exited"
    );
}

/// How stderr is gone.
#[derive(Clone, Copy)]
enum Gone {
    /// A pipe whose reader hung up before the server wrote anything.
    HungUp,
    /// `2>&-`.
    Closed,
}

/// Serve HTTP with stderr gone (so the banner naming the address cannot be read: a free
/// port is picked first, and another tried should a process take it in between), then
/// check it keeps serving.
fn serve_without_stderr(gone: Gone) {
    for _attempt in 0..5 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut command = match gone {
            Gone::HungUp => {
                let mut command = Command::new(env!("CARGO_BIN_EXE_ferry"));
                command
                    .args(["serve", "--http", &addr])
                    .stderr(Stdio::piped());
                command
            }
            Gone::Closed => {
                let mut command = Command::new("sh");
                command
                    .args(["-c", r#"exec "$0" serve --http "$1" 2>&-"#])
                    .arg(env!("CARGO_BIN_EXE_ferry"))
                    .arg(&addr);
                command
            }
        };
        let mut child = command
            .env("FERRY_LOG", "trace")
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn");
        // Hang up: every write to the server's stderr fails with EPIPE, the banner's too.
        drop(child.stderr.take());
        let mut served = Served(child);
        // Wait until it listens, or has exited (the port was taken, or it died).
        let deadline = Instant::now() + Duration::from_secs(30);
        let listening = loop {
            if TcpStream::connect(&addr).is_ok() {
                break true;
            }
            if served.0.try_wait().expect("wait").is_some() || Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if !listening {
            // Taken, unless nothing else holds it: then the server died.
            assert!(
                TcpListener::bind(&addr).is_err(),
                "ferry serve exited without listening on the free port {addr}"
            );
            continue;
        }
        keeps_serving(&mut served, &addr);
        return;
    }
    panic!("ferry serve never listened");
}

#[test]
fn a_hung_up_stderr_pipe_does_not_kill_the_http_server() {
    serve_without_stderr(Gone::HungUp);
}

#[test]
fn a_closed_stderr_neither_kills_the_http_server_nor_leaks_logs_into_its_sockets() {
    serve_without_stderr(Gone::Closed);
}

#[test]
fn a_hung_up_stderr_pipe_does_not_kill_the_stdio_server() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .env("FERRY_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Hang up before the server writes anything.
    drop(child.stderr.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let served = Served(child);
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log","arguments":{"message":"to a closed pipe"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#,
    ];
    for message in messages {
        writeln!(stdin, "{message}").expect("send");
    }
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the server ended before answering"
        );
        if line.starts_with(r#"{"jsonrpc":"2.0","id":4,"#) {
            break;
        }
    }
    assert!(line.contains("still here"), "{line}");
    drop(stdin);
    drop(served);
}

/// A stderr pipe that stays open but is never read fills up (64 KiB): logging must not
/// block the server then (the runtime would stop with it), only drop log lines.
#[test]
fn a_full_stderr_pipe_does_not_stop_the_stdio_server() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("serve")
        .env("FERRY_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Held open, never read.
    let _stderr = child.stderr.take().expect("stderr");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let served = Served(child);
    const CALLS: usize = 3000;
    let (done, answered) = std::sync::mpsc::channel();
    // Answers seen so far: the writer keeps at most WINDOW calls unanswered, within the
    // engine's bound on pending requests (1,024), which a loaded machine could reach.
    const WINDOW: usize = 256;
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        let last = format!(r#"{{"jsonrpc":"2.0","id":{CALLS},"#);
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if line.starts_with(&last) {
                let _ = done.send(line);
                return;
            }
        }
    });
    // Written on a thread of its own: a server that stops reading would block it.
    std::thread::spawn(move || {
        let _ = writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        );
        let _ = writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        );
        // Each call logs a line (~90 bytes) to stderr: four times what the pipe holds.
        for id in 1..=CALLS {
            while id > seen.load(std::sync::atomic::Ordering::Relaxed) + WINDOW {
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"log","arguments":{{"message":"call {id}"}}}}}}"#
            );
        }
    });
    let line = answered
        .recv_timeout(Duration::from_secs(60))
        .expect("every call answered while stderr is full");
    assert!(line.contains(r#""result""#), "{line}");
    drop(served);
}
