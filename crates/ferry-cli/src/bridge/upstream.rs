//! One supervised stdio child and the connections multiplexed onto it ([`Mux`]).
//!
//! A task owns the child: it writes what the connections send (remapped), routes what the
//! child writes, and when the child dies answers every request in flight with an error
//! and starts it again after the client supervisor's exponential backoff (with jitter;
//! a child that stayed up `stable_after` starts again from the first delay). Messages sent
//! while it restarts wait in the queue and go to the new child, after the replayed
//! `initialize`. A child that cannot be started fails the requests waiting for it.
//!
//! A child may take long to answer for the first time (`cargo run` building it): while
//! something waits for its first answer, the log says so every so often, with the last line
//! it wrote on stderr (relayed to ours, its last lines kept); a child that exits before it
//! ever answered is logged with its exit status and its last stderr lines.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ferry::client::Backoff;
use ferry::engine::{ChildCommand, ChildProcess, ShutdownTimeouts, Transport, TransportEvent};
use ferry::http::Connection;
use tokio::sync::{mpsc, watch};

use super::mux::{ClientId, Frame, Mux};
use crate::target::starting::Starting;

/// Frames queued between the child's pipes and the task.
const QUEUE: usize = 1024;

enum Cmd {
    Attach(ClientId, mpsc::UnboundedSender<Frame>, bool),
    Frame(ClientId, Frame),
    Detach(ClientId),
}

/// The handle of a supervised child (see the module docs). Cheap to clone.
#[derive(Clone)]
pub(crate) struct Upstream {
    tx: mpsc::Sender<Cmd>,
}

/// How the child runs.
#[derive(Clone)]
pub(crate) struct ChildSpec {
    pub(crate) command: ChildCommand,
    /// The command as typed, for the log.
    pub(crate) shown: String,
    pub(crate) backoff: Backoff,
    pub(crate) max_frame_bytes: usize,
    pub(crate) lifecycle: Arc<Lifecycle>,
    /// How long a request waits for the child's answer (see `Mux::new`).
    pub(crate) request_timeout: Option<Duration>,
}

/// Every child of the bridge: told to stop together, counted until they are gone.
pub(crate) struct Lifecycle {
    stop: watch::Sender<bool>,
    live: watch::Sender<usize>,
}

impl Lifecycle {
    pub(crate) fn new() -> Arc<Lifecycle> {
        Arc::new(Lifecycle {
            stop: watch::Sender::new(false),
            live: watch::Sender::new(0),
        })
    }

    /// Shut every child down the MCP way (requests in flight get an error; stdin closed,
    /// then `SIGTERM`, then `SIGKILL`) and wait for them, at most `grace`.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        self.stop.send_replace(true);
        let mut live = self.live.subscribe();
        let _ = tokio::time::timeout(grace, live.wait_for(|n| *n == 0)).await;
    }
}

/// Counts one supervisor while it lives.
struct Alive(Arc<Lifecycle>);

impl Alive {
    fn new(lifecycle: &Arc<Lifecycle>) -> Alive {
        lifecycle.live.send_modify(|n| *n += 1);
        Alive(Arc::clone(lifecycle))
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.live.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Sleep `delay`; false when the bridge stops first.
async fn pause(delay: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(delay) => true,
        () = stopped(stop) => false,
    }
}

/// Completes when the bridge stops.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        // The lifecycle is gone with the bridge: nothing will say stop.
        std::future::pending::<()>().await;
    }
}

const STOPPING: &str = "the bridge is shutting down";

impl Upstream {
    /// Start the child. With `end_when_empty`, the child is shut down (the MCP way) once
    /// its last connection has ended.
    pub(crate) fn start(spec: ChildSpec, end_when_empty: bool) -> Upstream {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(supervise(spec, rx, end_when_empty));
        Upstream { tx }
    }

    /// Put one HTTP connection on this child: its frames go in, the child's frames for it
    /// come out, until its input ends.
    pub(crate) fn attach(&self, connection: Connection, transport: Transport) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let client = NEXT.fetch_add(1, Ordering::Relaxed);
        let Transport {
            mut incoming,
            outgoing,
            ..
        } = transport;
        let (to_client, mut for_client) = mpsc::unbounded_channel::<Frame>();
        let tx = self.tx.clone();
        let stateless = connection == Connection::Stateless;
        tokio::spawn(async move {
            while let Some(frame) = for_client.recv().await {
                if outgoing.send(frame).await.is_err() {
                    break;
                }
            }
        });
        tokio::spawn(async move {
            if tx
                .send(Cmd::Attach(client, to_client, stateless))
                .await
                .is_err()
            {
                return;
            }
            while let Some(event) = incoming.recv().await {
                let Ok(frame) = event.into_frame() else {
                    continue;
                };
                if tx.send(Cmd::Frame(client, frame)).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(Cmd::Detach(client)).await;
        });
    }
}

/// Why a child's run ended.
enum End {
    /// It exited (or closed its stdout); whether it had answered anything.
    Died { answered: bool },
    /// No connection is left (or the bridge is ending): shut it down.
    Done,
}

