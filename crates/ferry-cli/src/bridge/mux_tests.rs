//! The multiplexer's bookkeeping, message by message.

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{ClientId, Frame, Mux};

fn bytes(value: Value) -> Frame {
    serde_json::to_vec(&value).unwrap()
}

fn parse(frame: &Frame) -> Value {
    serde_json::from_slice(frame).unwrap()
}

fn attach(mux: &mut Mux, client: ClientId, stateless: bool) -> mpsc::UnboundedReceiver<Frame> {
    let (tx, rx) = mpsc::unbounded_channel();
    mux.attach(client, tx, stateless);
    rx
}

fn call(id: Value, token: Option<&str>) -> Frame {
    let mut params = json!({"name": "echo", "arguments": {}});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    bytes(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
}

fn one(frames: Vec<Frame>) -> Value {
    assert_eq!(frames.len(), 1, "{frames:?}");
    parse(&frames[0])
}

#[test]
fn colliding_ids_and_tokens_are_remapped_and_restored() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let mut b = attach(&mut mux, 2, false);
    let to_child_a = one(mux.client_frame(1, &call(json!(1), Some("t"))));
    let to_child_b = one(mux.client_frame(2, &call(json!(1), Some("t"))));
    assert_ne!(to_child_a["id"], to_child_b["id"]);
    let token_b = to_child_b["params"]["_meta"]["progressToken"].clone();
    assert_ne!(token_b, json!("t"));
    // Progress for B's token goes to B only, with B's own token.
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": token_b, "progress": 1}});
    assert!(mux.child_frame(&bytes(progress)).is_empty());
    let got = parse(&b.try_recv().unwrap());
    assert_eq!(got["params"]["progressToken"], "t");
    assert!(a.try_recv().is_err());
    // Responses go back with each client's own id.
    let answer = json!({"jsonrpc": "2.0", "id": to_child_a["id"], "result": {"content": []}});
    mux.child_frame(&bytes(answer));
    assert_eq!(parse(&a.try_recv().unwrap())["id"], 1);
    assert!(b.try_recv().is_err());
}

#[test]
fn a_later_initialize_is_answered_from_the_cache() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let mut b = attach(&mut mux, 2, false);
    let init = |id| {
        bytes(json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}))
    };
    let forwarded = one(mux.client_frame(1, &init(json!(0))));
    // B asks while A's is in flight: it waits, nothing more reaches the child.
    assert!(mux.client_frame(2, &init(json!("b"))).is_empty());
    let result = json!({"protocolVersion": "2025-06-18", "capabilities": {}});
    mux.child_frame(&bytes(
        json!({"jsonrpc": "2.0", "id": forwarded["id"], "result": result}),
    ));
    assert_eq!(parse(&a.try_recv().unwrap())["id"], 0);
    let for_b = parse(&b.try_recv().unwrap());
    assert_eq!((&for_b["id"], &for_b["result"]), (&json!("b"), &result));
    // Only the first notifications/initialized reaches the child.
    let initialized = bytes(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(mux.client_frame(1, &initialized).len(), 1);
    assert!(mux.client_frame(2, &initialized).is_empty());
    // After a restart the bridge replays initialize, then initialized.
    mux.child_died();
    let replay = one(mux.started());
    assert_eq!(replay["method"], "initialize");
    let after = mux.child_frame(&bytes(
        json!({"jsonrpc": "2.0", "id": replay["id"], "result": result}),
    ));
    assert_eq!(one(after)["method"], "notifications/initialized");
    assert!(
        a.try_recv().is_err(),
        "the replay's answer is the bridge's own"
    );
}

#[test]
fn a_dead_child_fails_what_is_in_flight() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    mux.client_frame(1, &call(json!("x"), None));
    mux.child_died();
    let failed = parse(&a.try_recv().unwrap());
    assert_eq!(failed["id"], "x");
    assert_eq!(failed["error"]["code"], -32603);
}

