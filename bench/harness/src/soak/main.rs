//! The soak: mixed MCP traffic against `ferry serve` for a long time, with the servers'
//! resident memory, open descriptors, threads and runtime tasks sampled as it runs.
//!
//! ```text
//! soak [--seconds N] [--sample N] [--warmup N] [--workers N] [--pause-ms N]
//!      [--session-idle N] -- FERRY_BINARY
//! ```
//!
//! It starts two servers of its own: `ferry serve --http` (Streamable HTTP, sessions
//! expiring after `--session-idle` seconds) and `ferry serve` on stdio. `--workers` HTTP
//! clients then take turns through every kind of traffic (see [`http::Op`]): session-era
//! sessions closed or abandoned, calls cancelled mid-stream, connections dropped
//! mid-stream, streams resumed with `Last-Event-ID`, GET streams, stateless calls with an
//! `input_required` round, `subscriptions/listen`; one stdio client does the same kinds
//! that stdio has. Every `--sample` seconds both processes are read (`/proc`, and the
//! `server://info` resource for sessions and tasks). When the time is up the traffic
//! stops, the abandoned sessions are left to expire, and a last reading is taken.
//!
//! Prints one JSON object on stdout: the operations per kind (done, failed, the first
//! failures), a reading before the traffic, every sample, the reading after the traffic,
//! and per figure whether it
//! stayed flat after the warm-up (the mean of the last third of the samples within 5% of
//! the mean of the first third; runtime tasks per live session, as sessions hold tasks
//! while they live), and whether the servers came back to their idle figures once the
//! traffic stopped (`quiescent`: no more sessions, tasks or descriptors than before it).
//! Linux only (`/proc`).

#![forbid(unsafe_code)]

mod http;
mod sample;
mod stdio;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How far a figure may rise over the soak and still count as flat.
const FLAT: f64 = 0.05;

pub(crate) struct Options {
    seconds: u64,
    sample: u64,
    warmup: u64,
    workers: usize,
    pause: Duration,
    session_idle: u64,
}

/// Operations done and failed, per kind.
#[derive(Default)]
pub(crate) struct Tally {
    kinds: Mutex<BTreeMap<&'static str, Count>>,
}

/// Done, failed, and the first failures' messages.
type Count = (u64, u64, Vec<String>);

impl Tally {
    pub(crate) fn record(&self, kind: &'static str, outcome: Result<(), String>) {
        let mut kinds = self.kinds.lock().unwrap();
        let entry = kinds.entry(kind).or_default();
        match outcome {
            Ok(()) => entry.0 += 1,
            Err(e) => {
                entry.1 += 1;
                if entry.2.len() < 5 {
                    entry.2.push(e);
                }
            }
        }
    }

