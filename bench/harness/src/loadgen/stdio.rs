//! The stdio figures of one server: cold start (spawn to the `initialize` response; the
//! median of `starts` fresh processes besides the measured one), sequential calls (one in flight), pipelined calls (a window in flight; the
//! writer batches requests whenever several slots are free), and the server's RSS just after
//! its handshake and once it has answered `rss_after` calls.
//!
//! Pinning is the caller's business: run `taskset -c 0 loadgen ...` and the server inherits
//! the affinity.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::measure::{self, Line, Phase};

/// Call counts.
pub(crate) struct Options {
    pub(crate) sequential: usize,
    pub(crate) pipelined: usize,
    pub(crate) window: usize,
    pub(crate) rss_after: usize,
    pub(crate) warmup: usize,
    pub(crate) starts: usize,
}

struct Server {
    child: Child,
    /// `None` only while a pipelined phase's writer thread holds it.
    input: Option<BufWriter<ChildStdin>>,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl Server {
    fn input(&mut self) -> &mut BufWriter<ChildStdin> {
        self.input
            .as_mut()
            .expect("the writer thread gave the input back")
    }

    fn read_message(&mut self) -> io::Result<&[u8]> {
        loop {
            self.line.clear();
            if self.output.read_until(b'\n', &mut self.line)? == 0 {
                return Err(io::Error::other("the server closed stdout"));
            }
            if !self.line.iter().all(u8::is_ascii_whitespace) {
                return Ok(&self.line);
            }
        }
    }
}

pub(crate) fn run(command: &[String], options: &Options) -> io::Result<serde_json::Value> {
    // A cold start is short enough that one sample is mostly noise: start the server
    // several times.
    let mut starts = Vec::with_capacity(options.starts + 1);
    for _ in 0..options.starts {
        let (server, took) = start(command)?;
        starts.push(took);
        stop(server)?;
    }
    let (mut server, took) = start(command)?;
    starts.push(took);
    let handshake_rss = measure::rss_kib(server.child.id())?;
    starts.sort();
    let cold_start = starts[starts.len() / 2];

    server
        .input()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;

    sequential(&mut server, options.warmup)?;
    let seq = sequential(&mut server, options.sequential)?;
    let before_rss = options
        .rss_after
        .saturating_sub(options.warmup + options.sequential);
    let first = options.pipelined.min(before_rss);
    let mut pipe = pipelined(&mut server, first, options.window)?;
    let calls_before_rss = options.warmup + options.sequential + first;
    let rss = measure::rss_kib(server.child.id())?;
    pipe.extend(pipelined(
        &mut server,
        options.pipelined - first,
        options.window,
    )?);

    stop(server)?;
    Ok(serde_json::json!({
        "cold_start_ms": cold_start.as_secs_f64() * 1e3,
        "cold_starts": starts.len(),
        "sequential": seq.figures(),
        "pipelined": pipe.figures(),
        "window": options.window,
        "rss_kib": rss,
        "rss_after_calls": calls_before_rss,
        "handshake_rss_kib": handshake_rss,
    }))
}

/// Spawn the server and `initialize` it: the server and the time to its answer.
fn start(command: &[String]) -> io::Result<(Server, Duration)> {
    let started = Instant::now();
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let input = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped"));
    let output = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped"));
    let mut server = Server {
        child,
        input: Some(input),
        output,
        line: Vec::new(),
        next_id: 1,
    };

    server.input().write_all(
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loadgen","version":"0.1.0"}}}"#,
    )?;
    server.input().write_all(b"\n")?;
    server.input().flush()?;
    let answer = server.read_message()?;
    let took = started.elapsed();
    if !answer.windows(8).any(|w| w == b"\"result\"") {
        return Err(io::Error::other(format!(
            "initialize failed: {}",
            String::from_utf8_lossy(answer)
        )));
    }
    Ok((server, took))
}

/// Close the server's input (it should exit); kill it if it has not within 5 s.
fn stop(mut server: Server) -> io::Result<()> {
    server.input = None;
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            server.child.kill()?;
            server.child.wait()?;
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// One call at a time.
fn sequential(server: &mut Server, calls: usize) -> io::Result<Phase> {
    let mut phase = Phase {
        latencies_us: Vec::with_capacity(calls),
        ..Phase::default()
    };
    let mut request = Vec::with_capacity(256);
    let started = Instant::now();
    for _ in 0..calls {
        let id = server.next_id;
        server.next_id += 1;
        request.clear();
        measure::echo_request(id, &mut request);
        request.push(b'\n');
        let sent = Instant::now();
        server.input().write_all(&request)?;
        server.input().flush()?;
        loop {
            match measure::check(server.read_message()?)? {
                Line::Echo(got) if got == id => break,
                Line::Echo(got) => {
                    return Err(io::Error::other(format!("expected id {id}, got {got}")));
                }
                Line::Other => {}
            }
        }
        phase.latencies_us.push(sent.elapsed().as_secs_f64() * 1e6);
    }
    phase.elapsed = started.elapsed();
    Ok(phase)
}

/// `window` calls in flight: a writer thread sends while the reader (this thread) frees
/// slots; the writer flushes only when it has to wait, so free slots are filled in one write.
fn pipelined(server: &mut Server, calls: usize, window: usize) -> io::Result<Phase> {
    if calls == 0 {
        return Ok(Phase::default());
    }
    let first_id = server.next_id;
    server.next_id += calls as u64;
    let base = Instant::now();
    let sent_ns: Arc<Vec<AtomicU64>> = Arc::new((0..calls).map(|_| AtomicU64::new(0)).collect());
    let (freed, slots) = mpsc::channel::<()>();
    let mut input = server.input.take().expect("input present");
    let writer = {
        let sent_ns = Arc::clone(&sent_ns);
        std::thread::spawn(move || -> io::Result<BufWriter<ChildStdin>> {
            let mut in_flight = 0;
            let mut request = Vec::with_capacity(256);
            for n in 0..calls {
                while slots.try_recv().is_ok() {
                    in_flight -= 1;
                }
                if in_flight == window {
                    input.flush()?;
                    slots
                        .recv()
                        .map_err(|_| io::Error::other("reader stopped"))?;
                    in_flight -= 1;
                }
                request.clear();
                measure::echo_request(first_id + n as u64, &mut request);
                request.push(b'\n');
                sent_ns[n].store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                input.write_all(&request)?;
                in_flight += 1;
            }
            input.flush()?;
            Ok(input)
        })
    };
    let mut phase = Phase {
        latencies_us: Vec::with_capacity(calls),
        ..Phase::default()
    };
    let mut received = 0;
    let outcome = (|| -> io::Result<()> {
        while received < calls {
            let Line::Echo(id) = measure::check(server.read_message()?)? else {
                continue;
            };
            let now = base.elapsed().as_nanos() as u64;
            let n = id
                .checked_sub(first_id)
                .filter(|n| (*n as usize) < calls)
                .ok_or_else(|| io::Error::other(format!("unexpected id {id}")))?;
            let sent = sent_ns[n as usize].load(Ordering::Relaxed);
            phase
                .latencies_us
                .push(now.saturating_sub(sent) as f64 / 1e3);
            received += 1;
            let _ = freed.send(());
        }
        Ok(())
    })();
    phase.elapsed = base.elapsed();
    drop(freed);
    let input = writer
        .join()
        .map_err(|_| io::Error::other("writer panicked"))?;
    outcome?;
    server.input = Some(input?);
    Ok(phase)
}