#[test]
fn a_departing_client_cancels_its_calls_and_refuses_the_childs_requests() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let forwarded = one(mux.client_frame(1, &call(json!(5), None)));
    let sampling =
        json!({"jsonrpc": "2.0", "id": 99, "method": "sampling/createMessage", "params": {}});
    assert!(mux.child_frame(&bytes(sampling)).is_empty());
    assert_eq!(parse(&a.try_recv().unwrap())["id"], 99);
    let out: Vec<Value> = mux.detach(1).iter().map(parse).collect();
    assert!(
        out.iter().any(|m| m["method"] == "notifications/cancelled"
            && m["params"]["requestId"] == forwarded["id"])
    );
    assert!(
        out.iter()
            .any(|m| m["id"] == 99 && m["error"]["code"] == -32603)
    );
}

#[test]
fn the_childs_requests_reach_the_client_it_works_for_never_a_stateless_one() {
    let mut mux = Mux::default();
    let mut session = attach(&mut mux, 1, false);
    // Before any request of the client (right after initialize, say): the only session.
    let roots = |id| bytes(json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}));
    assert!(mux.child_frame(&roots(1)).is_empty());
    assert_eq!(parse(&session.try_recv().unwrap())["method"], "roots/list");
    // A stateless request cannot be asked back: the child is answered at once.
    let _stateless = attach(&mut mux, 2, true);
    mux.client_frame(2, &call(json!(1), None));
    let refused = one(mux.child_frame(&roots(2)));
    assert_eq!(
        (&refused["id"], &refused["error"]["code"]),
        (&json!(2), &json!(-32603))
    );
}

