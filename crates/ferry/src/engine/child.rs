//! The stdio transport of a client: an MCP server run as a child process, newline-delimited
//! frames on its stdin and stdout, its stderr forwarded to `tracing`.
//!
//! [`ChildProcess::spawn`] starts the server and returns a [`Transport`] for the engine and a
//! [`ChildProcess`] handle that owns the process:
//!
//! - The connection is the process. The transport's incoming side ends when the child closes
//!   its stdout, and also when the child exits (after reading what it wrote before exiting),
//!   even if a grandchild that inherited its stdout keeps the pipe open; the engine then fails
//!   the requests in flight with [`CallError::ConnectionClosed`](super::CallError).
//! - [`ChildProcess::shutdown`] is the MCP stdio shutdown sequence: close the child's stdin,
//!   wait, `SIGTERM`, wait, `SIGKILL`.
//! - Dropping the handle kills the child (`SIGKILL`, to its process group by default), and so
//!   does a panic that unwinds through its owner; if the runtime shuts down first, tokio's
//!   `kill_on_drop` still kills the child itself. There is no orphan unless this process dies
//!   without unwinding (`SIGKILL`, `abort`); then the child's stdin reaches end of file, which
//!   tells a well-behaved server to exit.
//!
//! Not done: `PR_SET_PDEATHSIG` (Linux: the kernel signals the child when its parent dies)
//! must be set in the child between `fork` and `exec`, which only `pre_exec`, an `unsafe`
//! API, allows; this workspace forbids `unsafe` code.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

// SIGTERM needs the `nix` crate (feature `signal` only, safe API): tokio's
// `Child::start_kill` and std's `Child::kill` send only SIGKILL, the standard library has no
// way to send another signal, and running `kill(1)` would spawn a process per signal and
// could not be told apart from a failure to signal.
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader, ReadBuf};
use tokio::process::{Child, ChildStderr};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFutureOwned};

use super::transport::{Transport, Writer};

/// The `tracing` target of everything this module logs, the child's stderr lines included.
const TARGET: &str = "ferry::child";

/// How long after the child exits its stdout and stderr are still read while they have data.
const LINGER: Duration = Duration::from_millis(100);

/// Longest stderr line logged as one event; longer lines are logged in pieces.
const MAX_STDERR_LINE: u64 = 16 * 1024;

/// Where the child's stderr goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrMode {
    /// Each line becomes a `tracing` event of target `ferry::child` at this level, with the
    /// fields `program` and `pid`; invalid UTF-8 is replaced. Never written to our stdout.
    Log(tracing::Level),
    /// The child writes to this process's stderr directly.
    Inherit,
    /// Discarded (`/dev/null`).
    Discard,
}

impl Default for StderrMode {
    /// [`StderrMode::Log`] at `INFO`.
    fn default() -> Self {
        StderrMode::Log(tracing::Level::INFO)
    }
}

/// What to run: program, arguments, environment, working directory.
///
/// Defaults: no arguments; the environment of this process, unchanged; its working
/// directory; stderr logged at `INFO` ([`StderrMode::default`]); the child in a process group
/// of its own ([`ChildCommand::own_process_group`]).
#[derive(Clone, Debug)]
pub struct ChildCommand {
    program: OsString,
    args: Vec<OsString>,
    env_clear: bool,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
    stderr: StderrMode,
    own_process_group: bool,
}

impl ChildCommand {
    /// Run `program`, looked up in `PATH` unless it contains a `/`.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ChildCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env_clear: false,
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::default(),
            own_process_group: true,
        }
    }

    /// Add an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Add arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Set an environment variable of the child (later calls for the same key win).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Set environment variables of the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Remove an environment variable from the child's environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Start the child with an empty environment (and forget earlier [`env`](Self::env) and
    /// [`env_remove`](Self::env_remove) calls); later `env` calls add to it. Note that
    /// without `PATH` a program name without `/` is looked up in a default path.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self.env.clear();
        self
    }

    /// The child's working directory. Default: this process's. A relative `program` is
    /// resolved against it.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Where the child's stderr goes. Default: [`StderrMode::Log`] at `INFO`.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Whether the child gets a process group of its own (`setpgid(0, 0)`, done by the
    /// standard library without `unsafe`). Default: yes.
    ///
    /// In its own group the child does not receive the terminal's `SIGINT` when the user
    /// presses Ctrl-C, so its owner decides how it ends, and the shutdown signals (`SIGTERM`,
    /// `SIGKILL`, also on drop) go to the whole group, so helpers the server started (an
    /// `npx` or shell wrapper's children) end with it. Signals go to the group only while the
    /// child itself has not been reaped (its pid cannot have been reused).
    pub fn own_process_group(mut self, yes: bool) -> Self {
        self.own_process_group = yes;
        self
    }

    /// The program.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    fn to_tokio(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        if self.env_clear {
            command.env_clear();
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Log(_) => Stdio::piped(),
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard => Stdio::null(),
            })
            .kill_on_drop(true);
        if self.own_process_group {
            command.process_group(0);
        }
        command
    }
}

/// How long each step of [`ChildProcess::shutdown`] waits for the child to exit.
///
/// Defaults: 2 s after closing stdin, 2 s after `SIGTERM`, 2 s after `SIGKILL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After stdin is closed (flushing what the engine queued counts against it), before
    /// `SIGTERM`. Default: 2 s.
    pub after_stdin_close: Duration,
    /// After `SIGTERM`, before `SIGKILL`. Default: 2 s.
    pub after_sigterm: Duration,
    /// After `SIGKILL`, before [`ChildProcess::shutdown`] gives up with
    /// [`io::ErrorKind::TimedOut`] (a process stuck in the kernel). Default: 2 s.
    pub after_sigkill: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts {
            after_stdin_close: Duration::from_secs(2),
            after_sigterm: Duration::from_secs(2),
            after_sigkill: Duration::from_secs(2),
        }
    }
}

