//! End-to-end benchmark of `tools/call echo` over stdio: a real server process, the MCP
//! handshake, then
//!
//! - **sequential** calls: send one request, wait for its response, repeat (one client
//!   thread, so no thread hand-off on the client side);
//! - **pipelined** calls: a writer thread keeps up to `window` requests outstanding while a
//!   reader thread takes the responses (in any order) and returns a credit per response.
//!
//! Each phase prints calls/s, p50, p99 and max latency (per call, from just before its
//! request is written to just after its response line is read) and the server's peak RSS
//! (`VmHWM` from `/proc/<pid>/status`: the high-water mark since the server started, so the
//! pipelined figure covers both phases).
//!
//! Run it (the `ferry` binary is built by cargo for the bench, with the bench profile):
//!
//! ```text
//! cargo bench -p ferry-mcp-cli --bench stdio_echo
//! FERRY_BENCH_SERVER="/path/to/server --flag" cargo bench -p ferry-mcp-cli --bench stdio_echo
//! ```
//!
//! Environment:
//!
//! - `FERRY_BENCH_SERVER`: the server command, split on whitespace (default: this build's
//!   `ferry serve`). It must be the server itself, not a wrapper script, or the RSS is the
//!   wrapper's.
//! - `FERRY_BENCH_LABEL`: the name printed on each line (default: the command's file name).
//! - `FERRY_BENCH_SEQ_N` (20000), `FERRY_BENCH_PIPE_N` (100000), `FERRY_BENCH_WINDOW` (64),
//!   `FERRY_BENCH_WARMUP` (1000 sequential calls before measuring, not counted).
//!
//! Without `--bench` on the command line (`cargo test --benches` runs bench targets that
//! way) it runs a smoke version of 100 calls per phase, so CI exercises the whole path fast.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

const PROTOCOL_VERSION: &str = "2025-06-18";

struct Config {
    label: String,
    program: String,
    args: Vec<String>,
    warmup: u64,
    sequential: u64,
    pipelined: u64,
    window: usize,
}

impl Config {
    fn from_env() -> Self {
        let bench = std::env::args().skip(1).any(|a| a == "--bench");
        let (mut program, mut args) = (
            env!("CARGO_BIN_EXE_ferry").to_owned(),
            vec!["serve".to_owned()],
        );
        if let Ok(cmd) = std::env::var("FERRY_BENCH_SERVER") {
            let mut words = cmd.split_whitespace().map(str::to_owned);
            program = words.next().expect("FERRY_BENCH_SERVER is empty");
            args = words.collect();
        }
        let label = std::env::var("FERRY_BENCH_LABEL").unwrap_or_else(|_| {
            let name = std::path::Path::new(&program).file_name();
            name.map_or(program.clone(), |n| n.to_string_lossy().into_owned())
        });
        let (warmup, sequential, pipelined) = if bench {
            (1_000, 20_000, 100_000)
        } else {
            (10, 100, 100)
        };
        Config {
            label,
            program,
            args,
            warmup: env_or("FERRY_BENCH_WARMUP", warmup),
            sequential: env_or("FERRY_BENCH_SEQ_N", sequential),
            pipelined: env_or("FERRY_BENCH_PIPE_N", pipelined),
            window: env_or("FERRY_BENCH_WINDOW", 64).max(1) as usize,
        }
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}={v:?}: {e}")),
        Err(_) => default,
    }
}

/// A response (or a server-initiated message, which has a `method` and is skipped).
#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    result: Option<CallResult<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

fn call_line(id: u64) -> Vec<u8> {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"echo #{id}"}}}}}}"#
    )
    .into_bytes();
    line.push(b'\n');
    line
}

/// Parses one line from the server: `None` for a server-initiated message, else the id of
/// a successful echo response (panics on anything else).
fn parse_reply(line: &[u8]) -> Option<u64> {
    let reply: Reply<'_> = serde_json::from_slice(line).unwrap_or_else(|e| {
        panic!(
            "bad line from the server ({e}): {}",
            String::from_utf8_lossy(line)
        )
    });
    if reply.method.is_some() {
        return None;
    }
    let fail = |why: &str| -> ! { panic!("{why}: {}", String::from_utf8_lossy(line)) };
    if reply.error.is_some() {
        fail("error response");
    }
    let id = reply
        .id
        .as_ref()
        .and_then(Value::as_u64)
        .unwrap_or_else(|| fail("response without a numeric id"));
    let result = reply
        .result
        .unwrap_or_else(|| fail("response without a result"));
    if result.is_error == Some(true) || result.content.len() != 1 {
        fail("not a single-block echo result");
    }
    let block = &result.content[0];
    let text = block.text.as_deref().unwrap_or_default();
    if block.kind != "text" || text.strip_prefix("echo #") != Some(&id.to_string()) {
        fail("echo text does not match the request");
    }
    Some(id)
}

