//! The child-process transport with real processes (`sh`, `python3`, `sleep`): frames both
//! ways, stderr to `tracing` and its last lines kept, the stdio shutdown sequence, kill on
//! drop, crashes.
//!
//! Linux only: whether a process is gone is read from `/proc`.
#![cfg(target_os = "linux")]

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferry::engine::{
    CallError, CallOptions, ChildCommand, ChildProcess, Engine, EngineConfig, Handler,
    HandlerResult, Peer, RequestContext, ShutdownStage, ShutdownTimeouts, StderrMode, Transport,
    TransportEvent,
};
use ferry::protocol::jsonrpc::{ErrorObject, Notification, Request};
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

const MAX_FRAME: usize = 1 << 20;
const QUEUE: usize = 16;

/// An MCP-ish server in Python: `echo` answers its params; `ask_ping` pings the client and
/// answers the client's reply; other messages are ignored. Exits at end of input.
const ECHO_SERVER: &str = r#"
import json, sys
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    method = msg.get("method")
    if method == "echo":
        result = msg.get("params", {})
    elif method == "ask_ping":
        print(json.dumps({"jsonrpc": "2.0", "id": "p1", "method": "ping"}), flush=True)
        result = {"pong": json.loads(sys.stdin.readline())}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// A client role that serves nothing (the engine answers `ping` itself).
struct Nothing;

impl Handler for Nothing {
    async fn request(&self, request: Request, _: RequestContext) -> HandlerResult {
        Err(ErrorObject::method_not_found(&request.method))
    }

    async fn notification(&self, _: Notification, _: &Peer) {}
}

fn spawn(command: &ChildCommand) -> (Transport, ChildProcess) {
    ChildProcess::spawn(command, MAX_FRAME, QUEUE).expect("spawn")
}

fn sh(script: &str) -> ChildCommand {
    ChildCommand::new("sh").arg("-c").arg(script)
}

/// The next frame as text, or `None` when the incoming side has ended.
async fn next_frame(transport: &mut Transport) -> Option<String> {
    let event = tokio::time::timeout(Duration::from_secs(5), transport.incoming.recv())
        .await
        .expect("the incoming side neither delivered nor ended within 5 s")?;
    match event {
        TransportEvent::Frame(frame) => Some(String::from_utf8(frame).expect("UTF-8 frame")),
        other => panic!("unexpected {other:?}"),
    }
}

/// Whether `pid` is a live process (not gone, not a zombie), and its process group.
fn process(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let mut fields = after_name.split(' ');
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    (state != "Z").then_some(pgrp)
}

async fn until_gone(pid: u32) {
    let started = Instant::now();
    while process(pid).is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "process {pid} still alive after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn frames_flow_both_ways_through_the_engine() {
    let (transport, child) = spawn(&ChildCommand::new("python3").args(["-u", "-c", ECHO_SERVER]));
    let engine = Engine::start(transport, Nothing, EngineConfig::default());
    let echoed = engine
        .peer
        .call("echo", &json!({"x": [1, "two"]}), CallOptions::default())
        .await
        .expect("echo");
    let echoed: Value = serde_json::from_str(echoed.get()).expect("json");
    assert_eq!(echoed, json!({"x": [1, "two"]}));
    // The child asks us for a ping (the engine answers it) and returns our answer.
    let pong = engine
        .peer
        .call("ask_ping", &json!({}), CallOptions::default())
        .await
        .expect("ask_ping");
    let pong: Value = serde_json::from_str(pong.get()).expect("json");
    assert_eq!(
        pong,
        json!({"pong": {"jsonrpc": "2.0", "id": "p1", "result": {}}})
    );
    let shutdown = child
        .shutdown(ShutdownTimeouts::default())
        .await
        .expect("shutdown");
    assert_eq!(shutdown.stage, ShutdownStage::StdinClosed);
    assert!(shutdown.status.success(), "{:?}", shutdown.status);
    tokio::time::timeout(Duration::from_secs(5), engine.task)
        .await
        .expect("the engine ends with the child")
        .expect("engine task");
}

