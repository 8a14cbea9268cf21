//! The peer engine, driven from the outside through in-memory and byte-stream transports.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ferry::engine::{
    CallError, CallOptions, Engine, EngineConfig, Handler, HandlerResult, Peer, ProgressError,
    RequestContext, ResultJson, Transport, TransportEvent,
};
use ferry::protocol::jsonrpc::{ErrorObject, Notification, Request};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A test server: `echo`, `slow` (sleeps `ms`), `wait` (until cancelled), `panic`,
/// `progress` (reports 1, 2, 2, 3), `ask` (asks the peer `question` and returns the answer).
#[derive(Default)]
struct TestHandler {
    stopped: Arc<AtomicBool>,
    notifications: Arc<AtomicUsize>,
    batches: bool,
}

struct SetOnDrop(Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn raw(value: Value) -> HandlerResult {
    ResultJson::from_value(&value).map_err(ErrorObject::internal_error)
}

impl Handler for TestHandler {
    async fn request(&self, request: Request, cx: RequestContext) -> HandlerResult {
        let params: Value = request
            .params
            .as_deref()
            .map(|p| serde_json::from_str(p.get()).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        match &*request.method {
            "echo" => raw(params),
            "slow" => {
                let ms = params["ms"].as_u64().unwrap_or(100);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                raw(json!({"slept": ms}))
            }
            "wait" => {
                let _guard = SetOnDrop(self.stopped.clone());
                std::future::pending::<()>().await;
                unreachable!()
            }
            "panic" => panic!("boom"),
            "progress" => {
                let p = cx.progress.clone().expect("progress requested");
                let mut outcomes = Vec::new();
                for v in [1.0, 2.0, 2.0, 3.0] {
                    outcomes.push(p.report(v, Some(3.0), None).await.is_ok());
                }
                let reporter = p.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    assert_eq!(
                        reporter.report(9.0, None, None).await,
                        Err(ProgressError::Inactive)
                    );
                });
                raw(json!({"accepted": outcomes}))
            }
            "ask" => {
                let answer: Value = cx
                    .peer
                    .request("question", &json!({"q": params["q"]}))
                    .await
                    .map_err(ErrorObject::internal_error)?;
                raw(json!({"answer": answer}))
            }
            "question" => raw(json!(format!("answer to {}", params["q"]))),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn notification(&self, _: Notification, _: &Peer) {
        self.notifications.fetch_add(1, Ordering::SeqCst);
    }

    fn accepts_batches(&self) -> bool {
        self.batches
    }
}

fn connect(server: TestHandler) -> (Peer, Peer) {
    connect_with(server, EngineConfig::default())
}

/// The client's and the server's peers, the server's engine configured by `config`.
fn connect_with(server: TestHandler, config: EngineConfig) -> (Peer, Peer) {
    let (a, b) = Transport::pair(64);
    let server = Engine::start(a, server, config);
    let client = Engine::start(b, TestHandler::default(), EngineConfig::default());
    (client.peer, server.peer)
}

/// A server configuration with one concurrency slot.
fn one_slot() -> EngineConfig {
    EngineConfig {
        max_concurrent_requests: 1,
        ..Default::default()
    }
}

#[tokio::test]
async fn request_response_and_ping() {
    let (client, _) = connect(TestHandler::default());
    let echoed: Value = client
        .request("echo", &json!({"x": 1}))
        .await
        .expect("echo");
    assert_eq!(echoed, json!({"x": 1}));
    let pong: Value = client.request("ping", &json!({})).await.expect("ping");
    assert_eq!(pong, json!({}));
    let err = client
        .request::<_, Value>("nope", &json!({}))
        .await
        .expect_err("unknown");
    assert!(matches!(err, CallError::Rpc(e) if e.code == -32601));
}

#[tokio::test]
async fn requests_run_concurrently() {
    let (client, _) = connect(TestHandler::default());
    let slow_client = client.clone();
    let slow = tokio::spawn(async move {
        slow_client
            .request::<_, Value>("slow", &json!({"ms": 2000}))
            .await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let fast: Value = client
        .request("echo", &json!(["fast"]))
        .await
        .expect("fast");
    assert_eq!(fast, json!(["fast"]));
    assert!(
        !slow.is_finished(),
        "the fast call did not wait for the slow one"
    );
    assert_eq!(slow.await.expect("join").expect("slow")["slept"], 2000);
}

#[tokio::test]
async fn concurrency_is_limited_and_waiting_requests_run_in_turn() {
    let (client, _server) = connect_with(TestHandler::default(), one_slot());
    let started = std::time::Instant::now();
    let calls = (0..3).map(|_| {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request::<_, Value>("slow", &json!({"ms": 150}))
                .await
                .expect("slow")
        })
    });
    let calls: Vec<_> = calls.collect();
    for call in calls {
        assert_eq!(call.await.expect("join")["slept"], 150);
    }
    // One slot: the three ran one after another, not side by side.
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_request_cancelled_while_waiting_for_a_slot_never_runs_nor_holds_one() {
    let (client, _server) = connect_with(TestHandler::default(), one_slot());
    let slow = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request::<_, Value>("slow", &json!({"ms": 300}))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    // Waits for the one slot, and is cancelled (the client gives up) before it gets it.
    let options = CallOptions {
        timeout: Some(Duration::from_millis(50)),
        ..Default::default()
    };
    let err = client
        .call("slow", &json!({"ms": 5000}), options)
        .await
        .expect_err("times out");
    assert!(matches!(err, CallError::Timeout(_)));
    assert_eq!(slow.await.expect("join").expect("slow")["slept"], 300);
    // Had the cancelled request run, it would hold the slot for five seconds.
    let started = std::time::Instant::now();
    let next: Value = tokio::time::timeout(
        Duration::from_secs(3),
        client.request("echo", &json!(["next"])),
    )
    .await
    .expect("the slot is free")
    .expect("echo");
    assert_eq!(next, json!(["next"]));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_panic_becomes_an_internal_error_and_serving_goes_on() {
    let (client, _) = connect(TestHandler::default());
    let err = client
        .request::<_, Value>("panic", &json!({}))
        .await
        .expect_err("panics");
    let CallError::Rpc(error) = err else {
        panic!("rpc error expected")
    };
    assert_eq!(error.code, -32603);
    assert!(
        error.message.contains("panic") && error.message.contains("boom"),
        "{}",
        error.message
    );
    assert_eq!(error.data.as_ref().expect("data")["method"], "panic");
    let again: Value = client
        .request("echo", &json!([1]))
        .await
        .expect("still serving");
    assert_eq!(again, json!([1]));
    let err = client
        .request::<_, Value>("echo", &json!(1))
        .await
        .expect_err("scalar params");
    assert!(matches!(err, CallError::Serialize(_)));
}

#[tokio::test]
async fn timeout_cancels_the_request_on_the_other_side() {
    let stopped = Arc::new(AtomicBool::new(false));
    let (client, _) = connect(TestHandler {
        stopped: stopped.clone(),
        ..Default::default()
    });
    let options = CallOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let err = client
        .call("wait", &json!({}), options)
        .await
        .expect_err("times out");
    assert!(matches!(err, CallError::Timeout(_)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(stopped.load(Ordering::SeqCst), "the handler was stopped");
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test]
async fn dropping_a_call_cancels_it() {
    let stopped = Arc::new(AtomicBool::new(false));
    let (client, _) = connect(TestHandler {
        stopped: stopped.clone(),
        ..Default::default()
    });
    let params = json!({});
    let call = client.request::<_, Value>("wait", &params);
    let _ = tokio::time::timeout(Duration::from_millis(100), call).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(stopped.load(Ordering::SeqCst), "the handler was stopped");
    let r: Value = client
        .request("echo", &json!([2]))
        .await
        .expect("unaffected");
    assert_eq!(r, json!([2]));
}

#[tokio::test]
async fn progress_is_routed_increasing_and_only_while_active() {
    let (client, _) = connect(TestHandler::default());
    let (tx, mut rx) = mpsc::channel(16);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let result = client
        .call("progress", &json!({}), options)
        .await
        .expect("progress");
    let result: Value = serde_json::from_str(result.get()).expect("json");
    assert_eq!(result["accepted"], json!([true, true, false, true]));
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p.progress);
    }
    assert_eq!(seen, vec![1.0, 2.0, 3.0]);
    tokio::time::sleep(Duration::from_millis(100)).await; // the late report is refused
}

#[tokio::test]
async fn both_sides_send_requests() {
    let (client, _) = connect(TestHandler::default());
    let r: Value = client
        .request("ask", &json!({"q": "life"}))
        .await
        .expect("ask");
    assert_eq!(r["answer"], json!("answer to \"life\""));
}

/// Raw frames against an engine: what a misbehaving peer sees.
async fn raw_session(handler: TestHandler, frames: &[&[u8]]) -> Vec<Value> {
    let (mut raw_side, engine_side) = Transport::pair(64);
    let _engine = Engine::start(engine_side, handler, EngineConfig::default());
    for frame in frames {
        raw_side.outgoing.send(frame.to_vec()).await.expect("send");
    }
    let mut replies = Vec::new();
    while let Ok(Some(TransportEvent::Frame(f))) =
        tokio::time::timeout(Duration::from_millis(200), raw_side.incoming.recv()).await
    {
        replies.push(serde_json::from_slice(&f).expect("json reply"));
    }
    replies
}

#[tokio::test]
async fn malformed_input_gets_the_right_errors_and_notifications_get_none() {
    let replies = raw_session(
        TestHandler::default(),
        &[
            b"{oops",
            br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}"#,
            br#"{"jsonrpc":"2.0","method":"note"}"#,
            br#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
            br#"[{"jsonrpc":"2.0","id":2,"method":"echo"}]"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"echo","params":{"ok":true}}"#,
        ],
    )
    .await;
    assert_eq!(replies.len(), 4, "{replies:#?}");
    assert_eq!(replies[0]["error"]["code"], -32700);
    assert_eq!(
        (
            replies[1]["id"].clone(),
            replies[1]["error"]["code"].clone()
        ),
        (json!(1), json!(-32600))
    );
    assert_eq!(
        replies[2]["error"]["code"], -32600,
        "batches refused by default"
    );
    assert_eq!(replies[3]["result"], json!({"ok": true}));
}

#[tokio::test]
async fn batches_when_accepted() {
    let handler = TestHandler {
        batches: true,
        ..Default::default()
    };
    let replies = raw_session(
        handler,
        &[br#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"ping"},1]"#,
          br#"[{"jsonrpc":"2.0","method":"n"}]"#],
    )
    .await;
    assert_eq!(
        replies.len(),
        1,
        "a batch of notifications gets no reply: {replies:#?}"
    );
    let batch = replies[0].as_array().expect("array");
    assert_eq!(batch.len(), 3);
    assert!(batch.iter().any(|r| r["result"] == json!({"a": 1})));
    assert!(
        batch
            .iter()
            .any(|r| r["id"] == json!(2) && r["result"] == json!({}))
    );
    assert!(batch.iter().any(|r| r["error"]["code"] == -32600));
}

#[tokio::test]
async fn duplicate_in_flight_ids_are_refused() {
    let replies = raw_session(
        TestHandler::default(),
        &[
            br#"{"jsonrpc":"2.0","id":7,"method":"slow","params":{"ms":100}}"#,
            br#"{"jsonrpc":"2.0","id":7,"method":"echo","params":{}}"#,
        ],
    )
    .await;
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0]["error"]["code"], -32600);
    assert_eq!(replies[1]["result"]["slept"], 100);
}

#[tokio::test]
async fn line_transport_frames_and_limits() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let config = EngineConfig {
        max_message_bytes: 1024,
        ..Default::default()
    };
    let transport = Transport::lines(server_read, server_write, config.max_message_bytes, 16);
    let engine = Engine::start(transport, TestHandler::default(), config);
    let (client_read, mut client_write) = tokio::io::split(client_io);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{{\"s\":\"{}\"}}}}\n",
        "x".repeat(5000)
    );
    client_write.write_all(big.as_bytes()).await.expect("write");
    client_write
        .write_all(b"\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[1]}\r\n")
        .await
        .expect("write");
    let mut lines = BufReader::new(client_read).lines();
    let first: Value =
        serde_json::from_str(&lines.next_line().await.expect("read").expect("line")).expect("json");
    // Refused under its own id (read from the head of the line), not `null`: the sender's
    // call ends at once instead of waiting for its timeout.
    assert_eq!(
        (first["id"].clone(), first["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    let second: Value =
        serde_json::from_str(&lines.next_line().await.expect("read").expect("line")).expect("json");
    assert_eq!(second["result"], json!([1]));
    client_write.shutdown().await.expect("eof");
    drop(client_write);
    tokio::time::timeout(Duration::from_secs(2), engine.task)
        .await
        .expect("engine ends on EOF")
        .expect("no panic");
}

/// An answer over this side's message limit fails its call at once, naming the limit and
/// the size, instead of leaving it to its timeout.
#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_at_once() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_read, our_write) = tokio::io::split(ours);
    let config = EngineConfig {
        max_message_bytes: 1024,
        request_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let transport = Transport::lines(our_read, our_write, config.max_message_bytes, 16);
    let engine = Engine::start(transport, TestHandler::default(), config);
    let (their_read, mut their_write) = tokio::io::split(theirs);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let answering = tokio::spawn(async move {
        let mut lines = BufReader::new(their_read).lines();
        let request: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"text\":\"{}\"}}}}\n",
            request["id"],
            "x".repeat(5000)
        );
        their_write.write_all(answer.as_bytes()).await.unwrap();
        their_write
    });
    let started = std::time::Instant::now();
    let error = engine
        .peer
        .call("big", &json!({}), Default::default())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let text = error.to_string();
    assert!(text.contains("1024"), "names the limit: {text}");
    assert!(text.contains("5"), "and the size: {text}");
    assert!(
        matches!(error, ferry::engine::CallError::Transport(_)),
        "{error:?}"
    );
    drop(answering.await.unwrap());
}

/// A byte stream that keeps what is written and counts the writes.
#[derive(Clone, Default)]
struct CountingWriter {
    bytes: Arc<std::sync::Mutex<Vec<u8>>>,
    writes: Arc<AtomicUsize>,
}

impl tokio::io::AsyncWrite for CountingWriter {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.bytes.lock().expect("lock").extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Requests read in one burst are answered in a few writes, not one per response (a
/// system call each on a pipe).
#[tokio::test]
async fn a_burst_of_requests_is_answered_in_a_few_writes() {
    let mut burst = Vec::new();
    for id in 0..32 {
        burst.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":[{id}]}}\n")
                .as_bytes(),
        );
    }
    let out = CountingWriter::default();
    let transport = Transport::lines(std::io::Cursor::new(burst), out.clone(), 1 << 20, 64);
    let engine = Engine::start(transport, TestHandler::default(), EngineConfig::default());
    tokio::time::timeout(Duration::from_secs(5), engine.task)
        .await
        .expect("engine ends on EOF")
        .expect("no panic");
    let text = String::from_utf8(out.bytes.lock().expect("lock").clone()).expect("utf-8");
    let ids: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json")["id"].clone())
        .collect();
    assert_eq!(ids, (0..32).map(|id| json!(id)).collect::<Vec<_>>());
    let writes = out.writes.load(Ordering::SeqCst);
    assert!(writes <= 4, "{writes} writes for 32 responses");
}

#[tokio::test]
async fn hang_up_cancels_in_flight_work_after_the_grace_period() {
    let stopped = Arc::new(AtomicBool::new(false));
    let (mut raw_side, engine_side) = Transport::pair(8);
    let config = EngineConfig {
        shutdown_grace: Duration::from_millis(100),
        ..Default::default()
    };
    let engine = Engine::start(
        engine_side,
        TestHandler {
            stopped: stopped.clone(),
            ..Default::default()
        },
        config,
    );
    raw_side
        .outgoing
        .send(br#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#.to_vec())
        .await
        .expect("send");
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(raw_side.outgoing);
    tokio::time::timeout(Duration::from_secs(2), engine.task)
        .await
        .expect("engine ends")
        .expect("no panic");
    assert!(stopped.load(Ordering::SeqCst));
    assert!(
        raw_side.incoming.try_recv().is_err(),
        "no response for the cancelled request"
    );
}

/// A peer that sends requests, never reads the answers and hangs up its side: the engine
/// still ends, its handlers blocked on the full output cut after the grace period.
#[tokio::test]
async fn hang_up_ends_the_engine_while_the_peer_reads_nothing() {
    let big = "x".repeat(64 * 1024);
    let mut burst = Vec::new();
    for id in 0..64 {
        burst.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":[\"{big}\"]}}\n"
            )
            .as_bytes(),
        );
    }
    // The answers go into a 4 KiB pipe nobody reads (its other end is kept open).
    let (ours, theirs) = tokio::io::duplex(4096);
    let (_, writer) = tokio::io::split(ours);
    let stalled = Duration::from_millis(200);
    let transport = Transport::lines_with_write_timeout(
        std::io::Cursor::new(burst),
        writer,
        1 << 20,
        4,
        stalled,
    );
    let config = EngineConfig {
        shutdown_grace: Duration::from_millis(100),
        ..Default::default()
    };
    let engine = Engine::start(transport, TestHandler::default(), config);
    tokio::time::timeout(Duration::from_secs(10), engine.task)
        .await
        .expect("the engine ends although its output is stalled")
        .expect("no panic");
    drop(theirs);
}

/// A peer that sends requests and never reads the answers, but keeps its side open: once
/// a write has stalled past the timeout the engine ends anyway.
#[tokio::test]
async fn a_peer_that_stops_reading_is_let_go() {
    use tokio::io::AsyncWriteExt;

    let big = "x".repeat(64 * 1024);
    let (ours, theirs) = tokio::io::duplex(4096);
    let (reader, writer) = tokio::io::split(ours);
    let (_their_reader, mut their_writer) = tokio::io::split(theirs);
    let transport =
        Transport::lines_with_write_timeout(reader, writer, 1 << 20, 4, Duration::from_millis(200));
    let config = EngineConfig {
        shutdown_grace: Duration::from_millis(100),
        ..Default::default()
    };
    let engine = Engine::start(transport, TestHandler::default(), config);
    let sending = tokio::spawn(async move {
        for id in 0..64 {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":[\"{big}\"]}}\n"
            );
            if their_writer.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        // Never hangs up.
        std::future::pending::<()>().await;
    });
    tokio::time::timeout(Duration::from_secs(10), engine.task)
        .await
        .expect("the engine lets a peer that stopped reading go")
        .expect("no panic");
    sending.abort();
}

#[tokio::test]
async fn calls_after_the_peer_hung_up_fail_at_once() {
    // A byte-stream transport whose reader ends at once (the peer hung up) while its
    // writer still accepts frames: later calls must not wait for their timeout.
    let (ours, _theirs) = tokio::io::duplex(1024);
    let (_, writer) = tokio::io::split(ours);
    let transport = Transport::lines(tokio::io::empty(), writer, 1 << 20, 16);
    let config = EngineConfig {
        request_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let engine = Engine::start(transport, TestHandler::default(), config);
    let peer = engine.peer.clone();
    engine.task.await.expect("the engine ends when input ends");
    let started = std::time::Instant::now();
    let error = peer
        .request::<_, Value>("echo", &json!({}))
        .await
        .expect_err("no peer");
    assert_eq!(error, CallError::ConnectionClosed);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// A frame the transport has already read (`TransportEvent::Classified`) is answered like
/// the same frame sent raw; one over the engine's size limit is refused as a frame is.
#[tokio::test]
async fn classified_frames_are_answered_and_limited_like_raw_ones() {
    let (to_engine, incoming) = mpsc::channel(8);
    let (outgoing, mut from_engine) = mpsc::channel(8);
    let config = EngineConfig {
        max_message_bytes: 200,
        ..EngineConfig::default()
    };
    let _engine = Engine::start(
        Transport::new(incoming, outgoing),
        TestHandler::default(),
        config,
    );
    let classified = |value: Value| {
        let frame = serde_json::to_vec(&value).unwrap();
        let ferry::protocol::jsonrpc::Inbound::Single(message) =
            ferry::protocol::jsonrpc::classify(&frame)
        else {
            panic!("one message: {value}");
        };
        TransportEvent::classified(frame, message, None)
    };
    let mut answer = async |event: TransportEvent| -> Value {
        to_engine.send(event).await.unwrap();
        let frame = tokio::time::timeout(Duration::from_secs(5), from_engine.recv())
            .await
            .expect("an answer in time")
            .expect("the engine runs");
        serde_json::from_slice(&frame).unwrap()
    };
    let echo = json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}});
    let raw_answer = answer(TransportEvent::Frame(serde_json::to_vec(&echo).unwrap())).await;
    assert_eq!(
        raw_answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"x": 1}})
    );
    assert_eq!(answer(classified(echo)).await, raw_answer);

    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "echo",
                     "params": {"x": "y".repeat(300)}});
    let refused = answer(classified(big)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
}

