//! Which server a command talks to, named the same way by every command: `--url URL` is a
//! Streamable HTTP server (`--header` adds headers); `-- command args...` runs a stdio
//! server as a child process; `--server NAME` (or `-- @NAME`) is either, as a host's file
//! says (see `hosts`); nothing runs the reference server in this process. Also connecting the client, and closing: the child is shut down the MCP
//! stdio way (stdin closed, then `SIGTERM`, then `SIGKILL`).

use std::sync::Arc;
use std::time::Duration;

use ferry::client::{Client, ClientBuilder, ClientError};
use ferry::engine::{
    ChildCommand, ChildProcess, EngineHandle, ShutdownTimeouts, StderrMode, Transport,
};
use ferry::http_client::{HttpClientConfig, HttpConnection};
use tokio::task::JoinHandle;

use super::auth::Gate;
use super::{Common, answers, output, trace};

/// Frames of the in-process pair and of the child's pipes.
const QUEUE: usize = 64;

/// The shutdown of a child after Ctrl-C: short, so the command exits promptly.
const INTERRUPTED: ShutdownTimeouts = ShutdownTimeouts {
    after_stdin_close: Duration::from_millis(700),
    after_sigterm: Duration::from_millis(500),
    after_sigkill: Duration::from_millis(500),
};

/// How long closing waits for the trace relay to pass on the last frames.
const RELAY_GRACE: Duration = Duration::from_millis(300);

/// A started target: what must stay alive while the client talks to it.
pub(crate) struct Target {
    child: Option<ChildProcess>,
    /// The HTTP connection (closed with a DELETE of its session).
    http: Option<HttpConnection>,
    /// The HTTP requests' auth hook (what refused them, if anything did).
    gate: Option<Arc<Gate>>,
    /// The in-process reference server.
    _server: Option<EngineHandle>,
    relay: Option<JoinHandle<()>>,
}

/// The target of `common` as reports and the inspector name it (a named server as its
/// entry says: a command or a URL).
pub(crate) fn describe(common: &Common) -> serde_json::Value {
    // Quietly: the lookup says where the entry came from once, when the target starts.
    let mut quiet = common.clone();
    quiet.verbose = false;
    let resolved = quiet.resolved();
    let common = resolved.as_ref().unwrap_or(common);
    match (common.url(), common.server()) {
        (Some(url), _) => serde_json::json!({"kind": "http", "url": url}),
        (None, []) => serde_json::json!({"kind": "in-process"}),
        (None, command) => serde_json::json!({"kind": "stdio", "command": command}),
    }
}

/// Start the target named by `common` and return the client's transport.
pub(crate) fn start(common: &Common) -> Result<(Target, Transport), String> {
    let common = &common.resolved()?;
    let mut http = None;
    let mut gate = None;
    let (transport, child, server) = match common.server.split_first() {
        _ if common.url.is_some() => {
            let url = common.url.as_deref().unwrap_or_default();
            let mut config = HttpClientConfig {
                max_message_bytes: common.max_message_bytes,
                ..HttpClientConfig::default()
            };
            for (name, value) in &common.headers {
                config = config.header(name, value)?;
            }
            let given = common
                .headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
            let authorization = common.auth.authorization(url, given)?;
            let hook = Arc::new(Gate::new(authorization));
            config = config.auth(hook.clone());
            gate = Some(hook);
            let (transport, connection) =
                ferry::http_client::connect(url, config).map_err(|e| e.to_string())?;
            http = Some(connection);
            (transport, None, None)
        }
        Some((program, args)) => {
            // The child's stderr is the user's: a server's own diagnostics stay visible.
            let mut command = ChildCommand::new(program)
                .args(args)
                .envs(common.env().iter().map(|(k, v)| (k, v)))
                .stderr(StderrMode::Inherit);
            if let Some(dir) = common.cwd() {
                command = command.current_dir(dir);
            }
            let max = common.max_message_bytes;
            let (transport, child) =
                ChildProcess::spawn(&command, max, QUEUE).map_err(|e| e.to_string())?;
            if common.verbose {
                output::note(&format!("ferry: started {program} (pid {})", child.id()));
            }
            (transport, Some(child), None)
        }
        None => {
            let (client_side, server_side) = Transport::pair(QUEUE);
            let server = crate::reference::server().serve(server_side);
            (client_side, None, Some(server))
        }
    };
    let (transport, relay) = if common.verbose {
        let (transport, relay) = trace::wrap(transport);
        (transport, Some(relay))
    } else {
        (transport, None)
    };
    let target = Target {
        child,
        http,
        gate,
        _server: server,
        relay,
    };
    Ok((target, transport))
}

