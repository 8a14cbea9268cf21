//! `ferry inspect` in real browsers: Debian's chromium and Firefox ESR, driven headless by
//! npm `playwright-core` (`inspect_browser/driver.mjs`; CDP for chromium, WebDriver BiDi
//! for Firefox), against `ferry inspect --no-browser` of the in-process reference server
//! (negotiated: the stateless era) and of a `ferry serve` child on stdio (pinned to
//! 2025-11-25: the session era). The driver uses the page as a person would (forms,
//! buttons, the server's questions) and returns a verdict per check; screenshots of the
//! main views go to `$FERRY_ARTIFACTS` (default: the target directory's
//! `inspect-screenshots/`), with the wire panel's export, which `ferry replay` then plays
//! against the same kind of server: every recorded answer must match. The timings the
//! issue asks for are printed: time to interactive, filtering 10,000 log messages, the
//! embedded assets' size, the replay.
//!
//! Needs Node and `/usr/bin/chromium` (`apt-get install chromium`), and for the Firefox
//! tests `/usr/lib/firefox-esr/firefox-esr` (`apt-get install firefox-esr`; without it they
//! say so and pass); `.ci/run` installs both. `inspect_browser/install.sh` installs the npm
//! driver once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// One browser at a time: the machine's cores are shared, and the timings are measured.
static BROWSER: Mutex<()> = Mutex::new(());

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn driver_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect_browser")
}

/// Where screenshots go.
fn artifacts() -> PathBuf {
    if let Some(dir) = std::env::var_os("FERRY_ARTIFACTS") {
        return PathBuf::from(dir).join("inspect-screenshots");
    }
    // target/debug/ferry -> target/inspect-screenshots
    let target = Path::new(FERRY)
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    target.join("inspect-screenshots")
}

/// A running `ferry inspect`, killed when dropped.
struct Inspector {
    child: Child,
    url: String,
    /// Where its stderr is copied (the driver reads the codes it shows there).
    log: std::path::PathBuf,
}

impl Drop for Inspector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn inspect(args: &[&str]) -> Inspector {
    let mut child = Command::new(FERRY)
        .arg("inspect")
        .arg("--no-browser")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ferry inspect");
    // Its stderr goes on to ours, and into a file the driver reads.
    let log = std::env::temp_dir().join(format!("ferry-inspect-{}.log", child.id()));
    let mut file = std::fs::File::create(&log).expect("the stderr file");
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        use std::io::Write as _;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("{line}");
            let _ = writeln!(file, "{line}").and_then(|()| file.flush());
        }
    });
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("ferry inspect prints its URL");
    let url = line.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?launch="),
        "printed: {url:?}"
    );
    let code = url.rsplit("launch=").next().unwrap_or_default();
    assert!(
        code.len() >= 32 && code.bytes().all(|b| b.is_ascii_hexdigit()),
        "a launch code of 128 bits or more, in hex: {code}"
    );
    Inspector { child, url, log }
}

/// The browsers the driver runs.
#[derive(Clone, Copy, PartialEq)]
enum Browser {
    Chromium,
    Firefox,
}

impl Browser {
    fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }
}

/// Whether Firefox ESR is here (`$FERRY_FIREFOX` names another build).
fn firefox_installed() -> bool {
    std::env::var_os("FERRY_FIREFOX").is_some()
        || Path::new("/usr/lib/firefox-esr/firefox-esr").exists()
}

/// Install the npm driver (once; `install.sh` skips an install that is current).
fn install_driver(browser: Browser) {
    let status = Command::new("sh")
        .arg(driver_dir().join("install.sh"))
        .status()
        .expect("run inspect_browser/install.sh (needs sh, flock, npm)");
    assert!(status.success(), "installing playwright-core failed");
    if browser == Browser::Chromium {
        assert!(
            Path::new("/usr/bin/chromium").exists() || std::env::var_os("FERRY_CHROMIUM").is_some(),
            "the browser tests need Debian's chromium: apt-get install -y chromium"
        );
    }
}

