//! `ferry serve`: the reference server (or the conformance fixture) on stdio, or on
//! HTTP with `--http ADDR` (loopback unless `--public` is given): Streamable HTTP at `/mcp`
//! and the 2024-11-05 HTTP+SSE transport at `/sse`, optionally requiring OAuth bearer
//! tokens (`--auth-*`, see `serve_auth`). Ctrl-C or SIGTERM shuts the HTTP server down
//! gracefully (requests in flight are answered); a second one stops it at once.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use clap::Args;
use ferry::http::HttpConfig;
use ferry::http::store::{RedisConfig, RedisSessionStore};

use crate::reference;
use crate::serve_auth::AuthArgs;
use crate::stderr::note;

/// Options of `ferry serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Serve the fixture of the MCP conformance suite's server scenarios instead (with
    /// `--http`, POST SSE streams quiet for 250 ms are closed for the client to poll).
    #[arg(long)]
    conformance: bool,
    /// Serve HTTP on this address (`127.0.0.1:8080`, or a port) instead of stdio:
    /// Streamable HTTP at `/mcp`, and the 2024-11-05 HTTP+SSE transport at `/sse`
    /// (GET; its `endpoint` event names `/messages?sessionId=...` for the POSTs).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Allow an `--http` address other than loopback (then every `Host` is accepted;
    /// browser `Origin`s other than loopback are still refused).
    #[arg(long, requires = "http")]
    public: bool,
    /// Answer every session-era request with an SSE stream, even when the response is
    /// the first thing to send (by default that response is one JSON object).
    #[arg(long, requires = "http")]
    sse_responses: bool,
    #[command(flatten)]
    redis: RedisArgs,
    /// End a session-era session after this long without a request or an open stream
    /// (its Redis record expires with it).
    #[arg(
        long,
        requires = "http",
        value_name = "SECONDS",
        default_value_t = 1800
    )]
    session_idle: u64,
    /// At most this many live sessions per client (Streamable HTTP and HTTP+SSE
    /// together; past it, 429): the client is the OAuth principal with `--auth-*`,
    /// otherwise the address it connects from (see `--trusted-proxy`).
    #[arg(
        long,
        requires = "http",
        value_name = "N",
        default_value_t = HttpConfig::default().max_sessions_per_client
    )]
    max_sessions_per_client: usize,
    /// A reverse proxy in front of the server (repeat for several): connections from this
    /// address count against the client address in `X-Forwarded-For` (its rightmost entry
    /// that is not a trusted proxy) for `--max-sessions-per-client`. Default: none (the
    /// header is ignored).
    #[arg(long, requires = "http", value_name = "IP")]
    trusted_proxy: Vec<IpAddr>,
    #[command(flatten)]
    auth: AuthArgs,
    /// Export OpenTelemetry traces and metrics of every request to this OTLP/HTTP collector
    /// (JSON bodies), e.g. http://127.0.0.1:4318; the trace context of the client's
    /// `_meta` is the parent of the server's spans.
    #[arg(long, value_name = "URL", conflicts_with = "conformance")]
    otlp: Option<String>,
    /// On stdio, let a client go that has read nothing of stdout for this long while an
    /// answer waits (exit status 1, said on stderr); 0: wait for ever.
    #[arg(
        long,
        value_name = "SECONDS",
        conflicts_with_all = ["http", "conformance"],
        default_value_t = STDIO_WRITE_TIMEOUT
    )]
    write_timeout: u64,
}

/// `--write-timeout`'s default: the engine's.
const STDIO_WRITE_TIMEOUT: u64 = 60;

