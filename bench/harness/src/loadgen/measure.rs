//! Figures shared by both modes: percentiles, the server's resident memory, the checked
//! `echo` response.

use std::io;
use std::time::Duration;

use serde::Deserialize;

/// Latencies of one phase, in microseconds, and its wall time.
#[derive(Default)]
pub(crate) struct Phase {
    pub(crate) latencies_us: Vec<f64>,
    pub(crate) elapsed: Duration,
}

impl Phase {
    /// Append another phase (same kind of load) to this one.
    pub(crate) fn extend(&mut self, other: Phase) {
        self.latencies_us.extend(other.latencies_us);
        self.elapsed += other.elapsed;
    }

    /// `{calls_per_s, p50_us, p99_us}`.
    pub(crate) fn figures(mut self) -> serde_json::Value {
        self.latencies_us.sort_by(f64::total_cmp);
        let calls = self.latencies_us.len() as f64;
        serde_json::json!({
            "calls": self.latencies_us.len(),
            "calls_per_s": calls / self.elapsed.as_secs_f64(),
            "p50_us": percentile(&self.latencies_us, 0.50),
            "p99_us": percentile(&self.latencies_us, 0.99),
        })
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The resident set of process `pid` (`VmRSS` in `/proc/<pid>/status`), in KiB.
pub(crate) fn rss_kib(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| io::Error::other("no VmRSS in /proc status"))
}

#[derive(Deserialize)]
struct Response<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    method: Option<&'a str>,
    result: Option<CallResult>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
struct Block {
    text: Option<String>,
}

/// What one line from the server was.
pub(crate) enum Line {
    /// The checked answer to call `id`.
    Echo(u64),
    /// A notification or request from the server (not counted).
    Other,
}

/// Check one message: a response must be `{"content":[{"type":"text","text":TEXT}]}`.
pub(crate) fn check(message: &[u8]) -> io::Result<Line> {
    let response: Response<'_> = serde_json::from_slice(message).map_err(|e| {
        io::Error::other(format!(
            "bad JSON from the server ({e}): {}",
            String::from_utf8_lossy(message)
        ))
    })?;
    if response.method.is_some() {
        return Ok(Line::Other);
    }
    let Some(id) = response.id else {
        return Err(io::Error::other(format!(
            "response without a numeric id: {}",
            String::from_utf8_lossy(message)
        )));
    };
    if let Some(error) = response.error {
        return Err(io::Error::other(format!("call {id} failed: {error}")));
    }
    match response.result.as_ref().map(|r| r.content.as_slice()) {
        Some([Block { text: Some(text) }]) if text == crate::TEXT => Ok(Line::Echo(id)),
        _ => Err(io::Error::other(format!(
            "call {id}: not the echo: {}",
            String::from_utf8_lossy(message)
        ))),
    }
}

/// The `tools/call echo` request with this id, as one line of JSON.
pub(crate) fn echo_request(id: u64, out: &mut Vec<u8>) {
    use std::io::Write;
    let _ = write!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        crate::TEXT
    );
}
