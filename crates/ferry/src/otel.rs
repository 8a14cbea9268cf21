//! OpenTelemetry for MCP (feature `otel`), following the OpenTelemetry semantic conventions
//! for MCP: a span per request on both ends, duration metrics, and W3C trace context
//! carried in `params._meta`, so that one trace goes from the host through the client and
//! the server into the tool.
//!
//! - [`ServerTracing`]: a server [`Middleware`]. Each request gets a span of kind `Server`
//!   named `{mcp.method.name} {target}` (`tools/call add`; the method alone when there is
//!   no target), a child of the `traceparent`/`tracestate` found in the request's `_meta`
//!   (a malformed one is ignored), with the attributes `mcp.method.name`,
//!   `mcp.session.id` (session era: over HTTP the `Mcp-Session-Id`, the one the client's
//!   span carries; on stdio the connection's name), `mcp.protocol.version`, `jsonrpc.request.id`,
//!   `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.resource.uri` and, on failure,
//!   `error.type` (the JSON-RPC code, or `tool_error` for an `isError` result) with status
//!   Error. The handler runs inside the span's context, so the tool's own spans nest in it.
//!   Each request is measured in `mcp.server.operation.duration` (seconds), each
//!   session-era session in `mcp.server.session.duration` (from its `initialize` to the
//!   end of its connection).
//! - [`ClientTracing`], given to [`ClientBuilder::middleware`](crate::client::ClientBuilder::middleware):
//!   a span of kind `Client` around each request the client sends (its retries and
//!   `input_required` rounds included), whose context is injected into the request's
//!   `_meta` (both eras, every transport), with `mcp.session.id` over HTTP in the session
//!   era (the `Mcp-Session-Id`); `mcp.client.operation.duration` per request and
//!   `mcp.client.session.duration` per connection.
//! - [`init_otlp`]: OTLP/HTTP export with JSON bodies (a batch span processor and a
//!   periodic metric reader), installed as the global providers that `ServerTracing::new`
//!   and `ClientTracing::new` use; its [`OtelGuard`] flushes on shutdown or drop.
//!
//! Without this feature none of it is compiled; with it, nothing runs until a
//! `ServerTracing` is installed or a client is given a `ClientTracing`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ferry::otel::{ClientTracing, ServerTracing};
//! use ferry::server::Server;
//!
//! let telemetry = ferry::otel::init_otlp("http://127.0.0.1:4318", "my-server")?;
//! let server = Server::builder("my-server", "1.0.0")
//!     .middleware(ServerTracing::new())
//!     .build();
//! server.serve_stdio().await?;
//! telemetry.shutdown().await?; // exports what is left, without blocking the runtime
//! # let _ = ClientTracing::new();
//! # Ok(())
//! # }
//! ```

// With only one of `server` and `client`, the helpers of the other end are unused.
#![cfg_attr(
    not(all(feature = "client", feature = "server")),
    allow(dead_code, unused_imports)
)]

#[cfg(feature = "client")]
use std::time::Duration;
#[cfg(any(feature = "client", feature = "server"))]
use std::time::Instant;

use opentelemetry::context::FutureExt as _;
use opentelemetry::metrics::{Histogram, Meter, MeterProvider};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider};
use opentelemetry::{Context, InstrumentationScope, KeyValue, global};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::Value;

#[cfg(feature = "server")]
use crate::engine::HandlerResult;
#[cfg(feature = "server")]
use crate::server::{BoxFuture, Middleware, Next, RequestInfo, SessionInfo, is_tool_error};

mod export;

pub use export::{OtelError, OtelGuard, init_otlp};
/// The OpenTelemetry API this module records with: re-exported so that the providers and
/// contexts a program passes are of the version Ferry uses.
pub use opentelemetry;
/// The OpenTelemetry SDK (tracer and meter providers, exporters) of the version Ferry uses.
pub use opentelemetry_sdk;

