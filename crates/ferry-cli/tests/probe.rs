//! The client's `server/discover` probe against real child processes (`probe_peers/server.js`
//! under Node, which logs every message it reads): a server that ignores the probe is
//! initialized after it with the default probe timeout; `--probe-timeout` longer than a
//! slow server's refusal of the probe waits for it; `0` sends no probe; a server slow to
//! answer the probe, which then refuses `initialize` as the Python SDK does, is still
//! spoken to in the stateless era; and an entry of a host's file that gives its era
//! (`ferry install --era`) is connected without a probe.
//!
//! No test here measures time: what is checked is the order of what the server read and
//! answered, the slow servers' delays far from the probe timeouts they are compared with.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// The server script.
fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/probe_peers/server.js")
        .display()
        .to_string()
}

/// A scratch directory (home, project, the server's log), removed after a test that passed.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("probe-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).expect("create a scratch directory");
        Scratch(dir)
    }

    fn log(&self) -> String {
        self.0.join("server.log").display().to_string()
    }

    /// Run `ferry args...` here, the user's files in the scratch home.
    fn ferry(&self, args: &[&str]) -> Output {
        let output = Command::new(FERRY)
            .args(args)
            .current_dir(&self.0)
            .env("HOME", self.0.join("home"))
            .env("XDG_CONFIG_HOME", self.0.join("home/.config"))
            .env_remove("FERRY_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("run ferry");
        assert!(
            output.status.success(),
            "ferry {args:?} failed\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// What the server read, in order: (ms since the epoch, method or `response`).
    fn received(&self) -> Vec<(u64, String)> {
        let text = std::fs::read_to_string(self.log()).expect("the server's log");
        text.lines()
            .map(|line| {
                let (at, what) = line.split_once(' ').expect("`ms method` lines");
                (at.parse().expect("ms"), what.to_owned())
            })
            .collect()
    }

    /// The methods the server read, in order.
    fn methods(&self) -> Vec<String> {
        self.received().into_iter().map(|(_, m)| m).collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_server_that_ignores_the_probe_is_initialized_after_the_default_timeout() {
    let scratch = Scratch::new("default");
    let (script, log) = (script(), scratch.log());
    let output = scratch.ferry(&["tools", "-v", "--", "node", &script, "silent", &log]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello"));
    assert!(
        stderr(&output).contains("protocol 2025-06-18"),
        "{}",
        stderr(&output)
    );
    let methods = scratch.methods();
    assert_eq!(
        methods[..3],
        ["server/discover", "initialize", "notifications/initialized"],
        "the probe, then the handshake: {methods:?}"
    );
    assert!(methods.contains(&"tools/list".to_owned()), "{methods:?}");
}

#[test]
fn probe_timeout_is_honoured() {
    let scratch = Scratch::new("longer");
    let (script, log) = (script(), scratch.log());
    // The server refuses the probe some seconds after the default timeout (`initialize`
    // would go first), well within the 30 s given (it goes after).
    let delay = ferry::client::DEFAULT_PROBE_TIMEOUT.as_millis() + 2_000;
    let delay = delay.to_string();
    let args = [
        "ping",
        "--probe-timeout",
        "30",
        "--",
        "node",
        &script,
        "slow-session",
        &log,
        &delay,
    ];
    scratch.ferry(&args);
    let methods = scratch.methods();
    assert_eq!(
        methods[..3],
        ["server/discover", "answered server/discover", "initialize"],
        "the probe's refusal awaited: {methods:?}"
    );
}

#[test]
fn a_shorter_probe_timeout_sends_initialize_before_a_slow_refusal() {
    let scratch = Scratch::new("shorter");
    let (script, log) = (script(), scratch.log());
    let args = [
        "ping",
        "--probe-timeout",
        "0.2",
        "--",
        "node",
        &script,
        "slow-session",
        &log,
        "3000",
    ];
    scratch.ferry(&args);
    let methods = scratch.methods();
    assert_eq!(
        methods[..3],
        ["server/discover", "initialize", "answered server/discover"],
        "initialize went while the probe waited: {methods:?}"
    );
    assert!(
        methods.contains(&"notifications/initialized".to_owned()),
        "{methods:?}"
    );
}

#[test]
fn probe_timeout_zero_sends_no_probe() {
    let scratch = Scratch::new("zero");
    let (script, log) = (script(), scratch.log());
    let args = [
        "ping",
        "--probe-timeout",
        "0",
        "--",
        "node",
        &script,
        "silent",
        &log,
    ];
    scratch.ferry(&args);
    let methods = scratch.methods();
    assert_eq!(methods[..2], ["initialize", "notifications/initialized"]);
    assert!(
        !methods.contains(&"server/discover".to_owned()),
        "{methods:?}"
    );
}

#[test]
fn a_late_answer_to_the_probe_wins_over_a_refused_initialize() {
    let scratch = Scratch::new("late");
    let (script, log) = (script(), scratch.log());
    // The probe's answer comes well after its timeout: `initialize` is sent meanwhile, and
    // refused by the server once the probe has made its connection stateless.
    let args = [
        "tools",
        "-v",
        "--probe-timeout",
        "0.2",
        "--",
        "node",
        &script,
        "slow-stateless",
        &log,
        "1500",
    ];
    let output = scratch.ferry(&args);
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello"));
    assert!(
        stderr(&output).contains("protocol 2026-07-28"),
        "{}",
        stderr(&output)
    );
    let methods = scratch.methods();
    assert_eq!(
        methods[..2],
        ["server/discover", "initialize"],
        "initialize went while the probe waited: {methods:?}"
    );
    assert!(methods.contains(&"tools/list".to_owned()), "{methods:?}");
    assert!(
        !methods.contains(&"notifications/initialized".to_owned()),
        "{methods:?}"
    );
}

#[test]
fn an_era_in_the_hosts_file_skips_the_probe() {
    let scratch = Scratch::new("era");
    let (script, log) = (script(), scratch.log());
    let config = scratch.0.join("mcp.json").display().to_string();
    let install = [
        "install", "quiet", "--config", &config, "--era", "session", "--", "node", &script,
        "silent", &log,
    ];
    scratch.ferry(&install);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["quiet"]["x-ferry"],
        serde_json::json!({"era": "session"}),
        "{written}"
    );
    // `ferry servers` shows the era the entry pins.
    let listed = scratch.ferry(&["servers", "--json", "--config", &config]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["servers"][0]["era"], "session", "{listed}");
    let table = scratch.ferry(&["servers", "--config", &config]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("stdio, session"), "{table}");
    scratch.ferry(&["ping", "--config", &config, "--server", "quiet"]);
    let methods = scratch.methods();
    assert_eq!(methods[..2], ["initialize", "notifications/initialized"]);
    assert!(
        !methods.contains(&"server/discover".to_owned()),
        "{methods:?}"
    );
}
