//! The stdio transport of a server: newline-delimited frames on stdin and stdout.
//!
//! On Unix, when stdin and stdout are pipes (the normal case: a client spawned the server),
//! they are driven as non-blocking pipes by the runtime's reactor, not by a blocking thread
//! pool, so a read never pins a thread and EOF is seen at once. Anything else (a file, a
//! terminal), and every stdin and stdout on other systems, uses tokio's blocking-pool stdio.

use tokio::io::{AsyncRead, AsyncWrite};

use super::EngineConfig;
use super::stall::OutputWatch;
use super::transport::Transport;

/// A transport over this process's stdin and stdout, with the default
/// [`EngineConfig::write_timeout`]. Must be called inside a tokio runtime.
pub fn stdio(max_frame_bytes: usize, queue: usize) -> Transport {
    let config = EngineConfig {
        max_message_bytes: max_frame_bytes,
        write_queue: queue,
        ..EngineConfig::default()
    };
    stdio_with(&config)
}

/// A transport over this process's stdin and stdout with `config`'s frame limit
/// (`max_message_bytes`), write queue and [`write_timeout`](EngineConfig::write_timeout).
/// Must be called inside a tokio runtime.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use ferry::engine::{EngineConfig, stdio_with};
///
/// let config = EngineConfig {
///     write_timeout: Some(std::time::Duration::from_secs(10)),
///     ..EngineConfig::default()
/// };
/// let transport = stdio_with(&config);
/// # drop(transport);
/// # }
/// ```
pub fn stdio_with(config: &EngineConfig) -> Transport {
    stdio_watched(config).0
}

/// [`stdio_with`], and what tells whether the write timeout ended it (`None` without one).
pub(crate) fn stdio_watched(config: &EngineConfig) -> (Transport, Option<OutputWatch>) {
    let (reader, writer) = (stdin_reader(), stdout_writer());
    let (max, queue) = (config.max_message_bytes, config.write_queue);
    match config.write_timeout {
        Some(timeout) => {
            let (transport, watch) = Transport::lines_watched(reader, writer, max, queue, timeout);
            (transport, Some(watch))
        }
        None => (Transport::lines(reader, writer, max, queue), None),
    }
}

#[cfg(unix)]
fn stdin_reader() -> Box<dyn AsyncRead + Unpin + Send> {
    match pipes::receiver() {
        Ok(receiver) => Box::new(receiver),
        Err(e) => {
            tracing::debug!("stdin is not a pipe ({e}); using blocking-pool stdin");
            Box::new(tokio::io::stdin())
        }
    }
}

#[cfg(unix)]
fn stdout_writer() -> Box<dyn AsyncWrite + Unpin + Send> {
    match pipes::sender() {
        Ok(sender) => Box::new(sender),
        Err(e) => {
            tracing::debug!("stdout is not a pipe ({e}); using blocking-pool stdout");
            Box::new(tokio::io::stdout())
        }
    }
}

/// Without Unix pipes in tokio, stdin is read on tokio's blocking pool: a read in progress
/// holds one of its threads until a line or end of file arrives.
#[cfg(not(unix))]
fn stdin_reader() -> Box<dyn AsyncRead + Unpin + Send> {
    Box::new(tokio::io::stdin())
}

#[cfg(not(unix))]
fn stdout_writer() -> Box<dyn AsyncWrite + Unpin + Send> {
    Box::new(tokio::io::stdout())
}

/// Stdin and stdout as non-blocking pipes on the runtime's reactor.
#[cfg(unix)]
mod pipes {
    use std::io;
    use std::os::fd::AsFd;

    use tokio::net::unix::pipe;

    pub(super) fn receiver() -> io::Result<pipe::Receiver> {
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        pipe::Receiver::from_owned_fd(fd)
    }

    pub(super) fn sender() -> io::Result<pipe::Sender> {
        let fd = io::stdout().as_fd().try_clone_to_owned()?;
        pipe::Sender::from_owned_fd(fd)
    }
}
