//! Starting the server a client command named (see `crate::target`): an HTTP connection
//! (with its headers and OAuth), a stdio child (its stderr relayed to ours, its last lines
//! kept), or the reference server in this process; connecting the client, a child being
//! waited for while it starts (see `crate::target::starting`); and closing: the child is
//! shut down the MCP stdio way (stdin closed, then `SIGTERM`, then `SIGKILL`).

use std::sync::Arc;
use std::time::Duration;

use ferry::client::{Client, ClientBuilder, ClientError};
use ferry::engine::{ChildProcess, EngineHandle, ShutdownTimeouts, StderrMode, Transport};
use ferry::http_client::{HttpClientConfig, HttpConnection};
use tokio::task::JoinHandle;

use super::auth::Gate;
use super::{Common, answers, output, trace};
use crate::target::starting::{Starting, Waited};
use crate::target::{Endpoint, Resolved, shown};

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
    /// The child's command as typed, for what is said while it starts.
    shown: String,
    /// The HTTP connection (closed with a DELETE of its session).
    http: Option<HttpConnection>,
    /// The HTTP requests' auth hook (what refused them, if anything did).
    gate: Option<Arc<Gate>>,
    /// The in-process reference server.
    _server: Option<EngineHandle>,
    relay: Option<JoinHandle<()>>,
}

/// Why a client could not connect.
pub(crate) enum Unconnected {
    /// The client's own error.
    Client(ClientError),
    /// The child exited before answering, or did not answer in time: what to say.
    Child(String),
}

/// The authorization hook for `url`: OAuth as `resolved`'s options say, off when `headers`
/// carry an `Authorization` of their own (the hook remembers refusals, to say why).
pub(crate) fn gate(
    resolved: &Resolved,
    url: &str,
    headers: &[(String, String)],
) -> Result<Arc<Gate>, String> {
    let given = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    let authorization = resolved.auth.authorization(url, given)?;
    Ok(Arc::new(Gate::new(authorization)))
}