/// The attribute names of the semantic conventions for MCP.
pub mod attributes {
    /// The request's method, e.g. `tools/call`.
    pub const MCP_METHOD_NAME: &str = "mcp.method.name";
    /// The session the request belongs to (session era).
    pub const MCP_SESSION_ID: &str = "mcp.session.id";
    /// The revision the request speaks, e.g. `2025-06-18`.
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// The JSON-RPC request id.
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
    /// The tool called (`tools/call`).
    pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
    /// The prompt asked for (`prompts/get`).
    pub const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
    /// `execute_tool` for `tools/call`.
    pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The resource read or (un)subscribed.
    pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
    /// Why the request failed: the JSON-RPC error code (`-32602`), `tool_error` for an
    /// `isError` result, or what went wrong on the client's side (`timeout`...).
    pub const ERROR_TYPE: &str = "error.type";
}

use attributes::*;

/// The `error.type` of an `isError` tool result.
pub const TOOL_ERROR: &str = "tool_error";

/// The instrumentation scope of Ferry's spans and metrics.
fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("ferry")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url("https://opentelemetry.io/schemas/1.37.0")
        .build()
}

/// The bucket boundaries the semantic conventions advise for MCP durations (seconds).
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// A duration histogram in seconds, with the advised buckets.
fn duration_histogram(meter: &Meter, name: &'static str, what: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(what)
        .with_boundaries(DURATION_BUCKETS.to_vec())
        .build()
}

/// A tracer of any provider, boxed (the global one is boxed too).
fn boxed_tracer<P>(provider: &P) -> global::BoxedTracer
where
    P: TracerProvider,
    P::Tracer: Send + Sync + 'static,
    <P::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
{
    global::BoxedTracer::new(Box::new(provider.tracer_with_scope(scope())))
}

/// What one end records with: its tracer, its operation and its session durations.
#[cfg(any(feature = "server", feature = "client"))]
#[derive(Debug)]
struct Instruments {
    tracer: global::BoxedTracer,
    duration: Histogram<f64>,
    session: Histogram<f64>,
}

#[cfg(any(feature = "server", feature = "client"))]
impl Instruments {
    /// The instruments of these providers; `operation` and `session` name the two
    /// histograms and say what they measure.
    fn new<T, M>(
        tracers: &T,
        meters: &M,
        operation: (&'static str, &'static str),
        session: (&'static str, &'static str),
    ) -> Self
    where
        T: TracerProvider,
        T::Tracer: Send + Sync + 'static,
        <T::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
        M: MeterProvider + ?Sized,
    {
        let meter = meters.meter_with_scope(scope());
        Instruments {
            tracer: boxed_tracer(tracers),
            duration: duration_histogram(&meter, operation.0, operation.1),
            session: duration_histogram(&meter, session.0, session.1),
        }
    }
}

/// The span name of the conventions: `{method} {target}`, or the method alone.
fn span_name(method: &str, target: Option<&str>) -> String {
    match target {
        Some(target) => format!("{method} {target}"),
        None => method.to_owned(),
    }
}

/// The attribute naming a request's target, by method.
fn target_attribute(method: &str, target: &str) -> Option<KeyValue> {
    let key = match method {
        "tools/call" => GEN_AI_TOOL_NAME,
        "prompts/get" => GEN_AI_PROMPT_NAME,
        m if m.starts_with("resources/") => MCP_RESOURCE_URI,
        _ => return None,
    };
    Some(KeyValue::new(key, target.to_owned()))
}

/// The attributes of a request's duration: method, revision, tool or prompt name (not the
/// resource URI: metrics want few distinct values), and the error type.
fn metric_attributes(
    method: &str,
    version: Option<&'static str>,
    target: Option<&str>,
    error: Option<&str>,
) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new(MCP_METHOD_NAME, method.to_owned())];
    if let Some(version) = version {
        attributes.push(KeyValue::new(MCP_PROTOCOL_VERSION, version));
    }
    if let Some(target) = target
        && matches!(method, "tools/call" | "prompts/get")
        && let Some(attribute) = target_attribute(method, target)
    {
        attributes.push(attribute);
    }
    if let Some(error) = error {
        attributes.push(KeyValue::new(ERROR_TYPE, error.to_owned()));
    }
    attributes
}

/// Reads `traceparent` and `tracestate` from a `_meta` object (strings only: anything
/// else is as if absent).
struct MetaExtractor<'a>(&'a serde_json::Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes the trace context's keys into a `_meta` object.
struct MetaInjector<'a>(&'a mut serde_json::Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The trace context in a request's `_meta` (`traceparent`, `tracestate`): the parent of
/// the server's span. A missing or malformed `traceparent` gives an empty context (the
/// span is then a root).
pub fn extract_context(meta: &serde_json::Map<String, Value>) -> Context {
    TraceContextPropagator::new().extract(&MetaExtractor(meta))
}

