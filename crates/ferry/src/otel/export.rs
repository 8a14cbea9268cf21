//! OTLP/HTTP export with JSON bodies, through this crate's reqwest (0.12) on a runtime of
//! its own.
//!
//! The SDK's batch span processor and periodic metric reader run on threads of their own
//! and wait for each export there; the exporter's HTTP requests are sent by a small
//! current-thread tokio runtime on one more thread. So exporting never needs the
//! application's runtime, and a shutdown that blocks (flushing at exit, say, from the
//! `ferry` command's current-thread runtime) cannot deadlock it.

use std::time::Duration;

use opentelemetry::global;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The longest an export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest collector answer read (they are a few bytes: partial-success reports).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// Why OTLP export could not be set up or shut down.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtelError(String);

/// Sends the exporter's requests with reqwest on the export runtime.
#[derive(Debug, Clone)]
struct ExportClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request)?;
        let client = self.client.clone();
        // Spawned on the export runtime: the SDK's threads poll this future with an
        // executor of their own, which cannot drive reqwest's I/O.
        let answer = self.runtime.spawn(async move {
            let mut response = client.execute(request).await?;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err::<_, HttpError>("the collector's answer is too large".into());
                }
                body.extend_from_slice(&chunk);
            }
            let mut answer = Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = std::mem::take(response.headers_mut());
            }
            Ok(answer.body(Bytes::from(body))?)
        });
        answer.await?
    }
}

/// The runtime that sends the export requests, on a thread of its own; ends when dropped.
struct ExportRuntime {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ExportRuntime {
    fn start() -> Result<Self, OtelError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| OtelError(format!("cannot start the export runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ferry-otel-export".into())
            .spawn(move || {
                let _ = runtime.block_on(stopped);
            })
            .map_err(|e| OtelError(format!("cannot start the export thread: {e}")))?;
        Ok(ExportRuntime {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for ExportRuntime {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Installs OTLP/HTTP (JSON) export of traces and metrics to the collector at `endpoint`
/// (its base URL, e.g. `http://127.0.0.1:4318`: spans go to `{endpoint}/v1/traces`,
/// metrics to `{endpoint}/v1/metrics`), as the global tracer and meter providers with
/// `service.name` = `service_name`, and the W3C trace-context propagator as the global
/// one. Spans are exported in batches, metrics every 60 s; keep the [`OtelGuard`] until
/// the end, and [`OtelGuard::shutdown`] it (or drop it) to export what is left.
///
/// An `https` endpoint needs the feature `http-client-rustls`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let telemetry = ferry::otel::init_otlp("http://127.0.0.1:4318", "my-app").unwrap();
/// // ... serve, call: with `ServerTracing` and `ClientTracing` installed ...
/// // At the end: exports what is left (an error says what could not be sent), without
/// // blocking the runtime while it waits for the collector.
/// if let Err(e) = telemetry.shutdown().await {
///     eprintln!("{e}");
/// }
/// # }
/// ```
pub fn init_otlp(endpoint: &str, service_name: &str) -> Result<OtelGuard, OtelError> {
    let base = endpoint.trim_end_matches('/');
    let url: reqwest::Url = base
        .parse()
        .map_err(|e| OtelError(format!("the OTLP endpoint {endpoint:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(OtelError(format!(
            "the OTLP endpoint {endpoint:?} is not an http(s) URL"
        )));
    }
    let runtime = ExportRuntime::start()?;
    let client = ExportClient {
        client: reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| OtelError(format!("cannot build the HTTP client: {e}")))?,
        runtime: runtime.handle.clone(),
    };
    let resource = Resource::builder()
        .with_service_name(service_name.to_owned())
        .build();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(format!("{base}/v1/traces"))
        .with_timeout(EXPORT_TIMEOUT)
        .with_http_client(client.clone())
        .build()
        .map_err(|e| OtelError(format!("the span exporter: {e}")))?;
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(format!("{base}/v1/metrics"))
        .with_timeout(EXPORT_TIMEOUT)
        .with_http_client(client)
        .build()
        .map_err(|e| OtelError(format!("the metric exporter: {e}")))?;
    let tracers = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let meters = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .with_resource(resource)
        .build();
    global::set_tracer_provider(tracers.clone());
    global::set_meter_provider(meters.clone());
    global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(OtelGuard {
        providers: Some((tracers, meters)),
        _runtime: runtime,
    })
}

/// Keeps OTLP export going (see [`init_otlp`]); [`shutdown`](Self::shutdown) exports the
/// spans and metrics not yet sent, then stops. That waits for the collector (up to the
/// export timeout, 10 s): `shutdown().await` waits on a blocking thread, so the runtime
/// goes on meanwhile; [`shutdown_blocking`](Self::shutdown_blocking) and dropping the
/// guard block the calling thread (for synchronous code, after the runtime has ended).
pub struct OtelGuard {
    providers: Option<(SdkTracerProvider, SdkMeterProvider)>,
    // Dropped last: the providers' final exports go through it.
    _runtime: ExportRuntime,
}

impl std::fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelGuard")
            .field("running", &self.providers.is_some())
            .finish_non_exhaustive()
    }
}

impl OtelGuard {
    /// Export what is left and stop; the error says what could not be exported. The
    /// waiting is done on tokio's blocking threads: call it from async code (it needs a
    /// tokio runtime).
    pub async fn shutdown(self) -> Result<(), OtelError> {
        let mut guard = self;
        tokio::task::spawn_blocking(move || guard.stop())
            .await
            .map_err(|e| OtelError(format!("the shutdown did not finish: {e}")))?
    }

    /// [`shutdown`](Self::shutdown) for synchronous code: blocks the calling thread until
    /// what is left is exported. Not in async code, whose runtime it would stall.
    pub fn shutdown_blocking(mut self) -> Result<(), OtelError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), OtelError> {
        let Some((tracers, meters)) = self.providers.take() else {
            return Ok(());
        };
        let spans = tracers.shutdown();
        let metrics = meters.shutdown();
        match (spans, metrics) {
            (Ok(()), Ok(())) => Ok(()),
            (spans, metrics) => Err(OtelError(format!(
                "exporting at shutdown: spans: {}; metrics: {}",
                spans.map_or_else(|e| e.to_string(), |()| "ok".into()),
                metrics.map_or_else(|e| e.to_string(), |()| "ok".into()),
            ))),
        }
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
