//! The stdio transport of a client: an MCP server run as a child process, newline-delimited
//! frames on its stdin and stdout, its stderr forwarded to `tracing` (or relayed to ours,
//! its last lines kept: [`ChildProcess::stderr_tail`]).
//!
//! [`ChildProcess::spawn`] starts the server and returns a [`Transport`] for the engine and a
//! [`ChildProcess`] handle that owns the process:
//!
//! - The connection is the process. The transport's incoming side ends when the child closes
//!   its stdout, and also when the child exits (after reading what it wrote before exiting),
//!   even if a grandchild that inherited its stdout keeps the pipe open; the engine then fails
//!   the requests in flight with [`CallError::ConnectionClosed`](super::CallError).
//! - [`ChildProcess::shutdown`] is the MCP stdio shutdown sequence: close the child's stdin,
//!   wait, `SIGTERM`, wait, `SIGKILL`. Windows has no `SIGTERM`: there it is close stdin,
//!   wait, then kill (`TerminateProcess`, through tokio's `Child::start_kill`).
//! - Dropping the handle kills the child (`SIGKILL`, to its process group by default), and so
//!   does a panic that unwinds through its owner; if the runtime shuts down first, tokio's
//!   `kill_on_drop` still kills the child itself. There is no orphan unless this process dies
//!   without unwinding (`SIGKILL`, `abort`); then the child's stdin reaches end of file, which
//!   tells a well-behaved server to exit.
//!
//! Not done: `PR_SET_PDEATHSIG` (Linux: the kernel signals the child when its parent dies)
//! must be set in the child between `fork` and `exec`, which only `pre_exec`, an `unsafe`
//! API, allows; this workspace forbids `unsafe` code.

mod command;
mod shutdown;
mod stderr;
mod until_exit;

use std::future::Future;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// On Unix, SIGTERM needs the `nix` crate (feature `signal` only, safe API): tokio's
// `Child::start_kill` and std's `Child::kill` send only SIGKILL, the standard library has no
// way to send another signal, and running `kill(1)` would spawn a process per signal and
// could not be told apart from a failure to signal.
#[cfg(unix)]
use nix::sys::signal::{kill, killpg};
#[cfg(unix)]
use nix::unistd::{Pid, getpgid};

use tokio::process::Child;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::transport::{Transport, Writer};

use stderr::{SharedTail, forward_stderr, relay_stderr};
use until_exit::UntilExit;

pub use command::{ChildCommand, StderrMode};
pub use shutdown::{ShutdownOutcome, ShutdownStage, ShutdownTimeouts};

/// The `tracing` target of everything this module logs, the child's stderr lines included.
const TARGET: &str = "ferry::child";

/// How long after the child exits its stdout and stderr are still read while they have data.
const LINGER: Duration = Duration::from_millis(100);

/// How long the exit status waits, once the child has exited, for its stderr to be read to
/// the end (so that [`ChildProcess::stderr_tail`] has its last words): [`LINGER`] and the
/// time to pass the last bytes on.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

type Exit = Result<ExitStatus, Arc<io::Error>>;

/// A signal of the shutdown sequence. On Unix each is the signal it names; elsewhere only
/// [`Signal::SIGKILL`] is sent, as tokio's `Child::start_kill`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::upper_case_acronyms)]
enum Signal {
    #[cfg_attr(not(unix), allow(dead_code))]
    SIGTERM,
    SIGKILL,
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signal::SIGTERM => "SIGTERM",
            Signal::SIGKILL => "SIGKILL",
        })
    }
}

#[cfg(unix)]
impl From<Signal> for nix::sys::signal::Signal {
    fn from(signal: Signal) -> Self {
        match signal {
            Signal::SIGTERM => nix::sys::signal::Signal::SIGTERM,
            Signal::SIGKILL => nix::sys::signal::Signal::SIGKILL,
        }
    }
}

/// A running child process serving MCP on its stdio. Dropping it kills the child.
#[derive(Debug)]
pub struct ChildProcess {
    pid: u32,
    program: Arc<str>,
    stdin: StdinSlot,
    signals: mpsc::UnboundedSender<Signal>,
    status: watch::Receiver<Option<Exit>>,
    stderr: SharedTail,
}

