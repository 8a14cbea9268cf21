//! `ferry bridge --stdio URL`: an HTTP MCP server for a stdio host.
//!
//! Lines on stdin go to Ferry's HTTP client transport ([`ferry::http_client::connect`]),
//! which follows each frame: 2026-07-28 requests as stateless POSTs, the session era from
//! `initialize` on (session id, standalone GET stream, resumption, renewal on 404), and
//! the 2024-11-05 HTTP+SSE fallback when `initialize` is refused. Everything the server
//! sends (responses, notifications, its requests) is written to stdout, one line each;
//! the host's answers to the server's requests go back the same way. stdout carries
//! protocol only (logs go to stderr).
//!
//! When stdin closes, the bridge stops reading and drains: it waits until every request
//! the host sent has its response written to stdout (those held behind `initialize`
//! included), at most the drain timeout; a request still unanswered then is answered with
//! a JSON-RPC error (`-32603`), so every request gets exactly one response. Then the
//! session is DELETEd and the bridge exits 0.

use crate::client::auth::Gate;
use crate::stderr::note;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ferry::engine::TransportEvent;
use ferry::http_client::HttpClientConfig;

use super::pending::Pending;

/// Bridge stdin/stdout to `url` until stdin closes, sending `headers` and authorizing
/// through `auth` (the client commands' OAuth, unless off).
pub(crate) async fn run(
    url: &str,
    headers: &[(String, String)],
    auth: Arc<Gate>,
    max_frame_bytes: usize,
    drain_timeout: Duration,
) -> ExitCode {
    let mut config = HttpClientConfig::default().auth(auth);
    for (name, value) in headers {
        config = match config.header(name, value) {
            Ok(config) => config,
            Err(e) => {
                note!("ferry bridge: --header {e}");
                return ExitCode::from(2);
            }
        };
    }
    let (mut http, connection) = match ferry::http_client::connect(url, config) {
        Ok(connected) => connected,
        Err(e) => {
            note!("ferry bridge: {e}");
            return ExitCode::from(2);
        }
    };
    let mut stdio = ferry::engine::stdio(max_frame_bytes, 256);
    // Messages a host sends before its `initialize` is answered wait for the answer: the
    // session id they must carry comes with it.
    let mut initializing: Option<serde_json::Value> = None;
    let mut held = std::collections::VecDeque::new();
    // The host's requests not yet answered on stdout (held ones included).
    let mut pending = Pending::default();
    // Set when stdin closes: answers still due are awaited until then.
    let mut draining: Option<tokio::time::Instant> = None;
    let code = loop {
        if draining.is_some() && pending.is_empty() {
            break ExitCode::SUCCESS;
        }
        tokio::select! {
            event = stdio.incoming.recv(), if draining.is_none() => match event.map(TransportEvent::into_frame) {
                Some(Ok(frame)) => {
                    pending.host_sent(&frame);
                    if initializing.is_some() {
                        held.push_back(frame);
                        continue;
                    }
                    initializing = initialize_id(&frame);
                    if http.outgoing.send(frame).await.is_err() {
                        note!("ferry bridge: the HTTP connection ended");
                        break ExitCode::FAILURE;
                    }
                }
                Some(Err(TransportEvent::Oversized { bytes, .. })) => {
                    note!("ferry bridge: a {bytes}-byte line on stdin is over the limit; dropped");
                }
                Some(Err(_)) => {}
                None => {
                    // Stop reading, but let what was asked be answered first.
                    draining = Some(tokio::time::Instant::now() + drain_timeout);
                }
            },
            () = sleep_until(draining) => {
                note!(
                    "ferry bridge: {} request(s) still unanswered {}s after stdin closed",
                    pending.len(),
                    drain_timeout.as_secs_f64()
                );
                let why = format!(
                    "ferry bridge: stdin closed and the server did not answer within {}s",
                    drain_timeout.as_secs_f64()
                );
                let _ = answer_all(&stdio.outgoing, &mut pending, &why).await;
                break ExitCode::SUCCESS;
            }
            event = http.incoming.recv() => match event.map(host_frame) {
                Some(Ok(frame)) => {
                    pending.server_sent(&frame);
                    if initializing.is_some() && answers(&frame, initializing.as_ref()) {
                        initializing = None;
                        if stdio.outgoing.send(frame).await.is_err() {
                            break ExitCode::FAILURE;
                        }
                        while initializing.is_none() && let Some(next) = held.pop_front() {
                            initializing = initialize_id(&next);
                            if http.outgoing.send(next).await.is_err() {
                                break;
                            }
                        }
                        continue;
                    }
                    if stdio.outgoing.send(frame).await.is_err() {
                        break ExitCode::FAILURE;
                    }
                }
                Some(Err(_)) => {}
                None => {
                    note!("ferry bridge: the HTTP connection ended");
                    let why = "ferry bridge: the HTTP connection ended";
                    let _ = answer_all(&stdio.outgoing, &mut pending, why).await;
                    break ExitCode::FAILURE;
                }
            },
        }
    };
    // Answers already received are written before the session goes.
    if let Some(writer) = stdio.writer.take() {
        writer
            .flush_and_close(std::time::Duration::from_secs(2))
            .await;
    }
    drop(http);
    connection.close().await;
    code
}

/// Answer every request still waiting with an error saying `why`.
async fn answer_all(
    stdout: &tokio::sync::mpsc::Sender<Vec<u8>>,
    pending: &mut Pending,
    why: &str,
) -> Result<(), ()> {
    for frame in pending.fail_all(why) {
        stdout.send(frame).await.map_err(|_| ())?;
    }
    Ok(())
}

/// The frame for the host of an event of the HTTP transport: a request it could not get
/// the server's answer to is answered `-32603` with what happened (and the HTTP status).
fn host_frame(event: TransportEvent) -> Result<Vec<u8>, TransportEvent> {
    match event {
        TransportEvent::Failed(failed) => {
            let (id, error) = *failed;
            let mut data = serde_json::json!({ "ferryTransport": "http" });
            if let Some(status) = error.status {
                data["httpStatus"] = status.into();
            }
            let error = ferry::protocol::ErrorObject::new(
                ferry::protocol::error_codes::INTERNAL_ERROR,
                error.message,
            )
            .with_data(data);
            let response = ferry::protocol::jsonrpc::ErrorResponse::new(Some(id), error);
            // Strings and JSON values only: serializing cannot fail.
            serde_json::to_vec(&response).map_err(|_| TransportEvent::Oversized {
                bytes: 0,
                head: Vec::new(),
            })
        }
        other => other.into_frame(),
    }
}

/// Completes at `deadline`; never without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The id of `frame` if it is an `initialize` request.
fn initialize_id(frame: &[u8]) -> Option<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_slice(frame).ok()?;
    if value.get("method")?.as_str()? != "initialize" {
        return None;
    }
    value.get("id").cloned()
}

/// Whether `frame` is the response with `id`.
fn answers(frame: &[u8], id: Option<&serde_json::Value>) -> bool {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(frame) else {
        return false;
    };
    value.get("method").is_none() && value.get("id") == id
}
