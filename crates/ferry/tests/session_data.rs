//! Per-session application data (`SessionData`): kept per session in memory (stdio-like
//! connections, in-process), bounded, refused in the stateless era; and over Streamable
//! HTTP on 127.0.0.1, shared by two instances through one session store: concurrent
//! updates spread over both are never lost, and the data goes with the session.

mod http_support;

use std::sync::Arc;

use ferry::http::HttpConfig;
use ferry::http::store::{MemorySessionStore, SessionStore};
use ferry::protocol::ProtocolVersion;
use ferry::server::{DataError, Server, SessionData, TestClient};
use http_support::{Client, call, json_of, start_with};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// What to remember.
    text: String,
}

fn server() -> Server {
    Server::builder("data", "1.0.0")
        .session_data_limit(4096)
        .tool(
            "count",
            "Counts this session's calls",
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
            "remember",
            "Adds a note",
            |a: Note, data: SessionData| async move {
                data.update("notes", |notes: &mut Vec<String>| {
                    notes.push(a.text.clone());
                    notes.len()
                })
                .await
                .map_err(|e| e.to_string())
            },
        )
        .tool(
            "notes",
            "Lists the notes",
            |_: (), data: SessionData| async move {
                data.get::<Vec<String>>("notes")
                    .await
                    .map(|notes| notes.join(","))
                    .map_err(|e| e.to_string())
            },
        )
        .build()
}

async fn session(server: &Server) -> TestClient {
    TestClient::builder(server)
        .version(ProtocolVersion::V2025_11_25)
        .connect()
        .await
        .unwrap()
}

#[tokio::test]
async fn each_session_has_its_own_bounded_data() {
    let server = server();
    let (a, b) = (session(&server).await, session(&server).await);
    for _ in 0..3 {
        a.call("count", json!({})).await.unwrap();
    }
    assert_eq!(a.call("count", json!({})).await.unwrap().text(), "4");
    assert_eq!(b.call("count", json!({})).await.unwrap().text(), "1");
    a.call("remember", json!({"text": "milk"})).await.unwrap();
    assert_eq!(a.call("notes", json!({})).await.unwrap().text(), "milk");
    assert_eq!(b.call("notes", json!({})).await.unwrap().text(), "");

    // Past the limit (4 KiB as JSON): a tool error, and nothing changed.
    let big = "x".repeat(5000);
    let refused = a.call("remember", json!({"text": big})).await.unwrap();
    assert!(refused.is_error(), "{refused:?}");
    assert!(
        refused.text().contains("limit of 4096 bytes"),
        "{}",
        refused.text()
    );
    assert_eq!(a.call("notes", json!({})).await.unwrap().text(), "milk");

    // The stateless era has no session to keep data in.
    let stateless = TestClient::new(&server).await.unwrap();
    let result = stateless.call("count", json!({})).await.unwrap();
    assert!(result.is_error());
    assert_eq!(result.text(), DataError::NoSession.to_string());
}

/// `count` through `client`, answered as JSON or on SSE.
async fn count(client: &Client, id: u64) -> u64 {
    let response = client
        .post(&call(id, "count", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = json_of(response).await;
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"));
    text.parse().unwrap()
}

#[tokio::test]
async fn shared_sessions_keep_their_data_on_every_instance() {
    let store = Arc::new(MemorySessionStore::new());
    let config = || HttpConfig::default().session_store(store.clone() as Arc<dyn SessionStore>);
    let urls = [
        start_with(server(), config()).await,
        start_with(server(), config()).await,
    ];
    let http = reqwest::Client::new();
    let first = Client::connect(&http, &urls[0], "2025-11-25").await;
    let on = |i: usize| Client {
        url: urls[i % 2].clone(),
        ..first.clone()
    };

    // 10 concurrent callers, 100 increments each, alternating between the instances.
    let mut callers = Vec::new();
    for caller in 0..10u64 {
        let clients = [on(0), on(1)];
        callers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..100u64 {
                seen.push(
                    count(
                        &clients[usize::try_from(i % 2).unwrap()],
                        caller * 1000 + i + 1,
                    )
                    .await,
                );
            }
            seen
        }));
    }
    let mut seen = Vec::new();
    for caller in callers {
        seen.extend(caller.await.unwrap());
    }
    // Every increment counted once: the values seen are exactly 1..=1000.
    seen.sort_unstable();
    assert_eq!(seen, (1..=1000).collect::<Vec<u64>>());
    assert_eq!(count(&on(1), 5000).await, 1001);

    // The data lives in the store under the session, and goes when the session ends.
    let kept = store.load_data(&first.id, "calls").await.unwrap().unwrap();
    assert_eq!(kept.json.as_deref(), Some("1001"));
    let response = on(1)
        .http
        .delete(&urls[1])
        .header("mcp-session-id", &first.id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    assert_eq!(store.load_data(&first.id, "calls").await.unwrap(), None);

    // A new session starts from nothing.
    let second = Client::connect(&http, &urls[1], "2025-11-25").await;
    assert_eq!(count(&second, 1).await, 1);
}
