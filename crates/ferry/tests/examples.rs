//! Runs the examples in `crates/ferry/examples/`: each self-contained one to completion,
//! each server driven by a real client over its transport, checking the exit status and
//! the lines a reader is told to expect. An example that stops working fails here.
//!
//! The binaries are the ones `cargo test` builds next to this test
//! (`target/debug/examples/NAME`). A test run that does not build them (`--test examples`
//! alone) finds them missing or stale; build them first:
//!
//!     cargo build -p ferry-mcp --examples --features http-server,http-auth,http-client-oauth
//!     cargo test -p ferry-mcp --features http-server,http-auth,http-client-oauth --test examples

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry::client::Client;
use ferry::engine::{ChildCommand, ShutdownTimeouts, StderrMode};
use ferry::http_client::HttpClientConfig;
use serde_json::json;

/// How long an example may take to run to completion.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The examples this file does not run, each with the reason. Every other file in
/// `examples/` must be run by a test below (see `every_example_is_run`).
const NOT_RUN_HERE: &[(&str, &str)] = &[
    (
        "http_session_memory",
        "a measurement: it waits out 30 s idle timeouts over 100,000 sessions",
    ),
    (
        "testing_with_testclient",
        "`test = true`: `cargo test` builds it as a test harness and runs its tests itself",
    ),
];

/// The examples the tests below run.
const RUN_HERE: &[&str] = &[
    "ask_the_user",
    "axum_mount",
    "client_handlers",
    "echo_stdio",
    "http_oauth_client",
    "http_server",
    "prompts_completion",
    "readme_client",
    "readme_server",
    "resources_subscriptions",
    "stdio_client",
];

/// The example's binary, built by `cargo test` next to this test's own directory; a
/// missing one fails the test.
fn binary(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's path");
    // target/debug/deps/examples-HASH -> target/debug/examples/NAME
    let debug = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug");
    let path = debug
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: the examples are built by `cargo test` (not by `--test examples` \
         alone: `cargo build -p ferry-mcp --examples` with the same features first)",
        path.display()
    );
    path
}

/// What a finished example said.
struct Ran {
    stdout: String,
    stderr: String,
}

impl Ran {
    /// Panics unless stdout has a line equal to `line`.
    fn says(&self, line: &str) -> &Self {
        assert!(
            self.stdout.lines().any(|l| l == line),
            "expected the line {line:?}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Kills the process when dropped (a test that fails leaves nothing running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Run example `name` with `args` to completion (stdin closed); panics unless it exits
/// with success within the timeout.
fn run(name: &str, args: &[&str]) -> Ran {
    let mut child = Running(
        Command::new(binary(name))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}")),
    );
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.0.stdout.take().expect("stdout")));
    let stderr = read(Box::new(child.0.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "{name} still running after {TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let ran = Ran {
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    };
    assert!(
        status.success(),
        "{name} exited with {status}\n--- stdout:\n{}\n--- stderr:\n{}",
        ran.stdout,
        ran.stderr
    );
    ran
}

/// Every file in `examples/` is run here or listed with its reason, every binary run here
/// exists, and the guide's table of examples (`docs/src/examples.md`) names every example.
#[test]
fn every_example_is_run() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    found.sort();
    let mut known: Vec<String> = RUN_HERE
        .iter()
        .chain(NOT_RUN_HERE.iter().map(|(name, _)| name))
        .map(|name| name.to_string())
        .collect();
    known.sort();
    assert_eq!(
        found, known,
        "every example is run here or listed in NOT_RUN_HERE with a reason"
    );
    for name in RUN_HERE {
        binary(name);
    }
    // The guide's table of examples names each of them.
    let chapter = std::fs::read_to_string(dir.join("../../../docs/src/examples.md"))
        .expect("docs/src/examples.md");
    for name in &found {
        assert!(
            chapter.contains(&format!("| `{name}`")) || chapter.contains(&format!(", `{name}`")),
            "docs/src/examples.md's table of examples does not name {name}"
        );
    }
}

#[test]
fn stdio_client_runs_itself_as_a_child_server() {
    run("stdio_client", &[])
        .says("tool: shout - Shout the text back")
        .says("shout says: AHOY")
        .says("child exited: exit status: 0");
}

#[test]
fn http_oauth_client_gets_a_token_then_calls_the_protected_server() {
    run("http_oauth_client", &[])
        .says("tools: whoami")
        .says("whoami: example-app with scope mcp:tools");
}