/// Sharing sessions through Redis (`ferry serve --http`, `ferry bridge --http`).
#[derive(Args, Debug)]
pub(crate) struct RedisArgs {
    /// Share sessions with the other instances using this Redis
    /// (`redis://127.0.0.1:6379/0`): any instance then serves any session-era session,
    /// behind a load balancer without sticky sessions.
    #[arg(long, requires = "http", value_name = "URL", env = "FERRY_REDIS_URL")]
    redis: Option<String>,
    /// Put this before every Redis key (several servers can share one Redis).
    #[arg(
        long,
        requires = "redis",
        value_name = "PREFIX",
        default_value = "ferry:"
    )]
    redis_prefix: String,
    /// This instance's name among those sharing Redis (letters, digits, `-`, `_`; default:
    /// random at every start): the requests it sends clients carry it, so their answers
    /// reach it through any instance.
    #[arg(long, requires = "redis", value_name = "ID", value_parser = instance_id)]
    instance_id: Option<String>,
    /// Let go of this instance's engine of a session after it has been idle here this
    /// long (no request, no open stream, no task running here); the session stays in
    /// Redis and its next request adopts it again, on any instance.
    #[arg(long, requires = "redis", value_name = "SECONDS", default_value_t = 30)]
    replica_idle: u64,
}

impl ServeArgs {
    /// What `ferry serve` with no options parses to (the command line MCP hosts run):
    /// made without building the command's parser, which is much of a server's start-up.
    /// The test below holds it equal to what the parser gives.
    pub(crate) fn plain() -> ServeArgs {
        ServeArgs {
            conformance: false,
            http: None,
            public: false,
            sse_responses: false,
            redis: RedisArgs {
                redis: None,
                redis_prefix: "ferry:".to_owned(),
                instance_id: None,
                replica_idle: 30,
            },
            session_idle: 1800,
            max_sessions_per_client: HttpConfig::default().max_sessions_per_client,
            trusted_proxy: Vec::new(),
            auth: AuthArgs::default(),
            otlp: None,
            write_timeout: STDIO_WRITE_TIMEOUT,
        }
    }
}

impl RedisArgs {
    /// The Redis session store `--redis` asks for, if any; the usage error otherwise (`who`
    /// names the command in it).
    pub(crate) fn store(&self, who: &str) -> Result<Option<RedisSessionStore>, ExitCode> {
        let Some(url) = &self.redis else {
            return Ok(None);
        };
        let redis = RedisConfig::new(url.as_str()).prefix(self.redis_prefix.as_str());
        match RedisSessionStore::new(redis) {
            Ok(store) => {
                note!("{who}: sessions shared through Redis at {url}");
                Ok(Some(store))
            }
            Err(e) => {
                note!("{who}: --redis {url:?}: {e}");
                Err(ExitCode::from(2))
            }
        }
    }

    /// `config` sharing sessions through `store`, named by `--instance-id`.
    pub(crate) fn apply(
        &self,
        mut config: HttpConfig,
        store: Option<RedisSessionStore>,
    ) -> HttpConfig {
        if let Some(store) = store {
            config = config
                .session_store(std::sync::Arc::new(store))
                .replica_idle_timeout(std::time::Duration::from_secs(self.replica_idle.max(1)));
            config.instance_id = self.instance_id.clone();
        }
        config
    }
}

/// The request-state key every instance sharing `store` uses; Redis is given 10 s to
/// answer (an instance started with it, say).
async fn shared_key(store: &RedisSessionStore) -> Result<[u8; 32], String> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match store.shared_secret("request-state").await {
            Ok(key) => return Ok(key),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(format!("cannot share the request-state key: {e}"));
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(250)).await,
        }
    }
}

/// An `--instance-id`: 1 to 64 letters, digits, `-` and `_`.
fn instance_id(id: &str) -> Result<String, String> {
    if ferry::http::store::valid_instance_id(id) {
        Ok(id.to_owned())
    } else {
        Err("1 to 64 letters, digits, '-' and '_'".to_owned())
    }
}

/// Where `--http` listens: a port alone means loopback.
pub(crate) fn address(spec: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    spec.parse::<SocketAddr>()
        .map_err(|e| format!("--http {spec:?}: not an address (try 127.0.0.1:8080): {e}"))
}

/// Run `ferry serve`: with `--otlp`, export telemetry while serving and what is left at
/// the end.
pub(crate) async fn run(mut args: ServeArgs) -> ExitCode {
    let Some(url) = args.otlp.take() else {
        return serve(args, false).await;
    };
    let telemetry = match ferry::otel::init_otlp(&url, "ferry-serve") {
        Ok(telemetry) => telemetry,
        Err(e) => {
            note!("ferry serve: --otlp {url:?}: {e}");
            return ExitCode::from(2);
        }
    };
    let code = serve(args, true).await;
    if let Err(e) = telemetry.shutdown().await {
        note!("ferry serve: {e}");
    }
    code
}