/// Run the driver in `mode` with `browser` against `inspector`; its verdicts and metrics.
fn drive(inspector: &Inspector, mode: &str, browser: Browser) -> Value {
    install_driver(browser);
    let output = Command::new("node")
        .arg(driver_dir().join("driver.mjs"))
        .arg(&inspector.url)
        .arg(mode)
        .arg(artifacts())
        .arg(browser.name())
        .env("FERRY_INSPECT_LOG", &inspector.log)
        .current_dir(driver_dir())
        .stderr(Stdio::inherit())
        .output()
        .expect("run node driver.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the driver failed: {stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("driver output {last:?}: {e}"))
}

/// Print every verdict, then fail on the failed ones.
fn assert_verdicts(report: &Value, expected: &[&str]) {
    let verdicts = report["verdicts"].as_array().expect("verdicts");
    let mut failed = Vec::new();
    for v in verdicts {
        let ok = v["ok"].as_bool() == Some(true);
        let name = v["name"].as_str().unwrap_or("?");
        let detail = v["detail"].as_str().unwrap_or_default();
        println!("{} {name}: {detail}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            failed.push(name.to_owned());
        }
    }
    let names: Vec<&str> = verdicts.iter().filter_map(|v| v["name"].as_str()).collect();
    for name in expected {
        assert!(names.contains(name), "the driver did not run {name:?}");
    }
    assert!(failed.is_empty(), "failed: {failed:?}");
}

/// The bytes of the embedded page.
fn asset_bytes() -> u64 {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/inspect/assets");
    std::fs::read_dir(dir)
        .expect("assets")
        .map(|e| e.expect("entry").metadata().expect("metadata").len())
        .sum()
}

/// Replay the wire export the driver saved as `which` against `target` (the client
/// commands' target arguments) and require every recorded answer to match; the report's
/// summary.
fn replay_export(report: &Value, which: &str, target: &[&str]) -> Value {
    let export = report[which]
        .as_str()
        .unwrap_or_else(|| panic!("the driver saved the wire export ({which})"));
    // What the reference server's `server://info` says differently each run: its uptime,
    // the runtime's tasks, and the count of cancelled countdowns, which rises a moment after
    // the cancellation (`--realtime` would keep that moment; `tests/replay.rs` checks it).
    let output = Command::new(FERRY)
        .args(["replay", export, "--json", "--ignore", "uptime_seconds"])
        .args([
            "--ignore",
            "tasks_alive",
            "--ignore",
            "countdowns_cancelled",
        ])
        .args(target)
        .stdin(Stdio::null())
        .output()
        .expect("run ferry replay");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let replayed: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("ferry replay --json printed {stdout:?}: {e}"));
    let summary = replayed["summary"].clone();
    assert_eq!(
        output.status.code(),
        Some(0),
        "ferry replay {export}: {replayed:#}"
    );
    assert_eq!(summary["differed"], 0, "{replayed:#}");
    assert_eq!(summary["unanswered"], 0, "{replayed:#}");
    assert!(
        summary["matched"].as_u64().unwrap_or(0) >= 25,
        "the export holds the session: {replayed:#}"
    );
    summary
}

/// The checks both targets must pass.
const COMMON: &[&str] = &[
    "page loads and is interactive",
    "tools are listed",
    "tools are searched; what hosts handle badly in a schema is pointed out",
    "calculate: the form is filled and the answer shown",
    "countdown: progress shown, Cancel stops it, the server counts it",
    "image: the result renders",
    "audio, embedded resources and resource links render",
    "elicitation: the form is answered and the result echoes it",
    "elicitation: answered as JSON",
    "elicitation: a request the server gives up leaves the inbox, and the page says so",
    "sampling: the person writes the reply",
    "resource template: completed and read",
    "a resource is subscribed to",
    "the status corner goes back to the stream state after a message",
    "the wire shows the exchange and exports it",
    "a request from the history is edited and sent again",
    "an API call without the session cookie gets 403",
    "the launch URL works once",
    "a foreign Origin or Host gets 403",
    "the theme is chosen and kept; the list pane resizes from the keyboard; the header stays in view",
    "no script errors",
];

#[test]
fn reference_server_in_the_browser() {
    reference_server(Browser::Chromium);
}

#[test]
fn stdio_child_in_the_browser() {
    stdio_child(Browser::Chromium);
}