/// One captured `tracing` event.
#[derive(Clone, Debug)]
struct Captured {
    target: String,
    level: tracing::Level,
    message: String,
    program: String,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

impl Capture {
    fn of_target(&self, target: &str) -> Vec<Captured> {
        let events = self.0.lock().expect("lock");
        events
            .iter()
            .filter(|e| e.target == target)
            .cloned()
            .collect()
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    program: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_owned(),
            "program" => self.program = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "program" => self.program = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.lock().expect("lock").push(Captured {
            target: event.metadata().target().to_owned(),
            level: *event.metadata().level(),
            message: fields.message,
            program: fields.program,
        });
    }
}

#[tokio::test]
async fn stderr_lines_go_to_tracing_and_never_into_the_frames() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    // A current-thread runtime: every task of the child's transport runs on this thread.
    let _default = tracing::subscriber::set_default(subscriber);
    let script = r#"
        echo 'first line' >&2
        printf 'bad \377 byte\r\n' >&2
        echo '{"jsonrpc":"2.0","method":"notifications/hello"}'
        echo 'second line' >&2
        echo '{"jsonrpc":"2.0","method":"notifications/bye"}'
        read -r _
    "#;
    let (mut transport, child) = spawn(&sh(script));
    assert_eq!(
        next_frame(&mut transport).await.as_deref(),
        Some(r#"{"jsonrpc":"2.0","method":"notifications/hello"}"#)
    );
    assert_eq!(
        next_frame(&mut transport).await.as_deref(),
        Some(r#"{"jsonrpc":"2.0","method":"notifications/bye"}"#)
    );
    let shutdown = child
        .shutdown(ShutdownTimeouts::all(Duration::from_secs(2)))
        .await
        .expect("shutdown");
    assert_eq!(shutdown.stage, ShutdownStage::StdinClosed);
    assert_eq!(
        next_frame(&mut transport).await,
        None,
        "no stderr in the frames"
    );

    let started = Instant::now();
    while capture.of_target("ferry::child").len() < 3 && started.elapsed() < Duration::from_secs(5)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let lines: Vec<_> = capture
        .of_target("ferry::child")
        .into_iter()
        .filter(|e| e.level == tracing::Level::INFO)
        .collect();
    let messages: Vec<_> = lines.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        ["first line", "bad \u{FFFD} byte", "second line"],
        "{lines:?}"
    );
    assert!(lines.iter().all(|e| e.program == "sh"), "{lines:?}");
}

#[tokio::test]
async fn shutdown_of_a_well_behaved_child_ends_when_stdin_closes() {
    // Exits at end of input with the number of lines it read.
    let (transport, child) = spawn(&sh("n=0; while read -r _; do n=$((n+1)); done; exit $n"));
    for i in 0..3 {
        let frame = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "n", "params": [i]}));
        transport
            .outgoing
            .send(frame.expect("json"))
            .await
            .expect("queued");
    }
    let started = Instant::now();
    let shutdown = child
        .shutdown(ShutdownTimeouts::all(Duration::from_secs(2)))
        .await
        .expect("shutdown");
    assert_eq!(shutdown.stage, ShutdownStage::StdinClosed);
    assert_eq!(
        shutdown.status.code(),
        Some(3),
        "queued frames were flushed first"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        transport.outgoing.send(b"{}".to_vec()).await.is_err(),
        "the outgoing side is closed"
    );
}

#[tokio::test]
async fn a_child_ignoring_stdin_eof_is_terminated_by_sigterm() {
    let (_transport, child) = spawn(&ChildCommand::new("sleep").arg("100"));
    let pid = child.id();
    let started = Instant::now();
    let shutdown = child
        .shutdown(ShutdownTimeouts::all(Duration::from_millis(200)))
        .await
        .expect("shutdown");
    let elapsed = started.elapsed();
    assert_eq!(shutdown.stage, ShutdownStage::Terminated);
    assert_eq!(shutdown.status.signal(), Some(15), "{:?}", shutdown.status);
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_millis(1500),
        "{elapsed:?}"
    );
    until_gone(pid).await;
}

