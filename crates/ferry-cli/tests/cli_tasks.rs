//! `ferry call --task` and `ferry tasks` as the built binary runs them: a task followed to
//! its result with its progress on stderr (in-process, a stdio child, HTTP), a task left
//! running with `--detach` and followed, listed, cancelled by later commands that take up
//! its HTTP session with `--session`, and the usage errors.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// A running `ferry serve --http 127.0.0.1:0`, killed when dropped.
struct Served {
    child: std::process::Child,
    url: String,
    _stderr: BufReader<std::process::ChildStderr>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http() -> Served {
    let mut child = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("banner");
    let url = line
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    Served {
        child,
        url,
        _stderr: stderr,
    }
}

/// Run `ferry ARGS`: exit code, stdout, stderr.
fn ferry(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(FERRY).args(args).output().expect("run ferry");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_task_is_followed_to_its_result_on_every_transport() {
    let served = serve_http();
    let targets: [Vec<&str>; 3] = [
        vec![],
        vec!["--", FERRY, "serve"],
        vec!["--url", &served.url],
    ];
    for target in targets {
        let mut args = vec!["call", "countdown", "steps=3", "--task"];
        args.extend(&target);
        let (code, stdout, stderr) = ferry(&args);
        assert_eq!(code, Some(0), "{target:?}\n{stdout}\n{stderr}");
        assert_eq!(stdout.trim(), "counted 3 steps", "{target:?}\n{stderr}");
        assert!(
            stderr.contains("ferry: task ") && stderr.contains(" started"),
            "{stderr}"
        );
        assert!(
            stderr.contains("ferry: task completed"),
            "{target:?}\n{stderr}"
        );
        // The JSON result is the tool's result, related to its task.
        let mut args = vec!["call", "countdown", "steps=3", "--task", "--json"];
        args.extend(&target);
        let (code, stdout, stderr) = ferry(&args);
        assert_eq!(code, Some(0), "{stderr}");
        let result: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(result["content"][0]["text"], "counted 3 steps");
        assert!(
            result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].is_string(),
            "{result}"
        );
    }
}

#[test]
fn a_detached_task_is_followed_by_later_commands() {
    let served = serve_http();
    let url = served.url.as_str();
    let (code, stdout, stderr) = ferry(&[
        "call",
        "countdown",
        "steps=20",
        "--task",
        "--detach",
        "--ttl",
        "120",
        "--json",
        "--url",
        url,
    ]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let detached: Value = serde_json::from_str(&stdout).unwrap();
    let task = detached["task"]["taskId"].as_str().unwrap().to_owned();
    let session = detached["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(detached["task"]["status"], "working");
    assert_eq!(detached["task"]["ttl"], 120_000);

    // The session outlived the command: its task is listed and shown.
    let tasks = |args: &[&str]| {
        let mut all = vec!["tasks"];
        all.extend(args);
        all.extend(["--session", session.as_str(), "--url", url]);
        ferry(&all)
    };
    let (code, stdout, stderr) = tasks(&["list"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(&task) && stdout.contains("working"),
        "{stdout}"
    );
    let (code, stdout, _) = tasks(&["get", &task, "--json"]);
    assert_eq!(code, Some(0));
    let state: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(state["taskId"], task.as_str());

    // Cancelled by one command, seen cancelled by the next; a second cancel is refused.
    let (code, stdout, stderr) = tasks(&["cancel", &task]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("cancelled"), "{stdout}");
    let (code, _, stderr) = tasks(&["cancel", &task]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("already finished"), "{stderr}");
    let (_, stdout, _) = tasks(&["list", "--json"]);
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["tasks"][0]["status"], "cancelled", "{listed}");

    // Another detached task in the same session, its result fetched later.
    let (code, stdout, stderr) = ferry(&[
        "call",
        "countdown",
        "steps=2",
        "--task",
        "--detach",
        "--json",
        "--url",
        url,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let second: Value = serde_json::from_str(&stdout).unwrap();
    let (code, stdout, stderr) = ferry(&[
        "tasks",
        "result",
        second["task"]["taskId"].as_str().unwrap(),
        "--session",
        second["sessionId"].as_str().unwrap(),
        "--url",
        url,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "counted 2 steps");

    // An unknown session is said to be unknown.
    let (code, _, stderr) = ferry(&["tasks", "list", "--session", "nope", "--url", url]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("does not know session nope"), "{stderr}");
}

#[test]
fn task_usage_errors() {
    // A detached task needs a server that outlives the command.
    let (code, _, stderr) = ferry(&["call", "countdown", "--task", "--detach"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("need an HTTP server"), "{stderr}");
    let (code, _, stderr) = ferry(&["tasks", "list", "--session", "x", "--", FERRY, "serve"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("need an HTTP server"), "{stderr}");
    // --detach and --ttl go with --task; `ferry tasks` needs --session.
    for args in [
        vec!["call", "countdown", "--detach"],
        vec!["call", "countdown", "--ttl", "5"],
        vec!["tasks", "list"],
    ] {
        let (code, _, stderr) = ferry(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
    }
    // A revision without tasks is refused before anything is sent.
    let (code, _, stderr) = ferry(&[
        "call",
        "countdown",
        "--task",
        "--protocol-version",
        "2025-06-18",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("2025-11-25"), "{stderr}");
}