/// Start the server `resolved` names and return the client's transport.
pub(crate) fn start(common: &Common, resolved: &Resolved) -> Result<(Target, Transport), String> {
    let mut http = None;
    let mut gate = None;
    let mut shown_as = String::new();
    let (transport, child, server) = match &resolved.endpoint {
        Endpoint::Http { url, headers } => {
            let mut config = HttpClientConfig {
                max_message_bytes: common.max_message_bytes,
                ..HttpClientConfig::default()
            };
            for (name, value) in headers {
                config = config.header(name, value)?;
            }
            let hook = self::gate(resolved, url, headers)?;
            config = config.auth(hook.clone());
            gate = Some(hook);
            let (transport, connection) = match &common.session {
                Some(id) => ferry::http_client::resume(url, config, id, session_version(common)),
                None => ferry::http_client::connect(url, config),
            }
            .map_err(|e| e.to_string())?;
            if common.keep_session {
                connection.keep_session();
            }
            http = Some(connection);
            (transport, None, None)
        }
        Endpoint::Stdio { command, .. } => {
            // The child's stderr is the user's: a server's own diagnostics stay visible,
            // and its last lines say why it did not start, if it does not.
            let child_command = resolved
                .child_command()
                .ok_or("the command after `--` is empty")?
                .stderr(StderrMode::Relay);
            let max = common.max_message_bytes;
            let (transport, child) =
                ChildProcess::spawn(&child_command, max, QUEUE).map_err(|e| e.to_string())?;
            shown_as = shown(command);
            if common.verbose {
                output::note(&format!("ferry: started {shown_as} (pid {})", child.id()));
            }
            (transport, Some(child), None)
        }
        Endpoint::InProcess => {
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
        shown: shown_as,
        http,
        gate,
        _server: server,
        relay,
    };
    Ok((target, transport))
}

/// The revision of a session taken up with `--session`: `--protocol-version`, or the one
/// revision with tasks.
fn session_version(common: &Common) -> ferry::protocol::ProtocolVersion {
    common
        .protocol_version
        .unwrap_or(ferry::protocol::ProtocolVersion::V2025_11_25)
}

/// The client's builder for the options of `common` and the server `resolved` names.
fn builder(common: &Common, resolved: &Resolved) -> ClientBuilder {
    let mut builder = Client::builder("ferry-cli", env!("CARGO_PKG_VERSION"));
    // The command line's revision first, then the era a named server's entry gives:
    // either spares the `server/discover` probe.
    if let Some(version) = common.protocol_version {
        builder = builder.version(version);
    } else if let Some(era) = resolved.era {
        builder = builder.era(era);
    }
    // An HTTP server answers every POST, if only with an error: its probe waits for the
    // answer unless told otherwise.
    let request_timeout = common
        .timeout
        .unwrap_or(ferry::engine::EngineConfig::default().request_timeout);
    let http = matches!(resolved.endpoint, Endpoint::Http { .. });
    match (common.probe_timeout(), http) {
        (Some(probe), _) => builder = builder.probe_timeout(probe),
        (None, true) => builder = builder.probe_timeout(request_timeout),
        (None, false) => {}
    }
    // The engine's limits first: the timeout below is one of them.
    builder = builder.engine(ferry::engine::EngineConfig {
        max_message_bytes: common.max_message_bytes,
        ..ferry::engine::EngineConfig::default()
    });
    if let Some(timeout) = common.timeout {
        builder = builder.timeout(timeout);
    }
    builder = builder.connect_timeout(resolved.connect_timeout(request_timeout));
    if common.otlp.is_some() {
        builder = builder.middleware(ferry::otel::ClientTracing::new());
    }
    builder
}

impl Target {
    /// Connect a client with the options of `common` (the server's requests answered as
    /// they say).
    pub(crate) async fn connect(
        &self,
        common: &Common,
        resolved: &Resolved,
        transport: Transport,
    ) -> Result<Client, Unconnected> {
        self.connect_with(common, resolved, transport, |builder| {
            answers::register(
                builder,
                common.sampling_reply.clone(),
                common.elicit_reply.clone(),
                &common.roots,
            )
        })
        .await
    }

    /// [`Target::connect`] with the handlers of the server's requests (sampling,
    /// elicitation, roots) registered by `handlers` instead of the command-line answers. A
    /// child is waited for while it runs, up to the connect timeout, with notes on stderr;
    /// its exit ends the wait at once.
    pub(crate) async fn connect_with(
        &self,
        common: &Common,
        resolved: &Resolved,
        transport: Transport,
        handlers: impl FnOnce(ClientBuilder) -> ClientBuilder,
    ) -> Result<Client, Unconnected> {
        let builder = handlers(builder(common, resolved));
        let connecting = match &common.session {
            Some(_) => Box::pin(builder.resume(transport, session_version(common)))
                as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>,
            None => Box::pin(builder.connect(transport)),
        };
        let limit = resolved.connect_timeout(Duration::ZERO);
        let connected = match self.starting(limit) {
            None => connecting.await,
            Some(starting) => {
                let note = |line: &str| output::note(&format!("ferry: {line}"));
                match starting.wait(connecting, note).await {
                    Waited::Done(Err(ClientError::ConnectionLost)) => {
                        // Its output ended: it is exiting, or has.
                        return Err(match starting.exit_report().await {
                            Some(report) => Unconnected::Child(report),
                            None => Unconnected::Client(ClientError::ConnectionLost),
                        });
                    }
                    // The handshake's own bound is the connect timeout too.
                    Waited::Done(Err(ClientError::Timeout(_))) => {
                        return Err(Unconnected::Child(starting.timed_out()));
                    }
                    Waited::Done(connected) => connected,
                    Waited::Failed(why) => return Err(Unconnected::Child(why)),
                }
            }
        };
        let client = connected.map_err(Unconnected::Client)?;
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

    /// The child, to wait for while it starts, given `limit` (none for other servers).
    pub(crate) fn starting(&self, limit: Duration) -> Option<Starting<'_>> {
        Some(Starting {
            child: self.child.as_ref()?,
            shown: &self.shown,
            limit,
        })
    }

    /// The HTTP session's id, if there is one.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.http.as_ref()?.session_id()
    }

    /// Whether the child has exited, and how (for an error message).
    pub(crate) fn child_status(&self) -> Option<String> {
        let child = self.child.as_ref()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(format!("the server process exited ({status})")),
            _ => None,
        }
    }

    /// For a stdio child: a future that ends when it exits, with how (for the page's
    /// "closed" notice); `None` for other servers.
    pub(crate) fn child_exit(
        &self,
    ) -> Option<impl Future<Output = String> + Send + 'static + use<>> {
        let exited = self.child.as_ref()?.exited();
        Some(async move {
            match exited.await {
                Ok(status) => format!("the server process exited ({status})"),
                Err(e) => format!("the server process is gone: {e}"),
            }
        })
    }

    /// The child's last stderr lines (none for other servers).
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.child
            .as_ref()
            .map(ChildProcess::stderr_tail)
            .unwrap_or_default()
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
