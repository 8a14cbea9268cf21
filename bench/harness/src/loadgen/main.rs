//! The load generator: speaks raw JSON-RPC to one MCP server and prints one JSON object of
//! figures on stdout. It never links Ferry (or any MCP library): requests are fixed text,
//! responses are checked with serde_json.
//!
//! ```text
//! loadgen stdio  [--seq N] [--pipe N] [--window N] [--rss-after N] [--starts N] -- server args...
//! loadgen http   [--sessions N] [--calls N] [--idle N] [--era session|stateless|both] -- server args...
//! ```
//!
//! For `http`, the server's arguments may contain `{addr}` (replaced by `127.0.0.1:PORT`) or
//! `{port}`; a free port is picked.

#![forbid(unsafe_code)]

mod http;
mod measure;
mod stdio;

use std::collections::HashMap;

/// The text every `echo` call sends (and expects back).
pub(crate) const TEXT: &str = "the quick brown fox jumps over the lazy dog";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        usage("missing `-- server args...`");
    };
    let (head, command) = (&args[..split], &args[split + 1..]);
    if command.is_empty() {
        usage("empty server command");
    }
    let Some((mode, options)) = head.split_first() else {
        usage("missing mode");
    };
    let mut flags = HashMap::new();
    let mut rest = options.iter();
    while let Some(flag) = rest.next() {
        let Some(name) = flag.strip_prefix("--") else {
            usage(&format!("unexpected {flag}"));
        };
        let Some(value) = rest.next() else {
            usage(&format!("{flag} needs a value"));
        };
        flags.insert(name.to_owned(), value.clone());
    }
    let number = |name: &str, default: usize| -> usize {
        flags.get(name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("--{name}: not a number")))
        })
    };
    let result = match mode.as_str() {
        "stdio" => stdio::run(
            command,
            &stdio::Options {
                sequential: number("seq", 10_000),
                pipelined: number("pipe", 40_000),
                window: number("window", 32),
                rss_after: number("rss-after", 20_000),
                warmup: number("warmup", 200),
                starts: number("starts", 10),
            },
        ),
        "http" => http::run(
            command,
            &http::Options {
                sessions: number("sessions", 50),
                calls: number("calls", 20_000),
                idle: number("idle", 1000),
                idle_settle: number("idle-settle", 0),
                era: flags.get("era").cloned().unwrap_or_else(|| "both".into()),
            },
        ),
        other => usage(&format!("unknown mode {other}")),
    };
    match result {
        Ok(figures) => println!("{figures}"),
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::exit(1);
        }
    }
}

fn usage(problem: &str) -> ! {
    eprintln!("loadgen: {problem}\nusage: loadgen stdio|http [--flag value]... -- server args...");
    std::process::exit(2);
}
