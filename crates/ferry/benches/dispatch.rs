//! Criterion benchmarks of the engine's dispatch: a `tools/call` of an `echo` tool through a
//! real [`Server`] and its engine, in memory (frames in and out over the engine's channels,
//! no I/O), one at a time and 32 in flight. This is the per-message work of every
//! transport, without the transport. And a stateless-era (2026-07-28) `tools/call` on an
//! engine of its own, as the HTTP layer runs each one.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferry::engine::{Frame, Transport, TransportEvent};
use ferry::server::{Context, Server};
use tokio::sync::mpsc;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A stateless-era `tools/call`: its `_meta` names the revision, the client and its
/// capabilities (what the benchmark's load generator sends over HTTP).
const STATELESS_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"the quick brown fox jumps over the lazy dog"}}}"#;

fn echo_server() -> Server {
    Server::builder("bench", "1.0.0")
        .tool(
            "echo",
            "Echo the text back",
            |args: Echo, _cx: Context| async move { args.text },
        )
        .build()
}

/// One stateless-era call on an engine of its own: started, asked, answered, closed. With
/// the `http-server` feature, started as the HTTP layer starts it (`Backend::connect`).
async fn stateless_call(server: &Server) {
    let (to_server, incoming) = mpsc::channel(4);
    let (outgoing, mut from_server) = mpsc::channel(16);
    #[cfg(feature = "http-server")]
    ferry::http::Backend::connect(
        server,
        ferry::http::Connection::Stateless,
        Transport::new(incoming, outgoing),
    );
    #[cfg(not(feature = "http-server"))]
    server.serve(Transport::new(incoming, outgoing));
    to_server
        .send(TransportEvent::Frame(STATELESS_CALL.to_vec()))
        .await
        .expect("the engine is running");
    let frame = from_server.recv().await.expect("a response");
    assert!(
        frame.starts_with(br#"{"jsonrpc":"2.0","id":1,"result":"#),
        "unexpected frame {}",
        String::from_utf8_lossy(&frame)
    );
    black_box(frame);
}

fn call(id: u64) -> Frame {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"the quick brown fox jumps over the lazy dog"}}}}}}"#
    )
    .into_bytes()
}

/// A connected echo server: frames go in on `to_server`, responses come out of `from_server`.
struct Connection {
    to_server: mpsc::Sender<TransportEvent>,
    from_server: mpsc::Receiver<Frame>,
    next_id: u64,
}

impl Connection {
    async fn open() -> Connection {
        let server = echo_server();
        let (to_server, incoming) = mpsc::channel(64);
        let (outgoing, from_server) = mpsc::channel(64);
        server.serve(Transport::new(incoming, outgoing));
        let mut connection = Connection {
            to_server,
            from_server,
            next_id: 1,
        };
        connection.send(INITIALIZE.to_vec()).await;
        connection.receive().await;
        connection.send(INITIALIZED.to_vec()).await;
        connection
    }

    async fn send(&mut self, frame: Frame) {
        self.to_server
            .send(TransportEvent::Frame(frame))
            .await
            .expect("the engine is running");
    }

    async fn receive(&mut self) -> Frame {
        let frame = self.from_server.recv().await.expect("a response");
        assert!(
            frame.starts_with(br#"{"jsonrpc":"2.0","id":"#),
            "unexpected frame {}",
            String::from_utf8_lossy(&frame)
        );
        frame
    }

    /// `calls` calls with at most `window` in flight.
    async fn run(&mut self, calls: u64, window: u64) {
        let mut sent = 0;
        let mut received = 0;
        while received < calls {
            while sent < calls && sent - received < window {
                let id = self.next_id;
                self.next_id += 1;
                self.send(call(id)).await;
                sent += 1;
            }
            black_box(self.receive().await);
            received += 1;
        }
    }
}

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut connection = runtime.block_on(Connection::open());
    let mut group = c.benchmark_group("engine dispatch of tools/call echo");
    group.throughput(Throughput::Elements(1));
    for (name, window) in [("sequential", 1), ("32 in flight", 32)] {
        group.bench_function(name, |b| {
            b.iter_custom(|calls| {
                let start = Instant::now();
                runtime.block_on(connection.run(calls, window));
                start.elapsed()
            });
        });
    }
    let server = echo_server();
    group.bench_function("stateless era, an engine per call", |b| {
        b.iter_custom(|calls| {
            let start = Instant::now();
            runtime.block_on(async {
                for _ in 0..calls {
                    stateless_call(&server).await;
                }
            });
            start.elapsed()
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = dispatch
}
criterion_main!(benches);
