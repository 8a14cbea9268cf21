//! The `ferry` command.
//!
//! Today: `ferry serve` (the reference server on stdio) and `ferry demo` (a scripted
//! session against it, printing the exact wire bytes). The client, inspector, conformance
//! checker and bridge commands arrive with their issues.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod reference;

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
    Serve,
    /// Play a scripted session against the reference server and print every message.
    Demo,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve => serve(),
        Command::Demo => demo(),
    }
}

fn serve() -> ExitCode {
    let mut server = reference::ReferenceServer::new();
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.split(b'\n') {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("ferry serve: reading stdin: {e}");
                return ExitCode::FAILURE;
            }
        };
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(reply) = server.handle_line(line) {
            let written = writeln!(stdout, "{reply}").and_then(|()| stdout.flush());
            if let Err(e) = written {
                eprintln!("ferry serve: writing stdout: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The scripted session: a session-era client, a stateless-era client, and malformed input.
const SCRIPT: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0.0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, ferry"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0.0"}}}"#,
    r#"{"jsonrpc":"2.0","id":"s1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"message":"stateless"}}}"#,
    r#"{"jsonrpc":"2.0","id":"s3","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo""#,
    r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"resources/list"}"#,
];

fn demo() -> ExitCode {
    let mut server = reference::ReferenceServer::new();
    let mut stdout = std::io::stdout().lock();
    for line in SCRIPT {
        let reply = server.handle_line(line.as_bytes());
        let shown = writeln!(stdout, "--> {line}").and_then(|()| match &reply {
            Some(reply) => writeln!(stdout, "<-- {reply}"),
            None => writeln!(stdout, "    (no response: notification)"),
        });
        if shown.is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
