//! The stdio floor on tokio: the same loop as `floor-stdio` (newline-delimited JSON-RPC,
//! answers flushed when no more input is buffered), on a current-thread runtime with
//! stdin and stdout registered with its reactor, as an async MCP server runs. What it
//! costs beyond `floor-stdio` is what any tokio server pays: the runtime's start, and an
//! `epoll_wait` and the runtime's park per sequential call.

#![forbid(unsafe_code)]

use std::os::fd::AsFd;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::unix::pipe;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    // Pipes, as the load generator gives them (tokio's `stdin()` would read on a thread).
    let stdin = pipe::Receiver::from_owned_fd(std::io::stdin().as_fd().try_clone_to_owned()?)?;
    let stdout = pipe::Sender::from_owned_fd(std::io::stdout().as_fd().try_clone_to_owned()?)?;
    // 8 KiB, as Ferry's line reader starts: tokio's `BufReader` zeroes its buffer, and
    // 64 KiB (the floor's, which std leaves untouched) would be 16 page faults at start.
    let mut input = BufReader::with_capacity(8 * 1024, stdin);
    let mut output = BufWriter::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(4096);
    let mut answer = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return output.flush().await;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        answer.clear();
        floor::answer(&line, &mut answer);
        output.write_all(&answer).await?;
        if input.buffer().is_empty() {
            output.flush().await?;
        }
    }
}