/// Put `cx`'s span context into `params._meta` as `traceparent` (and `tracestate` when it
/// has one). `params` that is not an object is left alone; a `_meta` that is not an object
/// is replaced.
///
/// ```
/// use ferry::otel::opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
///
/// let span = SpanContext::new(
///     TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
///     SpanId::from_hex("00f067aa0ba902b7").unwrap(),
///     TraceFlags::SAMPLED,
///     true,
///     TraceState::default(),
/// );
/// let cx = ferry::otel::opentelemetry::Context::new().with_remote_span_context(span);
/// let mut params = serde_json::json!({"name": "add"});
/// ferry::otel::inject_context(&cx, &mut params);
/// assert_eq!(
///     params["_meta"]["traceparent"],
///     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
/// );
/// ```
pub fn inject_context(cx: &Context, params: &mut Value) {
    let Value::Object(object) = params else {
        return;
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(meta) = meta {
        TraceContextPropagator::new().inject_context(cx, &mut MetaInjector(meta));
    }
}

/// Spans and `mcp.server.operation.duration` for every request a server answers: a
/// [`Middleware`] (see the [module](self) for what it records).
///
/// ```
/// use ferry::otel::ServerTracing;
/// use ferry::server::Server;
///
/// // The global tracer and meter providers (`init_otlp` installs them), or ones of your own:
/// use ferry::otel::opentelemetry_sdk::{metrics::SdkMeterProvider, trace::SdkTracerProvider};
///
/// let tracers = SdkTracerProvider::builder().build();
/// let meters = SdkMeterProvider::builder().build();
/// let server = Server::builder("traced", "1")
///     .middleware(ServerTracing::with_providers(&tracers, &meters))
///     .build();
/// # let _ = (server, ServerTracing::new());
/// ```
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
#[derive(Debug)]
pub struct ServerTracing(Instruments);

#[cfg(feature = "server")]
impl Default for ServerTracing {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "server")]
impl ServerTracing {
    /// Record with the global tracer and meter providers.
    pub fn new() -> Self {
        Self::with_providers(&global::tracer_provider(), &*global::meter_provider())
    }

    /// Record with these providers.
    pub fn with_providers<T, M>(tracers: &T, meters: &M) -> Self
    where
        T: TracerProvider,
        T::Tracer: Send + Sync + 'static,
        <T::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
        M: MeterProvider + ?Sized,
    {
        ServerTracing(Instruments::new(
            tracers,
            meters,
            (
                "mcp.server.operation.duration",
                "Duration of the MCP requests the server answered.",
            ),
            (
                "mcp.server.session.duration",
                "Duration of the MCP sessions the server served.",
            ),
        ))
    }

    /// The span's attributes known before the request runs.
    fn attributes(request: &RequestInfo) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(6);
        attributes.push(KeyValue::new(MCP_METHOD_NAME, request.method.clone()));
        if let Some(version) = request.version {
            attributes.push(KeyValue::new(MCP_PROTOCOL_VERSION, version.as_str()));
        }
        // The stateless era has no session: the key is then only the connection's.
        if request.era() != Some(ferry_protocol::Era::Stateless) {
            attributes.push(KeyValue::new(MCP_SESSION_ID, request.session.to_string()));
        }
        attributes.push(KeyValue::new(JSONRPC_REQUEST_ID, request.id.to_string()));
        if let Some(target) = &request.target
            && let Some(attribute) = target_attribute(&request.method, target)
        {
            attributes.push(attribute);
        }
        if request.method == "tools/call" {
            attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"));
        }
        attributes
    }
}

/// The `error.type` of a server's answer, and a message for the span's status.
#[cfg(feature = "server")]
fn server_error(method: &str, result: &HandlerResult) -> Option<(String, String)> {
    match result {
        Err(error) => Some((error.code.to_string(), error.message.clone())),
        Ok(result) if method == "tools/call" && is_tool_error(result.get()) => Some((
            TOOL_ERROR.to_owned(),
            "the tool answered isError".to_owned(),
        )),
        Ok(_) => None,
    }
}

