//! `ferry bridge --stdio URL`: an HTTP MCP server for a stdio host.
//!
//! Lines on stdin go to Ferry's HTTP client transport ([`ferry::http_client::connect`]),
//! which follows each frame: 2026-07-28 requests as stateless POSTs, the session era from
//! `initialize` on (session id, standalone GET stream, resumption, renewal on 404), and
//! the 2024-11-05 HTTP+SSE fallback when `initialize` is refused. Everything the server
//! sends (responses, notifications, its requests) is written to stdout, one line each;
//! the host's answers to the server's requests go back the same way. stdout carries
//! protocol only (logs go to stderr). When stdin closes, the session is DELETEd and the
//! bridge exits.

use crate::stderr::note;
use std::process::ExitCode;

use ferry::engine::TransportEvent;
use ferry::http_client::HttpClientConfig;

/// Bridge stdin/stdout to `url` until stdin closes.
pub(crate) async fn run(
    url: &str,
    headers: &[(String, String)],
    max_frame_bytes: usize,
) -> ExitCode {
    let mut config = HttpClientConfig::default();
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
    let code = loop {
        tokio::select! {
            event = stdio.incoming.recv() => match event {
                Some(TransportEvent::Frame(frame) | TransportEvent::Attached(frame, _)) => {
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
                Some(TransportEvent::Oversized { bytes }) => {
                    note!("ferry bridge: a {bytes}-byte line on stdin is over the limit; dropped");
                }
                Some(_) => {}
                None => break ExitCode::SUCCESS,
            },
            event = http.incoming.recv() => match event {
                Some(TransportEvent::Frame(frame) | TransportEvent::Attached(frame, _)) => {
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
                Some(_) => {}
                None => {
                    note!("ferry bridge: the HTTP connection ended");
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