#[tokio::test]
async fn a_child_ignoring_sigterm_is_killed_by_sigkill() {
    // `trap "" TERM` ignores SIGTERM in the shell and in `sleep`, which inherits it.
    let (mut transport, child) = spawn(&sh(r#"trap "" TERM; echo ready; sleep 100"#));
    assert_eq!(next_frame(&mut transport).await.as_deref(), Some("ready"));
    let pid = child.id();
    let started = Instant::now();
    let shutdown = child
        .shutdown(ShutdownTimeouts::all(Duration::from_millis(200)))
        .await
        .expect("shutdown");
    let elapsed = started.elapsed();
    assert_eq!(shutdown.stage, ShutdownStage::Killed);
    assert_eq!(shutdown.status.signal(), Some(9), "{:?}", shutdown.status);
    assert!(
        elapsed >= Duration::from_millis(400) && elapsed < Duration::from_millis(2000),
        "{elapsed:?}"
    );
    until_gone(pid).await;
    // The sleep was in the child's process group: killed too, so stdout closes.
    assert_eq!(next_frame(&mut transport).await, None);
}

#[tokio::test]
async fn dropping_the_handle_kills_the_child_and_its_process_group() {
    let (mut transport, child) = spawn(&sh("sleep 100 & echo $!; wait"));
    let grandchild: u32 = next_frame(&mut transport)
        .await
        .expect("pid")
        .parse()
        .expect("a pid");
    let pid = child.id();
    assert_eq!(
        process(pid),
        Some(pid),
        "the child leads a group of its own"
    );
    assert_eq!(process(grandchild), Some(pid), "the grandchild is in it");
    drop(child);
    until_gone(pid).await;
    until_gone(grandchild).await;
    assert_eq!(next_frame(&mut transport).await, None);
}

#[tokio::test]
async fn without_its_own_group_the_child_shares_ours() {
    let (_transport, child) = spawn(
        &ChildCommand::new("sleep")
            .arg("100")
            .own_process_group(false),
    );
    let ours = process(std::process::id()).expect("this process");
    assert_eq!(process(child.id()), Some(ours));
    let pid = child.id();
    let shutdown = child
        .shutdown(ShutdownTimeouts::all(Duration::from_millis(100)))
        .await
        .expect("shutdown");
    assert_eq!(shutdown.stage, ShutdownStage::Terminated);
    until_gone(pid).await;
}

#[tokio::test]
async fn a_crashing_child_ends_the_incoming_side() {
    let (mut transport, child) = spawn(&sh(r#"echo '{"last":true}'; exit 3"#));
    let exited = tokio::spawn(child.exited());
    assert_eq!(
        next_frame(&mut transport).await.as_deref(),
        Some(r#"{"last":true}"#),
        "what it wrote before exiting is delivered"
    );
    assert_eq!(next_frame(&mut transport).await, None);
    let status = exited.await.expect("join").expect("status");
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        child.try_wait().expect("status").map(|s| s.code()),
        Some(Some(3))
    );
    assert_eq!(child.wait().await.expect("status").code(), Some(3));
    let shutdown = child
        .shutdown(ShutdownTimeouts::default())
        .await
        .expect("shutdown");
    assert_eq!(shutdown.stage, ShutdownStage::AlreadyExited);
    assert_eq!(shutdown.status.code(), Some(3));
}

/// The last stderr lines of a child whose stderr this process reads (logged, or relayed to
/// ours), complete as soon as its exit is known; none when it writes to ours directly.
#[tokio::test]
async fn the_last_stderr_lines_are_kept_and_complete_at_exit() {
    let script = "for i in $(seq 1 25); do echo \"line $i\" >&2; done; \
                  printf 'step 1\\rstep 2\\r\\n' >&2; printf 'no end' >&2; exit 3";
    for mode in [StderrMode::Log(tracing::Level::DEBUG), StderrMode::Relay] {
        let (_transport, child) = spawn(&sh(script).stderr(mode));
        let status = child.wait().await.expect("status");
        assert_eq!(status.code(), Some(3));
        let tail = child.stderr_tail();
        assert_eq!(tail.len(), 20, "{mode:?}: {tail:?}");
        assert_eq!(tail[0], "line 8", "{mode:?}: {tail:?}");
        assert_eq!(
            tail[17..],
            ["line 25", "step 2", "no end"],
            "{mode:?}: {tail:?}"
        );
    }
    let (_transport, child) = spawn(&sh("echo unseen >&2; exit 1").stderr(StderrMode::Discard));
    child.wait().await.expect("status");
    assert!(child.stderr_tail().is_empty());
}

#[tokio::test]
async fn a_grandchild_holding_stdout_open_does_not_keep_the_connection() {
    // The background sleep inherits stdout, so the pipe stays open after the shell exits.
    let (mut transport, child) = spawn(&sh("sleep 30 & echo $!; exit 4"));
    let grandchild = next_frame(&mut transport).await.expect("pid");
    let started = Instant::now();
    assert_eq!(next_frame(&mut transport).await, None);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(child.wait().await.expect("status").code(), Some(4));
    let _ = std::process::Command::new("kill").arg(&grandchild).status();
}

#[tokio::test]
async fn a_request_to_a_crashed_child_fails_with_connection_closed() {
    // Reads the request, then dies without answering.
    let (transport, child) = spawn(&sh("read -r _; exit 1"));
    let engine = Engine::start(transport, Nothing, EngineConfig::default());
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        engine.peer.call("echo", &json!({}), CallOptions::default()),
    )
    .await
    .expect("no hang");
    assert_eq!(outcome.expect_err("no answer"), CallError::ConnectionClosed);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(child.wait().await.expect("status").code(), Some(1));
    tokio::time::timeout(Duration::from_secs(5), engine.task)
        .await
        .expect("the engine ends")
        .expect("engine task");
    // Later requests fail at once too.
    let later = tokio::time::timeout(
        Duration::from_secs(5),
        engine.peer.call("echo", &json!({}), CallOptions::default()),
    )
    .await
    .expect("no hang");
    assert_eq!(later.expect_err("closed"), CallError::ConnectionClosed);
}

#[tokio::test]
async fn args_env_and_cwd_are_applied() {
    let dir = std::env::temp_dir().canonicalize().expect("temp dir");
    let command = sh(r#"pwd; printf '%s\n' "$@"; echo "set=$FERRY_SET home=${HOME-unset} order=${FERRY_ORDER-unset}/$FERRY_LAST""#)
        .args(["ferry-test", "one", "two words"])
        .env("FERRY_SET", "yes")
        .env_remove("HOME")
        .env("FERRY_ORDER", "1")
        .env_remove("FERRY_ORDER")
        .env_remove("FERRY_LAST")
        .env("FERRY_LAST", "2")
        .current_dir(&dir);
    let (mut transport, _child) = spawn(&command);
    let mut lines = Vec::new();
    while let Some(line) = next_frame(&mut transport).await {
        lines.push(line);
    }
    assert_eq!(
        lines,
        [
            dir.to_str().expect("UTF-8 path"),
            "one",
            "two words",
            "set=yes home=unset order=unset/2"
        ]
    );

    let (mut transport, _child) = spawn(
        &ChildCommand::new("/usr/bin/env")
            .env("DROPPED", "1")
            .env_clear()
            .env("ONLY", "1"),
    );
    assert_eq!(next_frame(&mut transport).await.as_deref(), Some("ONLY=1"));
    assert_eq!(next_frame(&mut transport).await, None);
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it() {
    let err = ChildProcess::spawn(
        &ChildCommand::new("ferry-no-such-program"),
        MAX_FRAME,
        QUEUE,
    )
    .expect_err("missing");
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    assert!(err.to_string().contains("ferry-no-such-program"), "{err}");
}
