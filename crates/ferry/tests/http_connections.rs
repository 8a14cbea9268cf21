//! The HTTP server's connections are bounded, over real sockets on 127.0.0.1: half-open
//! requests (headers never finished) and idle keep-alive connections are closed after the
//! header-read timeout while normal requests are served; past the connection limit an idle
//! connection is closed to make room, from the address holding the most (slow connections
//! from one address do not lock out another), and a new connection gets 503 only when
//! every connection is busy; a shutdown ends in bounded time whatever the peers do, at once
//! for idle connections;
//! a client that never reads its answer is cut after the write timeout.

use std::time::{Duration, Instant};

use ferry::http::{ConnectionLimits, HttpConfig};
use ferry::server::{Context, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn config(limits: ConnectionLimits) -> HttpConfig {
    HttpConfig {
        connections: limits,
        ..HttpConfig::default()
    }
}

/// A server (no tools) within `limits` on a free port of 127.0.0.1: its address.
async fn serving(limits: ConnectionLimits) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = Server::builder("limits", "1").build();
    tokio::spawn(ferry::http::serve(server, listener, config(limits)));
    address
}

/// [`serving`] until the sender is used: its address, the sender, and the serving task.
async fn serving_until_stopped(
    limits: ConnectionLimits,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = Server::builder("limits", "1").build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::http::serve_with_shutdown(
        server,
        listener,
        config(limits),
        async move {
            let _ = stopped.await;
        },
    ));
    (address, stop, serving)
}

/// Read until the peer closes; what was read, or `None` if still open after `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, stream.read_to_end(&mut got)).await;
    read.ok()
        .map(|_| String::from_utf8_lossy(&got).into_owned())
}

