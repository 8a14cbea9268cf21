//! The 2024-11-05 HTTP+SSE transport against a client that stops reading its stream, over
//! real sockets on 127.0.0.1 (a 4 KiB receive buffer, never read after the session's
//! start): past `legacy_max_unread_bytes` of unread output the session's POSTs get 503 and
//! say why; answers already owed past twice the limit cut the stream (the session ends);
//! other sessions are served meanwhile, and a graceful shutdown still ends in bounded time.

use std::time::{Duration, Instant};

use ferry::http::{ConnectionLimits, HttpConfig};
use ferry::server::{Context, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Later {
    /// Milliseconds to wait.
    ms: u64,
    /// Bytes of text to answer with.
    bytes: usize,
}

fn server() -> Server {
    Server::builder("legacy-backlog-test", "1.0.0")
        .tool(
            "echo",
            "Echo",
            |a: Text, _cx: Context| async move { a.text },
        )
        .tool(
            "later",
            "Waits, then answers with that many bytes",
            |a: Later, _cx: Context| async move {
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                "y".repeat(a.bytes)
            },
        )
        .build()
}

/// The unread output allowed in these tests: room for several answers of 100 KB, so that
/// one posted while the previous answer is on its way never reaches the cut.
const LIMIT: usize = 1024 * 1024;

/// POST `body` on a connection of its own; the status and body (`None`: no answer in 10 s).
async fn post(address: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let exchange = async {
        let mut stream = TcpStream::connect(address).await.ok()?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.ok()?;
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
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .ok()
        .flatten()
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
}

/// A session's stream, read by hand.
struct Stream {
    socket: TcpStream,
    seen: Vec<u8>,
}

impl Stream {
    /// Read until `what` has been seen.
    async fn read_until(&mut self, what: &str) {
        while !String::from_utf8_lossy(&self.seen).contains(what) {
            let mut buf = [0u8; 4096];
            let n = tokio::time::timeout(Duration::from_secs(10), self.socket.read(&mut buf))
                .await
                .expect("the stream goes on in time")
                .unwrap();
            assert!(
                n > 0,
                "the stream ended: {}",
                String::from_utf8_lossy(&self.seen)
            );
            self.seen.extend_from_slice(&buf[..n]);
        }
    }
}

/// An initialized session: its stream (a 4 KiB receive buffer) and its messages path.
async fn session(address: &str) -> (Stream, String) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let socket = socket.connect(address.parse().unwrap()).await.unwrap();
    let mut stream = Stream {
        socket,
        seen: Vec::new(),
    };
    let request = format!(
        "GET /sse HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\
         Connection: close\r\n\r\n"
    );
    stream.socket.write_all(request.as_bytes()).await.unwrap();
    stream.read_until("sessionId=").await;
    stream.read_until("\n\n").await;
    let text = String::from_utf8_lossy(&stream.seen).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let endpoint = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the endpoint event")
        .to_owned();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "backlog-test", "version": "1"}}});
    let status = post(address, &endpoint, &initialize.to_string()).await;
    assert_eq!(status.unwrap().0, 202);
    stream.read_until("protocolVersion").await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let status = post(address, &endpoint, &initialized.to_string()).await;
    assert_eq!(status.unwrap().0, 202);
    (stream, endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_gets_503_then_its_stream_is_cut() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let config = HttpConfig {
        connections: ConnectionLimits {
            shutdown_timeout: Duration::from_secs(1),
            ..ConnectionLimits::default()
        },
        ..HttpConfig::default().legacy_max_unread_bytes(LIMIT)
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::http::serve_with_shutdown(
        server(),
        listener,
        config,
        async move {
            let _ = stopped.await;
        },
    ));

    // A client that stops reading: 100 KB answers are soon more than the kernel's
    // buffers, the connection's and the limit hold; its POSTs are then refused, and say
    // why. (Without the limit every one of them is accepted, and answers pile up.)
    let (stalled, endpoint) = session(&address).await;
    let text = "x".repeat(100 * 1024);
    let mut accepted = 0;
    let mut refusal = None;
    for id in 1..=400 {
        let (status, body) = post(
            &address,
            &endpoint,
            &call(id, "echo", json!({"text": text})),
        )
        .await
        .expect("answered");
        match status {
            202 => accepted += 1,
            503 => {
                refusal = Some(body);
                break;
            }
            other => panic!("{other}: {body}"),
        }
    }
    let refusal = refusal.unwrap_or_else(|| panic!("{accepted} POSTs accepted, none refused"));
    let refusal: Value = serde_json::from_str(&refusal).unwrap();
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("not being read"), "{message}");
    assert!(message.contains(&format!("limit {LIMIT}")), "{message}");
    eprintln!("{accepted} POSTs of 100 KB accepted before the first 503");
    // Still refused: nothing was read.
    let (status, _) = post(
        &address,
        &endpoint,
        &call(999, "echo", json!({"text": "x"})),
    )
    .await
    .unwrap();
    assert_eq!(status, 503);

    // Another session is served meanwhile.
    let (mut reading, other) = session(&address).await;
    let (status, _) = post(
        &address,
        &other,
        &call(1, "echo", json!({"text": "still here"})),
    )
    .await
    .unwrap();
    assert_eq!(status, 202);
    reading.read_until("still here").await;

    // Requests accepted while nothing was unread still answer; once their answers wait
    // for more than twice the limit, the stream is cut: the session ends.
    let (mut cut, cut_endpoint) = session(&address).await;
    let posts = (1..=200).map(|id| {
        let (address, endpoint) = (address.clone(), cut_endpoint.clone());
        let body = call(id, "later", json!({"ms": 2000, "bytes": 100 * 1024}));
        tokio::spawn(async move { post(&address, &endpoint, &body).await })
    });
    let mut accepted = 0;
    for posted in futures_util::future::join_all(posts).await {
        // One that comes late finds answers waiting unread (503), or the session cut (404).
        match posted.unwrap().unwrap() {
            (202, _) => accepted += 1,
            (503 | 404, _) => {}
            (status, body) => panic!("{status}: {body}"),
        }
    }
    assert!(accepted >= 100, "{accepted} accepted");
    eprintln!("{accepted} of 200 slow calls accepted");
    let mut ended = false;
    for _ in 0..100 {
        let (status, _) = post(
            &address,
            &cut_endpoint,
            &call(99, "echo", json!({"text": "?"})),
        )
        .await
        .unwrap();
        if status == 404 {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended, "the stream of a client 20 MB behind was never cut");
    // What the cut stream still delivers is bounded: the rest of its queue was dropped.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), cut.socket.read_to_end(&mut rest))
        .await
        .expect("the cut stream ends")
        .unwrap();
    assert!(
        rest.len() < 8 * 1024 * 1024,
        "{} bytes after the cut",
        rest.len()
    );

    // A shutdown ends in bounded time, though the first client still holds its stream.
    let started = Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(20), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    eprintln!("stopped {:?} after the signal", started.elapsed());
    drop(stalled);
}