#[test]
fn list_changes_go_to_every_session_and_to_no_stateless_request() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let mut b = attach(&mut mux, 2, false);
    let mut stateless = attach(&mut mux, 3, true);
    let changed = bytes(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    assert!(mux.child_frame(&changed).is_empty());
    assert_eq!(
        parse(&a.try_recv().unwrap())["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(
        parse(&b.try_recv().unwrap())["method"],
        "notifications/tools/list_changed"
    );
    assert!(stateless.try_recv().is_err());
}

#[test]
fn a_listen_streams_notifications_go_to_the_request_that_opened_it() {
    let mut mux = Mux::default();
    let mut session = attach(&mut mux, 1, false);
    let mut listening = attach(&mut mux, 2, true);
    let mut other = attach(&mut mux, 3, true);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let listen = bytes(
        json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"toolsListChanged": true}}}),
    );
    let to_child = one(mux.client_frame(2, &listen));
    let n = to_child["id"].clone();
    assert_ne!(n, json!("sub-1"));
    // The acknowledgement and later notifications name the bridge's id: they go to the
    // listening request alone, naming its own id.
    for method in [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ] {
        let note = json!({"jsonrpc": "2.0", "method": method,
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": n}}});
        assert!(mux.child_frame(&bytes(note)).is_empty());
        let got = parse(&listening.try_recv().expect(method));
        assert_eq!(got["method"], method);
        assert_eq!(
            got["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "sub-1"
        );
        assert!(session.try_recv().is_err(), "{method} not for the session");
        assert!(
            other.try_recv().is_err(),
            "{method} not for another request"
        );
    }
    // Its graceful end: the response, naming its own id in both places.
    let end = json!({"jsonrpc": "2.0", "id": n, "result": {"_meta": {
        "io.modelcontextprotocol/subscriptionId": n}}});
    assert!(mux.child_frame(&bytes(end)).is_empty());
    let got = parse(&listening.try_recv().unwrap());
    assert_eq!(got["id"], "sub-1");
    assert_eq!(
        got["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
}

#[test]
fn an_answer_the_bridge_cannot_read_is_an_error_for_its_request() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let n = one(mux.client_frame(1, &call(json!("mine"), None)))["id"].clone();
    // Cut short (not JSON): its first bytes still name the request.
    let broken = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"content":[{{"type":"te"#);
    assert!(mux.child_frame(broken.as_bytes()).is_empty());
    let got = parse(&a.try_recv().expect("an answer"));
    assert_eq!(got["id"], "mine");
    assert_eq!(got["error"]["code"], -32603);
    assert!(
        got["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the server's answer could not be read"),
        "{got}"
    );
    // An oversized answer, by its head.
    let n = one(mux.client_frame(1, &call(json!(2), None)))["id"].clone();
    mux.child_unreadable(
        format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"#).as_bytes(),
        "5000000 bytes, over the limit",
    );
    let got = parse(&a.try_recv().expect("an answer"));
    assert_eq!(got["id"], 2);
    assert!(mux.next_deadline().is_none() && mux.pending.is_empty());
}

#[test]
fn an_unanswered_request_is_answered_at_its_deadline_and_cancelled() {
    let mut mux = Mux::new(Some(std::time::Duration::from_secs(60)));
    let mut a = attach(&mut mux, 1, false);
    let n = one(mux.client_frame(1, &call(json!(7), Some("t"))))["id"].clone();
    let listen = bytes(
        json!({"jsonrpc": "2.0", "id": 8, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}}}),
    );
    one(mux.client_frame(1, &listen));
    let first = mux.next_deadline().expect("a deadline");
    // Progress restarts it.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let token = format!("bridge-{n}");
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": token, "progress": 1}});
    assert!(mux.child_frame(&bytes(progress)).is_empty());
    let _ = a.try_recv();
    let restarted = mux.next_deadline().unwrap();
    assert!(restarted > first);
    assert!(mux.expire(first).is_empty(), "not due yet");
    let cancels = mux.expire(restarted);
    let cancel = one(cancels);
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], n);
    let got = parse(&a.try_recv().expect("an answer"));
    assert_eq!(got["id"], 7);
    assert_eq!(
        got["error"]["message"],
        "the server did not answer within 60s"
    );
    // The listen request has no deadline; id 7 is free again.
    assert!(mux.next_deadline().is_none());
    assert_eq!(mux.pending.len(), 1);
    one(mux.client_frame(1, &call(json!(7), None)));
}

#[test]
fn requests_past_the_in_flight_bound_are_refused_at_once() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    for id in 0..super::MAX_IN_FLIGHT {
        one(mux.client_frame(1, &call(json!(id), None)));
    }
    assert!(
        mux.client_frame(1, &call(json!("one more"), None))
            .is_empty()
    );
    let got = parse(&a.try_recv().expect("a refusal"));
    assert_eq!(got["id"], "one more");
    assert_eq!(
        got["error"]["message"],
        "too many requests in flight (limit 1024)"
    );
    assert_eq!(mux.pending.len(), super::MAX_IN_FLIGHT);
}

#[test]
fn messages_that_cannot_be_read_into_a_tree_pass_raw_with_their_ids_remapped() {
    let mut mux = Mux::default();
    let mut a = attach(&mut mux, 1, false);
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{{"name":"echo","arguments":{{"a":"\udc00","b":{deep}}}}}}}"#
    );
    let to_child = mux.client_frame(1, request.as_bytes());
    let [to_child] = to_child.as_slice() else {
        panic!("{to_child:?}")
    };
    let text = String::from_utf8(to_child.clone()).unwrap();
    // The params as they were, byte for byte; the id the bridge's own.
    assert!(
        text.contains(r#""a":"\udc00""#) && text.contains(&deep),
        "{text}"
    );
    let head = ferry::protocol::jsonrpc::read_head(to_child);
    let Some(ferry::protocol::RequestId::Number(n)) = head.id else {
        panic!("{text}")
    };
    // The child's answer, unreadable as a tree too, goes back with the client's id.
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"text":"\ud800","d":{deep}}}}}"#);
    assert!(mux.child_frame(answer.as_bytes()).is_empty());
    let got = String::from_utf8(a.try_recv().expect("the answer")).unwrap();
    assert!(
        got.starts_with(r#"{"jsonrpc":"2.0","id":"r","result":{"text":"\ud800""#),
        "{got}"
    );
    assert!(mux.pending.is_empty() && mux.by_client.is_empty());
    // In a batch, each member goes its own way.
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"x","params":{"a":"\udc00"}}]"#;
    assert_eq!(mux.client_frame(1, batch.as_bytes()).len(), 2);
    assert_eq!(mux.pending.len(), 2);
}
