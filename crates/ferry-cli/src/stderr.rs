//! Writing to stderr without ever failing: messages are best effort. A stderr that is
//! gone (its reader hung up, so every write fails with EPIPE: `ferry serve --http ... 2>&1 |
//! head -1`) must not panic the writer, as `eprintln!` does, nor end the server it reports
//! on.

/// `eprintln!` that never panics: the line is dropped if stderr cannot take it.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) use note;

use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::Registry;
use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Filter, Layer as _, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

/// Log lines queued for stderr before more are dropped.
const QUEUE_LINES: usize = 1024;

/// Install the process's logging: events at `FERRY_LOG`'s levels (default `warn`) to
/// stderr, and events inside handlers to their client, at the level the client chose.
///
/// Lines are written by a thread of their own and dropped when that thread falls behind (a
/// full stderr pipe nobody reads): the runtime never waits on stderr. That thread and its
/// queue start with the first line, so a process that logs nothing (a server at the
/// default level) pays for neither. A write that fails (stderr gone) is dropped: the
/// layer's report of a failed write stays off, as it is an `eprintln!`, which panics when
/// stderr fails. Dropping the returned guard flushes the queue.
pub(crate) fn logs() -> LogFlush {
    let writer = LazyStderr::default();
    let flush = LogFlush(writer.0.clone());
    // FERRY_LOG's directives when set (a malformed one falls back to the default); the
    // plain level filter otherwise, which has nothing to parse.
    match std::env::var_os("FERRY_LOG") {
        Some(_) => install(
            writer,
            EnvFilter::try_from_env("FERRY_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        ),
        None => install(writer, LevelFilter::WARN),
    }
    flush
}

fn install<F: Filter<Registry> + Send + Sync + 'static>(writer: LazyStderr, filter: F) {
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        // Colours for a terminal only: piped or captured, escape codes are noise.
        .with_ansi(std::io::stderr().is_terminal())
        .log_internal_errors(false)
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(stderr)
        .with(ferry::server::ClientLogLayer::new())
        .init();
}

/// Flushes the queued log lines when dropped (at the end of `main`).
pub(crate) struct LogFlush(Arc<Shared>);

impl Drop for LogFlush {
    fn drop(&mut self) {
        let guard = self.0.guard.lock().map(|mut g| g.take());
        drop(guard);
    }
}

/// The writer thread and its queue, made by the first line written.
#[derive(Default)]
struct Shared {
    writer: OnceLock<NonBlocking>,
    guard: Mutex<Option<WorkerGuard>>,
}

/// stderr through [`Shared`], for the fmt layer.
#[derive(Clone, Default)]
struct LazyStderr(Arc<Shared>);

impl<'a> MakeWriter<'a> for LazyStderr {
    type Writer = NonBlocking;

    fn make_writer(&'a self) -> NonBlocking {
        self.0
            .writer
            .get_or_init(|| {
                let (writer, guard) = NonBlockingBuilder::default()
                    .buffered_lines_limit(QUEUE_LINES)
                    .lossy(true)
                    .thread_name("ferry-stderr")
                    .finish(std::io::stderr());
                if let Ok(mut slot) = self.0.guard.lock() {
                    *slot = Some(guard);
                }
                writer
            })
            .clone()
    }
}