impl ChildProcess {
    /// Start `command` with its stdin and stdout piped to a newline-delimited [`Transport`]
    /// (frames of at most `max_frame_bytes`, channels of `queue` frames; see
    /// [`Transport::lines`]). Must be called inside a tokio runtime.
    ///
    /// The returned transport has no [`Transport::writer`]: the handle owns the task that
    /// writes the child's stdin, because closing stdin is the first step of
    /// [`shutdown`](Self::shutdown). The engine does not need it: the connection ends when
    /// the child's stdout does, and then the outgoing side is closed too (frames already
    /// queued are still written), so later sends fail at once.
    ///
    /// The child's stderr goes where [`ChildCommand::stderr`] says (default: `tracing`), and
    /// the child is killed when the handle is dropped.
    ///
    /// ```no_run
    /// use ferry::engine::{ChildCommand, ChildProcess, StderrMode};
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// // The server's stderr shown as it comes, its last lines kept for an error message.
    /// let command = ChildCommand::new("node").arg("server.js").stderr(StderrMode::Relay);
    /// let (transport, child) = ChildProcess::spawn(&command, 1 << 20, 64)?;
    /// # let _ = transport;
    /// let status = child.wait().await?;
    /// eprintln!("the server exited ({status}); it said: {:?}", child.stderr_tail());
    /// # Ok(())
    /// # }
    /// ```
    pub fn spawn(
        command: &ChildCommand,
        max_frame_bytes: usize,
        queue: usize,
    ) -> io::Result<(Transport, ChildProcess)> {
        let program: Arc<str> = command.program().to_string_lossy().into();
        let mut child = command.to_tokio().spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start {:?}: {e}", command.program()),
            )
        })?;
        let pid = child.id().unwrap_or_default();
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => return Err(io::Error::other("the child's stdio pipes are missing")),
        };
        let exited = CancellationToken::new();
        let tail = SharedTail::default();
        // Cancelled when the stderr reader ends (at once when there is none).
        let stderr_read = CancellationToken::new();
        let reader = child.stderr.take().map(|stderr| {
            let stderr = UntilExit::new(stderr, &exited);
            let (program, tail) = (Arc::clone(&program), Arc::clone(&tail));
            let done = stderr_read.clone().drop_guard();
            (stderr, program, tail, done)
        });
        match (reader, command.stderr) {
            (Some((stderr, program, tail, done)), StderrMode::Log(level)) => {
                tokio::spawn(async move {
                    forward_stderr(stderr, program, pid, level, tail).await;
                    drop(done);
                });
            }
            (Some((stderr, program, tail, done)), StderrMode::Relay) => {
                tokio::spawn(async move {
                    relay_stderr(stderr, program, pid, tail).await;
                    drop(done);
                });
            }
            _ => stderr_read.cancel(),
        }
        let stdout_closed = CancellationToken::new();
        let mut stdout = UntilExit::new(stdout, &exited);
        stdout.on_drop = Some(stdout_closed.clone().drop_guard());
        let mut transport = Transport::lines(stdout, stdin, max_frame_bytes, queue);
        let stdin: StdinSlot = Arc::new(Mutex::new(transport.writer.take()));
        tokio::spawn(close_stdin_after(stdout_closed, Arc::clone(&stdin)));
        let (signals_tx, signals_rx) = mpsc::unbounded_channel();
        let (status_tx, status_rx) = watch::channel(None);
        tracing::debug!(target: TARGET, program = %program, pid, "started");
        tokio::spawn(supervise(Supervisor {
            child,
            signals: signals_rx,
            status: status_tx,
            exited,
            stderr_read,
            group: command.own_process_group,
            program: Arc::clone(&program),
            pid,
        }));
        let handle = ChildProcess {
            pid,
            program,
            stdin,
            signals: signals_tx,
            status: status_rx,
            stderr: tail,
        };
        Ok((transport, handle))
    }

    /// The child's process id. It stays the same after the child exits, when the system
    /// may give it to another process.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The program, as given to [`ChildCommand::new`] (lossily converted to UTF-8).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The last lines the child wrote on its stderr, oldest first: at most 20, blank ones
    /// left out, a line not ended yet last, each as a terminal leaves it (what follows its
    /// last carriage return) and cut at 1 KiB. Kept when this process reads the child's
    /// stderr ([`StderrMode::Log`], [`StderrMode::Relay`]); empty otherwise. Once the child
    /// has exited ([`try_wait`](Self::try_wait), [`wait`](Self::wait)), its stderr has been
    /// read to the end, unless a process it started keeps writing there or our own stderr
    /// is blocked.
    ///
    /// ```no_run
    /// use ferry::engine::{ChildCommand, ChildProcess, StderrMode};
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let command = ChildCommand::new("cargo").args(["run", "-q"]).stderr(StderrMode::Relay);
    /// let (_transport, child) = ChildProcess::spawn(&command, 1 << 20, 64)?;
    /// tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    /// if let Some(line) = child.stderr_tail().last() {
    ///     eprintln!("still starting; it last said: {line}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines()
    }

    /// The exit status if the child has exited, without waiting.
    pub fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        self.status.borrow().as_ref().map(exit_result).transpose()
    }

    /// Wait until the child exits (a crash, or the server ending the connection) and return
    /// its exit status. Does not close stdin or signal it.
    pub async fn wait(&self) -> io::Result<ExitStatus> {
        self.exited().await
    }

    /// Like [`wait`](Self::wait), but the future borrows nothing: it can be moved into
    /// another task or a `select!` while this handle stays where it is. Fails only if the
    /// runtime shuts down first.
    pub fn exited(&self) -> impl Future<Output = io::Result<ExitStatus>> + Send + 'static + use<> {
        let mut status = self.status.clone();
        async move {
            match status.wait_for(Option::is_some).await {
                Ok(exit) => exit
                    .as_ref()
                    .map_or_else(|| Err(io::Error::other("no exit status")), exit_result),
                Err(_) => Err(io::Error::other(
                    "the child's supervisor stopped before it exited (runtime shutting down)",
                )),
            }
        }
    }

    /// The MCP stdio shutdown sequence: write what the engine has queued and close the
    /// child's stdin, wait up to [`ShutdownTimeouts::after_stdin_close`] for it to exit;
    /// then send `SIGTERM` and wait up to [`ShutdownTimeouts::after_sigterm`]; then send
    /// `SIGKILL` and wait up to [`ShutdownTimeouts::after_sigkill`]. Signals go to the
    /// child's process group when it has its own ([`ChildCommand::own_process_group`]).
    ///
    /// On Windows, which has no `SIGTERM`, the second step is skipped
    /// ([`ShutdownTimeouts::after_sigterm`] is unused and [`ShutdownStage::Terminated`] never
    /// returned): after stdin is closed and the wait, the child is killed
    /// (`TerminateProcess`, the child only, not processes it started).
    ///
    /// Returns the exit status and the step at which the child exited; fails with
    /// [`io::ErrorKind::TimedOut`] if even `SIGKILL` did not end it in time. Dropping the
    /// future drops the handle, which kills the child.
    pub async fn shutdown(self, timeouts: ShutdownTimeouts) -> io::Result<ShutdownOutcome> {
        if let Some(status) = self.try_wait()? {
            return Ok(ShutdownOutcome {
                status,
                stage: ShutdownStage::AlreadyExited,
            });
        }
        let deadline = Instant::now() + timeouts.after_stdin_close;
        if let Some(writer) = take(&self.stdin) {
            writer.flush_and_close(timeouts.after_stdin_close).await;
        }
        if let Ok(exit) = tokio::time::timeout_at(deadline, self.exited()).await {
            return exit.map(|status| ShutdownOutcome {
                status,
                stage: ShutdownStage::StdinClosed,
            });
        }
        let signals = [
            #[cfg(unix)]
            (
                Signal::SIGTERM,
                timeouts.after_sigterm,
                ShutdownStage::Terminated,
            ),
            (
                Signal::SIGKILL,
                timeouts.after_sigkill,
                ShutdownStage::Killed,
            ),
        ];
        for (signal, wait, stage) in signals {
            tracing::debug!(target: TARGET, program = %self.program, pid = self.pid, "sending {signal}");
            let _ = self.signals.send(signal);
            if let Ok(exit) = tokio::time::timeout(wait, self.exited()).await {
                return exit.map(|status| ShutdownOutcome { status, stage });
            }
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "{} (pid {}) did not exit within {:?} of SIGKILL",
                self.program, self.pid, timeouts.after_sigkill
            ),
        ))
    }
}

