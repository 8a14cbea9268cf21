//! The accept loop under [`serve`](super::serve): every connection bounded. hyper's own
//! HTTP/1.1 connection with a timer, so a peer that opens a connection and sends its
//! headers slowly (or never), or leaves a keep-alive connection idle, is cut after the
//! header-read timeout; a connection whose writes make no progress for
//! [`ConnectionLimits::write_timeout`] (a client that stopped reading) is closed; at most
//! [`ConnectionLimits::max_connections`] at once, the next ones answered 503 and closed;
//! and a shutdown that waits for the connections only so long. (`axum::serve` has none of
//! these.) Every request carries its connection's peer address as axum's
//! `ConnectInfo<SocketAddr>`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How the connections of an HTTP server are bounded (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; the next ones get 503 and are closed. Default: 512 (half
    /// the usual 1,024 open-file limit, which the sessions' own needs share).
    pub max_connections: usize,
    /// How long a request's headers may take to arrive, counted from when the connection
    /// waits for them (so it also ends a keep-alive connection left idle). Default: 30 s:
    /// longer than the waits clients commonly make between two requests on one pooled
    /// connection (a close that races a client's next request on it fails that request).
    pub header_read_timeout: Duration,
    /// How long a graceful shutdown waits for connections still open before it drops them.
    /// Default: 30 s.
    pub shutdown_timeout: Duration,
    /// How long a write to a connection may make no progress (the client reads nothing,
    /// its receive window stays full) before the connection is closed: a client that sends
    /// a request and never reads its answer (a large JSON body, an SSE stream) does not
    /// keep the connection and its task forever. Counted only while a write waits, so an
    /// idle SSE stream or a client that reads slowly but steadily is not cut. Default:
    /// 30 s (nginx's `send_timeout` is the same idea, at 60 s).
    pub write_timeout: Duration,
    /// How long a request's body may take to arrive once its headers have (408 after).
    /// Default: 30 s.
    pub body_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(30),
        }
    }
}

/// Serve `router` on `listener` within `limits` until `signal` completes (then stop
/// accepting, run `stopping`, and wait for the open connections at most
/// `shutdown_timeout`), or until the listener fails.
pub(crate) async fn serve(
    router: Router,
    listener: TcpListener,
    limits: ConnectionLimits,
    signal: impl Future<Output = ()> + Send,
    stopping: impl FnOnce() + Send,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut signal = std::pin::pin!(signal);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut signal => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            // Out of descriptors, or a connection reset before it was taken: the listener
            // is fine; wait a little so a full table is not spun on.
            Err(e) => {
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY failed: {e}");
        }
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let service = TowerToHyperService::new(WithPeer {
            router: router.clone(),
            peer,
        });
        // A write that stays pending past the limit fails, and with it the connection.
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(limits.write_timeout));
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(Box::pin(stream)), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    stopping();
    if tokio::time::timeout(limits.shutdown_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {:?} after the shutdown began: dropped",
            limits.shutdown_timeout
        );
    }
    Ok(())
}

/// The router with the connection's peer address in every request, as axum's
/// [`ConnectInfo`] (what `into_make_service_with_connect_info` gives): the per-client
/// session limit reads it, and so may the application's own handlers.
#[derive(Clone)]
struct WithPeer {
    router: Router,
    peer: SocketAddr,
}

impl tower_service::Service<Request<Incoming>> for WithPeer {
    type Response = <Router as tower_service::Service<Request<Incoming>>>::Response;
    type Error = <Router as tower_service::Service<Request<Incoming>>>::Error;
    type Future = <Router as tower_service::Service<Request<Incoming>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<Request<Incoming>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, mut request: Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.router.call(request)
    }
}

/// Answer a connection over the limit with 503 (and a JSON-RPC error) and close it,
/// within a second.
async fn refuse(mut stream: tokio::net::TcpStream) {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"too many connections; try again later"}}"#;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let written = async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), written).await;
}
