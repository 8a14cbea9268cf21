//! Several `ferry serve --http --redis` instances sharing one real Redis, behind a real
//! nginx that balances round-robin with no affinity: every session-era request may land
//! on any instance, and losing an instance (SIGKILL) or Redis for a while loses no
//! session. Unix only (processes are killed with signals).
#![cfg(unix)]

#[path = "../interop_support/mod.rs"]
mod interop_support;
mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Instance, Nginx, Redis, Session, text};

/// The prefix of the session records' keys under `prefix` (the other key there, the
/// shared request-state secret, stays: one key, no expiry).
fn session_keys(prefix: &str) -> String {
    format!("{prefix}session:")
}

/// A flag the load's tasks watch to stop.
fn stop_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false))
}

/// Three instances sharing `redis` under `prefix`, behind nginx.
fn cluster(redis: &Redis, prefix: &str) -> (Vec<Instance>, Nginx) {
    let instances: Vec<Instance> = (0..3)
        .map(|_| Instance::start(&redis.url(), prefix, &[]))
        .collect();
    let ports: Vec<u16> = instances.iter().map(Instance::port).collect();
    let nginx = Nginx::start(&ports);
    (instances, nginx)
}

/// A key prefix of this test's own (tests share nothing, even when one Redis is reused).
fn prefix(test: &str) -> String {
    format!("ferry-test-{test}-{}:", std::process::id())
}

#[tokio::test]
async fn three_instances_behind_a_proxy_serve_every_session_request() {
    let redis = Redis::start();
    let prefix = prefix("three");
    let (instances, nginx) = cluster(&redis, &prefix);
    let url = nginx.url();

    let session = Session::open(&url).await;
    assert_eq!(
        redis.keys(&session_keys(&prefix)),
        1,
        "one record for one session"
    );

    // Round-robin: consecutive calls land on every instance in turn.
    for i in 0..9 {
        let (status, messages) = session
            .call(&url, 10 + i, "echo", json!({"text": format!("call {i}")}))
            .await
            .unwrap();
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(text(messages.last().unwrap()), format!("call {i}"));
    }
    // And each instance, asked directly, knows the session.
    for (n, instance) in instances.iter().enumerate() {
        let (status, messages) = session
            .call(
                &instance.url(),
                30 + n as u64,
                "echo",
                json!({"text": "direct"}),
            )
            .await
            .unwrap();
        assert_eq!(status, 200, "instance {n}: {messages:?}");
    }

    // Progress streams through the proxy (SSE, unbuffered).
    let body = json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {
        "name": "countdown", "arguments": {"steps": 3, "interval_ms": 20},
        "_meta": {"progressToken": "p"}}});
    let (status, messages) = session.send(&url, &body).await.unwrap();
    assert_eq!(status, 200);
    let progress = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{messages:?}");
    assert_eq!(messages.last().unwrap()["id"], 40);

    // The log level set once holds wherever the next calls land: the `log` tool logs at
    // every level and counts what was sent; `error` and above are 4 of 8.
    let (_, messages) = session
        .call(&url, 41, "log", json!({"message": "before"}))
        .await
        .unwrap();
    assert_eq!(text(messages.last().unwrap()), "sent 8 log messages");
    let set_level = json!({"jsonrpc": "2.0", "id": 42, "method": "logging/setLevel",
                           "params": {"level": "error"}});
    assert_eq!(session.send(&url, &set_level).await.unwrap().0, 200);
    for i in 0..4 {
        let (_, messages) = session
            .call(&url, 43 + i, "log", json!({"message": "after"}))
            .await
            .unwrap();
        assert_eq!(
            text(messages.last().unwrap()),
            "sent 4 log messages",
            "call {i}: {messages:?}"
        );
    }

    // A GET stream through the proxy opens on whichever instance it lands on.
    let get = session
        .http
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", support::REVISION)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    drop(get);

    // DELETE through the proxy ends it on every instance, and its record goes.
    let deleted = session
        .http
        .delete(&url)
        .header("mcp-session-id", &session.id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    for instance in &instances {
        let (status, _) = session
            .call(&instance.url(), 50, "echo", json!({"text": "gone"}))
            .await
            .unwrap();
        assert_eq!(status, 404, "{}", instance.addr);
    }
    assert_eq!(redis.keys(&session_keys(&prefix)), 0);
}