/// The task writing the child's stdin, until someone closes it.
type StdinSlot = Arc<Mutex<Option<Writer>>>;

fn take(stdin: &StdinSlot) -> Option<Writer> {
    stdin.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// When the child's stdout is done (end of file, or the engine stopped reading), the
/// connection is over: stop accepting outgoing frames and close the child's stdin.
async fn close_stdin_after(stdout_closed: CancellationToken, stdin: StdinSlot) {
    stdout_closed.cancelled().await;
    if let Some(writer) = take(&stdin) {
        writer.flush_and_close(Duration::from_secs(1)).await;
    }
}

fn exit_result(exit: &Exit) -> io::Result<ExitStatus> {
    exit.as_ref()
        .copied()
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))
}

/// The task that owns the child: reaps it, publishes its exit status, delivers signals, and
/// kills it when the handle is dropped.
struct Supervisor {
    child: Child,
    signals: mpsc::UnboundedReceiver<Signal>,
    status: watch::Sender<Option<Exit>>,
    exited: CancellationToken,
    /// Cancelled once the child's stderr has been read to the end (or is not read).
    stderr_read: CancellationToken,
    group: bool,
    program: Arc<str>,
    pid: u32,
}

async fn supervise(mut s: Supervisor) {
    let exit = loop {
        tokio::select! {
            exit = s.child.wait() => break exit,
            signal = s.signals.recv() => match signal {
                Some(signal) => deliver(&mut s.child, s.group, signal),
                None => {
                    // The handle was dropped: no orphan.
                    deliver(&mut s.child, s.group, Signal::SIGKILL);
                    break s.child.wait().await;
                }
            },
        }
    };
    match &exit {
        Ok(status) => {
            tracing::debug!(target: TARGET, program = %s.program, pid = s.pid, "exited: {status}");
        }
        Err(e) => {
            tracing::warn!(target: TARGET, program = %s.program, pid = s.pid, "waiting for the child failed: {e}");
        }
    }
    // The pipes are read to their end first (bounded), so that whoever learns of the exit
    // also has what the child wrote before it.
    s.exited.cancel();
    let _ = tokio::time::timeout(STDERR_DRAIN, s.stderr_read.cancelled()).await;
    s.status.send_replace(Some(exit.map_err(Arc::new)));
}

/// Send `signal` to the child (and its group), unless it has been reaped already: then its
/// pid may belong to another process.
#[cfg(unix)]
fn deliver(child: &mut Child, group: bool, signal: Signal) {
    let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    let pid = Pid::from_raw(pid);
    let signal = nix::sys::signal::Signal::from(signal);
    let group_sent = group && killpg(pid, signal).is_ok();
    // The child may have left its group (setsid); then signal it directly.
    let reached = group_sent && getpgid(Some(pid)).is_ok_and(|pgid| pgid == pid);
    if !reached && let Err(e) = kill(pid, signal) {
        tracing::debug!(target: TARGET, %pid, "cannot send {signal}: {e}");
    }
}

/// Kill the child (`TerminateProcess`), unless it has been reaped already. Only `SIGKILL` is
/// sent where there is no `SIGTERM`; the process group plays no part.
#[cfg(not(unix))]
fn deliver(child: &mut Child, _group: bool, signal: Signal) {
    if signal == Signal::SIGKILL
        && child.id().is_some()
        && let Err(e) = child.start_kill()
    {
        tracing::debug!(target: TARGET, pid = child.id(), "cannot kill: {e}");
    }
}