#[test]
fn resources_subscriptions_hears_the_update_in_both_eras() {
    let ran = run("resources_subscriptions", &[]);
    ran.says("resource: status://current")
        .says("template: status://history/{n}")
        .says("updated: status://current")
        .says("now: deploying (Session)")
        .says("now: deploying (Stateless)")
        .says("first: all quiet");
    let updates = ran.stdout.matches("updated: status://current").count();
    assert_eq!(updates, 2, "{}", ran.stdout);
}

#[test]
fn prompts_completion_completes_then_fills_the_prompt() {
    run("prompts_completion", &[])
        .says("prompt: plan_trip")
        .says("  argument: destination (required)")
        .says("  argument: month (optional)")
        .says("destination \"L\" -> Lisbon, London, Lyon")
        .says("destination \"O\" -> Oslo, Osaka")
        .says("month \"J\" for Oslo -> June, July")
        .says("User: Plan a three-day trip to Oslo in July.");
}

#[test]
fn axum_mount_serves_both_routes() {
    run("axum_mount", &["--self-test"])
        .says("GET /health: 200 OK ok")
        .says("MCP tools/call greet (2026-07-28): Hello, axum!");
}

#[test]
fn client_handlers_answer_sampling_and_elicitation_in_both_eras() {
    let ran = run("client_handlers", &[]);
    ran.says("  elicitation: What should the haiku be about?")
        .says("  sampling: Write a haiku about the sea.")
        .says("Grey waves fold and fold,")
        .says("(by example-model)");
    assert_eq!(ran.stdout.matches("(by example-model)").count(), 2);
}

#[test]
fn ask_the_user_greets_in_both_eras() {
    run("ask_the_user", &[])
        .says("2025-06-18: \"Hello, Ada!\"")
        .says("2026-07-28: \"Hello, Ada!\"");
}

/// A client connected to the example's binary run as a stdio server.
async fn spawn_stdio(name: &str) -> (Client, ferry::engine::ChildProcess) {
    let command = ChildCommand::new(binary(name)).stderr(StderrMode::Inherit);
    Client::builder("examples-test", "1.0.0")
        .timeout(TIMEOUT)
        .spawn(&command)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(result: &ferry::protocol::types::CallToolResult) -> String {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.content[0].as_text().expect("text").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_stdio_echoes_over_stdio() {
    let (client, child) = spawn_stdio("echo_stdio").await;
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    drop(client);
    let outcome = child.shutdown(ShutdownTimeouts::default()).await.unwrap();
    assert!(outcome.status.success(), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readme_server_adds_and_keeps_notes_over_stdio() {
    let (client, child) = spawn_stdio("readme_server").await;
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "3");
    let noted = client
        .call_tool("note", json!({"text": "milk"}))
        .await
        .unwrap();
    assert_eq!(text(&noted), "1 notes");
    let notes = client.read_resource("notes://all").await.unwrap();
    assert_eq!(notes.contents[0].as_text(), Some("milk"));
    drop(client);
    let outcome = child.shutdown(ShutdownTimeouts::default()).await.unwrap();
    assert!(outcome.status.success(), "{outcome:?}");
}

#[test]
fn readme_client_calls_the_readme_server_as_its_child() {
    let server = binary("readme_server");
    let server = server.to_str().expect("a UTF-8 path");
    let newest = format!(
        "speaking {}",
        ferry::protocol::ProtocolVersion::LATEST.as_str()
    );
    run("readme_client", &[server])
        .says(&newest)
        .says("tool add")
        .says("tool note")
        .says("1 + 2 = 3")
        .says("notes: buy milk");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_echoes_over_http() {
    let mut server = Running(
        Command::new(binary("http_server"))
            .arg("127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("http_server"),
    );
    // It says where it listens on stderr: "serving MCP on http://ADDRESS/mcp".
    let stderr = server.0.stderr.take().expect("stderr");
    let first_line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line).map(|_| line)
    });
    let line = tokio::time::timeout(TIMEOUT, first_line)
        .await
        .expect("http_server says where it listens")
        .expect("join")
        .expect("stderr");
    let url = line
        .trim()
        .strip_prefix("serving MCP on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();

    let (client, connection) = Client::builder("examples-test", "1.0.0")
        .timeout(TIMEOUT)
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    drop(client);
    connection.close().await;
    assert!(server.0.try_wait().unwrap().is_none(), "it keeps serving");
}
