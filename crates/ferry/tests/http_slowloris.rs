//! Fair connection slots, over real sockets: 600 slowloris connections from 127.0.0.2
//! take at most half the server's connection slots while a client on 127.0.0.1 is
//! served. A test binary of its own: the attack holds some 860 descriptors
//! in this process, which other tests running beside it would add to.

use std::time::Duration;

use ferry::http::{ConnectionLimits, HttpConfig};
use ferry::server::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Read until the peer closes; what was read, or `None` if still open after `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, stream.read_to_end(&mut got)).await;
    read.ok()
        .map(|_| String::from_utf8_lossy(&got).into_owned())
}

/// An `initialize` on a connection of its own; the answer's status line and the rest.
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

/// A connection open from `from` to `address`, its first request's headers begun and never
/// finished (slowloris).
async fn half_open_from(from: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(address.parse().unwrap()).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    stream
}

/// 600 slowloris connections from 127.0.0.2 take at most half the connection slots (then
/// the address has more than its share of connections without a request: the rest are
/// answered 503 at once); a client on 127.0.0.1 is served every time meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_connection_slot() {
    let limits = ConnectionLimits {
        first_request_timeout: Duration::from_secs(60),
        header_read_timeout: Duration::from_secs(60),
        ..ConnectionLimits::default()
    };
    // Admitted freely while half the slots are free; then an address with its share of
    // pending connections gets no more.
    let held = limits.max_connections / 2;
    assert!(held >= limits.max_pending_per_address);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = Server::builder("limits", "1").build();
    tokio::spawn(ferry::http::serve(
        server,
        listener,
        HttpConfig {
            connections: limits,
            ..HttpConfig::default()
        },
    ));

    let mut attack = Vec::new();
    for _ in 0..600 {
        attack.push(half_open_from("127.0.0.2", &address).await);
    }
    // Accepted in the order they were opened: the first ones are held open, every one
    // after them is answered 503 and closed.
    for (n, stream) in attack.iter_mut().enumerate() {
        if n < held {
            let answer = closed_within(stream, Duration::from_millis(10)).await;
            assert_eq!(answer, None, "connection {n} is held");
        } else {
            let answer = closed_within(stream, Duration::from_secs(10))
                .await
                .unwrap_or_else(|| panic!("connection {n} is refused and closed"));
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
            assert!(answer.contains("from your address"), "{answer}");
        }
    }
    let mut answered = 0;
    for _ in 0..24 {
        if ping(&address).await.starts_with("HTTP/1.1 200") {
            answered += 1;
        }
    }
    assert_eq!(answered, 24, "the client on 127.0.0.1 is served");
}
