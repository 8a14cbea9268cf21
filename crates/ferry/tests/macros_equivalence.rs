//! A server written with the macros answers byte for byte what the same server written
//! with the builder answers: every list (schemas, descriptions, annotations, icons),
//! calls, structured output, `isError` results, argument errors, prompts and resources,
//! in every revision. The two servers share the functions' bodies (a `#[tool]` function
//! stays callable), so only the registration differs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferry::engine::{CallError, CallOptions};
use ferry::protocol::types::{
    Icon, IconTheme, Prompt, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
    keys,
};
use ferry::protocol::{Feature, ProtocolVersion};
use ferry::server::{Json, Progress, ReadResult, ResourceError, Server, State, TestClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The functions and their macros: what a user writes.
mod with_macros {
    use super::*;

    /// Add two numbers.
    #[ferry::tool(read_only, idempotent, title = "Addition")]
    pub(crate) async fn add(
        /// The first term.
        a: f64,
        /// The second term.
        b: f64,
    ) -> String {
        (a + b).to_string()
    }

    /// Divide `a` by `b`.
    ///
    /// Fails on a zero divisor.
    #[ferry::tool(
        destructive = false,
        open_world = false,
        icon(src = "https://example.com/div.png", mime_type = "image/png", sizes = ["48x48"], theme = "dark"),
        icon = "data:image/svg+xml;base64,PHN2Zy8+"
    )]
    pub(crate) async fn divide(#[args] division: Division) -> Result<Json<Quotient>, String> {
        if division.b == 0.0 {
            return Err("division by zero".into());
        }
        Ok(Json(Quotient {
            value: division.a / division.b,
        }))
    }

    /// Count the calls, reporting progress.
    #[ferry::tool]
    pub(crate) async fn hits(counter: State<Counter>, progress: Progress) -> String {
        let hits = counter.0.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(progress) = &progress.0 {
            let _ = progress.report(1.0, Some(1.0), None).await;
        }
        hits.to_string()
    }

    /// Echo a text.
    #[ferry::tool(name = "echo-text")]
    pub(crate) async fn echo(
        text: String,
        /// How many times (once by default).
        #[serde(default)]
        times: Option<u32>,
    ) -> String {
        text.repeat(times.unwrap_or(1) as usize)
    }

    /// Review some code.
    #[ferry::prompt(title = "Code review")]
    pub(crate) async fn review(
        /// The code to review.
        code: String,
        /// Its language.
        language: Option<String>,
    ) -> String {
        format!(
            "Review this {} code:\n{code}",
            language.as_deref().unwrap_or("unknown")
        )
    }

    /// What this server is.
    #[ferry::resource("info://server", mime_type = "text/plain", size = 4)]
    pub(crate) async fn info() -> ReadResult {
        Ok(vec![ResourceContents::text(
            "info://server",
            "text/plain",
            "calc",
        )])
    }

    /// A note, by number.
    #[ferry::resource("notes://{id}", name = "note", mime_type = "text/plain")]
    pub(crate) async fn note(id: usize, #[uri] uri: String, notes: State<Notes>) -> ReadResult {
        match notes.0.get(id) {
            Some(text) => Ok(vec![ResourceContents::text(uri, "text/plain", text)]),
            None => Err(ResourceError::NotFound(uri)),
        }
    }

    /// Books on a shelf: state of its own, shared by its handlers.
    pub(crate) struct Library {
        pub(crate) books: Mutex<Vec<String>>,
    }

    #[ferry::tools]
    impl Library {
        /// Put a book on the shelf.
        #[tool]
        pub(crate) async fn shelve(
            &self,
            /// The book's title.
            title: String,
        ) -> String {
            let mut books = self.books.lock().unwrap();
            books.push(title);
            format!("{} books", books.len())
        }

        /// The books on the shelf.
        #[tool(read_only)]
        pub(crate) async fn shelf(&self) -> Json<Shelf> {
            Json(Shelf {
                books: self.books.lock().unwrap().clone(),
            })
        }

        /// Suggest a book of a genre.
        #[prompt]
        pub(crate) async fn recommend(&self, genre: String) -> String {
            let books = self.books.lock().unwrap();
            format!("Among {:?}, pick one of genre {genre}", *books)
        }

        /// A book by its place on the shelf.
        #[resource("library://books/{index}")]
        pub(crate) async fn book(&self, index: usize) -> ReadResult {
            let books = self.books.lock().unwrap();
            let uri = format!("library://books/{index}");
            match books.get(index) {
                Some(title) => Ok(vec![ResourceContents::text(uri, "text/plain", title)]),
                None => Err(ResourceError::NotFound(uri)),
            }
        }
    }
}

