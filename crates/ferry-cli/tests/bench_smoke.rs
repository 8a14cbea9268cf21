//! The benchmark harness cannot rot: `bench/run --smoke` (a few hundred calls per server,
//! debug builds) measures every server of the suite — the floor (and its loop on tokio),
//! Ferry (here the `ferry` binary under test: `ferry serve` and `ferry serve --http`, and
//! `ferry serve --http --redis` against a redis-server the script starts, three of them
//! behind nginx),
//! rmcp, the TypeScript and Python SDKs (installed by the script from npm and PyPI) — and
//! writes its table and chart.
//! The figures of a smoke run mean nothing; only that every row is there.

use std::path::Path;
use std::process::Command;

#[test]
fn bench_run_smoke_measures_every_server() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ferry = env!("CARGO_BIN_EXE_ferry");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-smoke");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(root.join("bench/run"))
        .arg("--smoke")
        .env("FERRY_STDIO", format!("{ferry} serve"))
        .env("FERRY_HTTP", format!("{ferry} serve --http {{addr}}"))
        .env("FERRY_CLI", ferry)
        .env("BENCH_RESULTS", &out)
        .output()
        .expect("bench/run starts");
    assert!(
        run.status.success(),
        "bench/run --smoke failed: {}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );

    let runs = std::fs::read_to_string(out.join("runs.jsonl")).expect("runs.jsonl");
    for (server, kind) in [
        ("floor", "stdio"),
        ("floor-tokio", "stdio"),
        ("ferry", "stdio"),
        ("rmcp-stdio", "stdio"),
        ("rmcp-pipes", "stdio"),
        ("ts", "stdio"),
        ("python", "stdio"),
        ("floor-http", "http"),
        ("ferry-http", "http"),
        ("ferry-http-json", "http"),
        ("ferry-serve", "http"),
        ("ferry-redis", "http"),
        ("ferry-cluster", "http"),
        ("rmcp-http", "http"),
        ("ts-http", "http"),
        ("python-http", "http"),
    ] {
        let line = runs
            .lines()
            .find(|l| l.contains(&format!(r#""server":"{server}","kind":"{kind}""#)))
            .unwrap_or_else(|| panic!("no {kind} run of {server} in:\n{runs}"));
        let run: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let calls = if kind == "stdio" {
            run.pointer("/figures/pipelined/calls")
        } else {
            run.pointer("/figures/session/calls")
        };
        assert!(
            calls.and_then(serde_json::Value::as_u64) > Some(0),
            "{server}: {line}"
        );
    }

    let table = std::fs::read_to_string(out.join("results.md")).expect("results.md");
    for row in [
        "| Ferry |",
        "| floor on tokio (current_thread) |",
        "| rmcp `stdio_pipes()` |",
        "| Python SDK |",
        "stdio pipelined >= 2.0x",
        "<= 2 Redis round trips per ordinary tools/call",
        "| 3 × `ferry serve --redis` behind nginx |",
        "engines released after 1 s idle",
    ] {
        assert!(table.contains(row), "no {row:?} in results.md:\n{table}");
    }
    // Redis's side of the Redis row: round trips per call and memory per session, measured.
    let line = runs
        .lines()
        .find(|l| l.contains(r#""server":"ferry-redis","kind":"redis""#))
        .unwrap_or_else(|| panic!("no Redis figures in:\n{runs}"));
    let run: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let per_call = run
        .pointer("/figures/round_trips_per_call")
        .and_then(serde_json::Value::as_f64);
    assert!(per_call.is_some_and(|n| n > 0.0), "{line}");
    // And the idle sessions measured again once the instance let go of their engines.
    let line = runs
        .lines()
        .find(|l| l.contains(r#""server":"ferry-redis","kind":"http""#))
        .expect("the Redis row");
    let run: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    assert!(
        run.pointer("/figures/idle/settled_kib_per_session")
            .is_some_and(serde_json::Value::is_f64),
        "{line}"
    );
    let chart = std::fs::read(out.join("chart.png")).expect("chart.png");
    assert!(chart.starts_with(b"\x89PNG"), "chart.png is not a PNG");
}