/// Serve until stdin closes or a stop signal; `traced`: with OpenTelemetry.
async fn serve(args: ServeArgs, traced: bool) -> ExitCode {
    // Instances sharing Redis share the key that seals request state too, so an
    // `input_required` retry may land on any of them.
    let store = match args.redis.store("ferry serve") {
        Ok(store) => store,
        Err(code) => return code,
    };
    let request_state_key = match &store {
        Some(store) if !args.conformance => match shared_key(store).await {
            Ok(key) => Some(key),
            Err(e) => {
                note!("ferry serve: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    let server = if args.conformance {
        reference::conformance::server()
    } else {
        let write_timeout =
            (args.write_timeout > 0).then(|| std::time::Duration::from_secs(args.write_timeout));
        let server = reference::server_with(request_state_key, traced, write_timeout);
        reference::live::tick(server.clone());
        server
    };
    let Some(spec) = args.http else {
        return match server.serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                note!("ferry serve: {e}");
                ExitCode::FAILURE
            }
        };
    };
    let addr = match address(&spec) {
        Ok(addr) => addr,
        Err(e) => {
            note!("ferry serve: {e}");
            return ExitCode::from(2);
        }
    };
    if !addr.ip().is_loopback() && !args.public {
        note!("ferry serve: {addr} is not a loopback address; pass --public to serve other hosts");
        return ExitCode::from(2);
    }
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            note!("ferry serve: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    let config = HttpConfig {
        any_host: args.public,
        // The `server-sse-polling` scenario: `test_reconnection` outlasts this, so its POST
        // stream is closed mid-call and the client resumes it (SEP-1699).
        sse_poll_after: args
            .conformance
            .then_some(reference::conformance::SSE_POLL_AFTER),
        sse_responses: args.sse_responses,
        session_idle_timeout: std::time::Duration::from_secs(args.session_idle.max(1)),
        max_sessions_per_client: args.max_sessions_per_client,
        trusted_proxies: args.trusted_proxy.clone(),
        ..Default::default()
    };
    let mut config = args.redis.apply(config, store);
    let endpoint = format!("http://{bound}{}", config.endpoint);
    note!("ferry serve: MCP on {endpoint}");
    if let Some(sse) = &config.legacy_sse {
        note!("ferry serve: 2024-11-05 HTTP+SSE on http://{bound}{sse}");
    }
    match args.auth.resource_server(&endpoint) {
        Ok(Some(auth)) => {
            note!(
                "ferry serve: bearer tokens for {} required; metadata at {}",
                auth.resource(),
                auth.metadata_url()
            );
            config = config.auth(auth);
        }
        Ok(None) => {}
        Err(e) => {
            note!("ferry serve: {e}");
            return ExitCode::from(2);
        }
    }
    // The first Ctrl-C or SIGTERM shuts down gracefully: no new connections, requests in
    // flight answered (within the engine's shutdown grace), streams ended; a second one
    // stops at once.
    let (first, stopping) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        stop_signal().await;
        note!("ferry serve: shutting down; answering the requests in flight (again to stop now)");
        let _ = first.send(());
    };
    let again = async move {
        if stopping.await.is_ok() {
            stop_signal().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        served = ferry::http::serve_with_shutdown(server, listener, config, signal) => match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                note!("ferry serve: {e}");
                ExitCode::FAILURE
            }
        },
        () = again => {
            note!("ferry serve: stopped with requests in flight");
            ExitCode::FAILURE
        }
    }
}

/// Ctrl-C, or on Unix SIGTERM (what service managers and `kill` send); elsewhere Ctrl-C only.
pub(crate) async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::ServeArgs;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    #[test]
    fn plain_is_what_no_options_parse_to() {
        // FERRY_REDIS_URL would give `--redis`: `plain` is used only when it is unset.
        if std::env::var_os("FERRY_REDIS_URL").is_some() {
            return;
        }
        let parsed = Serve::try_parse_from(["serve"]).expect("parses").args;
        assert_eq!(format!("{parsed:?}"), format!("{:?}", ServeArgs::plain()));
    }
}
