//! The accept loop under [`serve`](super::serve): every connection bounded. hyper's own
//! HTTP/1.1 connection with a timer, so a peer that opens a connection and sends its
//! headers slowly (or never), or leaves a keep-alive connection idle, is cut after the
//! header-read timeout; a connection whose writes make no progress for
//! [`ConnectionLimits::write_timeout`] (a client that stopped reading) is closed; at most
//! [`ConnectionLimits::max_connections`] at once; and a shutdown that waits for the
//! connections only so long. (`axum::serve` has none of these.) Every request carries its
//! connection's peer address as axum's `ConnectInfo<SocketAddr>`.
//!
//! **Fair slots.** When every slot is taken, a new connection does not simply get 503: the
//! server closes one *idle* connection to make room — one with no request being answered
//! (still waiting for its first request's headers, or kept alive between requests), from
//! the address that holds the most idle connections, the one idle longest. A peer that
//! opens hundreds of connections and sends their headers slowly so fills only the slots
//! nobody else needs; another client still gets in. Only when every connection is busy
//! answering a request (a streamed answer counts until its last byte) is the newcomer
//! answered 503. A new connection that sends no request within
//! [`ConnectionLimits::first_request_timeout`] is closed. A shutdown closes the idle
//! connections at once.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use futures_util::future::{AbortHandle, AbortRegistration, Abortable, Aborted};
use http_body_util::BodyExt;
use hyper::body::Body as _;
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
    /// Connections open at once. Past it an idle connection is closed to make room (see
    /// the module docs); when none is idle, the new one gets 503 and is closed. Default:
    /// 512 (half the usual 1,024 open-file limit, which the sessions' own needs share).
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
    /// How long a new connection may take to send its first request's headers before it
    /// is closed; shorter than [`header_read_timeout`](Self::header_read_timeout), which
    /// then bounds each later request (and the idle time between them). Default: 10 s.
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
            first_request_timeout: Duration::from_secs(10),
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
    let slots = Arc::new(Slots::new(limits.max_connections.max(1)));
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
        let serving = Serving {
            router: router.clone(),
            limits,
            slots: Arc::clone(&slots),
            watcher: graceful.watcher(),
        };
        match Arc::clone(&slots.permits).try_acquire_owned() {
            Ok(permit) => serving.start(stream, peer, permit),
            Err(_) => match slots.evict_one() {
                // The idle connection closes at its next poll and hands its slot over to
                // this one (straight, so no other newcomer takes it meanwhile).
                Some(handover) => {
                    tokio::spawn(async move {
                        match tokio::time::timeout(EVICTION_WAIT, handover).await {
                            Ok(Ok(permit)) => serving.start(stream, peer, permit),
                            _ => refuse(stream).await,
                        }
                    });
                }
                None => {
                    tokio::spawn(refuse(stream));
                }
            },
        }
    }
    drop(listener);
    stopping();
    // Nothing is lost by closing a connection that waits for a request: do it now rather
    // than wait for its header timeout.
    slots.evict_idle();
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

/// How long a newcomer waits for the slot of the idle connection closed for it (it closes
/// at once unless a request began on it meanwhile).
const EVICTION_WAIT: Duration = Duration::from_millis(500);

/// What starting a connection needs.
struct Serving {
    router: Router,
    limits: ConnectionLimits,
    slots: Arc<Slots>,
    watcher: hyper_util::server::graceful::Watcher,
}

impl Serving {
    /// Serve one connection in a task of its own, holding `permit` until it ends.
    fn start(
        self,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) {
        let (id, slot, closing) = self.slots.open(peer.ip());
        let service = TowerToHyperService::new(WithPeer {
            router: self.router,
            peer,
            slot: Arc::clone(&slot),
        });
        // A write that stays pending past the limit fails, and with it the connection.
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(self.limits.write_timeout));
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_read_timeout)
            .serve_connection(TokioIo::new(Box::pin(stream)), service);
        let connection = Abortable::new(self.watcher.watch(connection), closing);
        let slots = self.slots;
        // A connection that has sent no request by then is closed.
        let watched = Arc::clone(&slot);
        let first_request = self.limits.first_request_timeout;
        let first_request = tokio::spawn(async move {
            tokio::time::sleep(first_request).await;
            if !watched.seen.load(Ordering::Relaxed) && watched.close_if_idle() {
                tracing::debug!(%peer, "no request within {first_request:?}: closed");
            }
        });
        tokio::spawn(async move {
            let ended = connection.await;
            first_request.abort();
            match ended {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!("connection ended: {e}"),
                Err(Aborted) => tracing::debug!(%peer, "idle connection closed"),
            }
            slots.close(id);
            // Promised to a newcomer (also when the connection ended on its own meanwhile):
            // handed over; refused only if it gave up waiting, and then the slot is free.
            match slot.handover() {
                Some(newcomer) => {
                    let _ = newcomer.send(permit);
                }
                None => drop(permit),
            }
        });
    }
}

/// The open connections, for choosing which idle one to close when a new one finds every
/// slot taken.
struct Slots {
    permits: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Slot>>>,
    next: AtomicU64,
    /// The clock of [`Slot::idle_since`]: a count of the moments connections became idle.
    clock: Arc<AtomicU64>,
}

/// One open connection.
struct Slot {
    ip: IpAddr,
    /// [`Slots::clock`].
    clock: Arc<AtomicU64>,
    /// Requests being answered on it (a streamed answer counts until its body ends), or
    /// [`CLOSING`] once it was chosen to be closed while it had none.
    busy: AtomicU32,
    /// When it last became idle, on [`Slots::clock`] (an order, not a time: no clock is
    /// read on the message path).
    idle_since: AtomicU64,
    /// Whether a request ever began on it.
    seen: AtomicBool,
    /// Closes the connection (an atomic flag its task checks when polled, no lock).
    close: AbortHandle,
    /// Where its slot goes when it is closed to make room: the newcomer's.
    to: Mutex<Option<Handover>>,
}