/// Connect a client over `transport` with the options of `common`.
pub(crate) async fn connect(common: &Common, transport: Transport) -> Result<Client, ClientError> {
    connect_with(common, transport, |builder| {
        answers::register(
            builder,
            common.sampling_reply.clone(),
            common.elicit_reply.clone(),
            &common.roots,
        )
    })
    .await
}

/// [`connect`] with the handlers of the server's requests (sampling, elicitation, roots)
/// registered by `handlers` instead of the command-line answers.
pub(crate) async fn connect_with(
    common: &Common,
    transport: Transport,
    handlers: impl FnOnce(ClientBuilder) -> ClientBuilder,
) -> Result<Client, ClientError> {
    let mut builder = Client::builder("ferry-cli", env!("CARGO_PKG_VERSION"));
    // The command line's revision first, then the era a named server's entry gives:
    // either spares the `server/discover` probe.
    if let Some(version) = common.protocol_version {
        builder = builder.version(version);
    } else if let Some(era) = common.era() {
        builder = builder.era(era);
    }
    // An HTTP server answers every POST, if only with an error: its probe waits for the
    // answer unless told otherwise.
    let request_timeout = common
        .timeout
        .unwrap_or(ferry::engine::EngineConfig::default().request_timeout);
    match (common.probe_timeout(), common.url()) {
        (Some(probe), _) => builder = builder.probe_timeout(probe),
        (None, Some(_)) => builder = builder.probe_timeout(request_timeout),
        (None, None) => {}
    }
    // The engine's limits first: the timeout below is one of them.
    builder = builder.engine(ferry::engine::EngineConfig {
        max_message_bytes: common.max_message_bytes,
        ..ferry::engine::EngineConfig::default()
    });
    if let Some(timeout) = common.timeout {
        builder = builder.timeout(timeout);
    }
    if common.otlp.is_some() {
        builder = builder.otel(ferry::otel::ClientTracing::new());
    }
    let client = handlers(builder).connect(transport).await?;
    if common.verbose {
        let server = client
            .server_info()
            .map(|i| format!("{} {}", i.name, i.version))
            .unwrap_or_else(|| "the server".into());
        output::note(&format!(
            "ferry: connected to {server}, protocol {}",
            client.version().as_str()
        ));
    }
    Ok(client)
}

impl Target {
    /// Whether the child has exited, and how (for an error message).
    pub(crate) fn child_status(&self) -> Option<String> {
        let child = self.child.as_ref()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(format!("the server process exited ({status})")),
            _ => None,
        }
    }

    /// Whether `error` is a failure of authorization, and then what to say about it.
    pub(crate) fn auth_failure(&self, error: &ClientError) -> Option<String> {
        self.gate.as_ref()?.failure(error)
    }

    /// Close the connection (the client must be dropped already): let the trace relay pass
    /// on the last frames, then end the HTTP session or shut the child down.
    pub(crate) async fn close(self, interrupted: bool) {
        if let Some(relay) = self.relay {
            let _ = tokio::time::timeout(RELAY_GRACE, relay).await;
        }
        if let Some(http) = self.http {
            http.close().await;
        }
        let Some(child) = self.child else { return };
        let timeouts = if interrupted {
            INTERRUPTED
        } else {
            ShutdownTimeouts::default()
        };
        let pid = child.id();
        match child.shutdown(timeouts).await {
            Ok(shutdown) => tracing::debug!(pid, ?shutdown, "the server process ended"),
            Err(e) => output::note(&format!(
                "ferry: the server process (pid {pid}) did not end: {e}"
            )),
        }
    }
}
