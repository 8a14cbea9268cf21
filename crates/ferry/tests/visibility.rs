//! Per-caller visibility in memory, for every kind of item: a hidden tool, prompt,
//! resource or template is absent from its list (pages included) and unknown when asked
//! for, while callers the predicate admits see and use it. (Over HTTP with OAuth scopes:
//! `http_auth/visibility.rs`.)

use ferry::engine::CallError;
use ferry::protocol::ProtocolVersion::V2026_07_28;
use ferry::protocol::types::{Resource, ResourceContents, ResourceTemplate};
use ferry::server::{Context, ReadResult, Server, TemplateVars, TestClient};
use serde_json::{Value, json};

/// The caller says who it is in `_meta` (a stand-in for a verified identity).
fn staff(cx: &Context) -> bool {
    cx.meta
        .other
        .get("example.com/role")
        .and_then(Value::as_str)
        == Some("staff")
}

async fn read(uri: String, _vars: TemplateVars) -> ReadResult {
    Ok(vec![ResourceContents::text(uri, "text/plain", "x")])
}

fn server() -> Server {
    Server::builder("visibility", "1")
        .page_size(1)
        .tool("open", "Everyone", |_: ()| async { "open" })
        .tool("refund", "Staff only", |_: ()| async { "refunded" })
        .tool("close", "Everyone", |_: ()| async { "closed" })
        .tool_visible_if("refund", staff)
        .prompt("greet", "Everyone", || async { "hello".to_owned() })
        .prompt("audit", "Staff only", || async { "audit".to_owned() })
        .prompt_visible_if("audit", staff)
        .resource(Resource::new("shop://prices", "prices"), read)
        .resource(Resource::new("shop://ledger", "ledger"), read)
        .resource_visible_if("shop://ledger", staff)
        .resource_template(ResourceTemplate::new("orders://{id}", "order"), read)
        .template_visible_if("orders://{id}", staff)
        .build()
}

/// Every item of a paginated list, following cursors.
async fn all(client: &TestClient, method: &str, key: &str, role: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = json!({"_meta": {"example.com/role": role}});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let page = client.request(method.to_owned(), params).await.unwrap();
        for item in page[key].as_array().unwrap() {
            let name = item.get("name").or(item.get("uriTemplate")).unwrap();
            names.push(name.as_str().unwrap().to_owned());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return names,
        }
    }
}

fn code(result: Result<Value, CallError>) -> i64 {
    match result {
        Err(CallError::Rpc(error)) => error.code,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn hidden_items_are_absent_and_unknown_for_every_kind() {
    let server = server();
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let lists = [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ];
    let mut seen = Vec::new();
    for role in ["guest", "staff"] {
        let mut per_role = Vec::new();
        for (method, key) in lists {
            per_role.push(all(&client, method, key, role).await);
        }
        seen.push(per_role);
    }
    assert_eq!(
        seen[0],
        [vec!["open", "close"], vec!["greet"], vec!["prices"], vec![]]
    );
    assert_eq!(
        seen[1],
        [
            vec!["open", "refund", "close"],
            vec!["greet", "audit"],
            vec!["prices", "ledger"],
            vec!["order"]
        ]
    );

    let as_role = |role: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({"example.com/role": role});
        params
    };
    let refund = json!({"name": "refund", "arguments": {}});
    assert_eq!(
        code(
            client
                .request("tools/call", as_role("guest", refund.clone()))
                .await
        ),
        -32602
    );
    let done = client
        .request("tools/call", as_role("staff", refund))
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "refunded");
    let audit = json!({"name": "audit"});
    assert_eq!(
        code(
            client
                .request("prompts/get", as_role("guest", audit.clone()))
                .await
        ),
        -32602
    );
    client
        .request("prompts/get", as_role("staff", audit))
        .await
        .unwrap();
    for uri in ["shop://ledger", "orders://7"] {
        let params = json!({"uri": uri});
        assert_eq!(
            code(
                client
                    .request("resources/read", as_role("guest", params.clone()))
                    .await
            ),
            -32602,
            "{uri}"
        );
        let read = client
            .request("resources/read", as_role("staff", params))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["uri"], uri);
    }
    client.close().await;
}