struct Server {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl Server {
    fn spawn(config: &Config) -> Self {
        let mut child = Command::new(&config.program)
            .args(&config.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {:?}: {e}", config.program));
        let stdin = BufWriter::new(child.stdin.take().expect("stdin"));
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        serde_json::to_writer(&mut self.stdin, message).expect("write");
        self.stdin.write_all(b"\n").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next line from the server (panics on EOF).
    fn read_line(&mut self) -> &[u8] {
        self.line.clear();
        let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
        assert!(n > 0, "the server closed stdout");
        &self.line
    }

    /// `initialize` + `notifications/initialized`; returns the server's `serverInfo`.
    fn handshake(&mut self) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "ferry-stdio-echo-bench", "version": "0.1.0"},
            }}),
        );
        loop {
            let reply: Value = serde_json::from_slice(self.read_line()).expect("JSON");
            if reply.get("method").is_some() {
                continue;
            }
            assert_eq!(reply["id"], 0, "unexpected reply: {reply}");
            let result = &reply["result"];
            assert_eq!(
                result["protocolVersion"], PROTOCOL_VERSION,
                "initialize: {reply}"
            );
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            return result["serverInfo"].clone();
        }
    }

    /// `n` calls, one at a time; the latency of each.
    fn sequential(&mut self, n: u64) -> Phase {
        let mut latencies = Vec::with_capacity(n as usize);
        let start = Instant::now();
        for _ in 0..n {
            let id = self.next_id;
            self.next_id += 1;
            let request = call_line(id);
            let sent = Instant::now();
            self.stdin.write_all(&request).expect("write");
            self.stdin.flush().expect("flush");
            loop {
                let line = self.read_line();
                let done = Instant::now();
                if let Some(got) = parse_reply(line) {
                    assert_eq!(got, id, "response to a request not sent");
                    latencies.push(done - sent);
                    break;
                }
            }
        }
        Phase {
            elapsed: start.elapsed(),
            latencies,
        }
    }

    /// `n` calls with up to `window` outstanding: a writer thread and a reader thread.
    fn pipelined(&mut self, n: u64, window: usize) -> Phase {
        let base = self.next_id;
        self.next_id += n;
        let (stamp_tx, stamp_rx) = mpsc::channel::<Instant>();
        let (credit_tx, credit_rx) = mpsc::channel::<()>();
        let start = Instant::now();
        let latencies = thread::scope(|s| {
            let stdin = &mut self.stdin;
            s.spawn(move || {
                let mut credits = window;
                for id in base..base + n {
                    if credits == 0 {
                        // The reader hung up only if it panicked; it reports that itself.
                        if credit_rx.recv().is_err() {
                            return;
                        }
                        credits = 1;
                    }
                    credits -= 1;
                    let request = call_line(id);
                    // The stamp goes first, so the reader always finds it.
                    stamp_tx.send(Instant::now()).expect("reader alive");
                    stdin.write_all(&request).expect("write");
                    stdin.flush().expect("flush");
                }
            });
            let stdout = &mut self.stdout;
            let reader = s.spawn(move || {
                let mut sent: Vec<Instant> = Vec::with_capacity(n as usize);
                let mut seen = vec![false; n as usize];
                let mut latencies = Vec::with_capacity(n as usize);
                let mut line = Vec::new();
                while (latencies.len() as u64) < n {
                    line.clear();
                    let read = stdout.read_until(b'\n', &mut line).expect("read");
                    assert!(read > 0, "the server closed stdout");
                    let done = Instant::now();
                    let Some(id) = parse_reply(&line) else {
                        continue;
                    };
                    let k = id
                        .checked_sub(base)
                        .filter(|&k| k < n)
                        .unwrap_or_else(|| panic!("response to a request not sent: {id}"))
                        as usize;
                    assert!(
                        !std::mem::replace(&mut seen[k], true),
                        "two responses to {id}"
                    );
                    while sent.len() <= k {
                        sent.push(stamp_rx.recv().expect("a stamp per request"));
                    }
                    latencies.push(done - sent[k]);
                    let _ = credit_tx.send(());
                }
                latencies
            });
            reader.join().expect("reader thread")
        });
        Phase {
            elapsed: start.elapsed(),
            latencies,
        }
    }

    /// The server's peak resident set (`VmHWM`), in KiB.
    fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Closes stdin and waits for the server to exit (kills it after 5 s).
    fn finish(self) {
        let Server {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        eprintln!("the server did not exit on stdin EOF; killing it");
        let _ = child.kill();
        let _ = child.wait();
    }
}

struct Phase {
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Phase {
    fn report(mut self, label: &str, mode: &str, rss_kib: Option<u64>) {
        let n = self.latencies.len();
        self.latencies.sort_unstable();
        // Nearest rank: the smallest latency with at least p% of calls at or below it.
        let pct = |p: usize| self.latencies[(n * p).div_ceil(100).max(1) - 1].as_micros();
        let rate = n as f64 / self.elapsed.as_secs_f64();
        let rss = rss_kib.map_or("unknown".to_owned(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        });
        println!(
            "{label} {mode}: {n} calls, {rate:.0} calls/s, p50 {} us, p99 {} us, max {} us, peak RSS {rss}",
            pct(50),
            pct(99),
            self.latencies[n - 1].as_micros(),
        );
    }
}

fn main() {
    let config = Config::from_env();
    let mut server = Server::spawn(&config);
    let info = server.handshake();
    let command = std::iter::once(&config.program)
        .chain(&config.args)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    println!(
        "{}: {command} (pid {}), serverInfo {info}, protocol {PROTOCOL_VERSION}, window {}",
        config.label,
        server.child.id(),
        config.window,
    );
    if config.warmup > 0 {
        server.sequential(config.warmup);
    }
    if config.sequential > 0 {
        let phase = server.sequential(config.sequential);
        phase.report(&config.label, "sequential", server.peak_rss_kib());
    }
    if config.pipelined > 0 {
        let phase = server.pipelined(config.pipelined, config.window);
        phase.report(&config.label, "pipelined", server.peak_rss_kib());
    }
    server.finish();
}