use with_macros::Library;

#[derive(Deserialize, JsonSchema)]
struct Division {
    /// The dividend.
    a: f64,
    /// The divisor.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Quotient {
    value: f64,
}

#[derive(Serialize, JsonSchema)]
struct Shelf {
    books: Vec<String>,
}

#[derive(Default)]
struct Counter(AtomicU64);

struct Notes(Vec<String>);

fn library() -> Library {
    Library {
        books: Mutex::new(vec!["Dune".into()]),
    }
}

fn notes() -> Notes {
    Notes(vec!["first".into(), "second".into()])
}

fn macro_server() -> Server {
    Server::builder("calc", "1.0.0")
        .state(Counter::default())
        .state(notes())
        .with(with_macros::add_tool())
        .with(with_macros::divide_tool())
        .with((with_macros::hits_tool(), with_macros::echo_tool()))
        .with(with_macros::review_prompt())
        .with(with_macros::info_resource())
        .with(with_macros::note_resource())
        .with(library())
        .build()
}

/// The same server through the builder, as a user without the macros writes it.
fn builder_server() -> Server {
    #[derive(Deserialize, JsonSchema)]
    struct AddArgs {
        /// The first term.
        a: f64,
        /// The second term.
        b: f64,
    }
    #[derive(Deserialize, JsonSchema)]
    struct EchoArgs {
        text: String,
        /// How many times (once by default).
        #[serde(default)]
        times: Option<u32>,
    }
    #[derive(Deserialize, JsonSchema)]
    struct ReviewArgs {
        /// The code to review.
        code: String,
        /// Its language.
        language: Option<String>,
    }
    #[derive(Deserialize, JsonSchema)]
    struct ShelveArgs {
        /// The book's title.
        title: String,
    }
    #[derive(Deserialize, JsonSchema)]
    struct RecommendArgs {
        genre: String,
    }

    let mut add = Tool::described("add", "Add two numbers.");
    add.title = Some("Addition".into());
    add.annotations = Some(ToolAnnotations {
        read_only_hint: Some(true),
        idempotent_hint: Some(true),
        ..Default::default()
    });
    let mut divide = Tool::described("divide", "Divide `a` by `b`.\n\nFails on a zero divisor.");
    divide.annotations = Some(ToolAnnotations {
        destructive_hint: Some(false),
        open_world_hint: Some(false),
        ..Default::default()
    });
    divide.icons = Some(vec![
        Icon {
            src: "https://example.com/div.png".into(),
            mime_type: Some("image/png".into()),
            sizes: Some(vec!["48x48".into()]),
            theme: Some(IconTheme::Dark),
        },
        Icon {
            src: "data:image/svg+xml;base64,PHN2Zy8+".into(),
            ..Default::default()
        },
    ]);
    let mut review = Prompt {
        name: "review".into(),
        description: Some("Review some code.".into()),
        ..Default::default()
    };
    review.title = Some("Code review".into());
    let info = Resource {
        uri: "info://server".into(),
        name: "info".into(),
        description: Some("What this server is.".into()),
        mime_type: Some("text/plain".into()),
        size: Some(4),
        ..Default::default()
    };
    let note = ResourceTemplate {
        uri_template: "notes://{id}".into(),
        name: "note".into(),
        description: Some("A note, by number.".into()),
        mime_type: Some("text/plain".into()),
        ..Default::default()
    };
    let book = ResourceTemplate {
        uri_template: "library://books/{index}".into(),
        name: "book".into(),
        description: Some("A book by its place on the shelf.".into()),
        ..Default::default()
    };
    let mut shelf = Tool::described("shelf", "The books on the shelf.");
    shelf.annotations = Some(ToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    });
    let recommend = Prompt {
        name: "recommend".into(),
        description: Some("Suggest a book of a genre.".into()),
        ..Default::default()
    };

    let lib = Arc::new(library());
    let (l1, l2, l3, l4) = (lib.clone(), lib.clone(), lib.clone(), lib);
    Server::builder("calc", "1.0.0")
        .state(Counter::default())
        .state(notes())
        .tool_with(add, |args: AddArgs| with_macros::add(args.a, args.b))
        .tool_with(divide, with_macros::divide)
        .tool(
            "hits",
            "Count the calls, reporting progress.",
            with_macros::hits,
        )
        .tool("echo-text", "Echo a text.", |args: EchoArgs| {
            with_macros::echo(args.text, args.times)
        })
        .prompt_with(review, |args: ReviewArgs| {
            with_macros::review(args.code, args.language)
        })
        .resource(info, with_macros::info)
        .resource_template(
            note,
            |uri: String, vars: ferry::server::TemplateVars, notes: State<Notes>| async move {
                let id = match vars.get("id").map(|v| v.parse::<usize>()) {
                    None => return Err(ResourceError::NotFound(uri)),
                    Some(Err(e)) => {
                        return Err(ResourceError::InvalidParams(format!(
                            "invalid `id` in {uri}: {e}"
                        )));
                    }
                    Some(Ok(id)) => id,
                };
                with_macros::note(id, uri.clone(), notes).await
            },
        )
        .tool(
            "shelve",
            "Put a book on the shelf.",
            move |args: ShelveArgs| {
                let lib = l1.clone();
                async move { lib.shelve(args.title).await }
            },
        )
        .tool_with(shelf, move || {
            let lib = l2.clone();
            async move { lib.shelf().await }
        })
        .prompt_with(recommend, move |args: RecommendArgs| {
            let lib = l3.clone();
            async move { lib.recommend(args.genre).await }
        })
        .resource_template(
            book,
            move |uri: String, vars: ferry::server::TemplateVars| {
                let lib = l4.clone();
                async move {
                    let index = match vars.get("index").map(|v| v.parse::<usize>()) {
                        None => return Err(ResourceError::NotFound(uri)),
                        Some(Err(e)) => {
                            return Err(ResourceError::InvalidParams(format!(
                                "invalid `index` in {uri}: {e}"
                            )));
                        }
                        Some(Ok(index)) => index,
                    };
                    lib.book(index).await
                }
            },
        )
        .build()
}

