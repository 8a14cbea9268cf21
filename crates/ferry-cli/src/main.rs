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

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory as _, Parser, Subcommand};
use ferry::engine::{Transport, TransportEvent};

mod bridge;
mod check;
mod client;
mod completions;
mod conformance_client;
mod hosts;
mod inspect;
mod new;
mod reference;
mod replay;
mod serve;
mod serve_auth;
mod stderr;
mod target;

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
    Check(Box<check::CheckArgs>),
    /// Serve a stdio MCP server over HTTP (`ferry bridge --http 127.0.0.1:8080 -- cmd`), or
    /// an HTTP MCP server over stdio (`ferry bridge --stdio http://host/mcp`).
    // `--stdio URL` names an HTTP server as `--url` does (the headers and authorization
    // options apply to it); the bridge has no default server, and does not wait for one
    // (its clients do): no --connect-timeout.
    #[command(
        mut_group("remote", |group| group.arg("stdio")),
        mut_arg("connect_timeout", |arg| arg.hide(true)),
        mut_args(|arg| if arg.get_help_heading() == Some(target::HEADING) {
            arg.help_heading("Server")
        } else {
            arg
        })
    )]
    Bridge(Box<bridge::BridgeArgs>),
    /// Inspect a server in a web page served on 127.0.0.1: its tools, resources and
    /// prompts, the server's requests, logs and every message (`ferry inspect -- cmd`).
    // (`--no-browser`, of the authorization options, keeps the page closed too.)
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
    /// Ferry's client as the MCP conformance suite's client scenarios drive it:
    /// `MCP_CONFORMANCE_SCENARIO=initialize ferry conformance-client URL`.
    #[command(hide = true)]
    ConformanceClient(conformance_client::ConformanceClientArgs),
}

fn main() -> ExitCode {
    // Logs go to stderr (stdout carries only protocol messages): see `stderr::logs`. The
    // guard flushes what is queued when `main` returns.
    let _flush_at_exit = stderr::logs();
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
        Command::Check(args) => runtime.block_on(check::run(*args)),
        Command::Bridge(args) => runtime.block_on(bridge::run(*args)),
        Command::Inspect(args) => runtime.block_on(inspect::run(*args)),
        Command::Replay(args) => runtime.block_on(replay::run(*args)),
        Command::Client(command) => runtime.block_on(client::run(*command)),
        Command::Servers(args) => hosts::servers::run(&args),
        Command::Install(args) => hosts::install::run(&args),
        Command::New(args) => new::run(&args),
        Command::Completions(args) => completions::completions(&args, Cli::command()),
        Command::Man => completions::man(Cli::command()),
        Command::ConformanceClient(args) => {
            runtime.block_on(conformance_client::run_scenario(args))
        }
    }
}

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
    let mut words = std::env::args_os().skip(1);
    if words.next().is_some_and(|word| word == "serve") {
        // Plain `ferry serve`, what hosts run: no parser at all (FERRY_REDIS_URL would be
        // an option).
        if words.next().is_none() && std::env::var_os("FERRY_REDIS_URL").is_none() {
            return Command::Serve(Box::new(serve::ServeArgs::plain()));
        }
        if let Ok(ServeOnly {
            command: ServeCommand::Serve(args),
        }) = ServeOnly::try_parse()
        {
            return Command::Serve(args);
        }
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
