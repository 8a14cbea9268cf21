//! `ferry bridge`: a stdio MCP server over HTTP (`--http ADDR -- command args`), or an
//! HTTP MCP server over stdio (`--stdio URL`). See `http` and `stdio`.
//!
//! The server is named as every command names it (see `crate::target`), the one kind
//! each direction takes: `--http` a stdio server (`-- command`, or `--server NAME` of a
//! stdio entry, run with its environment), `--stdio` an HTTP one (`--stdio URL` or `--url
//! URL`, or `--server NAME` of an HTTP entry, with the headers and the authorization
//! options). There is no default: the bridge needs a server to bridge.

mod http;
mod mux;
mod pending;
mod stdio;
mod upstream;

use crate::stderr::note;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use ferry::client::Backoff;
use ferry::engine::StderrMode;
use ferry::http::HttpConfig;

use crate::serve::address;
use crate::target::{Endpoint, TargetArgs};

/// Options of `ferry bridge`.
#[derive(Args, Debug)]
pub(crate) struct BridgeArgs {
    /// Serve the stdio server named below (`-- command`, `--server NAME`) over HTTP on this
    /// address (`127.0.0.1:8080`, or a port): Streamable HTTP at `/mcp` (both eras),
    /// 2024-11-05 HTTP+SSE at `/sse`.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "stdio",
        required_unless_present = "stdio"
    )]
    http: Option<String>,
    /// Expose the HTTP MCP server at this URL on stdin/stdout (or the one named below:
    /// `--url URL`, `--server NAME`).
    #[arg(long, value_name = "URL", num_args = 0..=1)]
    stdio: Option<Option<String>>,
    /// One child process per session (default).
    #[arg(long, requires = "http", conflicts_with = "shared")]
    per_session: bool,
    /// One child process for every session (request ids remapped).
    #[arg(long, requires = "http")]
    shared: bool,
    /// Allow an `--http` address other than loopback (then every `Host` is accepted;
    /// browser `Origin`s other than loopback still need `--allow-origin`).
    #[arg(long, requires = "http")]
    public: bool,
    /// Allow this browser `Origin` (`https://app.example.com`) besides loopback ones.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    origins: Vec<String>,
    /// The most sessions at once (then 503). Default: 100 with a child per session,
    /// 10,000 with `--shared`.
    #[arg(long, value_name = "N", requires = "http")]
    max_sessions: Option<usize>,
    /// End a session (and its child) after this many seconds without a request or an open
    /// stream. Default: 1800.
    #[arg(long, value_name = "SECONDS", requires = "http")]
    idle_timeout: Option<u64>,
    /// `--http`: answer a request with an error when the server has not answered it within
    /// this many seconds (its progress restarts the count), and cancel it at the server.
    /// 0: wait as long as it takes. Default: 60.
    #[arg(long, value_name = "SECONDS", requires = "http")]
    request_timeout: Option<f64>,
    /// `--stdio`: when stdin closes, wait at most this many seconds for the answers to
    /// requests already sent (then answer them with an error) before ending the session.
    /// Default: 10.
    #[arg(long, value_name = "SECONDS", requires = "stdio")]
    drain_timeout: Option<f64>,
    #[command(flatten)]
    redis: crate::serve::RedisArgs,
    #[command(flatten)]
    target: TargetArgs,
}

/// Run `ferry bridge`.
pub(crate) async fn run(args: BridgeArgs) -> ExitCode {
    let max_frame_bytes = ferry_max_frame();
    if args.target.connect_timeout_given() {
        note!("ferry bridge: --connect-timeout has no meaning here: the bridge's clients wait");
        return ExitCode::from(2);
    }
    if let Some(url) = &args.stdio {
        let drain = args.drain_timeout.unwrap_or(10.0);
        let Ok(drain) = Duration::try_from_secs_f64(drain) else {
            note!("ferry bridge: --drain-timeout {drain} is not a number of seconds");
            return ExitCode::from(2);
        };
        let named = match url {
            Some(_) if args.target.names_a_server() => {
                note!("ferry bridge: --stdio URL names the server already");
                return ExitCode::from(2);
            }
            Some(url) => args.target.with_url(url),
            None => args.target.clone(),
        };
        let resolved = match named.resolve(false) {
            Ok(resolved) => resolved,
            Err(e) => {
                note!("ferry bridge: {e}");
                return ExitCode::from(2);
            }
        };
        let Endpoint::Http { url, headers } = &resolved.endpoint else {
            note!(
                "ferry bridge: --stdio exposes an HTTP server: give its URL (--stdio URL, or \
                 --url URL), or --server NAME of an HTTP server"
            );
            return ExitCode::from(2);
        };
        let gate = match crate::client::target::gate(&resolved, url, headers) {
            Ok(gate) => gate,
            Err(e) => {
                note!("ferry bridge: {e}");
                return ExitCode::from(2);
            }
        };
        return stdio::run(url, headers, gate, max_frame_bytes, drain).await;
    }
    let Some(spec) = args.http else {
        note!("ferry bridge: give --http ADDR -- command, or --stdio URL");
        return ExitCode::from(2);
    };
    let resolved = match args.target.resolve(false) {
        Ok(resolved) => resolved,
        Err(e) => {
            note!("ferry bridge: {e}");
            return ExitCode::from(2);
        }
    };
    let (Endpoint::Stdio { command: words, .. }, Some(command)) =
        (&resolved.endpoint, resolved.child_command())
    else {
        note!(
            "ferry bridge: --http serves a stdio server: give its command after `--`, or \
             --server NAME of a stdio server"
        );
        return ExitCode::from(2);
    };
    let addr = match address(&spec) {
        Ok(addr) => addr,
        Err(e) => {
            note!("ferry bridge: {e}");
            return ExitCode::from(2);
        }
    };
    if !addr.ip().is_loopback() && !args.public {
        note!("ferry bridge: {addr} is not a loopback address; pass --public to serve other hosts");
        return ExitCode::from(2);
    }
    let request_timeout = match args.request_timeout.unwrap_or(60.0) {
        0.0 => None,
        seconds => match Duration::try_from_secs_f64(seconds) {
            Ok(timeout) => Some(timeout),
            Err(_) => {
                note!("ferry bridge: --request-timeout {seconds} is not a number of seconds");
                return ExitCode::from(2);
            }
        },
    };
    let child = upstream::ChildSpec {
        // The server's own diagnostics pass through to the bridge's stderr, their last
        // lines kept to say why it did not start, if it does not.
        command: command.stderr(StderrMode::Relay),
        shown: crate::target::shown(words),
        backoff: Backoff::default(),
        max_frame_bytes,
        lifecycle: upstream::Lifecycle::new(),
        request_timeout,
    };
    let defaults = HttpConfig::default();
    let config = HttpConfig {
        any_host: args.public,
        allowed_origins: args.origins,
        max_sessions: args.max_sessions.unwrap_or(if args.shared {
            defaults.max_sessions
        } else {
            100
        }),
        session_idle_timeout: args
            .idle_timeout
            .map_or(defaults.session_idle_timeout, Duration::from_secs),
        ..defaults
    };
    // A session adopted by another bridge replays its recorded `initialize` to a child of
    // that bridge (`--per-session`: its own child; `--shared`: the shared child, whose
    // first answer serves every later `initialize`).
    let config = match args.redis.store("ferry bridge") {
        Ok(store) => args.redis.apply(config, store),
        Err(code) => return code,
    };
    http::run(addr, config, args.shared, child).await
}

/// The largest message accepted on a pipe: the engine's default.
fn ferry_max_frame() -> usize {
    ferry::engine::EngineConfig::default().max_message_bytes
}