/// Every request of the comparison, in order (the counter and the shelf change state,
/// identically on both servers).
fn requests() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        (
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2.5}}),
        ),
        (
            "tools/call",
            json!({"name": "add", "arguments": {"a": "one", "b": 2}}),
        ),
        ("tools/call", json!({"name": "add", "arguments": {"a": 1}})),
        ("tools/call", json!({"name": "add"})),
        (
            "tools/call",
            json!({"name": "divide", "arguments": {"a": 6, "b": 3}}),
        ),
        (
            "tools/call",
            json!({"name": "divide", "arguments": {"a": 6, "b": 0}}),
        ),
        ("tools/call", json!({"name": "hits", "arguments": {}})),
        ("tools/call", json!({"name": "hits"})),
        (
            "tools/call",
            json!({"name": "hits", "arguments": {"extra": 1}}),
        ),
        (
            "tools/call",
            json!({"name": "echo-text", "arguments": {"text": "ab"}}),
        ),
        (
            "tools/call",
            json!({"name": "echo-text", "arguments": {"text": "ab", "times": 3}}),
        ),
        (
            "tools/call",
            json!({"name": "echo-text", "arguments": {"text": "ab", "times": -1}}),
        ),
        ("tools/call", json!({"name": "nope", "arguments": {}})),
        (
            "tools/call",
            json!({"name": "shelve", "arguments": {"title": "Emma"}}),
        ),
        ("tools/call", json!({"name": "shelf", "arguments": {}})),
        (
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x = 1"}}),
        ),
        (
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x = 1", "language": "python"}}),
        ),
        ("prompts/get", json!({"name": "review", "arguments": {}})),
        (
            "prompts/get",
            json!({"name": "recommend", "arguments": {"genre": "novel"}}),
        ),
        ("resources/read", json!({"uri": "info://server"})),
        ("resources/read", json!({"uri": "notes://1"})),
        ("resources/read", json!({"uri": "notes://7"})),
        ("resources/read", json!({"uri": "notes://first"})),
        ("resources/read", json!({"uri": "library://books/1"})),
        ("resources/read", json!({"uri": "library://books/x"})),
    ]
}