async fn supervise(spec: ChildSpec, mut rx: mpsc::Receiver<Cmd>, end_when_empty: bool) {
    let _alive = Alive::new(&spec.lifecycle);
    let mut stop = spec.lifecycle.stop.subscribe();
    let mut mux = Mux::new(spec.request_timeout);
    let mut attempt: u32 = 0;
    let mut restarts: u64 = 0;
    loop {
        let (transport, child) =
            match ChildProcess::spawn(&spec.command, spec.max_frame_bytes, QUEUE) {
                Ok(started) => started,
                Err(e) => {
                    tracing::error!("ferry bridge: {e}");
                    // Nothing will answer what is waiting: fail it now.
                    while let Ok(cmd) = rx.try_recv() {
                        let _ = handle(&mut mux, cmd);
                    }
                    mux.fail_all(&format!("the MCP server cannot be started: {e}"));
                    if end_when_empty && mux.deserted()
                        || !pause(spec.backoff.delay(attempt), &mut stop).await
                    {
                        return;
                    }
                    attempt = attempt.saturating_add(1);
                    continue;
                }
            };
        tracing::info!(pid = child.id(), "ferry bridge: server process started");
        let started = Instant::now();
        let starting = Starting {
            child: &child,
            shown: &spec.shown,
            limit: Duration::MAX,
        };
        match run(
            &mut mux,
            &mut rx,
            transport,
            end_when_empty,
            &mut stop,
            &starting,
        )
        .await
        {
            End::Done => {
                mux.fail_all(STOPPING);
                let _ = child.shutdown(ShutdownTimeouts::default()).await;
                return;
            }
            End::Died { answered } => {
                if answered {
                    let status = child.try_wait().ok().flatten();
                    tracing::warn!(?status, "ferry bridge: the server process exited");
                } else {
                    let report = match starting.exit_report().await {
                        Some(report) => report,
                        None => starting.exited(None),
                    };
                    tracing::warn!("ferry bridge: {report}");
                }
                drop(child);
                mux.child_died();
                if started.elapsed() >= spec.backoff.stable_after {
                    attempt = 0;
                }
                restarts += 1;
                if spec.backoff.max_restarts.is_some_and(|max| restarts > max) {
                    tracing::error!("ferry bridge: giving up after {} restarts", restarts - 1);
                    return;
                }
                if end_when_empty && mux.deserted()
                    || !pause(spec.backoff.delay(attempt), &mut stop).await
                {
                    mux.fail_all(STOPPING);
                    return;
                }
                attempt = attempt.saturating_add(1);
            }
        }
    }
}

/// What a command means for the child: frames to write, and whether the connection count
/// dropped.
fn handle(mux: &mut Mux, cmd: Cmd) -> Vec<Frame> {
    match cmd {
        Cmd::Attach(client, tx, stateless) => {
            mux.attach(client, tx, stateless);
            Vec::new()
        }
        Cmd::Frame(client, frame) => mux.client_frame(client, &frame),
        Cmd::Detach(client) => mux.detach(client),
    }
}

/// Serve one child process until it dies or is no longer needed. While something was sent
/// to it and it has not answered yet, the log says so now and then.
async fn run(
    mux: &mut Mux,
    rx: &mut mpsc::Receiver<Cmd>,
    mut transport: Transport,
    end_when_empty: bool,
    stop: &mut watch::Receiver<bool>,
    starting: &Starting<'_>,
) -> End {
    // Since when something has waited for the child's first answer, and when the next
    // note about it is due.
    let mut waiting: Option<(tokio::time::Instant, tokio::time::Instant)> = None;
    let mut answered = false;
    let to_child = transport.outgoing.clone();
    for frame in mux.started() {
        waiting.get_or_insert_with(first_wait);
        if to_child.send(frame).await.is_err() {
            return End::Died { answered };
        }
    }
    loop {
        let note_due = async {
            match waiting {
                Some((_, at)) if !answered => tokio::time::sleep_until(at).await,
                _ => std::future::pending().await,
            }
        };
        let deadline = mux.next_deadline();
        let expiry = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let frames = tokio::select! {
            () = stopped(stop) => return End::Done,
            () = expiry => mux.expire(std::time::Instant::now()),
            () = note_due => {
                if let Some((since, next)) = &mut waiting {
                    let waited = next.duration_since(*since);
                    tracing::warn!("ferry bridge: {}", starting.still_waiting(waited));
                    *next += if waited < Duration::from_secs(60) {
                        FIRST_NOTE
                    } else {
                        LATER_NOTES
                    };
                }
                Vec::new()
            }
            cmd = rx.recv() => {
                let Some(cmd) = cmd else { return End::Done };
                let detach = matches!(cmd, Cmd::Detach(_));
                let frames = handle(mux, cmd);
                if detach && end_when_empty && mux.deserted() {
                    // Cancellations first, then the MCP shutdown.
                    for frame in frames {
                        let _ = to_child.send(frame).await;
                    }
                    return End::Done;
                }
                frames
            }
            event = transport.incoming.recv() => match event {
                Some(TransportEvent::Frame(frame)) => {
                    answered = true;
                    mux.child_frame(&frame)
                }
                Some(TransportEvent::Oversized { bytes, head }) => {
                    answered = true;
                    tracing::warn!(bytes, "ferry bridge: an oversized message from the server dropped");
                    mux.child_unreadable(&head, &format!("{bytes} bytes, over the limit"));
                    Vec::new()
                }
                Some(_) => Vec::new(),
                None => return End::Died { answered },
            },
        };
        if !frames.is_empty() {
            waiting.get_or_insert_with(first_wait);
        }
        for frame in frames {
            if to_child.send(frame).await.is_err() {
                // The child is going; its requests are failed when its stdout ends.
                break;
            }
        }
    }
}

/// The first note about a child that has not answered, after the first message to it.
const FIRST_NOTE: Duration = Duration::from_secs(10);

/// A wait for the first answer beginning now, and its first note.
fn first_wait() -> (tokio::time::Instant, tokio::time::Instant) {
    let now = tokio::time::Instant::now();
    (now, now + FIRST_NOTE)
}

/// After a minute, a note this often.
const LATER_NOTES: Duration = Duration::from_secs(30);
