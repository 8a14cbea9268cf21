//! What an idle session-era HTTP session costs, and proof that abandoned sessions expire:
//! open N sessions (`initialize` only, never DELETEd) through the router in-process (tower
//! `oneshot`, no sockets: the cost measured is the session's, not the TCP connection's),
//! read this process's resident memory (`VmRSS`), wait for the idle timeout to end them all,
//! read it again; several rounds, so that memory the allocator keeps for reuse is told apart
//! from memory that grows (a leak would add to every round).
//!
//!     cargo run --release -p ferry-mcp --features http-server --example http_session_memory -- 100000 2
//!
//! (Sessions, rounds; the idle timeout is 30 s, so a round takes about a minute.)
//!
//! Exits with failure when the sessions did not all expire. Linux only (`/proc/self/status`).

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use ferry::http::HttpConfig;
use ferry::server::Server;
use futures_util::StreamExt;
use tower::ServiceExt;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let sessions: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    // Longer than opening them all takes, so that every session is live at the peak.
    let idle = Duration::from_secs(30);
    let server = Server::builder("memory", "1.0.0").build();
    let config = HttpConfig::default()
        .max_sessions(sessions + 1000)
        .session_idle_timeout(idle);
    let router = ferry::http::router(server.clone(), config);
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}"#;

    // Warm up (the runtime, the allocator's arenas), then the baseline.
    let open = |count: usize| {
        let router = router.clone();
        futures_util::stream::iter(0..count)
            .map(move |_| {
                let request = Request::post("/mcp")
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(Body::from(body))
                    .expect("a request");
                router.clone().oneshot(request)
            })
            .buffer_unordered(64)
            .filter(|r| std::future::ready(r.as_ref().is_ok_and(|r| r.status() == 200)))
            .count()
    };
    // (The warm-up sessions stay in the baseline until they expire with the first round.)
    open(1000).await;
    let before = rss_kib();

    let mut failed = false;
    for round in 1..=rounds {
        let started = Instant::now();
        let opened = open(sessions).await;
        let took = started.elapsed();
        let live = server.stats().connections_open;
        let with_sessions = rss_kib();
        let per_session = with_sessions.saturating_sub(before) as f64 / opened.max(1) as f64;
        println!("round {round}: opened {opened} sessions in {took:.1?} ({live} live engines)");
        println!(
            "  VmRSS before: {before} KiB; with the idle sessions: {with_sessions} KiB ({per_session:.2} KiB per session)"
        );
        let expired = wait_for_expiry(&server, idle).await;
        let after = rss_kib();
        println!(
            "  after expiry ({:.1?} after the idle timeout): {} live engines, VmRSS {after} KiB ({:+} KiB against the baseline)",
            expired.saturating_sub(idle),
            server.stats().connections_open,
            after as i64 - before as i64
        );
        failed |= opened != sessions || server.stats().connections_open != 0;
    }
    if failed {
        eprintln!("FAILED: not every session opened or expired");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

/// Wait until no session engine is left (at most four idle timeouts); how long it took.
async fn wait_for_expiry(server: &Server, idle: Duration) -> Duration {
    let started = Instant::now();
    while server.stats().connections_open > 0
        && started.elapsed() < idle * 4 + Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    started.elapsed()
}