/// The answer to one request exactly as the server wrote it: the result's JSON text, or
/// the error object's. (The stateless era's `_meta` is added as `TestClient` adds it.)
async fn raw(client: &TestClient, method: &'static str, mut params: Value) -> String {
    let version = client.version();
    if version.has(Feature::RequestMeta) {
        params["_meta"] = json!({
            keys::PROTOCOL_VERSION: version.as_str(),
            keys::CLIENT_CAPABILITIES: {},
        });
    }
    match client
        .peer()
        .call(method, &params, CallOptions::default())
        .await
    {
        Ok(result) => result.get().to_owned(),
        Err(CallError::Rpc(error)) => format!("error {}", serde_json::to_string(&error).unwrap()),
        Err(other) => panic!("{method} {params}: {other}"),
    }
}

#[tokio::test]
async fn macros_answer_what_the_builder_answers() {
    for version in ProtocolVersion::ALL {
        let (with_macros, with_builder) = (macro_server(), builder_server());
        let a = TestClient::connect(&with_macros, version).await.unwrap();
        let b = TestClient::connect(&with_builder, version).await.unwrap();
        let mut answers = Vec::new();
        for (method, params) in requests() {
            let from_macros = raw(&a, method, params.clone()).await;
            let from_builder = raw(&b, method, params.clone()).await;
            assert_eq!(
                from_macros, from_builder,
                "{version:?} {method} {params}: the macros' server answered differently"
            );
            answers.push(from_macros);
        }
        check_content(version, &answers);
    }
}

/// What the answers say, so that two servers agreeing on nothing useful (both empty,
/// both failing) cannot pass.
fn check_content(version: ProtocolVersion, answers: &[String]) {
    let value = |i: usize| -> Value {
        serde_json::from_str(answers[i].trim_start_matches("error ")).unwrap()
    };
    let tools = value(0);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["add", "divide", "hits", "echo-text", "shelve", "shelf"]
    );
    let add = &tools["tools"][0];
    assert_eq!(add["description"], "Add two numbers.");
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "The first term."
    );
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(tools["tools"][2]["inputSchema"]["properties"], Value::Null);
    if version >= ProtocolVersion::V2025_03_26 {
        assert_eq!(add["annotations"]["readOnlyHint"], true);
    }
    if version >= ProtocolVersion::V2025_06_18 {
        assert_eq!(tools["tools"][1]["outputSchema"]["type"], "object");
        assert_eq!(value(8)["structuredContent"]["value"], 2.0);
    }
    if version >= ProtocolVersion::V2025_11_25 {
        assert_eq!(tools["tools"][1]["icons"][0]["theme"], "dark");
    }
    assert_eq!(value(4)["content"][0]["text"], "3.5");
    assert_eq!(value(9)["isError"], true);
    assert_eq!(value(11)["content"][0]["text"], "2");
    assert_eq!(value(14)["content"][0]["text"], "ababab");
    assert!(answers[16].starts_with("error "), "{}", answers[16]);
    let shelf = value(18);
    if version >= ProtocolVersion::V2025_06_18 {
        assert_eq!(shelf["structuredContent"]["books"], json!(["Dune", "Emma"]));
    }
    assert_eq!(shelf["content"][0]["text"], r#"{"books":["Dune","Emma"]}"#);
    let prompts = value(1);
    assert_eq!(
        prompts["prompts"][0]["arguments"][0]["description"],
        "The code to review."
    );
    assert!(answers[21].starts_with("error "), "{}", answers[21]);
    assert_eq!(value(24)["contents"][0]["text"], "second");
    assert!(answers[25].starts_with("error "), "{}", answers[25]);
    assert!(answers[26].contains("-32602"), "{}", answers[26]);
    assert_eq!(value(27)["contents"][0]["text"], "Emma");
}
