//! The child's stderr: forwarded to `tracing` line by line, or relayed to this process's
//! stderr as it comes; either way its last lines are kept ([`Tail`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::ChildStderr;

use super::TARGET;
use super::until_exit::UntilExit;

/// Longest stderr line logged as one event; longer lines are logged in pieces.
const MAX_STDERR_LINE: u64 = 16 * 1024;

/// Lines kept by [`Tail`].
pub(super) const TAIL_LINES: usize = 20;

/// Longest line kept by [`Tail`], in bytes (a longer one is cut there).
const TAIL_LINE_BYTES: usize = 1024;

/// The last lines the child wrote on stderr, shared with its [`super::ChildProcess`].
pub(super) type SharedTail = Arc<Mutex<Tail>>;

/// The last [`TAIL_LINES`] lines, blank ones left out, and the line being written.
#[derive(Debug, Default)]
pub(super) struct Tail {
    lines: VecDeque<String>,
    /// The start of a line not ended yet (at most [`TAIL_LINE_BYTES`] of it).
    partial: Vec<u8>,
}

impl Tail {
    /// Take `bytes` as written: whole lines are kept, the rest waits for its end.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.extend_partial(&bytes[..end]);
            let line = std::mem::take(&mut self.partial);
            self.push(&line);
            bytes = &bytes[end + 1..];
        }
        self.extend_partial(bytes);
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = TAIL_LINE_BYTES.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Keep one whole line (its end of line removed), unless it is blank.
    fn push(&mut self, line: &[u8]) {
        let Some(text) = shown(line) else { return };
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(text);
    }

    /// The kept lines, oldest first, with the line being written last.
    pub(super) fn lines(&self) -> Vec<String> {
        let partial = shown(&self.partial);
        let skip = (self.lines.len() + usize::from(partial.is_some())).saturating_sub(TAIL_LINES);
        self.lines
            .iter()
            .cloned()
            .chain(partial)
            .skip(skip)
            .collect()
    }
}

/// A line as a terminal would leave it: what follows its last carriage return (a progress
/// report rewritten in place), trailing white space removed; `None` when blank.
fn shown(line: &[u8]) -> Option<String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let last = line.rsplit(|b| *b == b'\r').find(|part| !part.is_empty())?;
    let text = String::from_utf8_lossy(last);
    let text = text.trim_end();
    (!text.is_empty()).then(|| text.to_owned())
}

fn lock(tail: &SharedTail) -> std::sync::MutexGuard<'_, Tail> {
    tail.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forward the child's stderr to `tracing`, line by line, keeping the last lines in `tail`.
pub(super) async fn forward_stderr(
    stderr: UntilExit<ChildStderr>,
    program: Arc<str>,
    pid: u32,
    level: tracing::Level,
    tail: SharedTail,
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
                lock(&tail).feed(&line);
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

/// Copy the child's stderr to this process's stderr as it comes, keeping the last lines in
/// `tail`. A write to our stderr that fails (its reader is gone) stops the copy but not the
/// reading, so the child can still write.
pub(super) async fn relay_stderr(
    mut stderr: UntilExit<ChildStderr>,
    program: Arc<str>,
    pid: u32,
    tail: SharedTail,
) {
    let mut ours = Some(tokio::io::stderr());
    let mut buffer = vec![0; 8 * 1024];
    loop {
        let read = match stderr.read(&mut buffer).await {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) => {
                tracing::debug!(target: TARGET, program = %program, pid, "reading stderr failed: {e}");
                break;
            }
        };
        let bytes = &buffer[..read];
        lock(&tail).feed(bytes);
        if let Some(out) = &mut ours {
            let written = out.write_all(bytes).await;
            if written.is_err() || out.flush().await.is_err() {
                ours = None;
            }
        }
    }
}

pub(super) fn log_line(level: tracing::Level, program: &str, pid: u32, line: &str) {
    use tracing::Level;
    match level {
        Level::ERROR => tracing::error!(target: TARGET, program, pid, "{line}"),
        Level::WARN => tracing::warn!(target: TARGET, program, pid, "{line}"),
        Level::INFO => tracing::info!(target: TARGET, program, pid, "{line}"),
        Level::DEBUG => tracing::debug!(target: TARGET, program, pid, "{line}"),
        _ => tracing::trace!(target: TARGET, program, pid, "{line}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_as_a_terminal_shows_them() {
        let mut tail = Tail::default();
        tail.feed(b"one\r\n\n   \ntw");
        assert_eq!(tail.lines(), ["one", "tw"]);
        tail.feed(b"o\nBuilding 1/3\rBuilding 2/3\r");
        assert_eq!(tail.lines(), ["one", "two", "Building 2/3"]);
        for n in 0..TAIL_LINES {
            tail.feed(format!("line {n}\n").as_bytes());
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines.last().map(String::as_str), Some("line 19"));
        tail.feed(&[b'x'; 5000]);
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines.first().map(String::as_str), Some("line 1"));
        assert_eq!(lines.last().map(String::len), Some(TAIL_LINE_BYTES));
        tail.feed(b"\n\xff\xfe bad\n");
        assert_eq!(
            tail.lines().last().map(String::as_str),
            Some("\u{fffd}\u{fffd} bad")
        );
    }
}