/// A sampling request sent by one instance is answered through another: its id names the
/// instance that asked, and Redis pub/sub carries the answer there.
#[tokio::test]
async fn a_server_request_is_answered_through_another_instance() {
    let redis = Redis::start();
    let prefix = prefix("sampling");
    let b = Instance::start(&redis.url(), &prefix, &["--instance-id", "bee"]);
    let c = Instance::start(&redis.url(), &prefix, &[]);
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": support::REVISION, "capabilities": {"sampling": {}},
        "clientInfo": {"name": "redis-test", "version": "1"}}});
    let response = support::post(&http, &c.url(), None, &body)
        .send()
        .await
        .unwrap();
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "sample", "arguments": {"prompt": "hi"}}});
    let mut asked = support::post(&http, &b.url(), Some(&session), &call)
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    let request = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), asked.chunk())
            .await
            .expect("the sampling request")
            .unwrap()
            .expect("the stream goes on");
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
        if let Some(request) = support::sse_data(&seen)
            .into_iter()
            .find(|m| m["method"] == "sampling/createMessage")
        {
            break request;
        }
    };
    assert!(
        request["id"].as_str().unwrap().starts_with("bee:"),
        "{request}"
    );
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "hello"}}});
    let response = support::post(&http, &c.url(), Some(&session), &answer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let rest = tokio::time::timeout(Duration::from_secs(10), asked.text())
        .await
        .expect("the call's result")
        .unwrap();
    seen.push_str(&rest);
    let result = support::sse_data(&seen).pop().unwrap();
    assert_eq!(text(&result), "m says: hello", "{result}");
}

#[tokio::test]
async fn killing_an_instance_under_load_loses_no_session() {
    let redis = Redis::start();
    let prefix = prefix("kill");
    let (mut instances, nginx) = cluster(&redis, &prefix);
    let url = nginx.url();

    const SESSIONS: usize = 50;
    const CALLS: u64 = 30;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(Session::open(&url).await);
    }
    // Every fifth session also holds its GET stream through the proxy, and opens it again
    // (on whichever instance) whenever it ends.
    let done = stop_flag();
    let mut streams = tokio::task::JoinSet::new();
    for session in sessions.iter().step_by(5) {
        let (url, done) = (url.clone(), std::sync::Arc::clone(&done));
        let (http, id) = (session.http.clone(), session.id.clone());
        streams.spawn(async move {
            let (mut opened, mut refused) = (0, 0);
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let response = http
                    .get(&url)
                    .header("accept", "text/event-stream")
                    .header("mcp-session-id", &id)
                    .header("mcp-protocol-version", support::REVISION)
                    .send()
                    .await;
                match response {
                    Ok(mut response) if response.status() == 200 => {
                        opened += 1;
                        // Held until it ends (its instance died) or the load is over.
                        while !done.load(std::sync::atomic::Ordering::SeqCst) {
                            let chunk =
                                tokio::time::timeout(Duration::from_millis(50), response.chunk());
                            match chunk.await {
                                Ok(Ok(Some(_))) | Err(_) => {}
                                Ok(_) => break,
                            }
                        }
                    }
                    other => {
                        eprintln!("GET stream of {id}: {other:?}");
                        refused += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            (opened, refused)
        });
    }
    let (killer, kill_now) = tokio::sync::oneshot::channel::<()>();
    let mut tasks = tokio::task::JoinSet::new();
    for (n, session) in sessions.into_iter().enumerate() {
        let url = url.clone();
        tasks.spawn(async move {
            let (mut ok, mut failed) = (0, 0);
            let mut recovered = None;
            for i in 0..CALLS {
                // Every third call streams its progress.
                let (body, expected) = if i % 3 == 0 {
                    let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                        "name": "countdown", "arguments": {"steps": 2, "interval_ms": 10},
                        "_meta": {"progressToken": format!("{n}/{i}")}}});
                    (body, "counted 2 steps".to_owned())
                } else {
                    let text = format!("{n}/{i}");
                    let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                      "params": {"name": "echo", "arguments": {"text": text}}});
                    (body, text)
                };
                // A call that was running on the killed instance fails at the HTTP level
                // (the proxy's 502, or a reset); the client tries once more.
                let mut answered = false;
                for attempt in 0..2 {
                    match session.send(&url, &body).await {
                        Ok((200, messages)) if text(messages.last().unwrap()) == expected => {
                            if attempt > 0 {
                                recovered.get_or_insert_with(Instant::now);
                            }
                            let progress = messages
                                .iter()
                                .filter(|m| m["method"] == "notifications/progress")
                                .count();
                            assert_eq!(progress, if i % 3 == 0 { 2 } else { 0 }, "{messages:?}");
                            answered = true;
                            break;
                        }
                        Ok((status, messages)) => {
                            eprintln!("session {n} call {i}: {status} {messages:?}");
                        }
                        Err(e) => eprintln!("session {n} call {i}: {e}"),
                    }
                    failed += 1;
                }
                if answered {
                    ok += 1;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            (ok, failed, recovered)
        });
    }
    // Kill one instance while the calls go on.
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = killer.send(());
    });
    kill_now.await.unwrap();
    let killed_at = Instant::now();
    instances[1].kill();
    let mut answered = 0;
    let mut retried = 0;
    let mut failover = Duration::ZERO;
    while let Some(outcome) = tasks.join_next().await {
        let (ok, failed, recovered) = outcome.expect("no task panicked");
        answered += ok;
        retried += failed;
        if let Some(at) = recovered {
            failover = failover.max(at.saturating_duration_since(killed_at));
        }
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (mut opened, mut refused) = (0, 0);
    while let Some(outcome) = streams.join_next().await {
        let (o, r) = outcome.expect("no stream task panicked");
        opened += o;
        refused += r;
    }
    eprintln!(
        "{answered} calls answered, {retried} retried, finished {:?} after the kill; \
         longest kill-to-success of a retried call {failover:?}; GET streams opened {opened} \
         times, refused {refused}",
        killed_at.elapsed()
    );
    assert_eq!(refused, 0, "every GET stream reopened");
    assert!(opened >= SESSIONS / 5, "{opened}");
    assert_eq!(
        answered,
        SESSIONS as u64 * CALLS,
        "every call answered (at most one retry each); {retried} retried"
    );
    assert_eq!(
        redis.keys(&session_keys(&prefix)),
        SESSIONS,
        "every session still recorded"
    );
}