#[test]
fn reference_server_in_firefox() {
    assert!(
        firefox_installed(),
        "the browser tests need Firefox ESR: apt-get install -y firefox-esr (scripts/peers)"
    );
    reference_server(Browser::Firefox);
}

#[test]
fn stdio_child_in_firefox() {
    assert!(
        firefox_installed(),
        "the browser tests need Firefox ESR: apt-get install -y firefox-esr (scripts/peers)"
    );
    stdio_child(Browser::Firefox);
}

fn reference_server(browser: Browser) {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let inspector = inspect(&[]);
    let report = drive(&inspector, "reference", browser);
    let mut expected = COMMON.to_vec();
    expected.extend([
        "connecting from the page is refused without --allow-spawn",
        "ferry check, rendered by section",
        "10,000 log messages: filtering and scrolling stay fast",
    ]);
    assert_verdicts(&report, &expected);
    let replayed = replay_export(&report, "wireExport", &[]);
    let m = &report["metrics"];
    let bytes = asset_bytes();
    println!(
        "inspect metrics ({}): time to interactive {:.0} ms (reload); {} log entries made in {} ms; \
         filter by level {:.1} ms, by text {:.1} ms, back to all {:.1} ms; a scrolled frame \
         {:.1} ms; embedded assets {bytes} bytes ({:.1} KiB); the wire export replayed: {} \
         requests matched in {} ms",
        m["browser"].as_str().unwrap_or("?"),
        m["timeToInteractiveMs"].as_f64().unwrap_or(f64::NAN),
        m["logEntries"],
        m["logGenerationMs"],
        m["filterLevelMs"].as_f64().unwrap_or(f64::NAN),
        m["filterTextMs"].as_f64().unwrap_or(f64::NAN),
        m["filterAllMs"].as_f64().unwrap_or(f64::NAN),
        m["scrollFrameMs"].as_f64().unwrap_or(f64::NAN),
        bytes as f64 / 1024.0,
        replayed["matched"],
        replayed["ms"],
    );
    println!("screenshots in {}", artifacts().display());
    assert!(bytes <= 500 * 1024, "the embedded page is {bytes} bytes");
}

fn stdio_child(browser: Browser) {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    // Pinned to the session era: the reference run negotiates the stateless one.
    let inspector = inspect(&[
        "--allow-spawn",
        "--protocol-version",
        "2025-11-25",
        "--",
        FERRY,
        "serve",
    ]);
    let report = drive(&inspector, "stdio", browser);
    let mut expected = COMMON.to_vec();
    expected.extend([
        "countdown as a task: its state and result shown; Cancel cancels the task",
        "the tasks panel lists the tasks, shows a result and cancels a running one",
        "the session cookie alone starts nothing: the code from the terminal is needed",
        "another server connected from the page after confirming the command",
        "a command the person declines is not run",
        "a reconnection begins a new connection in the wire export",
        "a server that dies is noticed at once, with its last stderr lines",
    ]);
    assert_verdicts(&report, &expected);
    // The recording is of the session era (its initialize pinned 2025-11-25), replayed raw.
    let replayed = replay_export(&report, "wireExport", &["--", FERRY, "serve"]);
    // Three connections: the first session, the second server's, the session after the
    // reconnection, each replayed on a fresh child.
    let reconnected = replay_export(&report, "wireExportReconnected", &["--", FERRY, "serve"]);
    assert!(
        reconnected["matched"].as_u64() > replayed["matched"].as_u64(),
        "{reconnected}"
    );
    println!(
        "inspect metrics ({}, stdio child): time to interactive {:.0} ms; the wire export \
         replayed: {} requests matched in {} ms",
        report["metrics"]["browser"].as_str().unwrap_or("?"),
        report["metrics"]["timeToInteractiveMs"]
            .as_f64()
            .unwrap_or(f64::NAN),
        replayed["matched"],
        replayed["ms"],
    );
}

#[test]
fn one_shot_options_are_refused() {
    let output = Command::new(FERRY)
        .args(["inspect", "--no-browser", "--json"])
        .stdin(Stdio::null())
        .output()
        .expect("run ferry inspect");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--json"), "{stderr}");
}