/// [`Slot::busy`] of a connection chosen to be closed: set only from 0, so only an idle
/// connection is closed (a request that arrives after that finds the connection closing,
/// as it may find any idle keep-alive connection closed).
const CLOSING: u32 = 1 << 31;

/// A slot handed from a connection closed to make room to the one it was closed for.
type Handover = tokio::sync::oneshot::Sender<tokio::sync::OwnedSemaphorePermit>;

impl Slot {
    /// Take the newcomer this slot is promised to, if any.
    fn handover(&self) -> Option<Handover> {
        self.to.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn request_began(&self) {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.seen.store(true, Ordering::Relaxed);
    }

    /// Choose this connection to be closed, if it is idle (and not chosen already).
    fn close_if_idle(&self) -> bool {
        let closing = self
            .busy
            .compare_exchange(0, CLOSING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if closing {
            self.close.abort();
        }
        closing
    }

    fn request_ended(&self) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        self.idle_since.store(now, Ordering::Release);
        self.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    fn new(max_connections: usize) -> Slots {
        Slots {
            permits: Arc::new(Semaphore::new(max_connections)),
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            clock: Arc::new(AtomicU64::new(0)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Slot>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection from `ip` opens: its number, its slot, and what it waits on to be
    /// closed.
    fn open(&self, ip: IpAddr) -> (u64, Arc<Slot>, AbortRegistration) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (close, registration) = AbortHandle::new_pair();
        let slot = Arc::new(Slot {
            ip,
            clock: Arc::clone(&self.clock),
            busy: AtomicU32::new(0),
            idle_since: AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed)),
            seen: AtomicBool::new(false),
            close,
            to: Mutex::new(None),
        });
        self.lock().insert(id, Arc::clone(&slot));
        (id, slot, registration)
    }

    fn close(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Close one idle connection: from the address with the most idle connections, the one
    /// idle longest. Its slot arrives on the receiver; `None` when every connection is busy.
    fn evict_one(
        &self,
    ) -> Option<tokio::sync::oneshot::Receiver<tokio::sync::OwnedSemaphorePermit>> {
        let open = self.lock();
        loop {
            let mut per_address: HashMap<IpAddr, (usize, &Arc<Slot>)> = HashMap::new();
            for slot in open
                .values()
                .filter(|slot| slot.busy.load(Ordering::Acquire) == 0)
            {
                let since = slot.idle_since.load(Ordering::Acquire);
                per_address
                    .entry(slot.ip)
                    .and_modify(|(count, oldest)| {
                        *count += 1;
                        if since < oldest.idle_since.load(Ordering::Acquire) {
                            *oldest = slot;
                        }
                    })
                    .or_insert((1, slot));
            }
            let (_, (_, victim)) = per_address.into_iter().max_by_key(|(_, (count, oldest))| {
                (
                    *count,
                    std::cmp::Reverse(oldest.idle_since.load(Ordering::Acquire)),
                )
            })?;
            // Promised before it is closed, so its task finds the newcomer when it ends.
            let (handover, slot) = tokio::sync::oneshot::channel();
            *victim.to.lock().unwrap_or_else(|e| e.into_inner()) = Some(handover);
            if victim.close_if_idle() {
                return Some(slot);
            }
            // A request began on it meanwhile: take the promise back and choose again.
            victim.to.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }

    /// Close every idle connection (a shutdown began).
    fn evict_idle(&self) {
        for slot in self.lock().values() {
            slot.close_if_idle();
        }
    }
}

/// The router with the connection's peer address in every request, as axum's
/// [`ConnectInfo`] (what `into_make_service_with_connect_info` gives): the per-client
/// session limit reads it, and so may the application's own handlers. It also marks the
/// connection busy while a request is answered.
#[derive(Clone)]
struct WithPeer {
    router: Router,
    peer: SocketAddr,
    slot: Arc<Slot>,
}

type RouterFuture = <Router as tower_service::Service<Request<Incoming>>>::Future;

impl tower_service::Service<Request<Incoming>> for WithPeer {
    type Response = Response<Body>;
    type Error = <Router as tower_service::Service<Request<Incoming>>>::Error;
    type Future = Answering;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<Request<Incoming>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, mut request: Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.slot.request_began();
        Answering {
            inner: self.router.call(request),
            busy: Some(Busy(Arc::clone(&self.slot))),
        }
    }
}

/// A request being answered: its connection is busy until the answer is ready, or, for a
/// streamed (SSE) answer, until its body ends.
struct Busy(Arc<Slot>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

pin_project_lite::pin_project! {
    /// The router's future, with its request's [`Busy`] mark.
    struct Answering {
        #[pin]
        inner: RouterFuture,
        busy: Option<Busy>,
    }
}

impl Future for Answering {
    type Output = <RouterFuture as Future>::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Poll::Ready(answered) = this.inner.poll(cx) else {
            return Poll::Pending;
        };
        let busy = this.busy.take();
        // A body of known length is in memory (JSON); an SSE stream's length is unknown.
        let streamed = answered
            .as_ref()
            .is_ok_and(|response| response.body().size_hint().exact().is_none());
        if !streamed {
            drop(busy);
            return Poll::Ready(answered);
        }
        Poll::Ready(answered.map(|response| {
            response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _busy = &busy;
                    frame
                }))
            })
        }))
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
