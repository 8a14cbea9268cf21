//! Servers written with the macros, driven through `TestClient`: what each form of
//! parameter, receiver and option does on the wire (the byte-for-byte comparison with the
//! builder is `macros_equivalence.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::ResourceContents;
use ferry::server::{Context, FromContext, ReadResult, Server, State, TestClient};
use ferry::{prompt, resource, tool, tools};
use serde_json::{Value, json};

/// Add two numbers.
#[tool(read_only, title = "Addition")]
async fn add(
    /// The first term.
    a: f64,
    /// The second term.
    b: f64,
) -> String {
    (a + b).to_string()
}

struct Notes(Vec<String>);

/// How many notes there are.
///
///     Indented lines keep their indentation
///     past the common one.
#[tool(task_support = "optional")]
async fn count(notes: State<Notes>) -> String {
    notes.0.len().to_string()
}

/// Arguments named after Ferry's extractors: `#[arg]` makes one an argument.
mod user {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub(crate) struct Meta {
        pub(crate) tag: String,
    }
}

/// Tag something.
#[tool(description = "Overrides the doc comment.")]
async fn tag(#[arg] meta: user::Meta, r#type: String, cx: Context) -> String {
    format!("{}:{} on {}", meta.tag, r#type, cx.version.as_str())
}

/// A caller's name, from `_meta` (an extractor of the program's own).
struct Caller(String);

impl FromContext for Caller {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        cx.meta
            .other
            .get("caller")
            .and_then(Value::as_str)
            .map(|name| Caller(name.to_owned()))
            .ok_or_else(|| ErrorObject::invalid_params("who is calling? (_meta.caller)"))
    }
}

/// Greet the caller.
#[tool]
async fn greet(#[inject] caller: Caller, punctuation: Option<String>) -> String {
    format!(
        "hello {}{}",
        caller.0,
        punctuation.as_deref().unwrap_or("!")
    )
}

/// A story prompt.
#[prompt(
    name = "story",
    title = "Story",
    icon = "https://example.com/story.png"
)]
async fn story_prompt(
    /// What the story is about.
    topic: String,
) -> String {
    format!("Tell a story about {topic}")
}

/// A prompt with no arguments.
#[prompt]
async fn haiku() -> String {
    "Write a haiku".into()
}

/// Search, the query optional.
#[resource("search://notes{?q}", name = "search", title = "Search notes")]
async fn search(q: Option<String>, notes: State<Notes>, #[uri] uri: String) -> ReadResult {
    let found: Vec<&String> = match &q {
        Some(q) => notes.0.iter().filter(|n| n.contains(q.as_str())).collect(),
        None => notes.0.iter().collect(),
    };
    Ok(vec![ResourceContents::text(
        uri,
        "text/plain",
        format!("{found:?}"),
    )])
}

/// A counter shared by its handlers; the program keeps an `Arc` of it too.
#[derive(Default)]
struct Counter {
    hits: AtomicU64,
}

#[tools]
impl Counter {
    /// Count a hit.
    #[tool]
    async fn hit(&self) -> String {
        (self.hits.fetch_add(1, Ordering::Relaxed) + 1).to_string()
    }

    /// Count a hit from a clone of the `Arc`, after the call returns.
    #[tool]
    async fn hit_later(self: Arc<Self>) -> String {
        tokio::spawn(async move {
            self.hits.fetch_add(1, Ordering::Relaxed);
        })
        .await
        .unwrap();
        "later".into()
    }

    /// No receiver: an associated function is registered too.
    #[tool]
    async fn version() -> String {
        "1".into()
    }

    /// The count, as a resource.
    #[resource("counter://hits", mime_type = "text/plain")]
    async fn hits(&self, #[uri] uri: String) -> ReadResult {
        let hits = self.hits.load(Ordering::Relaxed).to_string();
        Ok(vec![ResourceContents::text(uri, "text/plain", hits)])
    }

    /// Not a handler: left alone.
    fn reset(&self) {
        self.hits.store(0, Ordering::Relaxed);
    }
}

fn server(counter: Arc<Counter>) -> Server {
    Server::builder("macros", "1")
        .state(Notes(vec!["apples".into(), "pears".into()]))
        .with((add_tool(), count_tool(), tag_tool(), greet_tool()))
        .with(story_prompt_prompt())
        .with(haiku_prompt())
        .with(search_resource())
        .with(counter)
        .build()
}

async fn list(client: &TestClient, method: &str, key: &str) -> Vec<Value> {
    let result = client.request(method.to_owned(), json!({})).await.unwrap();
    result[key].as_array().unwrap().clone()
}

fn named<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {items:?}"))
}