#[cfg(feature = "server")]
impl Middleware for ServerTracing {
    fn handle<'a>(
        &'a self,
        request: &'a RequestInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, HandlerResult> {
        let parent = extract_context(&request.meta.other);
        let span = self
            .0
            .tracer
            .span_builder(span_name(&request.method, request.target.as_deref()))
            .with_kind(SpanKind::Server)
            .with_attributes(Self::attributes(request))
            .start_with_context(&self.0.tracer, &parent);
        let cx = parent.with_span(span);
        let started = Instant::now();
        Box::pin(async move {
            let result = next.run().with_context(cx.clone()).await;
            let error = server_error(&request.method, &result);
            let span = cx.span();
            if let Some((error_type, message)) = &error {
                span.set_attribute(KeyValue::new(ERROR_TYPE, error_type.clone()));
                span.set_status(Status::error(message.clone()));
            }
            span.end();
            self.0.duration.record(
                started.elapsed().as_secs_f64(),
                &metric_attributes(
                    &request.method,
                    request.version.map(|v| v.as_str()),
                    request.target.as_deref(),
                    error.as_ref().map(|(t, _)| t.as_str()),
                ),
            );
            result
        })
    }

    fn session_ended(&self, session: &SessionInfo, lasted: std::time::Duration) {
        self.0.session.record(
            lasted.as_secs_f64(),
            &[KeyValue::new(
                MCP_PROTOCOL_VERSION,
                session.version.as_str(),
            )],
        );
    }
}

/// Client spans, `mcp.client.operation.duration` and `mcp.client.session.duration`: give
/// it to [`ClientBuilder::middleware`](crate::client::ClientBuilder::middleware) (see the
/// [module](self) for what it records).
///
/// ```
/// use ferry::client::Client;
/// use ferry::otel::ClientTracing;
///
/// let builder = Client::builder("app", "1").middleware(ClientTracing::new());
/// # let _ = builder;
/// ```
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[derive(Debug)]
pub struct ClientTracing(Instruments);

#[cfg(feature = "client")]
impl Default for ClientTracing {
    fn default() -> Self {
        Self::new()
    }
}

/// One traced client request: its context (the span, and the `isError` mark) and when it
/// began.
#[cfg(feature = "client")]
struct ClientCall {
    cx: Context,
    method: &'static str,
    target: Option<String>,
    version: &'static str,
    started: Instant,
}

#[cfg(feature = "client")]
impl ClientTracing {
    /// Record with the global tracer and meter providers.
    pub fn new() -> Self {
        Self::with_providers(&global::tracer_provider(), &*global::meter_provider())
    }

    /// Record with these providers.
    pub fn with_providers<T, M>(tracers: &T, meters: &M) -> Self
    where
        T: TracerProvider,
        T::Tracer: Send + Sync + 'static,
        <T::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
        M: MeterProvider + ?Sized,
    {
        ClientTracing(Instruments::new(
            tracers,
            meters,
            (
                "mcp.client.operation.duration",
                "Duration of the MCP requests the client sent, until their answer.",
            ),
            (
                "mcp.client.session.duration",
                "Duration of the client's connections to MCP servers.",
            ),
        ))
    }

    /// Start the span of a request about to be sent (a child of the caller's current
    /// context) and inject its context into `params._meta`.
    fn start(
        &self,
        method: &'static str,
        params: &mut Value,
        version: ferry_protocol::ProtocolVersion,
        session_id: Option<String>,
    ) -> ClientCall {
        let key = match method {
            "tools/call" | "prompts/get" => "name",
            m if m.starts_with("resources/") => "uri",
            _ => "",
        };
        let target = params.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut attributes = vec![
            KeyValue::new(MCP_METHOD_NAME, method),
            KeyValue::new(MCP_PROTOCOL_VERSION, version.as_str()),
        ];
        if let Some(id) = session_id {
            attributes.push(KeyValue::new(MCP_SESSION_ID, id));
        }
        if let Some(attribute) = target.as_deref().and_then(|t| target_attribute(method, t)) {
            attributes.push(attribute);
        }
        if method == "tools/call" {
            attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"));
        }
        let parent = Context::current();
        let span = self
            .0
            .tracer
            .span_builder(span_name(method, target.as_deref()))
            .with_kind(SpanKind::Client)
            .with_attributes(attributes)
            .start_with_context(&self.0.tracer, &parent);
        let cx = parent.with_span(span);
        inject_context(&cx, params);
        ClientCall {
            cx,
            method,
            target,
            version: version.as_str(),
            started: Instant::now(),
        }
    }

