//! `results.md`: the set-up, the peers' versions, the figures (medians) and the targets.

use std::fmt::Write;

use serde_json::Value;

use crate::Runs;

/// Servers measured on stdio and on HTTP, with the names the tables show.
pub(crate) const STDIO: &[(&str, &str)] = &[
    ("floor", "floor (serde_json only)"),
    ("floor-tokio", "floor on tokio (current_thread)"),
    ("ferry", "Ferry"),
    (
        "ferry-serve-stdio",
        "`ferry serve` (the command's reference server)",
    ),
    ("rmcp-stdio", "rmcp `stdio()`"),
    ("rmcp-pipes", "rmcp `stdio_pipes()`"),
    ("ts", "TypeScript SDK"),
    ("python", "Python SDK"),
];

/// See [`STDIO`].
pub(crate) const HTTP: &[(&str, &str)] = &[
    ("floor-http", "floor (hyper, stateless)"),
    ("ferry-http", "Ferry (sse_responses)"),
    ("ferry-http-json", "Ferry (default)"),
    ("ferry-serve", "`ferry serve` (sessions in memory)"),
    ("ferry-redis", "`ferry serve --redis` (sessions in Redis)"),
    ("ferry-cluster", "3 × `ferry serve --redis` behind nginx"),
    ("rmcp-http", "rmcp"),
    ("ts-http", "TypeScript SDK"),
    ("python-http", "Python SDK"),
];

fn cell(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.digits$}"))
}

pub(crate) fn markdown(runs: &Runs, env: &Value) -> String {
    let mut md = String::new();
    let s = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let _ = writeln!(md, "# Benchmark results\n");
    let _ = writeln!(
        md,
        "Written by `bench/run{}` on {} (UTC). Machine: {} ({} CPUs), {}; load average before the run: {}. \
         Every figure is the median of {} runs per server, taken per column; all servers were measured \
         in this one sitting, taking turns. Latencies in µs.\n",
        if env["mode"] == "smoke" {
            " --smoke"
        } else {
            ""
        },
        s(&env["date"]),
        s(&env["cpu"]),
        s(&env["cpus"]),
        s(&env["kernel"]),
        s(&env["load"]),
        s(&env["runs"]),
    );
    if env["mode"] == "smoke" {
        let _ = writeln!(
            md,
            "**Smoke run**: a few hundred calls per server, debug builds; the figures mean nothing.\n"
        );
    }
    let _ = writeln!(
        md,
        "## Peers\n\n| server | what runs | version |\n|---|---|---|"
    );
    for peer in env["peers"].as_array().into_iter().flatten() {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            s(&peer["server"]),
            s(&peer["what"]),
            s(&peer["version"])
        );
    }
    for (kind, title) in [
        (
            "stdio-pinned",
            "stdio, client and server pinned to one CPU (`taskset -c 0`)",
        ),
        ("stdio", "stdio, unpinned"),
    ] {
        let _ = writeln!(
            md,
            "\n## {title}\n\n| server | cold start (ms) | sequential calls/s | p50 | p99 | pipelined calls/s ({} in flight) | p50 | p99 | RSS after {} calls (MiB) |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|",
            runs.median("ferry", kind, "window")
                .map_or("32".into(), |w| format!("{w:.0}")),
            runs.median("ferry", kind, "rss_after_calls")
                .map_or("20k".into(), |w| format!("{w:.0}")),
        );
        for (server, name) in STDIO {
            if runs.count(server, kind) == 0 {
                continue;
            }
            let m = |path: &str| runs.median(server, kind, path);
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(m("cold_start_ms"), 1),
                cell(m("sequential/calls_per_s"), 0),
                cell(m("sequential/p50_us"), 0),
                cell(m("sequential/p99_us"), 0),
                cell(m("pipelined/calls_per_s"), 0),
                cell(m("pipelined/p50_us"), 0),
                cell(m("pipelined/p99_us"), 0),
                cell(m("rss_kib").map(|k| k / 1024.0), 1),
            );
        }
    }
    let _ = writeln!(
        md,
        "\n## Streamable HTTP, 50 sessions, one call in flight per session\n\n\
         *answers*: how the session era's `tools/call` POSTs were answered (an SSE stream, or one \
         JSON object). Ferry answers with JSON when the response is the first thing to send, \
         unless `HttpConfig::sse_responses` is on (the row \
         `Ferry (sse_responses)`, which the targets use).\n\n\
         | server | session era req/s | p50 | p99 | answers | stateless era (2026-07-28) req/s | p50 | p99 | KiB per idle session (1000) |\n|---|--:|--:|--:|---|--:|--:|--:|--:|"
    );
    for (server, name) in HTTP {
        if runs.count(server, "http") == 0 {
            continue;
        }
        let m = |path: &str| runs.median(server, "http", path);
        let stateless = if let Some(why) = runs.text(server, "http", "stateless/unsupported") {
            let why: String = why.chars().take(60).collect();
            format!(
                "not served ({}) | | ",
                why.replace('|', "/").replace('\n', " ")
            )
        } else {
            format!(
                "{} | {} | {}",
                cell(m("stateless/calls_per_s"), 0),
                cell(m("stateless/p50_us"), 0),
                cell(m("stateless/p99_us"), 0)
            )
        };
        let idle = if *server == "floor-http" {
            "— (no sessions)".into()
        } else if *server == "ferry-cluster" {
            "— (4 processes)".into()
        } else {
            cell(m("idle/kib_per_session"), 1)
        };
        let answers = match (m("session/sse_answers"), m("session/calls")) {
            (Some(sse), Some(calls)) if sse >= calls => "SSE".to_owned(),
            (Some(0.0), Some(_)) => "JSON".to_owned(),
            (Some(sse), Some(calls)) => format!("{:.0}% SSE", 100.0 * sse / calls),
            _ => "—".to_owned(),
        };
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {answers} | {stateless} | {idle} |",
            cell(m("session/calls_per_s"), 0),
            cell(m("session/p50_us"), 0),
            cell(m("session/p99_us"), 0),
        );
    }
    md.push_str(&targets(runs));
    md.push_str(
        "\nWhere the time goes (callgrind instructions per call, Ferry and the floor), why the \
         missed targets are missed and what was tried: [profile.md](profile.md), kept by hand \
         beside this generated file.\n",
    );
    md.push_str("\n![chart](chart.png)\n");
    md
}