#[tokio::test]
async fn redis_down_is_a_clear_503_and_its_return_is_recovery() {
    let mut redis = Redis::start();
    let prefix = prefix("down");
    let instance = Instance::start(&redis.url(), &prefix, &[]);
    let url = instance.url();
    let session = Session::open(&url).await;
    let (status, _) = session
        .call(&url, 1, "echo", json!({"text": "up"}))
        .await
        .unwrap();
    assert_eq!(status, 200);

    // A Redis that does not answer: refused within the store's bound (2 s to connect,
    // 2 s for the command), not held.
    redis.signal("STOP");
    let started = Instant::now();
    let (status, messages) = session
        .call(&url, 2, "echo", json!({"text": "hung"}))
        .await
        .unwrap();
    let took = started.elapsed();
    redis.signal("CONT");
    eprintln!("a request with Redis hung answered {status} in {took:?}");
    assert_eq!(status, 503, "{messages:?}");
    assert!(took < Duration::from_secs(8), "bounded: {took:?}");
    let (status, _) = session
        .call(&url, 2, "echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(status, 200, "answered again once Redis is");

    redis.kill();
    let started = Instant::now();
    let (status, messages) = session
        .call(&url, 2, "echo", json!({"text": "down"}))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(status, 503, "{messages:?}");
    let error = &messages[0]["error"];
    assert_eq!(error["code"], -32603, "{messages:?}");
    assert!(
        error["message"].as_str().unwrap().contains("session store"),
        "{error}"
    );
    eprintln!("a request with Redis down answered 503 in {took:?}");
    assert!(took < Duration::from_secs(10), "bounded: {took:?}");
    // A new session cannot be recorded either: refused the same way, not half-made.
    let response = support::post(&session.http, &url, None, &support::initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);

    // Redis back (its append-only file kept the record): the session works again.
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, messages) = session
            .call(&url, 3, "echo", json!({"text": "back"}))
            .await
            .unwrap();
        if status == 200 {
            assert_eq!(text(messages.last().unwrap()), "back");
            break;
        }
        assert_eq!(status, 503, "{messages:?}");
        assert!(
            Instant::now() < deadline,
            "no recovery after Redis came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn abandoned_sessions_leave_nothing_in_redis() {
    let redis = Redis::start();
    let prefix = prefix("expiry");
    // Thousands live at once, all from this address: past the per-client default.
    let instance = Instance::start(
        &redis.url(),
        &prefix,
        &["--session-idle", "3", "--max-sessions-per-client", "10000"],
    );
    let url = instance.url();
    const OPENED: usize = 10_000;
    const OPENERS: usize = 16;
    // Two rounds of sessions opened and abandoned: the first warms Redis up (its tables
    // keep some of their size once grown), the second must leave nothing more behind.
    let mut after = Vec::new();
    for round in 0..2 {
        let before = redis.used_memory();
        let opened = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let openers: Vec<_> = (0..OPENERS)
            .map(|_| {
                let (url, opened) = (url.clone(), std::sync::Arc::clone(&opened));
                tokio::spawn(async move {
                    let http = reqwest::Client::new();
                    while opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < OPENED {
                        let response =
                            support::post(&http, &url, None, &support::initialize_body())
                                .send()
                                .await
                                .unwrap();
                        assert_eq!(response.status(), 200);
                    }
                })
            })
            .collect();
        let started = Instant::now();
        for opener in openers {
            opener.await.unwrap();
        }
        let took = started.elapsed();
        // At most one record per session (some may have expired already).
        let recorded = redis.keys(&session_keys(&prefix));
        assert!(
            recorded > 0 && recorded <= OPENED,
            "round {round}: {recorded} keys"
        );
        let filled = redis.used_memory();
        eprintln!(
            "round {round}: {OPENED} sessions opened in {took:?}; Redis memory {before} B \
             before, {filled} B with {recorded} records ({} B each)",
            filled.saturating_sub(before) / recorded as u64
        );
        // Abandoned: every record expires with the idle timeout.
        let deadline = Instant::now() + Duration::from_secs(20);
        while redis.keys(&session_keys(&prefix)) > 0 {
            assert!(
                Instant::now() < deadline,
                "{} keys left",
                redis.keys(&session_keys(&prefix))
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // Nothing per session is left under the prefix: only the instance's heartbeat
        // and its secrets, whose number does not depend on the sessions.
        let left: Vec<String> = redis
            .key_names(&prefix)
            .into_iter()
            .filter(|key| {
                let rest = &key[prefix.len()..];
                !rest.starts_with("instance:") && !rest.starts_with("secret:")
            })
            .collect();
        assert!(left.is_empty(), "round {round}: keys left behind: {left:?}");
        after.push(redis.used_memory());
    }
    eprintln!("Redis memory after each round's expiry: {after:?}");
    // Redis's own tables and buffers move by some kilobytes between rounds; a leak of
    // anything per session (a record is ~700 B) would show as more than 32 B each.
    assert!(
        after[1] <= after[0] + (OPENED as u64) * 32,
        "nothing left behind by the second round: {after:?}"
    );
}

/// `ferry bridge --http --redis`: two bridges, each with its own stdio children, share
/// sessions as `ferry serve` instances do, in both modes: a session initialized through
/// one is served by the other's child after it replays the recorded `initialize`.
#[tokio::test]
async fn bridges_share_sessions_in_both_modes() {
    let redis = Redis::start();
    for mode in ["--per-session", "--shared"] {
        let prefix = prefix(&format!("bridge{mode}"));
        let one = Instance::bridge(&redis.url(), &prefix, mode);
        let two = Instance::bridge(&redis.url(), &prefix, mode);
        let session = Session::open(&one.url()).await;
        for (n, bridge) in [&two, &one, &two].into_iter().enumerate() {
            let text_sent = format!("{mode} {n}");
            let (status, messages) = session
                .call(
                    &bridge.url(),
                    n as u64 + 1,
                    "echo",
                    json!({"text": text_sent}),
                )
                .await
                .unwrap();
            assert_eq!(status, 200, "{mode}: {messages:?}");
            assert_eq!(text(messages.last().unwrap()), text_sent, "{mode}");
        }
        assert_eq!(redis.keys(&session_keys(&prefix)), 1, "{mode}");
    }
}

/// The official SDKs' clients through the proxy, every request on the next instance in
/// turn: the TypeScript SDK (session era: tools, progress, cancellation, sampling,
/// elicitation and roots answered through instances that did not ask; and 2024-11-05
/// HTTP+SSE, its POSTs passed on to the instance holding its stream) and the Python SDK in
/// both eras (2026-07-28: every request on its own; an `input_required` retry unsealed by
/// another instance than the one that sealed its state).
#[tokio::test]
async fn the_official_sdk_clients_work_through_the_proxy() {
    let redis = Redis::start();
    let prefix = prefix("sdk");
    let (_instances, nginx) = cluster(&redis, &prefix);
    let url = nginx.url();
    tokio::task::spawn_blocking(move || {
        interop_support::ts_client(&["http", &url]);
        // 2024-11-05 HTTP+SSE: the stream stays on the instance it opened on; the POSTs
        // that land elsewhere are passed on to it.
        interop_support::ts_client(&["sse", &url.replace("/mcp", "/sse")]);
        interop_support::py_client("session", &["http", &url]);
        interop_support::py_client("stateless", &["http", &url]);
    })
    .await
    .unwrap();
}

/// Open a POST stream for a `countdown` with progress on `url`, read until its first
/// progress event, and return the stream's events so far and that event's id.
async fn started_countdown(
    session: &Session,
    url: &str,
    steps: u32,
) -> (Vec<serde_json::Value>, String) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "countdown", "arguments": {"steps": steps, "interval_ms": 150},
        "_meta": {"progressToken": "cd"}}});
    let mut response = support::post(&session.http, url, Some(&session.id), &body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("the first progress")
            .unwrap()
            .expect("the stream goes on");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        if text.contains("notifications/progress") && text.contains("\n\n") {
            break;
        }
    }
    // The client hangs up here (the stream is dropped with the response).
    let id = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .next_back()
        .expect("an event id")
        .to_owned();
    (support::sse_data(&text), id)
}

