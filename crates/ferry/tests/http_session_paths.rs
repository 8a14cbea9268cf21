//! Session-era paths over real sockets on 127.0.0.1 that `http_session.rs` leaves out: the
//! stream limit (429), keep-alive comments, an evicted `Last-Event-ID` (410), resumption of
//! a progress stream cut mid-way (nothing lost, nothing repeated), what closing a POST
//! stream does and does not do, graceful shutdown draining a request in flight, an expired
//! session making room under the session limit.

mod http_support;

use std::sync::Arc;
use std::time::Duration;

use ferry::http::{HttpConfig, MemoryEventStore};
use http_support::{Client, Events, call, json_of, start, ticker};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn the_stream_limit_is_429() {
    let url = start(HttpConfig::default().max_streams_per_session(2)).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;
    let _get = Events::new(c.get().send().await.unwrap());
    let mut busy = Events::new(c.post(&ticker(1, 2, 200)).send().await.unwrap());
    assert_eq!(
        busy.next().await.unwrap()["method"],
        "notifications/progress"
    );
    // Both streams are open: a third request is refused, with a clear message.
    let response = c
        .post(&call(2, "echo", json!({"text": "x"})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let body = json_of(response).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many open streams"),
        "{body}"
    );
    // Once the busy stream is answered, requests pass again.
    while busy.next().await.is_some() {}
    let response = c
        .post(&call(3, "echo", json!({"text": "x"})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn idle_streams_get_keep_alive_comments() {
    let url = start(HttpConfig::default().sse_keep_alive(Duration::from_millis(20))).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-06-18").await;
    let mut response = c.get().send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut text = String::new();
    while !text.contains(":\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("a keep-alive in time")
            .unwrap()
            .expect("the stream stays open");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn an_evicted_cursor_is_410() {
    let store = Arc::new(MemoryEventStore::new(2, Duration::from_secs(60)));
    let url = start(HttpConfig::default().event_store(store)).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;
    let mut events = Events::new(c.post(&ticker(1, 5, 0)).send().await.unwrap());
    events.next().await.unwrap();
    let first = events.last_id.clone().unwrap();
    while events.next().await.is_some() {}
    // Six events were sent; the store kept the last two.
    let response = c
        .get()
        .header("last-event-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::GONE);
    // The last cursor still replays exactly (nothing after it).
    let last = events.last_id.clone().unwrap();
    let response = c.get().header("last-event-id", &last).send().await.unwrap();
    let mut replay = Events::new(response);
    assert!(replay.next().await.is_none());
}

#[tokio::test]
async fn resuming_a_cut_progress_stream_loses_and_repeats_nothing() {
    let url = start(HttpConfig::default()).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;
    let steps = 20;
    let mut events = Events::new(c.post(&ticker(7, steps, 10)).send().await.unwrap());
    let mut progress = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let event = events.next().await.unwrap();
        progress.push(event["params"]["progress"].as_f64().unwrap());
        ids.push(events.last_id.clone().unwrap());
    }
    // Drop the connection mid-stream; the tool keeps reporting meanwhile.
    drop(events);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let response = c
        .get()
        .header("last-event-id", ids.last().unwrap())
        .send()
        .await
        .unwrap();
    let mut events = Events::new(response);
    let mut result = None;
    while let Some(event) = events.next().await {
        ids.push(events.last_id.clone().unwrap());
        if event.get("id").is_some() {
            result = Some(event);
        } else {
            progress.push(event["params"]["progress"].as_f64().unwrap());
        }
    }
    let expected: Vec<f64> = (1..=steps).map(f64::from).collect();
    assert_eq!(progress, expected, "every step once, in order");
    let result = result.expect("the response after the replay");
    assert_eq!(result["id"], 7);
    assert_eq!(result["result"]["content"][0]["text"], "done");
    let stream = ids[0].split('-').next().unwrap().to_owned();
    let expected_ids: Vec<String> = (1..=steps + 1).map(|n| format!("{stream}-{n}")).collect();
    assert_eq!(ids, expected_ids);
}

/// In the session era a client closing a POST stream does not cancel its request (the
/// specification: disconnection SHOULD NOT be interpreted as cancellation; the client may
/// resume). `notifications/cancelled` does, and ends the stream without a response.
#[tokio::test]
async fn closing_a_post_stream_is_not_cancellation_but_cancelled_is() {
    let url = start(HttpConfig::default()).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;

    let mut events = Events::new(c.post(&ticker(1, 3, 30)).send().await.unwrap());
    events.next().await.unwrap();
    let cursor = events.last_id.clone().unwrap();
    drop(events);
    let response = c
        .get()
        .header("last-event-id", &cursor)
        .send()
        .await
        .unwrap();
    let mut events = Events::new(response);
    let mut last = Value::Null;
    while let Some(event) = events.next().await {
        last = event;
    }
    assert_eq!(last["result"]["content"][0]["text"], "done", "{last}");

    let mut events = Events::new(c.post(&ticker(2, 1000, 10)).send().await.unwrap());
    events.next().await.unwrap();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2, "reason": "enough"}});
    let response = c.post(&cancel).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    while let Some(event) = events.next().await {
        assert!(event.get("id").is_none(), "no response after cancellation");
    }
}

#[tokio::test]
async fn graceful_shutdown_answers_requests_in_flight() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(ferry::http::serve_with_shutdown(
        http_support::server(),
        listener,
        HttpConfig::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &format!("http://{address}/mcp"), "2025-11-25").await;
    let mut get = Events::new(c.get().send().await.unwrap());
    let mut events = Events::new(c.post(&ticker(1, 1, 300)).send().await.unwrap());
    // The handler runs (its progress arrived); then the shutdown signal.
    events.next().await.unwrap();
    stop.send(()).unwrap();
    let answer = events.next().await.expect("the response still comes");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert!(events.next().await.is_none());
    assert!(get.next().await.is_none(), "the GET stream ends too");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

/// Sessions opened and abandoned without DELETE end after the idle timeout: their engines
/// stop and their slots under `max_sessions` are free again. (The memory figures of the
/// same run at 100,000 sessions come from `examples/http_session_memory.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_sessions_expire_and_free_their_slots() {
    use futures_util::StreamExt;
    const SESSIONS: usize = 500;
    let server = http_support::server();
    let config = HttpConfig::default()
        .max_sessions(SESSIONS)
        .session_idle_timeout(Duration::from_millis(500));
    let url = http_support::start_with(server.clone(), config).await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "abandoned", "version": "1"}}})
    .to_string();
    let open = |count: usize| {
        futures_util::stream::iter(0..count)
            .map(|_| {
                http.post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(initialize.clone())
                    .send()
            })
            .buffer_unordered(32)
            .map(|r| r.unwrap().status())
            .collect::<Vec<_>>()
    };
    let statuses = open(SESSIONS).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::OK));
    // (Some may have expired already on a slow machine: the count is not checked here.)
    assert_eq!(server.stats().connections_total, SESSIONS as u64);

    tokio::time::timeout(Duration::from_secs(60), async {
        while server.stats().connections_open > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("every abandoned session ends (a hang guard, not a speed test)");
    let statuses = open(SESSIONS).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::OK), "slots freed");
}

