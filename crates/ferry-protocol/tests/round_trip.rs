//! Round trips: every example message of the 2026-07-28 spec, every JSON block of the spec
//! docs (2025-03-26, 2025-11-25, 2026-07-28), both copied into `tests/spec/` (see its
//! `SOURCE.md`; `scripts/refresh-spec` refreshes them), and every message of the fixtures
//! (`tests/fixtures/`) parses into its typed form and serializes back to equal JSON (key
//! order aside; `50` and `50.0` are the same JSON number). Complete messages must all
//! round-trip, except the documented exceptions below.

#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};

use ferry_protocol::jsonrpc::{Inbound, Message, Response, classify};
use ferry_protocol::methods::{
    ClientNotification, ClientRequest, ServerNotification, ServerRequest,
};
use ferry_protocol::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The spec's example messages and pages, copied from the spec repository.
fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/spec")
}

/// Ferry's own message fixtures.
fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// JSON equality with objects compared as maps and numbers compared by value.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn via<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// A result's type, inferred from its shape (the spec's result types have distinct
/// required members).
fn result_via_shape(result: &Value) -> Result<Value, String> {
    let has = |k: &str| result.get(k).is_some();
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        via::<InputRequiredResult>(result)
    } else if has("protocolVersion") && has("serverInfo") {
        via::<InitializeResult>(result)
    } else if has("supportedVersions") {
        via::<DiscoverResult>(result)
    } else if has("tools") {
        via::<ListToolsResult>(result)
    } else if has("action") {
        via::<ElicitResult>(result)
    } else if has("content") && has("model") {
        via::<CreateMessageResult>(result)
    } else if has("content") {
        via::<CallToolResult>(result)
    } else if has("contents") {
        via::<ReadResourceResult>(result)
    } else if has("resources") {
        via::<ListResourcesResult>(result)
    } else if has("resourceTemplates") {
        via::<ListResourceTemplatesResult>(result)
    } else if has("prompts") {
        via::<ListPromptsResult>(result)
    } else if has("messages") {
        via::<GetPromptResult>(result)
    } else if has("completion") {
        via::<CompleteResult>(result)
    } else if has("roots") {
        via::<ListRootsResult>(result)
    } else if has("task") {
        via::<CreateTaskResult>(result)
    } else if has("tasks") {
        via::<ListTasksResult>(result)
    } else if has("taskId") && has("status") {
        via::<TaskResult>(result)
    } else if result
        .get("_meta")
        .and_then(|m| m.get(keys::SUBSCRIPTION_ID))
        .is_some()
    {
        via::<SubscriptionsListenResult>(result)
    } else if result
        .as_object()
        .is_some_and(|o| o.keys().all(|k| k == "_meta" || k == "resultType"))
    {
        via::<EmptyResult>(result)
    } else {
        Err(GENERIC.into())
    }
}

/// The error text for a message that is valid JSON-RPC but names no MCP method or result.
const GENERIC: &str = "not an MCP method or result";

/// Round-trip a generic JSON-RPC message (an illustration such as `example_method`)
/// through the raw JSON-RPC types: params and results stay raw.
fn raw_round_trip(value: &Value) -> Result<Value, String> {
    let text = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    match classify(&text) {
        Inbound::Single(m) => serde_json::to_value(&m).map_err(|e| e.to_string()),
        other => Err(format!("not a single valid message: {other:?}")),
    }
}

/// Parse a complete JSON-RPC message into its typed form and serialize it back.
fn message_round_trip(value: &Value) -> Result<Value, String> {
    let text = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    let message = match classify(&text) {
        Inbound::Single(m) => m,
        other => return Err(format!("not a single valid message: {other:?}")),
    };
    let absent_params = value.get("params").is_none();
    let params_back = |p: Value| -> Option<Value> {
        if absent_params && p == json!({}) {
            None
        } else {
            Some(p)
        }
    };
    match message {
        Message::Request(r) => {
            let params = r.params.as_deref();
            let typed = ClientRequest::parse(&r.method, params)
                .map(|t| t.params_value())
                .or_else(|_| ServerRequest::parse(&r.method, params).map(|t| t.params_value()))
                .map_err(|e| unknown_or(e, &r.method))?;
            let mut out = json!({"jsonrpc": "2.0", "id": r.id, "method": r.method});
            if let Some(p) = params_back(typed) {
                out["params"] = p;
            }
            Ok(out)
        }
        Message::Notification(n) => {
            let params = n.params.as_deref();
            let typed = ClientNotification::parse(&n.method, params)
                .map(|t| t.params_value())
                .or_else(|_| ServerNotification::parse(&n.method, params).map(|t| t.params_value()))
                .map_err(|e| unknown_or(e, &n.method))?;
            let mut out = json!({"jsonrpc": "2.0", "method": n.method});
            if let Some(p) = params_back(typed) {
                out["params"] = p;
            }
            Ok(out)
        }
        Message::Response(Response::Result(r)) => {
            let result: Value = serde_json::from_str(r.result.get()).map_err(|e| e.to_string())?;
            Ok(json!({"jsonrpc": "2.0", "id": r.id, "result": result_via_shape(&result)?}))
        }
        Message::Response(Response::Error(e)) => {
            serde_json::to_value(&e).map_err(|e| e.to_string())
        }
    }
}