/// GET `url` resuming after `last_event_id`; every message until the stream ends.
async fn resumed(
    session: &Session,
    url: &str,
    last_event_id: &str,
) -> (Vec<serde_json::Value>, Vec<String>) {
    let response = session
        .http
        .get(url)
        .timeout(Duration::from_secs(30))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", support::REVISION)
        .header("last-event-id", last_event_id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "resuming {last_event_id}");
    let text = response.text().await.unwrap();
    let ids = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect();
    (support::sse_data(&text), ids)
}

/// A POST stream cut while its request runs on one instance is resumed on another: the
/// events are read from Redis as the first instance writes them, none lost or repeated,
/// up to the response.
#[tokio::test]
async fn a_stream_is_resumed_on_another_instance() {
    let redis = Redis::start();
    let prefix = prefix("resume");
    let b = Instance::start(&redis.url(), &prefix, &[]);
    let c = Instance::start(&redis.url(), &prefix, &[]);
    let session = Session::open(&c.url()).await;
    let (before, cursor) = started_countdown(&session, &b.url(), 5).await;
    let (after, ids) = resumed(&session, &c.url(), &cursor).await;
    let progress: Vec<f64> = before
        .iter()
        .chain(&after)
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(
        progress,
        [1.0, 2.0, 3.0, 4.0, 5.0],
        "none lost or repeated: {after:?}"
    );
    let last = after.last().unwrap();
    assert_eq!(last["id"], 7);
    assert_eq!(text(last), "counted 5 steps", "{last}");
    let seqs: Vec<u64> = ids
        .iter()
        .map(|id| id.rsplit('-').next().unwrap().parse().unwrap())
        .collect();
    let sorted = {
        let mut s = seqs.clone();
        s.sort_unstable();
        s.dedup();
        s
    };
    assert_eq!(seqs, sorted, "event ids increase: {ids:?}");
}