/// With several requests in flight on one session, what each handler sends (its log
/// message, its sampling request) travels on its own request's POST stream, not on another
/// one nor on the GET stream.
#[tokio::test]
async fn handler_messages_travel_on_their_own_post_stream() {
    let server = http_support::server();
    let url = http_support::start_with(server.clone(), HttpConfig::default()).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;
    let mut get = Events::new(c.get().send().await.unwrap());
    let names = ["alpha", "beta", "gamma"];
    let mut streams = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let response = c
            .post(&call(i as u64 + 1, "ask", json!({"text": name})))
            .send()
            .await
            .unwrap();
        streams.push(Events::new(response));
    }
    // Every stream carries its own handler's log message, then its own sampling request.
    let mut asks = Vec::new();
    for (events, name) in streams.iter_mut().zip(names) {
        let log = events.next().await.unwrap();
        assert_eq!(log["method"], "notifications/message", "{log}");
        assert_eq!(log["params"]["data"], format!("asking {name}"));
        let ask = events.next().await.unwrap();
        assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
        assert_eq!(
            ask["params"]["messages"][0]["content"]["text"], name,
            "{name}'s stream carries {name}'s request"
        );
        asks.push(ask["id"].clone());
    }
    for (id, name) in asks.iter().zip(names) {
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
            "role": "assistant", "model": "m",
            "content": {"type": "text", "text": format!("{name}!")}}});
        let response = c.post(&answer).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }
    for (i, (events, name)) in streams.iter_mut().zip(names).enumerate() {
        let result = events.next().await.unwrap();
        assert_eq!(result["id"], i as u64 + 1);
        assert_eq!(result["result"]["content"][0]["text"], format!("{name}!"));
        assert!(events.next().await.is_none());
    }
    // Nothing strayed onto the GET stream: the first thing it carries is a list change.
    server.add_tool(
        "late",
        "Added later",
        |a: http_support::Text, _cx: ferry::server::Context| async move { a.text },
    );
    let first = get.next().await.unwrap();
    assert_eq!(
        first["method"], "notifications/tools/list_changed",
        "{first}"
    );
}