/// Answers `big` with [`BIG`] bytes of text, counting the answers it has made.
struct Big {
    made: Arc<AtomicUsize>,
}

const BIG: usize = 256 * 1024;

impl Handler for Big {
    async fn request(&self, _request: Request, _cx: RequestContext) -> HandlerResult {
        self.made.fetch_add(1, Ordering::SeqCst);
        raw(json!({"text": "x".repeat(BIG)}))
    }

    async fn notification(&self, _: Notification, _: &Peer) {}
}

/// A client over a socket on 127.0.0.1 that sends many requests with large answers and
/// reads none: the server makes only as many answers as its pending limit and write queue
/// hold (not one per request, waiting in memory for the stalled writer), and once the
/// client reads, every request gets exactly one response.
async fn a_stalled_reader_bounds_the_answers_made() {
    const REQUESTS: usize = 200;
    let config = EngineConfig {
        max_concurrent_requests: 4,
        max_pending_requests: 8,
        write_queue: 4,
        ..EngineConfig::default()
    };
    // Small socket buffers on both sides (an accepted socket inherits the listener's), so
    // that the kernel holds less than one answer.
    let listening = tokio::net::TcpSocket::new_v4().unwrap();
    listening.set_send_buffer_size(16 * 1024).unwrap();
    listening.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = listening.listen(8).unwrap();
    let client = tokio::net::TcpSocket::new_v4().unwrap();
    client.set_recv_buffer_size(4 * 1024).unwrap();
    let client = client
        .connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    let (read, write) = server.into_split();
    let made = Arc::new(AtomicUsize::new(0));
    let engine = Engine::start(
        Transport::lines(read, write, 1 << 20, config.write_queue),
        Big { made: made.clone() },
        config,
    );

    let (client_read, mut client_write) = client.into_split();
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    // One at a time, so that the server has taken each before the next (a burst read at
    // once would be refused over the pending limit before any answer is made).
    for id in 0..REQUESTS {
        let request = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"big\"}}\n");
        client_write.write_all(request.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }

    // Wait until the server has stopped making answers (the count unchanged for a while).
    let mut last = usize::MAX;
    let mut still = 0;
    while still < 10 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = made.load(Ordering::SeqCst);
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
    // The pending limit (8), the write queue (4) and what the writer took from it (4),
    // and a frame written in part: nowhere near one per request.
    assert!(
        last <= 20,
        "{last} answers made for a client that reads none"
    );

    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let mut seen = vec![0; REQUESTS];
    let mut refused = 0;
    for _ in 0..REQUESTS {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("an answer for every request");
        let answer: Value = serde_json::from_str(&line).unwrap();
        seen[answer["id"].as_u64().unwrap() as usize] += 1;
        if answer["error"]["code"] == -32603 {
            refused += 1;
        } else {
            assert_eq!(answer["result"]["text"].as_str().unwrap().len(), BIG);
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "one answer each: {seen:?}");
    assert_eq!(made.load(Ordering::SeqCst) + refused, REQUESTS);
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), engine.task)
        .await
        .expect("the engine ends when the client hangs up")
        .unwrap();
    assert_eq!(lines.next_line().await.unwrap(), None, "nothing more");
}

#[tokio::test]
async fn a_stalled_reader_bounds_the_answers_made_single_threaded() {
    a_stalled_reader_bounds_the_answers_made().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_bounds_the_answers_made_multi_threaded() {
    a_stalled_reader_bounds_the_answers_made().await;
}