/// The instance running a request is killed: the client resuming its stream on another
/// instance gets what was kept, then the request's error response, once; never a hang.
#[tokio::test]
async fn a_request_of_a_killed_instance_is_answered_with_an_error_on_resumption() {
    let redis = Redis::start();
    let prefix = prefix("killed");
    let mut b = Instance::start(&redis.url(), &prefix, &[]);
    let c = Instance::start(&redis.url(), &prefix, &[]);
    let session = Session::open(&c.url()).await;
    let (_, cursor) = started_countdown(&session, &b.url(), 50).await;
    // Events are written behind: killed before its first event reached Redis, the
    // instance would take the stream with it (the resumption then gets 400).
    let deadline = Instant::now() + Duration::from_secs(5);
    while redis.keys(&format!("{prefix}stream:")) < 2 {
        assert!(Instant::now() < deadline, "the stream's events reach Redis");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    b.kill();
    let killed = Instant::now();
    let (after, _) = resumed(&session, &c.url(), &cursor).await;
    let answers: Vec<&serde_json::Value> = after.iter().filter(|m| m["id"] == 7).collect();
    assert_eq!(answers.len(), 1, "exactly one answer: {after:?}");
    assert_eq!(answers[0]["error"]["code"], -32603, "{}", answers[0]);
    eprintln!("the error came {:?} after the kill", killed.elapsed());
    // The session itself goes on, on the living instance.
    let (status, messages) = session
        .call(&c.url(), 8, "echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(text(messages.last().unwrap()), "still here");
}

/// Tasks (2025-11-25) of a session shared by three instances: a countdown run as a task is
/// polled, listed and awaited through the proxy (landing on every instance), cancelled
/// from an instance other than its own, and reported failed once its instance is killed.
#[tokio::test]
async fn tasks_are_served_by_every_instance() {
    let redis = Redis::start();
    let prefix = prefix("tasks");
    let mut instances: Vec<Instance> = (0..3)
        .map(|i| Instance::start(&redis.url(), &prefix, &["--instance-id", &format!("t{i}")]))
        .collect();
    let ports: Vec<u16> = instances.iter().map(Instance::port).collect();
    let nginx = Nginx::start(&ports);
    let proxy = nginx.url();
    let session = Session::open_at(&proxy, "2025-11-25").await;
    let request = |id: u64, method: &str, params: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let answer = |messages: Vec<serde_json::Value>, id: u64| {
        messages
            .into_iter()
            .find(|m| m["id"] == id)
            .expect("the response")
    };
    let start = |url: String, steps: u32| {
        let session = &session;
        async move {
            let body = request(
                1,
                "tools/call",
                json!({"name": "countdown",
                "arguments": {"steps": steps, "interval_ms": 100}, "task": {"ttl": 60_000}}),
            );
            let (status, messages) = session.send(&url, &body).await.unwrap();
            assert_eq!(status, 200);
            let created = answer(messages, 1);
            assert_eq!(created["result"]["task"]["status"], "working", "{created}");
            created["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let task_call = |url: String, id: u64, method: &'static str, task: String| {
        let session = &session;
        async move {
            let body = request(id, method, json!({"taskId": task}));
            let (status, messages) = session.send(&url, &body).await.unwrap();
            assert_eq!(status, 200, "{method}");
            answer(messages, id)
        }
    };

    // Through the proxy: every poll may land on another instance.
    let task = start(proxy.clone(), 10).await;
    for id in 10..16 {
        let got = task_call(proxy.clone(), id, "tasks/get", task.clone()).await;
        let status = got["result"]["status"].as_str().unwrap_or_default();
        assert!(["working", "completed"].contains(&status), "{got}");
    }
    let result = task_call(proxy.clone(), 20, "tasks/result", task.clone()).await;
    assert_eq!(text(&result), "counted 10 steps", "{result}");
    let listed = session
        .send(&proxy, &request(21, "tasks/list", json!({})))
        .await
        .unwrap();
    let listed = answer(listed.1, 21);
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        json!(task),
        "{listed}"
    );
    assert_eq!(listed["result"]["tasks"][0]["status"], "completed");

    // Cancelled from another instance than its own.
    let long = start(instances[1].url(), 1000).await;
    let cancelled = task_call(instances[2].url(), 30, "tasks/cancel", long.clone()).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let got = task_call(instances[1].url(), 31, "tasks/get", long.clone()).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");

    // Its instance killed, a task is failed elsewhere (once the instance's heartbeat
    // expires), and awaiting it is an error, not a hang.
    let orphan = start(instances[0].url(), 1000).await;
    let key = format!("{prefix}task:{}:{orphan}", session.id);
    assert_eq!(
        redis.cli(&["HGET", &key, "instance"]).as_deref(),
        Some("t0"),
        "the task's record names its instance"
    );
    instances[0].kill();
    let killed = Instant::now();
    let waiting = task_call(instances[2].url(), 40, "tasks/result", orphan.clone());
    let result = tokio::time::timeout(Duration::from_secs(20), waiting)
        .await
        .expect("tasks/result ends");
    assert_eq!(result["error"]["code"], -32603, "{result}");
    eprintln!(
        "the orphan task failed {:?} after the kill",
        killed.elapsed()
    );
    let got = task_call(instances[1].url(), 41, "tasks/get", orphan).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");

    // The session's end takes its tasks from Redis.
    let response = session
        .http
        .delete(instances[1].url())
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", session.revision)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(redis.keys(&format!("{prefix}task")), 0, "no task key left");
}

/// Per-session data (`ferry::server::SessionData`) on three instances sharing one real
/// Redis behind nginx round-robin: 1,000 increments by 10 concurrent callers spread over
/// the instances all count (each value is seen once); the data is one field of the
/// session's record, so it goes with a DELETE and with the session's expiry (keys
/// counted); a value past the limit is refused on every instance.
#[tokio::test]
async fn session_data_follows_the_session_over_instances() {
    use std::sync::Arc;

    use ferry::http::HttpConfig;
    use ferry::http::store::{RedisConfig, RedisSessionStore, SessionStore};
    use ferry::server::{Server, SessionData};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Size {
        /// Bytes of the value to store.
        bytes: usize,
    }

    let redis = Redis::start();
    let prefix = prefix("data");
    let mut ports = Vec::new();
    for _ in 0..3 {
        let server = Server::builder("data", "1.0.0")
            .session_data_limit(1024)
            .tool(
                "count",
                "Counts the session's calls",
                |_: (), data: SessionData| async move {
                    data.update("calls", |n: &mut u64| {
                        *n += 1;
                        *n
                    })
                    .await
                    .map_err(|e| e.to_string())
                },
            )
            .tool(
                "blob",
                "Stores a value of some size",
                |a: Size, data: SessionData| async move {
                    data.set("blob", "x".repeat(a.bytes))
                        .await
                        .map(|()| "stored")
                        .map_err(|e| e.to_string())
                },
            )
            .build();
        let store = RedisSessionStore::new(RedisConfig::new(redis.url()).prefix(&prefix)).unwrap();
        let store: Arc<dyn SessionStore> = Arc::new(store);
        let config = HttpConfig::default()
            .session_store(store)
            .session_idle_timeout(Duration::from_secs(3));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        ports.push(listener.local_addr().unwrap().port());
        tokio::spawn(ferry::http::serve(server, listener, config));
    }
    let nginx = Nginx::start(&ports);
    let url = nginx.url();
    let session = std::sync::Arc::new(Session::open(&url).await);

    let mut callers = Vec::new();
    for caller in 0..10u64 {
        let (session, url) = (std::sync::Arc::clone(&session), url.clone());
        callers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..100u64 {
                let (status, messages) = session
                    .call(&url, caller * 1000 + i + 1, "count", json!({}))
                    .await
                    .unwrap();
                assert_eq!(status, 200, "{messages:?}");
                let answer = messages.last().unwrap();
                seen.push(
                    text(answer)
                        .parse::<u64>()
                        .unwrap_or_else(|_| panic!("{answer}")),
                );
            }
            seen
        }));
    }
    let mut seen = Vec::new();
    for caller in callers {
        seen.extend(caller.await.unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, (1..=1000).collect::<Vec<u64>>());

    // Past the limit on any instance: refused, and the counter is untouched.
    for id in 1..=3 {
        let (_, messages) = session
            .call(&url, 9000 + id, "blob", json!({"bytes": 2000}))
            .await
            .unwrap();
        let answer = messages.last().unwrap();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(text(answer).contains("limit of 1024 bytes"), "{answer}");
    }
    let (_, messages) = session.call(&url, 9100, "count", json!({})).await.unwrap();
    assert_eq!(text(messages.last().unwrap()), "1001");

    // The data is fields of the record's hash: nothing else under the prefix, and it
    // goes with the session.
    let hash = format!("{prefix}session:{}", session.id);
    let fields = redis.cli(&["hkeys", &hash]).unwrap_or_default();
    assert!(fields.lines().any(|f| f == "data:calls"), "{fields}");
    deleted_with_its_record(&redis, &prefix, &session, &url).await;

    // A session left alone expires with its data.
    let idle = Session::open(&url).await;
    let (_, messages) = idle.call(&url, 1, "count", json!({})).await.unwrap();
    assert_eq!(text(messages.last().unwrap()), "1");
    expires_with_its_record(&redis, &prefix).await;
}

/// DELETE `session` (the one session under `prefix`): its record, data included, is gone.
async fn deleted_with_its_record(redis: &Redis, prefix: &str, session: &Session, url: &str) {
    assert_eq!(redis.keys(&session_keys(prefix)), 1);
    let response = session
        .http
        .delete(url)
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", session.revision)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    assert_eq!(redis.keys(&session_keys(prefix)), 0);
}

/// The one session under `prefix`, left alone, expires with its record within 20 s.
async fn expires_with_its_record(redis: &Redis, prefix: &str) {
    assert_eq!(redis.keys(&session_keys(prefix)), 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    while redis.keys(&session_keys(prefix)) > 0 {
        assert!(
            Instant::now() < deadline,
            "the idle session's record stayed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Read `response`'s SSE body until it contains `needle`, within 10 s.
async fn read_until(response: &mut reqwest::Response, seen: &mut String, needle: &str) {
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} within 10 s: {seen}"))
            .expect("read")
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// The reference server's changes reach every instance: `subscriptions/listen` held on
/// instance A hears the `tools/list_changed` of a `change_tools` served by instance B, and
/// instance C lists the tool B added (B told the others); a session-era subscriber whose
/// GET stream is on A hears the `resources/updated` of a `tick_clock` served by C.
#[tokio::test]
async fn changes_reach_listeners_and_subscribers_on_every_instance() {
    let redis = Redis::start();
    let prefix = prefix("live");
    let instances: Vec<Instance> = (0..3)
        .map(|_| Instance::start(&redis.url(), &prefix, &[]))
        .collect();
    let (a, b, c) = (&instances[0], &instances[1], &instances[2]);
    let http = reqwest::Client::new();
    let stateless = |id: &str, method: &str, params: serde_json::Value| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}});
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    let post = |url: String, method: &'static str, body: serde_json::Value| {
        let mut request = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if method == "tools/call" {
            let name = body["params"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            request = request.header("mcp-name", name);
        }
        request.body(body.to_string()).send()
    };

    let mut listen = post(
        a.url(),
        "subscriptions/listen",
        stateless(
            "listen",
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(listen.status(), 200);
    let mut heard = String::new();
    read_until(
        &mut listen,
        &mut heard,
        "notifications/subscriptions/acknowledged",
    )
    .await;

    let added = post(
        b.url(),
        "tools/call",
        stateless(
            "add",
            "tools/call",
            json!({"name": "change_tools", "arguments": {"action": "add"}}),
        ),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(added.contains("the tool `surprise`: added"), "{added}");
    read_until(&mut listen, &mut heard, "notifications/tools/list_changed").await;

    // Every instance lists it once it heard (B told the others as it added it).
    let deadline = Instant::now() + Duration::from_secs(10);
    for instance in [a, c] {
        loop {
            let listed = post(
                instance.url(),
                "tools/list",
                stateless("list", "tools/list", json!({})),
            )
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
            if listed.contains(r#""name":"surprise""#) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} never listed surprise: {listed}",
                instance.url()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let called = post(
        c.url(),
        "tools/call",
        stateless(
            "call",
            "tools/call",
            json!({"name": "surprise", "arguments": {}}),
        ),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(called.contains("Surprise!"), "{called}");
    drop(listen);

    // Session era: the GET stream on A, the subscription through B, the tick through C.
    let session = Session::open(&b.url()).await;
    let mut stream = session
        .http
        .get(a.url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", session.revision)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                           "params": {"uri": "ferry://clock"}});
    let (status, _) = session.send(&b.url(), &subscribe).await.unwrap();
    assert_eq!(status, 200);
    let (status, messages) = session
        .call(&c.url(), 3, "tick_clock", json!({}))
        .await
        .unwrap();
    assert_eq!(status, 200, "{messages:?}");
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, "notifications/resources/updated").await;
    assert!(seen.contains("ferry://clock"), "{seen}");
}

/// `evaluate`'s text of `answer`: `=> value`, or its error.
fn evaluated(answer: &serde_json::Value) -> String {
    text(answer).to_owned()
}

#[tokio::test]
async fn evaluate_keeps_its_variables_where_the_session_lives() {
    let redis = Redis::start();
    let prefix = prefix("evaluate");
    let instances: Vec<Instance> = (0..3)
        .map(|_| Instance::start(&redis.url(), &prefix, &["--session-idle", "3"]))
        .collect();
    let ports: Vec<u16> = instances.iter().map(Instance::port).collect();
    let nginx = Nginx::start(&ports);
    let url = nginx.url();
    let session = std::sync::Arc::new(Session::open(&url).await);
    let mut id = 0;
    let mut next_id = || {
        id += 1;
        id
    };
    let eval = |session: std::sync::Arc<Session>, url: String, id: u64, code: &str| {
        let code = code.to_owned();
        async move {
            let (status, messages) = session
                .call(&url, id, "evaluate", json!({"code": code}))
                .await
                .unwrap();
            assert_eq!(status, 200, "{messages:?}");
            evaluated(messages.last().unwrap())
        }
    };

    // Defined on one instance, read on every one (each asked directly).
    let defined = eval(
        session.clone(),
        instances[0].url(),
        next_id(),
        "let x = 40; fn f(a) { a + 2 } let c = 'c'; let m = #{k: [1.0, ()]};",
    )
    .await;
    assert_eq!(defined, "=> ()");
    for instance in &instances {
        let read = eval(
            session.clone(),
            instance.url(),
            next_id(),
            "`${f(x)} ${type_of(c)} ${m}`",
        )
        .await;
        assert_eq!(
            read,
            r#"=> "42 char #{\"k\": [1.0, ()]}""#,
            "{}",
            instance.url()
        );
    }
    // A change made on the second instance is seen by the first, whose copy is older.
    let changed = eval(session.clone(), instances[1].url(), next_id(), "x += 1; x").await;
    assert_eq!(changed, "=> 41");
    for instance in [&instances[0], &instances[2]] {
        let read = eval(session.clone(), instance.url(), next_id(), "x").await;
        assert_eq!(read, "=> 41");
    }
    // A value of one machine's clock cannot follow the session; nothing changes.
    let refused = eval(
        session.clone(),
        url.clone(),
        next_id(),
        "let t = timestamp(); x = 0;",
    )
    .await;
    assert!(refused.starts_with("[ERROR] NOT-SHAREABLE"), "{refused}");
    assert_eq!(
        eval(session.clone(), url.clone(), next_id(), "x").await,
        "=> 41"
    );

    // Concurrent increments through the proxy: every one that succeeds counts once.
    let mut callers = Vec::new();
    for caller in 0..6u64 {
        let (session, url) = (std::sync::Arc::clone(&session), url.clone());
        callers.push(tokio::spawn(async move {
            let mut counted = 0;
            for i in 0..20u64 {
                let answer = eval(
                    session.clone(),
                    url.clone(),
                    1000 + caller * 100 + i,
                    "x += 1;",
                )
                .await;
                if answer == "=> ()" {
                    counted += 1;
                } else {
                    assert!(answer.starts_with("[ERROR] SESSION-CONTENDED"), "{answer}");
                }
            }
            counted
        }));
    }
    let mut counted = 0;
    for caller in callers {
        counted += caller.await.unwrap();
    }
    assert!(counted > 0);
    let total = eval(session.clone(), url.clone(), next_id(), "x").await;
    assert_eq!(total, format!("=> {}", 41 + counted));

    // The state is fields of the session's record, and goes with it.
    let hash = format!("{prefix}session:{}", session.id);
    let fields = redis.cli(&["hkeys", &hash]).unwrap_or_default();
    assert!(
        fields.lines().any(|f| f == "data:evaluate.state"),
        "{fields}"
    );
    deleted_with_its_record(&redis, &prefix, &session, &url).await;

    // And expires with it.
    let idle = std::sync::Arc::new(Session::open(&url).await);
    assert_eq!(
        eval(idle.clone(), url.clone(), 1, "let y = 1;").await,
        "=> ()"
    );
    expires_with_its_record(&redis, &prefix).await;
}
