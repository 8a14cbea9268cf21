//! The accept loop under [`serve`](super::serve): every connection bounded. hyper's own
//! HTTP/1.1 connection with a timer, so a peer that opens a connection and sends its
//! headers slowly (or never), or leaves a keep-alive connection idle, is cut after the
//! header-read timeout; a connection whose writes make no progress for
//! [`ConnectionLimits::write_timeout`] (a client that stopped reading) is closed; at most
//! [`ConnectionLimits::max_connections`] at once, the next ones answered 503 and closed;
//! once half of them are taken, an address with
//! [`ConnectionLimits::max_pending_per_address`] connections still waiting for their first
//! request gets no more, so one client opening connections it never uses (slowloris)
//! cannot take every slot; a connection that has not sent a whole request
//! within [`ConnectionLimits::first_request_timeout`] is closed, as is one still waiting
//! for its first request when a shutdown begins; and a shutdown that waits for the connections
//! only so long. (`axum::serve` has none of these.) Every request carries its connection's
//! peer address as axum's `ConnectInfo<SocketAddr>`.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
    /// Once half of [`max_connections`](Self::max_connections) are taken, an address (an
    /// IPv6 one counts by its /64) that has this many connections without a first request
    /// yet gets 503 for its next ones. What a slowloris holds is connections that never
    /// finish a request, so those are what is counted; and only under pressure, so that a
    /// client opening a burst of connections at once (a gateway, a host starting hundreds
    /// of sessions) is not refused while there is room. The server's trusted proxies
    /// ([`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies)) are not
    /// limited so. Default: 128 (an HTTP client's pool opens connections ahead of its
    /// requests: one starting 200 sessions at once had over 64 without a request).
    pub max_pending_per_address: usize,
    /// How long a new connection may take to send its first request's headers before it
    /// is closed: shorter than [`header_read_timeout`](Self::header_read_timeout), so
    /// connections that never make a request hold their slots only briefly. Default: 10 s.
    pub first_request_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(30),
            max_pending_per_address: 128,
            first_request_timeout: Duration::from_secs(10),
        }
    }
}

/// How many connections each address holds that have not made a request yet (see
/// [`ConnectionLimits::max_pending_per_address`]).
#[derive(Default)]
struct PerAddress(Mutex<HashMap<IpAddr, usize>>);

/// One connection counted against its address until its first request; given back when
/// dropped.
struct AddressSlot {
    counts: Arc<PerAddress>,
    address: IpAddr,
}

impl PerAddress {
    /// A slot for `peer`, unless `enforced` and its address holds `limit` already.
    fn take(self: &Arc<Self>, peer: IpAddr, limit: usize, enforced: bool) -> Option<AddressSlot> {
        let address = match peer.to_canonical() {
            IpAddr::V6(v6) => {
                let [a, b, c, d, ..] = v6.segments();
                IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
            }
            v4 => v4,
        };
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let held = counts.entry(address).or_insert(0);
        if enforced && *held >= limit {
            return None;
        }
        *held += 1;
        Some(AddressSlot {
            counts: Arc::clone(self),
            address,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = counts.get_mut(&self.address) {
            *held -= 1;
            if *held == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// Serve `router` on `listener` within `limits` until `signal` completes (then stop
/// accepting, run `stopping`, and wait for the open connections at most
/// `shutdown_timeout`), or until the listener fails. Connections from `proxies` are not
/// limited per address.
pub(crate) async fn serve(
    router: Router,
    listener: TcpListener,
    limits: ConnectionLimits,
    proxies: Vec<IpAddr>,
    signal: impl Future<Output = ()> + Send,
    stopping: impl FnOnce() + Send,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_address = Arc::new(PerAddress::default());
    let per_address_limit = limits.max_pending_per_address.max(1);
    let proxies: Vec<IpAddr> = proxies.iter().map(IpAddr::to_canonical).collect();
    // Cancelled when the shutdown begins: connections still waiting for their first
    // request are closed then rather than waited for.
    let closing = tokio_util::sync::CancellationToken::new();
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
        let slot = if proxies.contains(&peer.ip().to_canonical()) {
            None
        } else {
            // Under pressure: half the connection slots are taken.
            let pressed = permits.available_permits() <= limits.max_connections.max(1) / 2;
            match per_address.take(peer.ip(), per_address_limit, pressed) {
                Some(slot) => Some(slot),
                None => {
                    tokio::spawn(refuse(stream, "too many connections from your address"));
                    continue;
                }
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tokio::spawn(refuse(stream, "too many connections"));
            continue;
        };
        let first = Arc::new(FirstRequest {
            asked: AtomicBool::new(false),
            slot: Mutex::new(slot),
        });
        let service = TowerToHyperService::new(WithPeer {
            router: router.clone(),
            peer,
            first: Arc::clone(&first),
        });
        // A write that stays pending past the limit fails, and with it the connection.
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(limits.write_timeout));
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(Box::pin(stream)), service);
        let connection = graceful.watch(connection);
        let (first_request, closing) = (limits.first_request_timeout, closing.clone());
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            // Until its first request, a connection is closed at the first-request
            // timeout or when the shutdown begins; after it, hyper's timeouts hold.
            let waited = tokio::select! {
                ended = &mut connection => Some(ended),
                () = tokio::time::sleep(first_request) => None,
                () = closing.cancelled() => None,
            };
            let ended = match waited {
                Some(ended) => Some(ended),
                None if first.asked.load(Ordering::Acquire) => Some(connection.await),
                None => None,
            };
            if let Some(Err(e)) = ended {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    closing.cancel();
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
    first: Arc<FirstRequest>,
}

/// Whether a connection has made its first request, and its address's slot until then.
struct FirstRequest {
    asked: AtomicBool,
    slot: Mutex<Option<AddressSlot>>,
}

impl tower_service::Service<Request<Incoming>> for WithPeer {
    type Response = <Router as tower_service::Service<Request<Incoming>>>::Response;
    type Error = <Router as tower_service::Service<Request<Incoming>>>::Error;
    type Future = <Router as tower_service::Service<Request<Incoming>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<Request<Incoming>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, mut request: Request<Incoming>) -> Self::Future {
        if !self.first.asked.swap(true, Ordering::AcqRel) {
            // No longer pending: the address's slot is given back.
            let slot = self
                .first
                .slot
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            drop(slot);
        }
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.router.call(request)
    }
}

/// Answer a connection over a limit with 503 (and a JSON-RPC error saying `why`) and close
/// it, within a second.
async fn refuse(mut stream: tokio::net::TcpStream, why: &str) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"{why}; try again later"}}}}"#
    );
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