#[tokio::test]
async fn an_expired_session_makes_room_at_the_limit() {
    let idle = Duration::from_secs(2);
    let config = HttpConfig::default()
        .max_sessions(1)
        .session_idle_timeout(idle);
    let url = start(config).await;
    let http = reqwest::Client::new();
    let first = Client::connect(&http, &url, "2025-11-25").await;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let refused = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    // The sweeper passes every half idle time from the first session on: its last use a
    // quarter idle time later means it expires half way between two passes...
    tokio::time::sleep(idle / 4).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let response = first.post(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // ...and just past its idle time, before the sweeper's next pass, it no longer
    // counts: a new session takes its place.
    tokio::time::sleep(idle + Duration::from_millis(100)).await;
    let _second = Client::connect(&http, &url, "2025-11-25").await;
    let response = first.post(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// The backstop against events kept for a session that has ended (an event appended just
/// as its session closed lands after the store forgot the session): the session sweeper
/// drops an ended session's events once they have expired, while a live session's streams
/// stay (their sequence numbers going on).
#[tokio::test]
async fn the_sweeper_drops_events_left_for_an_ended_session() {
    use ferry::http::{EventStore, StreamKey};
    let store = Arc::new(MemoryEventStore::new(100, Duration::from_millis(100)));
    // The sweeper passes every half idle time; the session stays live with its GET stream.
    let config = HttpConfig::default()
        .event_store(store.clone())
        .session_idle_timeout(Duration::from_millis(400));
    let url = start(config).await;
    let http = reqwest::Client::new();
    let c = Client::connect(&http, &url, "2025-11-25").await;
    let _get = Events::new(c.get().send().await.unwrap());

    // What the race leaves: an event of a session no longer in the table.
    let ghost = StreamKey {
        session: "ended-session".into(),
        stream: 1,
    };
    store.append(&ghost, "late".into());
    let live = StreamKey {
        session: c.id.clone(),
        stream: 77,
    };
    store.append(&live, "kept".into());
    let mut swept = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if store.last(&ghost) == 0 {
            swept = true;
            break;
        }
    }
    assert!(swept, "the ended session's event was never dropped");
    // Sweeps go on; the live session's stream keeps its number.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(store.last(&live), 1);
    assert_eq!(store.append(&live, "next".into()), 2);
}
