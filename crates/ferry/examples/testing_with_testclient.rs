//! Testing a server with `TestClient`: an in-memory client that speaks any revision, with
//! typed results (`call`, `call_tool_as`, `read_resource`...) and errors that are the same
//! in every revision, and the raw JSON (`request`, `call_tool`) where a test checks
//! exactly what a client would receive.
//!
//!     cargo test -p ferry-mcp --example testing_with_testclient     # the tests below
//!     cargo run -p ferry-mcp --example testing_with_testclient      # the server, on stdio
//!
//! Put the server's construction in a function (here `server()`) that both `main` and the
//! tests call: the tests then exercise the very server the program serves.

use std::sync::Mutex;

use ferry::server::{Json, Server, State};

/// The shopping list the server keeps.
#[derive(Default)]
struct List(Mutex<Vec<Item>>);

#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Item {
    /// What to buy.
    name: String,
    /// How many (at least one).
    quantity: u32,
}

/// What `list` returns: an object, so that clients of every revision get it structured.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Items {
    items: Vec<Item>,
}

async fn add(item: Item, list: State<List>) -> Result<String, String> {
    if item.quantity == 0 {
        return Err(format!("buy at least one {}", item.name)); // an `isError` result
    }
    let mut items = list.0.lock().unwrap();
    items.push(item);
    Ok(format!("{} items on the list", items.len()))
}

async fn list(_: (), list: State<List>) -> Json<Items> {
    let items = list.0.lock().unwrap().clone();
    Json(Items { items })
}

fn server() -> Server {
    Server::builder("shopping", "1.0.0")
        .state(List::default())
        .tool("add", "Add an item to the shopping list", add)
        .tool("list", "The shopping list", list)
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    server().serve_stdio().await
}

#[cfg(test)]
mod tests {
    use ferry::protocol::ProtocolVersion;
    use ferry::server::{TestClient, TestError};
    use serde_json::json;

    use super::{Items, server};

    #[tokio::test]
    async fn lists_its_tools_with_their_schemas() {
        let client = TestClient::new(&server()).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "add");
        let quantity = &tools[0].input_schema["properties"]["quantity"];
        assert_eq!(quantity["type"], "integer");
        // `Json<Items>` gives `list` an output schema.
        assert_eq!(tools[1].output_schema.as_ref().unwrap()["type"], "object");
    }

    /// The same calls in a session-era and a stateless-era revision: `TestClient` adds
    /// what each needs (`initialize`, or the `_meta` of every request).
    #[tokio::test]
    async fn adds_then_lists_in_both_eras() {
        for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
            let client = TestClient::builder(&server())
                .version(version)
                .connect()
                .await
                .unwrap();
            let added = client
                .call("add", json!({"name": "milk", "quantity": 2}))
                .await
                .unwrap();
            assert_eq!(added.text(), "1 items on the list");
            // `list` returns `Json<Items>`: read back as the same type.
            let listed: Items = client.call_tool_as("list", json!({})).await.unwrap();
            assert_eq!(listed.items.len(), 1, "{}", version.as_str());
            assert_eq!(listed.items[0].name, "milk");
            assert_eq!(listed.items[0].quantity, 2);
        }
    }

    #[tokio::test]
    async fn refuses_bad_items_as_tool_errors() {
        let client = TestClient::new(&server()).await.unwrap();
        // The handler's own refusal.
        let none = client
            .call("add", json!({"name": "eggs", "quantity": 0}))
            .await
            .unwrap();
        assert!(none.is_error());
        assert_eq!(none.text(), "buy at least one eggs");
        // Arguments that do not fit `Item` never reach the handler; from 2025-11-25 the
        // model is told which field was wrong, in an `isError` result.
        let wrong = client
            .call("add", json!({"name": "eggs", "quantity": "six"}))
            .await
            .unwrap();
        assert!(wrong.is_error());
        assert!(wrong.text().contains("quantity"), "{}", wrong.text());
        // A tool the server does not have: the same error in every revision.
        let missing = client.call("remove", json!({})).await.unwrap_err();
        assert_eq!(missing, TestError::NotFound("remove".into()));
    }

    /// What the client receives on the wire, when that is what the test is about.
    #[tokio::test]
    async fn the_raw_json_is_there_too() {
        let client = TestClient::builder(&server())
            .version(ProtocolVersion::V2025_06_18)
            .connect()
            .await
            .unwrap();
        let listed = client.call_tool("list", json!({})).await.unwrap();
        assert_eq!(listed["structuredContent"], json!({"items": []}));
    }
}