impl ShutdownTimeouts {
    /// The same timeout for every step.
    pub fn all(timeout: Duration) -> Self {
        ShutdownTimeouts {
            after_stdin_close: timeout,
            after_sigterm: timeout,
            after_sigkill: timeout,
        }
    }
}

/// The step of [`ChildProcess::shutdown`] at which the child exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownStage {
    /// It had exited before the shutdown began (a crash, or it closed the connection).
    AlreadyExited,
    /// It exited after its stdin was closed: the graceful path.
    StdinClosed,
    /// It exited after `SIGTERM`.
    Terminated,
    /// It exited after `SIGKILL`.
    Killed,
}

/// How a [`ChildProcess::shutdown`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownOutcome {
    /// The child's exit status.
    pub status: ExitStatus,
    /// The step at which it exited.
    pub stage: ShutdownStage,
}

type Exit = Result<ExitStatus, Arc<io::Error>>;

/// A running child process serving MCP on its stdio. Dropping it kills the child.
#[derive(Debug)]
pub struct ChildProcess {
    pid: u32,
    program: Arc<str>,
    stdin: StdinSlot,
    signals: mpsc::UnboundedSender<Signal>,
    status: watch::Receiver<Option<Exit>>,
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
    pub fn spawn(
        command: &ChildCommand,
        max_frame_bytes: usize,
        queue: usize,
    ) -> io::Result<(Transport, ChildProcess)> {
        let program: Arc<str> = command.program.to_string_lossy().into();
        let mut child = command.to_tokio().spawn().map_err(|e| {
            io::Error::new(e.kind(), format!("cannot start {:?}: {e}", command.program))
        })?;
        let pid = child.id().unwrap_or_default();
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => return Err(io::Error::other("the child's stdio pipes are missing")),
        };
        let exited = CancellationToken::new();
        if let Some(stderr) = child.stderr.take()
            && let StderrMode::Log(level) = command.stderr
        {
            let stderr = UntilExit::new(stderr, &exited);
            tokio::spawn(forward_stderr(stderr, Arc::clone(&program), pid, level));
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
    pub fn exited(&self) -> impl Future<Output = io::Result<ExitStatus>> + Send + 'static {
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
    group: bool,
    program: Arc<str>,
    pid: u32,
}

async fn supervise(mut s: Supervisor) {
    let exit = loop {
        tokio::select! {
            exit = s.child.wait() => break exit,
            signal = s.signals.recv() => match signal {
                Some(signal) => deliver(&s.child, s.group, signal),
                None => {
                    // The handle was dropped: no orphan.
                    deliver(&s.child, s.group, Signal::SIGKILL);
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
    s.status.send_replace(Some(exit.map_err(Arc::new)));
    s.exited.cancel();
}

/// Send `signal` to the child (and its group), unless it has been reaped already: then its
/// pid may belong to another process.
fn deliver(child: &Child, group: bool, signal: Signal) {
    let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    let pid = Pid::from_raw(pid);
    let group_sent = group && killpg(pid, signal).is_ok();
    // The child may have left its group (setsid); then signal it directly.
    let reached = group_sent && getpgid(Some(pid)).is_ok_and(|pgid| pgid == pid);
    if !reached && let Err(e) = kill(pid, signal) {
        tracing::debug!(target: TARGET, %pid, "cannot send {signal}: {e}");
    }
}

/// Forward the child's stderr to `tracing`, line by line.
async fn forward_stderr(
    stderr: UntilExit<ChildStderr>,
    program: Arc<str>,
    pid: u32,
    level: tracing::Level,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_STDERR_LINE)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\n', '\r']);
                log_line(level, &program, pid, text);
            }
            Err(e) => {
                tracing::debug!(target: TARGET, program = %program, pid, "reading stderr failed: {e}");
                break;
            }
        }
    }
}

fn log_line(level: tracing::Level, program: &str, pid: u32, line: &str) {
    use tracing::Level;
    match level {
        Level::ERROR => tracing::error!(target: TARGET, program, pid, "{line}"),
        Level::WARN => tracing::warn!(target: TARGET, program, pid, "{line}"),
        Level::INFO => tracing::info!(target: TARGET, program, pid, "{line}"),
        Level::DEBUG => tracing::debug!(target: TARGET, program, pid, "{line}"),
        _ => tracing::trace!(target: TARGET, program, pid, "{line}"),
    }
}

/// A pipe from the child that reaches end of file when the child closes it, or once the
/// child has exited and the pipe has nothing more to read for [`LINGER`] after the exit
/// (a grandchild may hold the pipe open forever).
struct UntilExit<R> {
    inner: R,
    exited: Pin<Box<WaitForCancellationFutureOwned>>,
    linger: Option<Pin<Box<Sleep>>>,
    done: bool,
    /// Cancels a token when the pipe is dropped (the transport's reader has finished).
    on_drop: Option<DropGuard>,
}

impl<R> UntilExit<R> {
    fn new(inner: R, exited: &CancellationToken) -> Self {
        UntilExit {
            inner,
            exited: Box::pin(exited.clone().cancelled_owned()),
            linger: None,
            done: false,
            on_drop: None,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilExit<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Ok(()));
        }
        if let Poll::Ready(read) = Pin::new(&mut this.inner).poll_read(cx, buf) {
            return Poll::Ready(read);
        }
        // Nothing to read for now.
        if this.linger.is_none() {
            if this.exited.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.linger = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        match this.linger.as_mut().map(|linger| linger.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                this.done = true;
                Poll::Ready(Ok(()))
            }
            _ => Poll::Pending,
        }
    }
}