#[tokio::test]
async fn free_functions_become_tools() {
    let server = server(Arc::default());
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let tools = list(&client, "tools/list", "tools").await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "count",
            "tag",
            "greet",
            "hit",
            "hit_later",
            "version"
        ]
    );

    let add = named(&tools, "add");
    assert_eq!(add["title"], "Addition");
    assert_eq!(add["description"], "Add two numbers.");
    assert_eq!(add["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(add["inputSchema"]["title"], "AddArgs");
    assert_eq!(
        add["inputSchema"]["properties"]["b"]["description"],
        "The second term."
    );
    let result = client
        .call_tool("add", json!({"a": 2, "b": 0.5}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "2.5");

    let count = named(&tools, "count");
    assert_eq!(
        count["description"],
        "How many notes there are.\n\n    Indented lines keep their indentation\n    past the common one."
    );
    assert_eq!(count["execution"]["taskSupport"], "optional");
    assert_eq!(
        count["inputSchema"],
        json!({"type": "object", "additionalProperties": false})
    );
    let result = client.call_tool("count", json!({})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "2");
}

#[tokio::test]
async fn parameters_are_arguments_or_injected() {
    let server = server(Arc::default());
    let client = TestClient::connect(&server, V2025_06_18).await.unwrap();
    let tools = list(&client, "tools/list", "tools").await;

    // `#[arg]` keeps a type named like an extractor an argument; `r#type` is `type`.
    let tag = named(&tools, "tag");
    assert_eq!(tag["description"], "Overrides the doc comment.");
    let properties = tag["inputSchema"]["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["meta", "type"]);
    let result = client
        .call_tool("tag", json!({"meta": {"tag": "t"}, "type": "x"}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "t:x on 2025-06-18");

    // An extractor of the program's own, marked `#[inject]`: not in the schema, and its
    // refusal is the call's error.
    let greet = named(&tools, "greet");
    let properties = greet["inputSchema"]["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["punctuation"]);
    assert_eq!(greet["inputSchema"]["required"], Value::Null);
    let result = client
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "_meta": {"caller": "ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "hello ada!");
    let refused = client.call_tool("greet", json!({})).await.unwrap_err();
    assert!(refused.to_string().contains("who is calling"), "{refused}");

    // Argument errors are the builder's: an `isError` result in 2025-11-25, -32602 before.
    let wrong = client.call_tool("add", json!({"a": 1})).await.unwrap_err();
    assert!(wrong.to_string().contains("missing field `b`"), "{wrong}");
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();
    let wrong = client
        .call_tool("add", json!({"a": "x", "b": 1}))
        .await
        .unwrap();
    assert_eq!(wrong["isError"], true);
    assert!(
        wrong["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("invalid argument `a`"),
        "{wrong}"
    );
}

#[tokio::test]
async fn prompts_and_resources() {
    let server = server(Arc::default());
    let client = TestClient::connect(&server, V2025_11_25).await.unwrap();

    let prompts = list(&client, "prompts/list", "prompts").await;
    let story = named(&prompts, "story");
    assert_eq!(story["title"], "Story");
    assert_eq!(
        story["icons"],
        json!([{"src": "https://example.com/story.png"}])
    );
    assert_eq!(
        story["arguments"],
        json!([{"name": "topic", "description": "What the story is about.", "required": true}])
    );
    assert_eq!(named(&prompts, "haiku").get("arguments"), None);
    let got = client
        .request(
            "prompts/get",
            json!({"name": "story", "arguments": {"topic": "rust"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Tell a story about rust"
    );
    let got = client
        .request("prompts/get", json!({"name": "haiku"}))
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Write a haiku");

    let templates = list(&client, "resources/templates/list", "resourceTemplates").await;
    let search = named(&templates, "search");
    assert_eq!(search["uriTemplate"], "search://notes{?q}");
    assert_eq!(search["title"], "Search notes");
    assert_eq!(search["description"], "Search, the query optional.");
    let read = |uri: &'static str| {
        let client = &client;
        async move {
            client
                .request("resources/read", json!({"uri": uri}))
                .await
                .map(|r| {
                    r["contents"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
        }
    };
    assert_eq!(read("search://notes?q=pe").await.unwrap(), r#"["pears"]"#);
    assert_eq!(
        read("search://notes").await.unwrap(),
        r#"["apples", "pears"]"#
    );

    let resources = list(&client, "resources/list", "resources").await;
    let hits = named(&resources, "hits");
    assert_eq!(hits["uri"], "counter://hits");
    assert_eq!(hits["mimeType"], "text/plain");
}

#[tokio::test]
async fn impl_blocks_share_one_value() {
    let counter = Arc::new(Counter::default());
    let server = server(Arc::clone(&counter));
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    for expected in ["1", "2"] {
        let result = client.call_tool("hit", json!({})).await.unwrap();
        assert_eq!(result["content"][0]["text"], expected);
    }
    let result = client.call_tool("hit_later", json!({})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "later");
    assert_eq!(counter.hits.load(Ordering::Relaxed), 3);
    let result = client.call_tool("version", json!({})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "1");
    let read = client
        .request("resources/read", json!({"uri": "counter://hits"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "3");
    counter.reset();
    let read = client
        .request("resources/read", json!({"uri": "counter://hits"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "0");

    // By value, the type registers itself in a new `Arc`.
    let server = Server::builder("by-value", "1")
        .with(Counter::default())
        .build();
    assert_eq!(server.tool_names(), ["hit", "hit_later", "version"]);
}

#[tokio::test]
async fn missing_state_is_caught_when_the_server_is_built() {
    // `count` takes `State<Notes>`: the builder's check sees through the macro.
    let error = Server::builder("no-notes", "1")
        .with(count_tool())
        .try_build()
        .unwrap_err();
    assert!(error.to_string().contains("Notes"), "{error}");
}

#[tokio::test]
async fn every_revision_lists_the_same_tools() {
    let server = server(Arc::default());
    for version in ProtocolVersion::ALL {
        let client = TestClient::connect(&server, version).await.unwrap();
        let tools = list(&client, "tools/list", "tools").await;
        assert_eq!(tools.len(), 7, "{version:?}");
        let result = client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], "2", "{version:?}");
    }
}

/// The caller says it is staff in `_meta` (a stand-in for a verified identity).
fn staff(cx: &Context) -> bool {
    cx.meta
        .other
        .get("example.com/role")
        .and_then(Value::as_str)
        == Some("staff")
}

/// Refund an order.
#[tool(visible = staff)]
async fn refund() -> String {
    "refunded".into()
}

/// An audit of the day.
#[prompt(visible = |cx: &Context| staff(cx))]
async fn audit() -> String {
    "audit".into()
}

/// The ledger.
#[resource("shop://ledger", visible = staff)]
async fn ledger(#[uri] uri: String) -> ReadResult {
    Ok(vec![ResourceContents::text(uri, "text/plain", "0")])
}

/// An order.
#[resource("orders://{id}", visible = staff)]
async fn order(id: u32, #[uri] uri: String) -> ReadResult {
    Ok(vec![ResourceContents::text(
        uri,
        "text/plain",
        id.to_string(),
    )])
}

struct Till;

#[tools]
impl Till {
    /// Open the till: staff only, by an associated function of the impl.
    #[tool(visible = Self::staff_only)]
    async fn open_till(&self) -> String {
        "open".into()
    }

    fn staff_only(cx: &Context) -> bool {
        staff(cx)
    }
}

#[tokio::test]
async fn visible_hides_items_from_other_callers() {
    let server = Server::builder("shop", "1")
        .with((
            refund_tool(),
            audit_prompt(),
            ledger_resource(),
            order_resource(),
        ))
        .with(Till)
        .tool("price", "Everyone", |_: ()| async { "3" })
        .build();
    let client = TestClient::connect(&server, V2026_07_28).await.unwrap();
    let as_role = |role: &str| json!({"_meta": {"example.com/role": role}});
    let lists = [
        ("tools/list", "tools", "name", vec!["price"], 3),
        ("prompts/list", "prompts", "name", vec![], 1),
        ("resources/list", "resources", "uri", vec![], 1),
        (
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
            vec![],
            1,
        ),
    ];
    for (method, key, field, public, staff_sees) in lists {
        let anyone = client.request(method, as_role("guest")).await.unwrap();
        let names: Vec<&str> = anyone[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item[field].as_str().unwrap())
            .collect();
        assert_eq!(names, public, "{method}");
        let staff = client.request(method, as_role("staff")).await.unwrap();
        assert_eq!(staff[key].as_array().unwrap().len(), staff_sees, "{method}");
    }
    // Hidden is unknown when asked for; staff may use it.
    let call = |name: &str, role: &str| {
        let mut params = as_role(role);
        params["name"] = json!(name);
        params["arguments"] = json!({});
        client.request("tools/call", params)
    };
    for name in ["refund", "open_till"] {
        let refused = call(name, "guest").await.unwrap_err();
        assert!(
            matches!(&refused, ferry::engine::CallError::Rpc(e) if e.code == -32602),
            "{name}: {refused:?}"
        );
        assert!(call(name, "staff").await.is_ok(), "{name}");
    }
    let read = |uri: &str, role: &str| {
        let mut params = as_role(role);
        params["uri"] = json!(uri);
        client.request("resources/read", params)
    };
    for uri in ["shop://ledger", "orders://7"] {
        assert!(read(uri, "guest").await.is_err(), "{uri}");
        let contents = read(uri, "staff").await.unwrap();
        assert_eq!(contents["contents"][0]["uri"], uri);
    }
}
