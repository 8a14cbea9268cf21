//! The pinned suite: installed once (`npm ci` in `conformance/`, under a file lock), run with
//! the Node.js 22 it brings, and its results read back from its output directory.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The suite's version, pinned in `conformance/package.json` (checked after installing).
pub(crate) const VERSION: &str = "0.1.16";

/// How long one run of the suite may take before it is killed and the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// `conformance/` at the workspace root.
pub(crate) fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

/// The installed suite.
pub(crate) struct Suite {
    node: PathBuf,
    cli: PathBuf,
}

/// Install the pinned packages unless they are there at the pinned version; one installer at
/// a time, across threads (the mutex) and processes (the lock file).
pub(crate) fn install() -> Suite {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _thread = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = dir();
    let _process = DirLock::take(dir.join(".install.lock"));
    let modules = dir.join("node_modules");
    let suite = Suite {
        node: modules.join(".bin/node"),
        cli: modules.join("@modelcontextprotocol/conformance/dist/index.js"),
    };
    let manifest = modules.join("@modelcontextprotocol/conformance/package.json");
    let installed = || {
        std::fs::read_to_string(&manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|m| m["version"] == VERSION)
            && suite.node.exists()
            && suite.cli.exists()
    };
    if !installed() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("npm runs (Node.js and npm are needed for the conformance suite)");
        assert!(status.success(), "npm ci in {dir:?} failed");
        assert!(installed(), "the suite {VERSION} is missing after npm ci");
    }
    let version = suite.output(&["--version"]);
    assert_eq!(version.trim(), VERSION, "the installed suite's version");
    suite
}

/// A lock between processes (`File::lock` is newer than the workspace's MSRV): a directory
/// only one process can create, removed when dropped; one left by a killed run is taken
/// over after [`STALE_LOCK`].
struct DirLock(PathBuf);

/// The age after which an install lock is deemed left behind (`npm ci` takes well under).
const STALE_LOCK: Duration = Duration::from_secs(600);

impl DirLock {
    fn take(path: PathBuf) -> DirLock {
        let started = Instant::now();
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return DirLock(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::metadata(&path);
                    let stale = meta
                        .as_ref()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .is_some_and(|at| at.elapsed().is_ok_and(|age| age > STALE_LOCK));
                    if meta.is_ok_and(|m| !m.is_dir()) {
                        // Not a lock of ours: in the way.
                        let _ = std::fs::remove_file(&path);
                    } else if stale {
                        let _ = std::fs::remove_dir(&path);
                    }
                    assert!(
                        started.elapsed() < STALE_LOCK * 2,
                        "the install lock {path:?} was never released"
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => panic!("create the install lock {path:?}: {e}"),
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

impl Suite {
    /// The suite's command line, run by the Node.js 22 of `node_modules`, with
    /// `conformance/loopback.mjs` preloaded: the mock servers it starts (client scenarios)
    /// listen on 127.0.0.1 only.
    pub(crate) fn command(&self) -> Command {
        let dir = dir().canonicalize().expect("conformance/");
        let preload = dir.join("loopback.mjs");
        let mut command = Command::new(&self.node);
        command
            .arg(format!("--import=file://{}", preload.display()))
            .arg(&self.cli)
            .current_dir(dir);
        command
    }

    /// The standard output of a quick command of the suite.
    fn output(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().expect("run the suite");
        assert!(output.status.success(), "conformance {args:?}: {output:?}");
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// The scenario names `conformance list --<kind>` prints (`  - name [versions]`).
    pub(crate) fn list(&self, kind: &str) -> Vec<String> {
        self.output(&["list", &format!("--{kind}")])
            .lines()
            .filter_map(|line| line.trim().strip_prefix("- "))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .collect()
    }

    /// Run `command` (the suite with its arguments) to completion, its output kept in
    /// `log`; returns whether it exited successfully.
    pub(crate) fn run(mut command: Command, log: &Path) -> bool {
        let out = File::create(log).expect("create the log");
        let err = out.try_clone().expect("clone the log");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start the suite");
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait for the suite") {
                return status.success();
            }
            if started.elapsed() > RUN_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the suite ran over {RUN_LIMIT:?}; its output: {log:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What one scenario's checks came to.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Checks that passed.
    pub(crate) passed: usize,
    /// Warnings and failures, described.
    pub(crate) problems: Vec<String>,
}

/// The checks the suite wrote for each scenario under `out` (`[<prefix>-]<scenario>-<time>/
/// checks.json`; a scenario `group/name` is under `group/`), by scenario; every name in
/// `scenarios` must have exactly one directory.
pub(crate) fn results(out: &Path, prefix: &str, scenarios: &[String]) -> BTreeMap<String, Tally> {
    let mut tallies = BTreeMap::new();
    for scenario in scenarios {
        let (group, name) = scenario.rsplit_once('/').unwrap_or(("", scenario));
        let out = out.join(group);
        let dirs: Vec<String> = std::fs::read_dir(&out)
            .unwrap_or_else(|e| panic!("the suite's output directory {out:?}: {e}"))
            .map(|entry| entry.expect("a directory entry").file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        // The directory's name ends in an ISO timestamp: `-2026-11-23T11-13-53-791Z`.
        let lead = if prefix.is_empty() {
            format!("{name}-")
        } else {
            format!("{prefix}-{name}-")
        };
        let ours: Vec<&String> = dirs
            .iter()
            .filter(|d| {
                d.strip_prefix(&lead).is_some_and(|time| {
                    time.len() > 10
                        && time[..4].bytes().all(|b| b.is_ascii_digit())
                        && time.as_bytes()[10] == b'T'
                })
            })
            .collect();
        assert_eq!(ours.len(), 1, "{scenario}: results {ours:?} in {out:?}");
        let path = out.join(ours[0]).join("checks.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let checks: Vec<Value> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let mut tally = Tally::default();
        for check in &checks {
            match check["status"].as_str() {
                Some("SUCCESS") => tally.passed += 1,
                Some("INFO" | "SKIPPED") => {}
                status => tally.problems.push(format!(
                    "{} {}: {}",
                    status.unwrap_or("(no status)"),
                    check["id"].as_str().unwrap_or("?"),
                    check["errorMessage"]
                        .as_str()
                        .or(check["description"].as_str())
                        .unwrap_or("")
                )),
            }
        }
        tallies.insert(scenario.clone(), tally);
    }
    tallies
}

/// The table of results, for the test's output.
pub(crate) fn table(title: &str, tallies: &BTreeMap<String, Tally>) -> String {
    let width = tallies.keys().map(String::len).max().unwrap_or(0);
    let mut text = format!("\n{title}\n");
    for (scenario, tally) in tallies {
        let verdict = if tally.problems.is_empty() && tally.passed > 0 {
            "ok"
        } else {
            "FAILED"
        };
        text.push_str(&format!(
            "  {scenario:width$}  {verdict:6}  {} checks passed\n",
            tally.passed
        ));
        for problem in &tally.problems {
            text.push_str(&format!("      {problem}\n"));
        }
    }
    text
}

/// Print to the real standard output, past the test harness's capture, so the summary is in
/// every CI log.
pub(crate) fn show(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
