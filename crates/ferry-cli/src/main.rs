//! The `ferry` command.
//!
//! Today: `ferry serve` (the reference server on stdio), `ferry demo` (a scripted session
//! against it in-process, printing the exact wire bytes), and the client commands (`ferry
//! tools`, `call`, `read`, ...: see `client`), which talk to the reference server in-process
//! or to any stdio server given after `--`, and `ferry check` (the conformance checker: see
//! `check`), and `ferry bridge` (a stdio server over HTTP and back: see `bridge`), and
//! `ferry inspect` (the inspector, a local web page: see `inspect`), and `ferry replay` (its
//! wire export played again against a server: see `replay`), and `ferry servers` and `ferry
//! install` (the servers of the MCP hosts' files, which `--server NAME` names: see
//! `hosts`), and `ferry new` (a new server crate: see `new`).

use std::io::{IsTerminal as _, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory as _, Parser, Subcommand};
use ferry::engine::{Transport, TransportEvent};
use tracing_subscriber::layer::{Layer as _, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

mod bridge;
mod check;
mod client;
mod completions;
mod hosts;
mod inspect;
mod new;
mod reference;
mod replay;
mod serve;
mod serve_auth;
mod stderr;

/// Ferry: the Model Context Protocol, both ends, every revision.
#[derive(Parser)]
#[command(name = "ferry", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the reference server on stdio (newline-delimited JSON-RPC; logs on stderr).
    Serve(Box<serve::ServeArgs>),
    /// Play a scripted session against the reference server and print every message.
    Demo,
    /// Check an MCP server's conformance, requirement by requirement, under every revision
    /// it offers: `ferry check -- node server.js`.
    Check(check::CheckArgs),
    /// Serve a stdio MCP server over HTTP (`ferry bridge --http 127.0.0.1:8080 -- cmd`), or
    /// an HTTP MCP server over stdio (`ferry bridge --stdio http://host/mcp`).
    Bridge(Box<bridge::BridgeArgs>),
    /// Inspect a server in a web page served on 127.0.0.1: its tools, resources and
    /// prompts, the server's requests, logs and every message (`ferry inspect -- cmd`).
    // `--no-browser` is the client options' flag (which keeps OAuth from opening a
    // browser); here it also keeps the page closed, with any target.
    #[command(mut_arg("no_browser", |arg| arg
        .requires(clap::builder::Resettable::Reset)
        .conflicts_with(clap::builder::Resettable::Reset)
        .help("Do not open a browser (for the page, nor for OAuth): only print the URL")
        .help_heading(None::<&'static str>)))]
    // The one-shot commands' output options, refused by `inspect`: kept out of its help.
    #[command(mut_arg("json", |arg| arg.hide(true)), mut_arg("out", |arg| arg.hide(true)),
        mut_arg("sampling_reply", |arg| arg.hide(true)),
        mut_arg("elicit_reply", |arg| arg.hide(true)), mut_arg("otlp", |arg| arg.hide(true)))]
    Inspect(Box<inspect::InspectArgs>),
    /// Replay a recording (the wire export of `ferry inspect`) against a server and report
    /// whether each answer matches the recorded one: `ferry replay wire.jsonl -- cmd`.
    // The client options that have no meaning for a replay (the recording answers the
    // server and fixes the revision) are refused, and kept out of its help.
    #[command(
        mut_arg("protocol_version", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("sampling_reply", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("elicit_reply", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("roots", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("out", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("otlp", |arg| arg.hide(true).conflicts_with("file")),
        mut_arg("json", |arg| arg.help("Print the report as JSON on stdout")),
        mut_arg("timeout", |arg| arg.help("How long each answer is waited for, in seconds (default 60)"))
    )]
    Replay(Box<replay::ReplayArgs>),
    #[command(flatten)]
    Client(Box<client::ClientCommand>),
    /// List the servers configured in the MCP hosts' files (Claude Code, Claude Desktop,
    /// Cursor, VS Code), which `--server NAME` names.
    Servers(hosts::servers::ServersArgs),
    /// Add a server to an MCP host's file: `ferry install NAME --host cursor -- cmd args`.
    Install(Box<hosts::install::InstallArgs>),
    /// Create a new MCP server crate on Ferry: `ferry new my-server`.
    New(new::NewArgs),
    /// Print a completion script for a shell: `source <(ferry completions bash)`.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff): `ferry man > ferry.1`.
    Man,
}

fn main() -> ExitCode {
    // Logs go to stderr (stdout carries only protocol messages), filtered by FERRY_LOG;
    // events inside handlers also reach their client, at the level the client chose. A
    // write that fails (stderr gone) is dropped: the layer's report of a failed write must
    // stay off, as it is an `eprintln!`, which panics when stderr fails (see `stderr`).
    // Written by a thread of its own and dropped when that thread falls behind (a full
    // stderr pipe nobody reads): the runtime never waits on stderr. The guard flushes
    // what is queued when `main` returns. The queue is allocated and written in full at
    // start, so it is kept small: the default (128,000 lines) was 4 MiB of every process.
    let (writer, _flush_at_exit) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(STDERR_QUEUE_LINES)
        .lossy(true)
        .thread_name("ferry-stderr")
        .finish(std::io::stderr());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        // Colours for a terminal only: piped or captured, escape codes are noise.
        .with_ansi(std::io::stderr().is_terminal())
        .log_internal_errors(false)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_env("FERRY_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        );
    tracing_subscriber::registry()
        .with(stderr)
        .with(ferry::server::ClientLogLayer::new())
        .init();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            stderr::note!("ferry: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match parse() {
        Command::Serve(args) => runtime.block_on(serve::run(*args)),
        Command::Demo => runtime.block_on(demo()),
        Command::Check(args) => runtime.block_on(check::run(args)),
        Command::Bridge(args) => runtime.block_on(bridge::run(*args)),
        Command::Inspect(args) => runtime.block_on(inspect::run(*args)),
        Command::Replay(args) => runtime.block_on(replay::run(*args)),
        Command::Client(command) => runtime.block_on(client::run(*command)),
        Command::Servers(args) => hosts::servers::run(&args),
        Command::Install(args) => hosts::install::run(&args),
        Command::New(args) => new::run(&args),
        Command::Completions(args) => completions::completions(&args, Cli::command()),
        Command::Man => completions::man(Cli::command()),
    }
}

/// Log lines queued for stderr before more are dropped.
const STDERR_QUEUE_LINES: usize = 1024;

/// `ferry serve`'s arguments alone: what MCP hosts start, parsed without building the whole
/// command tree (every subcommand's options), which was most of a server's start-up work.
#[derive(Parser)]
#[command(name = "ferry")]
struct ServeOnly {
    #[command(subcommand)]
    command: ServeCommand,
}

#[derive(Subcommand)]
enum ServeCommand {
    Serve(Box<serve::ServeArgs>),
}

/// The command line: `ferry serve ...` through [`ServeOnly`] when it parses there; anything
/// else, help and errors included, through the whole tree, so they read the same.
fn parse() -> Command {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|word| word == "serve")
        && let Ok(ServeOnly {
            command: ServeCommand::Serve(args),
        }) = ServeOnly::try_parse()
    {
        return Command::Serve(args);
    }
    Cli::parse().command
}

/// The scripted session: a session-era client, a stateless-era client, and malformed input.
const SCRIPT: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0.0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, ferry"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0.0"}}}"#,
    r#"{"jsonrpc":"2.0","id":"s1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":7}}}"#,
    r#"{"jsonrpc":"2.0","id":"s3","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo""#,
    r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"resources/list"}"#,
];

async fn demo() -> ExitCode {
    let (mut client, server_side) = Transport::pair(16);
    let _server = reference::server().serve(server_side);
    let mut stdout = std::io::stdout().lock();
    for line in SCRIPT {
        if writeln!(stdout, "--> {line}").is_err()
            || client
                .outgoing
                .send(line.as_bytes().to_vec())
                .await
                .is_err()
        {
            return ExitCode::FAILURE;
        }
        let is_notification = serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("method").is_some() && v.get("id").is_none());
        if is_notification {
            let _ = writeln!(stdout, "    (a notification: no response)");
            continue;
        }
        match tokio::time::timeout(Duration::from_secs(5), client.incoming.recv()).await {
            Ok(Some(TransportEvent::Frame(frame))) => {
                let _ = writeln!(stdout, "<-- {}", String::from_utf8_lossy(&frame));
            }
            _ => {
                let _ = writeln!(stdout, "    (no response)");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
