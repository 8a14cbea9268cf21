//! The child's stderr, forwarded to `tracing` line by line.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::ChildStderr;

use super::TARGET;
use super::until_exit::UntilExit;

/// Longest stderr line logged as one event; longer lines are logged in pieces.
const MAX_STDERR_LINE: u64 = 16 * 1024;

/// Forward the child's stderr to `tracing`, line by line.
pub(super) async fn forward_stderr(
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