    fn json(&self) -> Value {
        let kinds = self.kinds.lock().unwrap();
        kinds
            .iter()
            .map(|(kind, (done, failed, first))| {
                (
                    kind.to_string(),
                    json!({"done": done, "failed": failed, "first_failures": first}),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        usage("missing `-- FERRY_BINARY`");
    };
    let (head, rest) = (&args[..split], &args[split + 1..]);
    let [ferry] = rest else {
        usage("give exactly one binary after --");
    };
    let mut flags = HashMap::new();
    let mut iter = head.iter();
    while let Some(flag) = iter.next() {
        let Some(name) = flag.strip_prefix("--") else {
            usage(&format!("unexpected {flag}"));
        };
        let Some(value) = iter.next() else {
            usage(&format!("{flag} needs a value"));
        };
        let value: u64 = value
            .parse()
            .unwrap_or_else(|_| usage(&format!("{flag}: not a number")));
        flags.insert(name.to_owned(), value);
    }
    let mut flag = |name: &str, default: u64| flags.remove(name).unwrap_or(default);
    let options = Options {
        seconds: flag("seconds", 3600),
        sample: flag("sample", 60).max(1),
        warmup: flag("warmup", 300),
        workers: flag("workers", 8).max(1) as usize,
        pause: Duration::from_millis(flag("pause-ms", 10)),
        session_idle: flag("session-idle", 30).max(1),
    };
    if let Some(unknown) = flags.keys().next() {
        usage(&format!("unknown option --{unknown}"));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match runtime.block_on(run(ferry, &options)) {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(1);
        }
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "soak: {problem}\nusage: soak [--seconds N] [--sample N] [--warmup N] [--workers N] \
         [--pause-ms N] [--session-idle N] -- FERRY_BINARY"
    );
    std::process::exit(2);
}

async fn run(ferry: &str, options: &Options) -> Result<Value, String> {
    let mut http_server = http::Server::start(ferry, options.session_idle).await?;
    let mut stdio_server = stdio::Server::start(ferry)?;
    let mut stdio_client = stdio_server.client()?;
    stdio_client.initialize().await?;
    stdio_client.refresh_info().await?;
    let stdio_info = stdio_client.info.clone();
    // Before any traffic: what the servers hold idle.
    let (http, stdio) = reading(&http_server, &stdio_server, &stdio_info).await;
    let baseline = json!({"http": http, "stdio": stdio});

    let tally = Arc::new(Tally::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(options.seconds);

    let mut traffic = Vec::new();
    for worker in 0..options.workers {
        traffic.push(tokio::spawn(http::worker(
            http_server.addr.clone(),
            worker,
            deadline,
            options.pause,
            Arc::clone(&tally),
        )));
    }
    let stdio_traffic = tokio::spawn(stdio::worker(
        stdio_client,
        deadline,
        options.pause,
        Arc::clone(&tally),
    ));

    let mut samples = Vec::new();
    loop {
        let at = started.elapsed().as_secs();
        let (http, stdio) = reading(&http_server, &stdio_server, &stdio_info).await;
        samples.push(json!({"t": at, "http": http, "stdio": stdio}));
        eprintln!("soak: {}", samples.last().unwrap());
        let next = started + Duration::from_secs((at / options.sample + 1) * options.sample);
        if next > deadline {
            break;
        }
        tokio::time::sleep_until(next.into()).await;
    }
    tokio::time::sleep_until(deadline.into()).await;
    for task in traffic {
        let _ = task.await;
    }
    // Kept until the last reading: the stdio server ends when its stdin closes.
    let mut stdio_client = stdio_traffic.await.map_err(|e| e.to_string())?;

    // The abandoned sessions expire (swept within the idle timeout), then the last look.
    tokio::time::sleep(Duration::from_secs(options.session_idle * 2 + 2)).await;
    let _ = stdio_client.refresh_info().await;
    let (http, stdio) = reading(&http_server, &stdio_server, &stdio_info).await;
    let after = json!({"http": http, "stdio": stdio});
    let settled: Vec<&Value> = samples
        .iter()
        .filter(|s| s["t"].as_u64().unwrap_or(0) >= options.warmup)
        .collect();
    let mut flat = serde_json::Map::new();
    let mut all_flat = true;
    for server in ["http", "stdio"] {
        for figure in sample::FIGURES {
            let verdict = flatness(&settled, server, figure);
            all_flat &= verdict["flat"] != false;
            flat.insert(format!("{server}.{figure}"), verdict);
        }
    }
    let quiescent = quiescence(&baseline, &after);
    http_server.stop();
    stdio_server.stop();
    Ok(json!({
        "seconds": options.seconds,
        "workers": options.workers,
        "warmup": options.warmup,
        "session_idle": options.session_idle,
        "operations": tally.json(),
        "baseline": baseline,
        "samples": samples,
        "after": after,
        "flat": flat,
        "all_flat": all_flat,
        "quiescent": quiescent,
    }))
}

/// Whether each server, once the traffic stopped and the abandoned sessions expired, holds
/// no more than before the traffic: sessions (the reading's own aside), runtime tasks
/// (one more allowed: the reading's), descriptors (two more: the reading's connection).
/// What a request or a session leaves behind shows here, whatever the traffic's shape.
fn quiescence(before: &Value, after: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let mut all = true;
    for server in ["http", "stdio"] {
        let figure = |reading: &Value, name: &str| reading[server][name].as_u64();
        let checks = [
            ("sessions", 1, true),
            ("tasks", 1, false),
            ("fds", 2, false),
        ];
        let mut verdict = serde_json::Map::new();
        for (name, slack, absolute) in checks {
            let (was, is) = (figure(before, name), figure(after, name));
            let ok = match (was, is) {
                (_, Some(is)) if absolute => is <= slack,
                (Some(was), Some(is)) => is <= was + slack,
                _ => false,
            };
            all &= ok;
            verdict.insert(
                name.to_owned(),
                json!({"before": was, "after": is, "ok": ok}),
            );
        }
        out.insert(server.to_owned(), Value::Object(verdict));
    }
    out.insert("all".to_owned(), json!(all));
    Value::Object(out)
}

/// Both servers read five times, 200 ms apart: the median of each figure.
async fn reading(
    http_server: &http::Server,
    stdio_server: &stdio::Server,
    stdio_info: &Mutex<Option<Value>>,
) -> (Value, Value) {
    let (mut http, mut stdio) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        http.push(sample::read(
            http_server.pid,
            http::info(&http_server.addr).await.ok(),
        ));
        let info = stdio_info.lock().unwrap().clone();
        stdio.push(sample::read(stdio_server.pid, info));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    (sample::median(&http), sample::median(&stdio))
}

/// Whether `server.figure` stayed flat over the samples taken after the warm-up: the mean
/// of the last third against the mean of the first third (null with fewer than three).
fn flatness(samples: &[&Value], server: &str, figure: &str) -> Value {
    let values: Vec<f64> = samples
        .iter()
        .filter_map(|s| sample::figure(&s[server], figure))
        .collect();
    if values.len() < 3 {
        return json!({"flat": null, "samples": values.len()});
    }
    let third = values.len() / 3;
    let mean = |part: &[f64]| part.iter().sum::<f64>() / part.len() as f64;
    let first = mean(&values[..third]);
    let last = mean(&values[values.len() - third..]);
    let growth = if first > 0.0 {
        (last - first) / first
    } else {
        0.0
    };
    json!({
        "first_third": first,
        "last_third": last,
        "growth_pct": (growth * 1000.0).round() / 10.0,
        "flat": growth <= FLAT,
    })
}

/// The retry of a stateless `elicit` call whose `first` answer asked for input: every
/// input request accepted with the same form.
pub(crate) fn answer_elicitation(mut call: Value, first: &Value) -> Result<Value, String> {
    if first["resultType"] != "input_required" {
        return Err(format!("elicit: {first}"));
    }
    let mut responses = serde_json::Map::new();
    for key in first["inputRequests"].as_object().into_iter().flatten() {
        responses.insert(
            key.0.clone(),
            json!({"action": "accept", "content": {"name": "Ada", "colour": "blue"}}),
        );
    }
    call["inputResponses"] = responses.into();
    call["requestState"] = first["requestState"].clone();
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(points: &[(u64, u64)]) -> Vec<Value> {
        points
            .iter()
            .map(|&(tasks, sessions)| json!({"http": {"tasks": tasks, "sessions": sessions}}))
            .collect()
    }

    fn flat(points: &[(u64, u64)]) -> Value {
        let samples = samples(points);
        let refs: Vec<&Value> = samples.iter().collect();
        flatness(&refs, "http", "tasks_per_session")["flat"].clone()
    }

    /// Tasks that follow the live sessions (three each, as the hour's soak saw) are flat;
    /// tasks that grow while the sessions do not are a leak.
    #[test]
    fn tasks_are_judged_per_live_session() {
        let following = [
            (900, 300),
            (870, 290),
            (1050, 350),
            (1480, 492),
            (1490, 495),
            (1470, 490),
        ];
        assert_eq!(flat(&following), json!(true));
        let leaking = [
            (900, 300),
            (920, 300),
            (980, 300),
            (1100, 300),
            (1200, 300),
            (1300, 300),
        ];
        assert_eq!(flat(&leaking), json!(false));
    }

    #[test]
    fn quiescence_compares_the_idle_figures() {
        let idle = |sessions: u64, tasks: u64, fds: u64| {
            let reading = json!({"sessions": sessions, "tasks": tasks, "fds": fds});
            json!({"http": reading, "stdio": reading})
        };
        let before = idle(1, 3, 13);
        assert_eq!(quiescence(&before, &idle(1, 4, 15))["all"], json!(true));
        assert_eq!(quiescence(&before, &idle(1, 9, 13))["all"], json!(false));
        assert_eq!(quiescence(&before, &idle(40, 3, 13))["all"], json!(false));
    }
}