    /// End a request's span with its outcome and record its duration.
    fn finish(&self, call: ClientCall, result: &Result<Value, crate::client::ClientError>) {
        let failure = match result {
            Err(error) => Some((client_error_type(error), error.to_string())),
            Ok(result)
                if call.method == "tools/call"
                    && result.get("isError") == Some(&Value::Bool(true)) =>
            {
                Some((
                    TOOL_ERROR.to_owned(),
                    "the tool answered isError".to_owned(),
                ))
            }
            Ok(_) => None,
        };
        let span = call.cx.span();
        if let Some((error_type, message)) = &failure {
            span.set_attribute(KeyValue::new(ERROR_TYPE, error_type.clone()));
            span.set_status(Status::error(message.clone()));
        }
        span.end();
        self.0.duration.record(
            call.started.elapsed().as_secs_f64(),
            &metric_attributes(
                call.method,
                Some(call.version),
                call.target.as_deref(),
                failure.as_ref().map(|(t, _)| t.as_str()),
            ),
        );
    }
}

/// A span per request, its context injected into the request's `_meta`; the request ids of
/// its sends on the span; the connection's duration when the client goes.
#[cfg(feature = "client")]
impl crate::client::Middleware for ClientTracing {
    fn call<'a>(
        &'a self,
        mut request: crate::client::Outgoing,
        next: crate::client::Next<'a>,
    ) -> crate::client::BoxFuture<'a, Result<Value, crate::client::ClientError>> {
        use opentelemetry::context::FutureExt as _;
        let call = self.start(
            request.method,
            &mut request.params,
            request.version,
            request.session_id.clone(),
        );
        Box::pin(async move {
            let result = next.run(request).with_context(call.cx.clone()).await;
            self.finish(call, &result);
            result
        })
    }

    /// Each send of the call has its own id (a retry, an `input_required` round): the span
    /// keeps the last.
    fn sent(&self, _method: &str, id: &ferry_protocol::RequestId) {
        let cx = Context::current();
        cx.span()
            .set_attribute(KeyValue::new(JSONRPC_REQUEST_ID, id.to_string()));
    }

    fn closed(&self, version: ferry_protocol::ProtocolVersion, lasted: Duration) {
        self.0.session.record(
            lasted.as_secs_f64(),
            &[KeyValue::new(MCP_PROTOCOL_VERSION, version.as_str())],
        );
    }
}

/// The `error.type` of a failed client request: the JSON-RPC code when the server
/// answered with an error, what went wrong otherwise.
#[cfg(feature = "client")]
fn client_error_type(error: &crate::client::ClientError) -> String {
    use crate::client::ClientError;
    match error {
        ClientError::Rpc(error) => error.code.to_string(),
        ClientError::Timeout(_) => "timeout".to_owned(),
        ClientError::Transport(_) => "transport".to_owned(),
        ClientError::ConnectionLost => "connection_lost".to_owned(),
        ClientError::InvalidResult(_) => "invalid_result".to_owned(),
        ClientError::ToolFailed(_) => TOOL_ERROR.to_owned(),
        _ => "_OTHER".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_trace_context_is_ignored() {
        for bad in [
            serde_json::json!({"traceparent": "garbage"}),
            serde_json::json!({"traceparent": 42}),
            serde_json::json!({"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}),
            serde_json::json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-zzzzzzzzzzzzzzzz-01"}),
        ] {
            let Value::Object(meta) = bad else {
                unreachable!()
            };
            assert!(!extract_context(&meta).span().span_context().is_valid());
        }
        let Value::Object(good) = serde_json::json!({
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate": "vendor=1"
        }) else {
            unreachable!()
        };
        let cx = extract_context(&good);
        let span = cx.span();
        let parent = span.span_context();
        assert!(parent.is_valid() && parent.is_remote());
        assert_eq!(parent.trace_state().get("vendor"), Some("1"));
    }
}
