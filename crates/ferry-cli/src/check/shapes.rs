//! Result shapes: every result the checker gets is validated against the negotiated
//! revision's schema, and what the server lists is used: resources read, prompts got,
//! tools called (by the tool policy), names that do not exist asked for.

use ferry::protocol::types::keys;
use ferry::protocol::{Feature, ProtocolVersion};
use serde_json::{Value, json};

use super::capabilities::Inventory;
use super::generate;
use super::model::{Outcome, requirement};
use super::probe::{Probe, ToolPolicy};
use super::target::{Reply, shorten};

requirement!(
    LIST_SHAPE,
    "shapes.list-results",
    Shapes,
    Must,
    "list results (tools, resources, templates, prompts) are valid for the revision",
    "schema (the revision's schema.json)"
);
requirement!(
    RESULT_SHAPE,
    "shapes.other-results",
    Shapes,
    Must,
    "other results (empty, completion, discover) are valid for the revision",
    "schema (the revision's schema.json)"
);
requirement!(
    READ_SHAPE,
    "shapes.read-resource",
    Shapes,
    Must,
    "resources/read of a listed resource answers a valid ReadResourceResult",
    "server/resources#reading-resources"
);
requirement!(
    READ_MIME_TYPE,
    "shapes.read-mime-type",
    Shapes,
    Should,
    "each content item of a resources/read result names its mimeType",
    "server/resources#reading-resources"
);
requirement!(
    PROMPT_SHAPE,
    "shapes.get-prompt",
    Shapes,
    Must,
    "prompts/get of a listed prompt answers a valid GetPromptResult",
    "server/prompts#getting-a-prompt"
);
requirement!(
    CALL_SHAPE,
    "shapes.call-tool",
    Shapes,
    Must,
    "tools/call of a listed tool answers a valid CallToolResult",
    "server/tools#calling-tools"
);
requirement!(
    STRUCTURED,
    "shapes.structured-content",
    Shapes,
    Must,
    "a tool with an outputSchema returns structuredContent that conforms to it (from 2025-06-18)",
    "server/tools#output-schema"
);
requirement!(
    NOTIFICATION_SHAPE,
    "shapes.notifications",
    Shapes,
    Must,
    "notifications from the server are valid ServerNotifications of the revision",
    "schema (the revision's schema.json)"
);
requirement!(
    UNKNOWN_TOOL,
    "shapes.unknown-tool",
    Shapes,
    Should,
    "tools/call of a tool that does not exist is answered with error -32602",
    "server/tools#error-handling"
);
requirement!(
    UNKNOWN_PROMPT,
    "shapes.unknown-prompt",
    Shapes,
    Should,
    "prompts/get of a prompt that does not exist is answered with error -32602",
    "server/prompts#error-handling"
);
requirement!(
    UNKNOWN_RESOURCE,
    "shapes.unknown-resource",
    Shapes,
    Should,
    "resources/read of a resource that does not exist is answered with an error (-32002; -32602 from 2026-07-28)",
    "server/resources#error-handling"
);

/// A tool call at least this long, with progress on the way, is slow enough to cancel.
const SLOW: std::time::Duration = std::time::Duration::from_secs(1);

/// The most resources read and prompts got.
const MAX_ITEMS: usize = 10;

/// Use what the server listed, validating every result.
pub(crate) async fn exercise(probe: &mut Probe<'_>, inventory: &Inventory) {
    for resource in inventory.resources.iter().take(MAX_ITEMS) {
        let Some(uri) = resource.get("uri") else {
            continue;
        };
        let reply = probe.call("resources/read", json!({"uri": uri})).await;
        match reply {
            Reply::Result(result) => {
                let valid = probe.check_shape(
                    &READ_SHAPE,
                    "ReadResourceResult",
                    &format!("resources/read {uri}"),
                    &result,
                );
                let contents = result.get("contents").and_then(Value::as_array);
                let untyped = contents
                    .into_iter()
                    .flatten()
                    .filter(|c| c.get("mimeType").is_none())
                    .count();
                if valid {
                    probe.expect(&READ_MIME_TYPE, untyped == 0, || {
                        format!("resources/read {uri}: {untyped} content item(s) without mimeType")
                    });
                }
            }
            other => probe.record(
                &READ_SHAPE,
                Outcome::Fail(format!(
                    "the listed resource {uri} could not be read: {}",
                    other.describe()
                )),
            ),
        }
    }
    for prompt in inventory.prompts.iter().take(MAX_ITEMS) {
        let Some(name) = prompt.get("name") else {
            continue;
        };
        let arguments: serde_json::Map<String, Value> = prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|a| a.get("required") == Some(&json!(true)))
            .filter_map(|a| Some((a.get("name")?.as_str()?.to_owned(), json!("ferry check"))))
            .collect();
        let reply = probe
            .call("prompts/get", json!({"name": name, "arguments": arguments}))
            .await;
        // A prompt may refuse made-up argument values; only results are judged.
        if let Reply::Result(result) = reply {
            probe.check_shape(
                &PROMPT_SHAPE,
                "GetPromptResult",
                &format!("prompts/get {name}"),
                &result,
            );
        }
    }
    for tool in &inventory.tools {
        call_tool(probe, tool).await;
    }
    unknown_names(probe).await;
}