async fn ping(address: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    closed_within(&mut stream, Duration::from_secs(10))
        .await
        .expect("answered and closed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_and_idle_connections_are_closed_after_the_header_timeout() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    };
    let address = serving(limits).await;

    // 100 requests whose headers never end, and 20 connections that say nothing.
    let mut half_open = Vec::new();
    for n in 0..120 {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        if n < 100 {
            stream
                .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nX-Slow: ").as_bytes())
                .await
                .unwrap();
        }
        half_open.push(stream);
    }
    // A normal request is served meanwhile.
    assert!(ping(&address).await.starts_with("HTTP/1.1 200"));
    let started = Instant::now();
    for stream in &mut half_open {
        closed_within(stream, Duration::from_secs(5))
            .await
            .expect("closed by the server");
    }
    eprintln!(
        "120 half-open connections closed {:?} after the check began",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Open a 2024-11-05 SSE stream (`GET /sse`) from `address`: a connection busy for as long
/// as it stays open. Returns once the stream's first event arrived.
async fn busy_stream(address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            format!("GET /sse HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&got).contains("event: endpoint") {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("the stream's first event")
            .unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    stream
}

/// A connection to `address` from the local address `from` (any of 127.0.0.0/8 on Linux).
async fn connect_from(from: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(address.parse().unwrap()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_limit_with_every_connection_busy_a_connection_gets_503() {
    let limits = ConnectionLimits {
        max_connections: 4,
        header_read_timeout: Duration::from_secs(30),
        ..ConnectionLimits::default()
    };
    let address = serving(limits).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(busy_stream(&address).await);
    }
    let answer = ping(&address).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    // The busy streams were not closed for it.
    for stream in &mut held {
        assert_eq!(
            closed_within(stream, Duration::from_millis(200)).await,
            None
        );
    }
    // One freed: served again.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(ping(&address).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_connections_from_one_address_do_not_lock_out_another() {
    let limits = ConnectionLimits {
        max_connections: 16,
        header_read_timeout: Duration::from_secs(30),
        ..ConnectionLimits::default()
    };
    let address = serving(limits).await;
    // A client's own busy stream, opened before the attack.
    let mut mine = busy_stream(&address).await;
    // 60 connections from 127.0.0.2 that send half a request line and stop: far more than
    // the 16 slots.
    let mut slow = Vec::new();
    for _ in 0..60 {
        let mut stream = connect_from("127.0.0.2", &address).await;
        stream.write_all(b"POST /mcp HTT").await.unwrap();
        slow.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Every one of 24 new connections from 127.0.0.1 is served.
    let mut served = 0;
    for _ in 0..24 {
        let answer = ping(&address).await;
        if answer.starts_with("HTTP/1.1 200") {
            served += 1;
        } else {
            eprintln!("not served: {answer}");
        }
    }
    assert_eq!(served, 24);
    // The slots were made from the slow connections: most are closed, and the client's
    // busy stream is still open.
    let mut closed = 0;
    for stream in &mut slow {
        if closed_within(stream, Duration::from_millis(20))
            .await
            .is_some()
        {
            closed += 1;
        }
    }
    assert!(closed >= 60 - 15, "{closed} of 60 slow connections closed");
    assert_eq!(
        closed_within(&mut mine, Duration::from_millis(100)).await,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_first_request_is_closed_sooner() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(30),
        first_request_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    };
    let address = serving(limits).await;
    let mut silent = TcpStream::connect(&address).await.unwrap();
    let mut half = TcpStream::connect(&address).await.unwrap();
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // A connection that made a request and then idles is kept (for the header timeout).
    let mut kept = TcpStream::connect(&address).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    kept.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut answer = [0u8; 12];
    kept.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    assert!(
        closed_within(&mut silent, Duration::from_secs(5))
            .await
            .is_some()
    );
    assert!(
        closed_within(&mut half, Duration::from_secs(5))
            .await
            .is_some()
    );
    assert_eq!(
        closed_within(&mut kept, Duration::from_millis(700)).await,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_closes_idle_connections_at_once() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(60),
        shutdown_timeout: Duration::from_secs(60),
        ..ConnectionLimits::default()
    };
    let (address, stop, serving) = serving_until_stopped(limits).await;
    // Half a request line, and a connection that said nothing: neither holds the shutdown
    // for its timeouts (a minute each here).
    let mut half = TcpStream::connect(&address).await.unwrap();
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let _silent = TcpStream::connect(&address).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops without waiting for the idle connections")
        .unwrap()
        .unwrap();
    assert!(
        closed_within(&mut half, Duration::from_secs(1))
            .await
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_ends_in_bounded_time_whatever_the_peers_do() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(60),
        shutdown_timeout: Duration::from_millis(500),
        ..ConnectionLimits::default()
    };
    let (address, stop, serving) = serving_until_stopped(limits).await;
    // A request whose headers never end holds its connection.
    let mut stream = TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_finishes_gets_408() {
    let limits = ConnectionLimits {
        body_read_timeout: Duration::from_millis(200),
        ..ConnectionLimits::default()
    };
    let address = serving(limits).await;
    let mut stream = TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

/// A stateless `tools/call` of `big` on its own connection (`Connection: close`).
fn call_big(address: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: big\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A client with a 4 KiB receive buffer that asks for an 8 MiB answer and reads none of it
/// is disconnected once the server's writes have made no progress for the write timeout
/// (reading afterwards gets a part of the answer, then the end); a normal client is served
/// meanwhile and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_cut_after_the_write_timeout() {
    const BIG: usize = 8 << 20;
    let limits = ConnectionLimits {
        write_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = Server::builder("limits", "1")
        .tool("big", "An answer of 8 MiB", |_cx: Context| async move {
            "z".repeat(BIG)
        })
        .build();
    tokio::spawn(ferry::http::serve(server, listener, config(limits)));

    let full = async || {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(call_big(&address).as_bytes())
            .await
            .unwrap();
        let answer = closed_within(&mut stream, Duration::from_secs(20))
            .await
            .expect("answered and closed");
        assert!(answer.starts_with("HTTP/1.1 200"), "{}", &answer[..100]);
        assert!(
            answer.len() > BIG,
            "the whole answer: {} bytes",
            answer.len()
        );
    };

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4 * 1024).unwrap();
    let mut stalled = socket.connect(listener_address(&address)).await.unwrap();
    stalled
        .write_all(call_big(&address).as_bytes())
        .await
        .unwrap();
    full().await;
    // Well past the write timeout (the normal client took some of it already).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stalled.read_to_end(&mut got))
        .await
        .expect("the server closed the connection");
    assert!(
        got.len() < BIG,
        "the stalled client could still read the whole answer ({} bytes; {read:?})",
        got.len()
    );
    full().await;
}

fn listener_address(address: &str) -> std::net::SocketAddr {
    address.parse().unwrap()
}

/// An error answered before the body was read (406, 415) says `Connection: close` and the
/// connection is closed, so a client does not reuse it; a 200 keeps it alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_sent_before_the_body_was_read_closes_the_connection_saying_so() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = Server::builder("early", "1").build();
    tokio::spawn(ferry::http::serve(server, listener, HttpConfig::default()));
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = |accept: &str, content_type: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: {content_type}\r\n\
             Accept: {accept}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let both = "application/json, text/event-stream";
    for (case, head, status) in [
        (
            "406",
            request("text/html", "application/json"),
            "HTTP/1.1 406",
        ),
        ("415", request(both, "text/plain"), "HTTP/1.1 415"),
    ] {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = closed_within(&mut stream, Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("{case}: the connection stays open"));
        assert!(answer.starts_with(status), "{case}: {answer}");
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("\r\nconnection: close\r\n"),
            "{case}: {answer}"
        );
    }
    // A 200: no `Connection: close`, and a second request on the same connection is served.
    let mut stream = TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(request(both, "application/json").as_bytes())
        .await
        .unwrap();
    let mut first = vec![0u8; 64 * 1024];
    let read = stream.read(&mut first).await.unwrap();
    let first = String::from_utf8_lossy(&first[..read]).to_ascii_lowercase();
    assert!(first.starts_with("http/1.1 200"), "{first}");
    assert!(!first.contains("connection: close"), "{first}");
}