fn unknown_or(e: ferry_protocol::ErrorObject, method: &str) -> String {
    if ferry_protocol::methods::method_info(method).is_none() {
        GENERIC.into()
    } else {
        e.message
    }
}

/// Round-trip a value the spec's examples name by schema type.
fn typed_round_trip(type_name: &str, value: &Value) -> Result<Value, String> {
    macro_rules! by_name {
        ($($name:literal => $ty:ty),* $(,)?) => {
            match type_name {
                $($name => via::<$ty>(value),)*
                _ if value.get("jsonrpc").is_some() => message_round_trip(value),
                _ => Err(format!("no Rust type mapped for {type_name}")),
            }
        };
    }
    by_name! {
        "CreateMessageRequest" => InputRequest,
        "ElicitRequest" => InputRequest,
        "ListRootsRequest" => InputRequest,
        "AudioContent" => ContentBlock,
        "TextContent" => ContentBlock,
        "ImageContent" => ContentBlock,
        "EmbeddedResource" => ContentBlock,
        "ResourceLink" => ContentBlock,
        "ToolUseContent" => SamplingContent,
        "ToolResultContent" => SamplingContent,
        "BlobResourceContents" => ResourceContents,
        "TextResourceContents" => ResourceContents,
        "BooleanSchema" => PrimitiveSchemaDefinition,
        "NumberSchema" => PrimitiveSchemaDefinition,
        "StringSchema" => PrimitiveSchemaDefinition,
        "TitledMultiSelectEnumSchema" => PrimitiveSchemaDefinition,
        "TitledSingleSelectEnumSchema" => PrimitiveSchemaDefinition,
        "UntitledMultiSelectEnumSchema" => PrimitiveSchemaDefinition,
        "UntitledSingleSelectEnumSchema" => PrimitiveSchemaDefinition,
        "CallToolRequestParams" => CallToolRequestParams,
        "CallToolResult" => CallToolResult,
        "CancelledNotificationParams" => CancelledNotificationParams,
        "ClientCapabilities" => ClientCapabilities,
        "ServerCapabilities" => ServerCapabilities,
        "CompleteRequestParams" => CompleteRequestParams,
        "CompleteResult" => CompleteResult,
        "CreateMessageRequestParams" => CreateMessageRequestParams,
        "CreateMessageResult" => CreateMessageResult,
        "DiscoverResult" => DiscoverResult,
        "ElicitRequestFormParams" => ElicitRequestParams,
        "ElicitRequestURLParams" => ElicitRequestParams,
        "ElicitResult" => ElicitResult,
        "GetPromptRequestParams" => GetPromptRequestParams,
        "GetPromptResult" => GetPromptResult,
        "InputRequests" => InputRequests,
        "InputResponses" => InputResponses,
        "InputRequiredResult" => InputRequiredResult,
        "ListPromptsResult" => ListPromptsResult,
        "ListResourceTemplatesResult" => ListResourceTemplatesResult,
        "ListResourcesResult" => ListResourcesResult,
        "ListRootsResult" => ListRootsResult,
        "ListToolsResult" => ListToolsResult,
        "LoggingMessageNotificationParams" => LoggingMessageNotificationParams,
        "ModelPreferences" => ModelPreferences,
        "PaginatedRequestParams" => PaginatedRequestParams,
        "ProgressNotificationParams" => ProgressNotificationParams,
        "ReadResourceResult" => ReadResourceResult,
        "Resource" => Resource,
        "ResourceUpdatedNotificationParams" => ResourceUpdatedNotificationParams,
        "Root" => Root,
        "SamplingMessage" => SamplingMessage,
        "SubscriptionsListenResult" => SubscriptionsListenResult,
        "Tool" => Tool,
        "InternalError" => ferry_protocol::ErrorObject,
        "InvalidParamsError" => ferry_protocol::ErrorObject,
        "MethodNotFoundError" => ferry_protocol::ErrorObject,
        "ParseError" => ferry_protocol::ErrorObject,
    }
}

