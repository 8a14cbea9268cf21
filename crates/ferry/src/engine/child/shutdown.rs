//! The MCP stdio shutdown sequence's settings and outcome.

use std::process::ExitStatus;
use std::time::Duration;

/// How long each step of [`ChildProcess::shutdown`](super::ChildProcess::shutdown) waits for the child to exit.
///
/// Defaults: 2 s after closing stdin, 2 s after `SIGTERM`, 2 s after `SIGKILL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After stdin is closed (flushing what the engine queued counts against it), before
    /// `SIGTERM`. Default: 2 s.
    pub after_stdin_close: Duration,
    /// After `SIGTERM`, before `SIGKILL`. Default: 2 s. Unused on Windows, which has no
    /// `SIGTERM`: there the kill follows the wait after stdin is closed.
    pub after_sigterm: Duration,
    /// After `SIGKILL`, before [`ChildProcess::shutdown`](super::ChildProcess::shutdown) gives up with
    /// [`io::ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut) (a process stuck in the kernel). Default: 2 s.
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

/// The step of [`ChildProcess::shutdown`](super::ChildProcess::shutdown) at which the child exited.
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

/// How a [`ChildProcess::shutdown`](super::ChildProcess::shutdown) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownOutcome {
    /// The child's exit status.
    pub status: ExitStatus,
    /// The step at which it exited.
    pub stage: ShutdownStage,
}