/// Issue 7's targets, as ratios in this run: for each round, Ferry's figure over the other
/// server's from the same round (measured back to back), and the median of those.
fn targets(runs: &Runs) -> String {
    let mut md = String::from(
        "\n## Targets (Ferry, ratios in this run)\n\nEach ratio is the median over the rounds of \
         Ferry's figure divided by the other server's in the same round (measured back to \
         back, seconds apart), so that a host whose speed drifts over minutes moves both \
         alike; the tables above are medians per server.\n\n\
         | target | pinned | unpinned | met |\n|---|--:|--:|---|\n",
    );
    let ratio = |kind: &str, path: &str, other: &str| -> Option<f64> {
        runs.paired_ratio("ferry", other, kind, path)
    };
    let mut row = |name: &str,
                   pinned: Option<f64>,
                   unpinned: Option<f64>,
                   ok: &dyn Fn(f64) -> bool,
                   unit: &str| {
        if name.starts_with('*') {
            let _ = writeln!(md, "| {name} | | | |"); // a heading row
            return;
        }
        let show = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| format!("{v:.2}{unit}"));
        let met = match (pinned.map(ok), unpinned.map(ok)) {
            (Some(true), Some(true)) | (Some(true), None) | (None, Some(true)) => "yes",
            (Some(true), Some(false)) => "pinned only",
            (Some(false), Some(true)) => "unpinned only",
            (None, None) => "—",
            _ => "**no**",
        };
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {met} |",
            show(pinned),
            show(unpinned)
        );
    };
    for (name, path, other, min) in [
        (
            "stdio pipelined >= 2.0x rmcp `stdio_pipes()`",
            "pipelined/calls_per_s",
            "rmcp-pipes",
            2.0,
        ),
        (
            "stdio pipelined >= 0.6x floor",
            "pipelined/calls_per_s",
            "floor",
            0.6,
        ),
        (
            "stdio sequential >= 0.8x floor",
            "sequential/calls_per_s",
            "floor",
            0.8,
        ),
    ] {
        row(
            name,
            ratio("stdio-pinned", path, other),
            ratio("stdio", path, other),
            &|v| v >= min,
            "x",
        );
    }
    row(
        "cold start <= 1.2x floor",
        ratio("stdio-pinned", "cold_start_ms", "floor"),
        ratio("stdio", "cold_start_ms", "floor"),
        &|v| v <= 1.2,
        "x",
    );
    let mib = |kind: &str| runs.median("ferry", kind, "rss_kib").map(|k| k / 1024.0);
    row(
        "RSS <= 4 MiB after 20k calls",
        mib("stdio-pinned"),
        mib("stdio"),
        &|v| v <= 4.0,
        " MiB",
    );
    // The `ferry` command's reference server, as MCP hosts start it (`ferry serve`).
    row("*`ferry serve` on stdio*", None, None, &|_| true, "");
    row(
        "cold start <= 2.0x floor",
        runs.paired_ratio(
            "ferry-serve-stdio",
            "floor",
            "stdio-pinned",
            "cold_start_ms",
        ),
        runs.paired_ratio("ferry-serve-stdio", "floor", "stdio", "cold_start_ms"),
        &|v| v <= 2.0,
        "x",
    );
    let handshake = |kind: &str| {
        runs.median("ferry-serve-stdio", kind, "handshake_rss_kib")
            .map(|k| k / 1024.0)
    };
    row(
        "RSS after the handshake <= 10 MiB",
        handshake("stdio-pinned"),
        handshake("stdio"),
        &|v| v <= 10.0,
        " MiB",
    );
    let http = |path: &str, other: &str| -> Option<f64> {
        runs.paired_ratio("ferry-http", other, "http", path)
    };
    row("*Streamable HTTP (unpinned)*", None, None, &|_| true, "");
    row(
        "HTTP session era, SSE responses, >= 2x rmcp (TCP_NODELAY)",
        None,
        http("session/calls_per_s", "rmcp-http"),
        &|v| v >= 2.0,
        "x",
    );
    row(
        "HTTP session era, SSE responses, >= 0.6x hyper floor",
        None,
        http("session/calls_per_s", "floor-http"),
        &|v| v >= 0.6,
        "x",
    );
    row(
        "HTTP p99 <= 5 ms at 50 sessions",
        None,
        runs.median("ferry-http", "http", "session/p99_us")
            .map(|us| us / 1e3),
        &|v| v <= 5.0,
        " ms",
    );
    row(
        "<= 8 KiB per idle session",
        None,
        runs.median("ferry-http", "http", "idle/kib_per_session"),
        &|v| v <= 8.0,
        " KiB",
    );
    // Issue 23: one instance with its sessions in Redis, against the same server with
    // them in memory.
    row(
        "*Sessions in Redis (one instance, unpinned)*",
        None,
        None,
        &|_| true,
        "",
    );
    row(
        "session era req/s >= 0.5x the same server with sessions in memory",
        None,
        runs.paired_ratio("ferry-redis", "ferry-serve", "http", "session/calls_per_s"),
        &|v| v >= 0.5,
        "x",
    );
    row(
        "p99 <= 5 ms at 50 sessions",
        None,
        runs.median("ferry-redis", "http", "session/p99_us")
            .map(|us| us / 1e3),
        &|v| v <= 5.0,
        " ms",
    );
    row(
        "<= 2 Redis round trips per ordinary tools/call",
        None,
        runs.median("ferry-redis", "redis", "round_trips_per_call"),
        &|v| v <= 2.0,
        "",
    );
    row(
        "<= 4 KiB in-process memory per idle session (engines released after 1 s idle)",
        None,
        runs.median("ferry-redis", "http", "idle/settled_kib_per_session"),
        &|v| v <= 4.0,
        " KiB",
    );
    if let Some(fresh) = runs.median("ferry-redis", "http", "idle/kib_per_session") {
        let _ = writeln!(
            md,
            "\nA session idle for less than the release time holds {fresh:.1} KiB in-process."
        );
    }
    if let Some(bytes) = runs.median("ferry-redis", "redis", "bytes_per_session") {
        let _ = writeln!(
            md,
            "\nRedis memory per session record (not a target): {bytes:.0} bytes."
        );
    }
    // What any tokio server pays (the floor's loop on a current-thread runtime): not a
    // target, shown beside them to tell the runtime's share from Ferry's.
    let tokio = |kind: &str, path: &str| runs.paired_ratio("floor-tokio", "floor", kind, path);
    if let (Some(pipelined), Some(sequential), Some(cold)) = (
        tokio("stdio-pinned", "pipelined/calls_per_s"),
        tokio("stdio-pinned", "sequential/calls_per_s"),
        tokio("stdio-pinned", "cold_start_ms"),
    ) {
        let ferry = |path: &str| ratio("stdio-pinned", path, "floor-tokio");
        let show = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| format!("{v:.2}x"));
        let _ = writeln!(
            md,
            "\nThe floor's own loop on tokio (`floor on tokio`, a current-thread runtime with \
             stdin and stdout on its reactor), pinned, against the floor: pipelined \
             {pipelined:.2}x, sequential {sequential:.2}x, cold start {cold:.2}x; Ferry against \
             it: pipelined {}, sequential {}, cold start {}.",
            show(ferry("pipelined/calls_per_s")),
            show(ferry("sequential/calls_per_s")),
            show(ferry("cold_start_ms")),
        );
    }
    // Ferry's default answers (one JSON object when the response comes first): not the
    // targets' wording, shown beside them.
    let default = |path: &str, other: &str| -> Option<f64> {
        runs.paired_ratio("ferry-http-json", other, "http", path)
    };
    if let (Some(rmcp), Some(floor)) = (
        default("session/calls_per_s", "rmcp-http"),
        default("session/calls_per_s", "floor-http"),
    ) {
        let _ = writeln!(
            md,
            "\nWith Ferry's default answers (JSON when the response is the first thing to send): \
             session era {rmcp:.2}x rmcp, {floor:.2}x the hyper floor."
        );
    }
    md
}
