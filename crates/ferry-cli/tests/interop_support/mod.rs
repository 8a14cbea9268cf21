//! The official SDKs' interop clients (`interop/ts/client.mjs` on npm
//! `@modelcontextprotocol/sdk`, `interop/py/client.py` on PyPI `mcp`), installed by
//! `interop/install.sh` and run against a URL: every verdict they print must be ok.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// `interop/install.sh` once per test binary (it serializes with other binaries itself).
pub fn install() {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        let status = Command::new(interop_dir().join("install.sh"))
            .status()
            .expect("interop/install.sh runs (needs sh, npm, python3)");
        assert!(status.success(), "interop/install.sh failed");
        *done = true;
    }
}

/// Run `node interop/ts/client.mjs ARGS`: every verdict must be ok, and there must be some.
pub fn ts_client(args: &[&str]) {
    let script = interop_dir().join("ts/client.mjs");
    sdk_client("node", &script.to_string_lossy(), args);
}

/// Run `interop/py/client.py ERA ARGS` on the venv's Python, checked the same way.
pub fn py_client(era: &str, args: &[&str]) {
    let python = interop_dir().join(".venv/bin/python");
    let script = interop_dir().join("py/client.py");
    let mut all = vec![era];
    all.extend_from_slice(args);
    sdk_client(&python.to_string_lossy(), &script.to_string_lossy(), &all);
}

pub fn sdk_client(program: &str, script: &str, args: &[&str]) {
    install();
    let mut child = Command::new(program)
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn node");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let verdicts: Vec<Value> = stdout
        .lines()
        .map_while(Result::ok)
        .map(|line| serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a verdict: {line}")))
        .collect();
    let status = child.wait().unwrap();
    let failed: Vec<&Value> = verdicts.iter().filter(|v| v["ok"] != true).collect();
    assert!(failed.is_empty(), "{args:?}: {failed:#?}");
    let checks: Vec<&str> = verdicts
        .iter()
        .filter_map(|v| v["check"].as_str())
        .collect();
    for expected in [
        "tools",
        "progress",
        "cancellation",
        "sampling",
        "elicitation",
    ] {
        assert!(
            checks.contains(&expected),
            "{args:?}: no {expected} in {checks:?}"
        );
    }
    assert!(status.success(), "{args:?}: {status}");
}
