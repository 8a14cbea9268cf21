//! Raw HTTP/1.1 over real sockets for the connection tests: read until the server closes,
//! one `initialize` on a connection of its own, a connection that never finishes its
//! headers.

#![allow(dead_code)] // each test file uses part of it

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Read until the peer closes; what was read, or `None` if still open after `wait`.
pub(crate) async fn closed_within(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, stream.read_to_end(&mut got)).await;
    read.ok()
        .map(|_| String::from_utf8_lossy(&got).into_owned())
}

/// An `initialize` on a connection of its own (`Connection: close`): the whole answer.
pub(crate) async fn ping(address: &str) -> String {
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
pub(crate) async fn half_open_from(from: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(address.parse().unwrap()).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    stream
}
