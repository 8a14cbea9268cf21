//! Where the client commands write: results on stdout (a closed pipe is not an error),
//! everything else — errors, what the server asked, the wire trace, the progress bar — on
//! stderr, through [`note`] so a visible progress bar is not torn.

use std::io::Write;
use std::sync::Mutex;

use console::{Alignment, measure_text_width, pad_str, truncate_str};
use ferry::client::ClientError;
use ferry::protocol::types::ProgressNotificationParams;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The progress bar, while one is shown.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Widest a column other than the last may be.
const MAX_COLUMN: usize = 40;

/// Width assumed when stdout is not a terminal and `COLUMNS` is not set.
const DEFAULT_WIDTH: usize = 80;

/// One line on stderr.
pub(crate) fn note(line: &str) {
    let bar = BAR.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let write = || {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    };
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// Text on stdout, ending with a newline.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// A value as pretty JSON on stdout.
pub(crate) fn json<T: Serialize + ?Sized>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => out(&text),
        Err(e) => note(&format!("ferry: cannot print the result as JSON: {e}")),
    }
}

/// Report a failed operation: on stderr with its kind; with `--json` a JSON-RPC error is
/// also printed on stdout as `{"error": {...}}`.
pub(crate) fn client_error(what: &str, error: &ClientError, as_json: bool) {
    if let Some(failure) = error.transport() {
        // The server's answer could not be had: the message says what happened over HTTP.
        if as_json {
            let mut error = json!({ "code": -32603, "message": failure.message });
            if let Some(status) = failure.status {
                error["data"] = json!({ "httpStatus": status });
            }
            json(&json!({ "error": error }));
        }
        note(&format!("ferry: {what} failed: {error}"));
        return;
    }
    let kind = match error.kind() {
        Some(kind) => format!("{kind:?}"),
        // The variant's name: `Timeout`, `ConnectionLost`, `Unsupported`...
        None => format!("{error:?}")
            .split(['(', ' ', '{'])
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    if let Some(rpc) = error.rpc() {
        if as_json {
            json(&json!({ "error": rpc }));
        }
        note(&format!("ferry: {what} failed: {kind}: {error}"));
        if let Some(data) = &rpc.data {
            note(&format!("ferry:   data: {data}"));
        }
    } else {
        note(&format!("ferry: {what} failed: {kind}: {error}"));
    }
}

/// Show the server's progress reports on a bar on stderr (drawn only when stderr is a
/// terminal) until the sender is dropped.
pub(crate) fn progress(mut updates: mpsc::Receiver<ProgressNotificationParams>) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(update) = updates.recv().await {
            let bar = BAR
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert_with(|| {
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                })
                .clone();
            show(&bar, &update);
        }
    })
}

fn show(bar: &ProgressBar, update: &ProgressNotificationParams) {
    let message = update
        .message
        .clone()
        .unwrap_or_else(|| match update.total {
            Some(total) => format!("{} of {total}", update.progress),
            None => format!("{}", update.progress),
        });
    bar.set_message(message);
    match update.total.filter(|t| *t > 0.0) {
        Some(total) => {
            if bar.length().is_none() {
                let style = ProgressStyle::with_template("{bar:30} {percent:>3}% {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
                bar.set_style(style);
                bar.set_length(1000);
            }
            let fraction = (update.progress / total).clamp(0.0, 1.0);
            // Truncation intended: a position out of 1000.
            bar.set_position((fraction * 1000.0) as u64);
        }
        None => {
            if bar.length().is_some() {
                bar.unset_length();
            }
            bar.set_style(ProgressStyle::default_spinner());
            bar.tick();
        }
    }
}

/// Remove the progress bar, if one is shown.
pub(crate) fn clear_progress() {
    if let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).take() {
        bar.finish_and_clear();
    }
}

/// A table on stdout: columns padded, each but the last at most [`MAX_COLUMN`] wide, the
/// last cut to the terminal's width (or `COLUMNS`, or 80). Control characters in cells
/// (newlines, escapes) become spaces. `empty` is printed when there are no rows.
pub(crate) fn table(headers: &[&str], rows: Vec<Vec<String>>, empty: &str) {
    if rows.is_empty() {
        out(empty);
        return;
    }
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| row.iter().map(|cell| clean(cell)).collect())
        .collect();
    let last = headers.len() - 1;
    let widths: Vec<usize> = (0..last)
        .map(|i| {
            rows.iter()
                .map(|r| measure_text_width(&r[i]))
                .chain([headers[i].len()])
                .max()
                .unwrap_or(0)
                .min(MAX_COLUMN)
        })
        .collect();
    let used: usize = widths.iter().map(|w| w + 2).sum();
    let rest = terminal_width().saturating_sub(used).max(20);
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    let mut text = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, width) in widths.iter().enumerate() {
            let cell = truncate_str(&row[i], *width, "…");
            line.push_str(&pad_str(&cell, *width, Alignment::Left, None));
            line.push_str("  ");
        }
        line.push_str(&truncate_str(&row[last], rest, "…"));
        text.push_str(line.trim_end());
        text.push('\n');
    }
    out(&text);
}

/// The first line of `text`, control characters made spaces.
fn clean(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn terminal_width() -> usize {
    let term = console::Term::stdout();
    if term.is_term()
        && let Some((_, columns)) = term.size_checked()
    {
        return usize::from(columns);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(DEFAULT_WIDTH)
}

/// `title — description`, either alone, or nothing.
pub(crate) fn summary(title: Option<&str>, description: Option<&str>) -> String {
    match (title, description) {
        (Some(t), Some(d)) if !d.is_empty() => format!("{t} — {d}"),
        (Some(t), _) => t.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => String::new(),
    }
}