/// Call `tool` if the policy allows it and its arguments can be made up.
async fn call_tool(probe: &mut Probe<'_>, tool: &Value) {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return;
    };
    let read_only = tool.pointer("/annotations/readOnlyHint") == Some(&json!(true));
    let allowed = match probe.tools {
        ToolPolicy::None => false,
        ToolPolicy::ReadOnly => read_only,
        ToolPolicy::All => true,
    };
    // A tool that must run as a task (2025-11-25) cannot be called plainly.
    let task_only = tool.pointer("/execution/taskSupport") == Some(&json!("required"));
    let Some(arguments) = tool.get("inputSchema").and_then(generate::arguments) else {
        return;
    };
    if !allowed || task_only {
        return;
    }
    let token = json!(format!("ferry-check-{name}"));
    probe.progress_tokens.push(token.clone());
    let mut meta = json!({"progressToken": &token});
    if probe.stateless() && probe.declares("logging") {
        // The level the checker sets in the session era.
        meta[keys::LOG_LEVEL] = json!("warning");
    }
    let before = probe.conn.notifications.len();
    let started = std::time::Instant::now();
    let reply = probe
        .call(
            "tools/call",
            json!({"name": name, "arguments": &arguments, "_meta": meta}),
        )
        .await;
    let logged = probe.conn.notifications[before..]
        .iter()
        .any(|n| n.get("method") == Some(&json!("notifications/message")));
    if logged && probe.logging_tool.is_none() {
        probe.logging_tool = Some((name.to_owned(), arguments.clone()));
    }
    tracing::debug!(tool = name, elapsed = ?started.elapsed(), "ferry check: tools/call");
    let progress = probe
        .conn
        .notifications
        .iter()
        .filter(|n| n.pointer("/params/progressToken") == Some(&token))
        .count();
    let reported = progress > 0;
    if reported && probe.resumable_call.is_none() {
        probe.resumable_call = Some((name.to_owned(), arguments.clone(), progress));
    }
    if started.elapsed() >= SLOW && reported && probe.slow_tool.is_none() {
        probe.slow_tool = Some((name.to_owned(), arguments, started.elapsed()));
    }
    let result = match reply {
        Reply::Result(result) => result,
        // Protocol errors for made-up arguments are the server's right.
        Reply::Error(_) => return,
        other => {
            probe.record(
                &CALL_SHAPE,
                Outcome::Fail(format!("tools/call {name}: {}", other.describe())),
            );
            return;
        }
    };
    if !probe.check_shape(
        &CALL_SHAPE,
        "CallToolResult",
        &format!("tools/call {name}"),
        &result,
    ) {
        return;
    }
    let Some(output_schema) = tool.get("outputSchema") else {
        return;
    };
    if !probe.revision.has(Feature::StructuredOutput) || result.get("isError") == Some(&json!(true))
    {
        return;
    }
    let outcome = match result.get("structuredContent") {
        None => Outcome::Fail(format!(
            "tools/call {name}: no structuredContent although the tool has an outputSchema"
        )),
        Some(content) => match jsonschema::validator_for(output_schema) {
            Err(e) => Outcome::Fail(format!("the outputSchema of {name} does not compile: {e}")),
            Ok(validator) => match validator.iter_errors(content).next() {
                None => Outcome::Pass,
                Some(e) => Outcome::Fail(format!(
                    "tools/call {name}: structuredContent {} does not conform to the outputSchema: at {}: {e}",
                    shorten(&content.to_string(), 80),
                    e.instance_path()
                )),
            },
        },
    };
    probe.record(&STRUCTURED, outcome);
}

/// Names that do not exist, for each declared feature.
async fn unknown_names(probe: &mut Probe<'_>) {
    if probe.declares("tools") {
        let reply = probe
            .call(
                "tools/call",
                json!({"name": "ferry-check-no-such-tool", "arguments": {}}),
            )
            .await;
        probe.expect(&UNKNOWN_TOOL, reply.code() == Some(-32602), || {
            format!(
                "tools/call ferry-check-no-such-tool got {}",
                reply.describe()
            )
        });
    }
    if probe.declares("prompts") {
        let reply = probe
            .call("prompts/get", json!({"name": "ferry-check-no-such-prompt"}))
            .await;
        probe.expect(&UNKNOWN_PROMPT, reply.code() == Some(-32602), || {
            format!(
                "prompts/get ferry-check-no-such-prompt got {}",
                reply.describe()
            )
        });
    }
    if probe.declares("resources") {
        let uri = "ferry-check://no-such-resource";
        let reply = probe.call("resources/read", json!({"uri": uri})).await;
        let ok = if probe.revision >= ProtocolVersion::V2026_07_28 {
            reply.code() == Some(-32602)
        } else {
            matches!(reply, Reply::Error(_))
        };
        probe.expect(&UNKNOWN_RESOURCE, ok, || {
            format!("resources/read {uri} got {}", reply.describe())
        });
    }
}

/// Validate every notification received so far (they stay for the utilities' checks).
pub(crate) fn notifications(probe: &mut Probe<'_>) {
    let all = probe.conn.notifications.clone();
    for notification in &all {
        let method = notification
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("?");
        probe.check_shape(
            &NOTIFICATION_SHAPE,
            "ServerNotification",
            &format!("notification {method}"),
            notification,
        );
    }
}
