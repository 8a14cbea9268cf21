//! The stdio transport of a server: newline-delimited frames on stdin and stdout.
//!
//! When stdin and stdout are pipes (the normal case: a client spawned the server), they are
//! driven as non-blocking pipes by the runtime's reactor, not by a blocking thread pool, so
//! a read never pins a thread and EOF is seen at once. Anything else (a file, a terminal)
//! falls back to tokio's blocking-pool stdio.

use std::io;
use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

use super::transport::Transport;

/// A transport over this process's stdin and stdout. Must be called inside a tokio runtime.
pub fn stdio(max_frame_bytes: usize, queue: usize) -> Transport {
    Transport::lines(stdin_reader(), stdout_writer(), max_frame_bytes, queue)
}

fn stdin_reader() -> Box<dyn AsyncRead + Unpin + Send> {
    match pipe_receiver() {
        Ok(receiver) => Box::new(receiver),
        Err(e) => {
            tracing::debug!("stdin is not a pipe ({e}); using blocking-pool stdin");
            Box::new(tokio::io::stdin())
        }
    }
}

fn stdout_writer() -> Box<dyn AsyncWrite + Unpin + Send> {
    match pipe_sender() {
        Ok(sender) => Box::new(sender),
        Err(e) => {
            tracing::debug!("stdout is not a pipe ({e}); using blocking-pool stdout");
            Box::new(tokio::io::stdout())
        }
    }
}

fn pipe_receiver() -> io::Result<pipe::Receiver> {
    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    pipe::Receiver::from_owned_fd(fd)
}

fn pipe_sender() -> io::Result<pipe::Sender> {
    let fd = io::stdout().as_fd().try_clone_to_owned()?;
    pipe::Sender::from_owned_fd(fd)
}