struct Tally {
    checked: usize,
    failures: Vec<String>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            checked: 0,
            failures: Vec::new(),
        }
    }

    fn record(&mut self, origin: &str, original: &Value, back: Result<Value, String>) {
        self.checked += 1;
        match back {
            Ok(back) if json_eq(original, &back) => {}
            Ok(back) => self.failures.push(format!(
                "{origin}: round trip changed the JSON\n    in:  {original}\n    out: {back}"
            )),
            Err(e) => self
                .failures
                .push(format!("{origin}: {e}\n    in:  {original}")),
        }
    }

    fn assert_clean(self, what: &str) {
        println!("{what}: {} values round-tripped", self.checked);
        assert!(self.checked > 0, "{what}: nothing checked");
        assert!(
            self.failures.is_empty(),
            "{what}: {} failures:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

#[test]
fn spec_examples_round_trip() {
    let root = spec_dir().join("2026-07-28/examples");
    let mut tally = Tally::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("examples")
        .flatten()
        .collect();
    dirs.sort_by_key(|d| d.file_name());
    for dir in dirs {
        let type_name = dir.file_name().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .collect();
        files.sort_by_key(|f| f.file_name());
        for file in files {
            let text = std::fs::read_to_string(file.path()).expect("example");
            let value: Value = serde_json::from_str(&text).expect("example is JSON");
            let origin = format!(
                "examples/{type_name}/{}",
                file.file_name().to_string_lossy()
            );
            let mut value = value;
            if let Some((_, member, why)) = EXAMPLE_EXCEPTIONS
                .iter()
                .find(|(f, _, _)| origin.ends_with(f))
            {
                println!("exception {origin}: {why}");
                value.as_object_mut().map(|o| o.remove(*member));
            }
            tally.record(&origin, &value, typed_round_trip(&type_name, &value));
        }
    }
    tally.assert_clean("2026-07-28 examples");
}

/// Every JSON value in `text` that starts at the beginning of a line with `{`: fenced
/// blocks in the docs, lines of the fixtures. Blocks that are not valid JSON (comments,
/// `...` placeholders) are skipped and counted.
fn json_blocks(text: &str) -> (Vec<(usize, Value)>, usize) {
    let mut found = Vec::new();
    let mut skipped = 0;
    let mut offset = 0;
    let mut line_no = 0;
    let mut skip_until = 0;
    for line in text.split_inclusive('\n') {
        line_no += 1;
        let start = offset;
        offset += line.len();
        if start < skip_until || !line.trim_start().starts_with('{') {
            continue;
        }
        let begin = start + (line.len() - line.trim_start().len());
        let mut stream = serde_json::Deserializer::from_str(&text[begin..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                skip_until = begin + stream.byte_offset();
                found.push((line_no, value));
            }
            _ => skipped += 1,
        }
    }
    (found, skipped)
}

/// Example members the 2026-07-28 schema does not define: (file, member, reason). The
/// member is removed before the round trip; the rest must still match.
const EXAMPLE_EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "ListRootsRequest/list-roots-request.json",
    "id",
    "in 2026-07-28 roots/list is an input request ({method, params}); the example adds an id",
)];

/// Request methods that a document shows without an `id` (a doc slip: as JSON-RPC that is
/// a notification, which MCP does not define for the method). Round-tripped raw.
const MISSING_ID: &[&str] = &["resources/list"];

fn check_documents(what: &str, files: &[PathBuf]) {
    let mut tally = Tally::new();
    let mut fragments = 0;
    let mut skipped_blocks = 0;
    let mut exceptions = 0;
    let mut generic = 0;
    for path in files {
        let text = std::fs::read_to_string(path).expect("document");
        let (blocks, skipped) = json_blocks(&text);
        skipped_blocks += skipped;
        for (line, value) in blocks {
            let origin = format!("{}:{line}", display(path));
            if value.get("jsonrpc").is_none() {
                fragments += 1;
                continue;
            }
            let method = value.get("method").and_then(Value::as_str).unwrap_or("");
            if value.get("id").is_none() && MISSING_ID.contains(&method) {
                println!("exception {origin}: {method} request shown without an id; checked raw");
                exceptions += 1;
                tally.record(&origin, &value, raw_round_trip(&value));
                continue;
            }
            let back = match message_round_trip(&value) {
                Err(e) if e == GENERIC => {
                    generic += 1;
                    raw_round_trip(&value)
                }
                other => other,
            };
            tally.record(&origin, &value, back);
        }
    }
    println!(
        "{what}: {fragments} fragments not checked, {skipped_blocks} blocks not JSON, \
         {exceptions} documented exceptions, {generic} generic JSON-RPC illustrations \
         (round-tripped raw)"
    );
    tally.assert_clean(what);
}

/// `path` relative to `tests/`.
fn display(path: &Path) -> String {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    path.strip_prefix(&tests)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("dir").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

#[test]
fn spec_doc_messages_round_trip() {
    let mut files = Vec::new();
    for rev in ["2025-03-26", "2025-11-25", "2026-07-28"] {
        files_under(&spec_dir().join(rev).join("docs"), "mdx", &mut files);
    }
    check_documents("spec docs", &files);
}

#[test]
fn fixture_messages_round_trip() {
    let mut files = Vec::new();
    files_under(&fixtures_dir(), "jsonl", &mut files);
    check_documents("fixtures", &files);
}
