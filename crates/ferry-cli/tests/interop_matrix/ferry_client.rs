//! Ferry's client (the library) against the SDKs' servers and `server-everything`: the
//! same checks as the SDK clients run against Ferry's server.

use std::collections::BTreeMap;
use std::time::Duration;

use ferry::client::{CallOptions, Client, ElicitationModes};
use ferry::engine::{ChildCommand, ShutdownTimeouts, StderrMode};
use ferry::protocol::types::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, JsonObject, Role, Root, SamplingContents,
};
use ferry::protocol::{Feature, ProtocolVersion};
use serde_json::{Value, json};

use crate::peers::Verdict;

/// What a server calls the things the checks use.
pub(crate) struct Profile {
    pub(crate) echo: (&'static str, Value, &'static str),
    pub(crate) structured: (&'static str, Value, &'static str),
    /// `None`: the first resource listed.
    pub(crate) resource: Option<&'static str>,
    pub(crate) prompt: (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    ),
    /// A tool reporting exactly `.2` progress steps.
    pub(crate) progress: (&'static str, Value, usize),
    /// A tool that runs long, reporting progress.
    pub(crate) long: (&'static str, Value),
    /// A tool answering how many calls the server saw cancelled.
    pub(crate) cancellations: Option<&'static str>,
    pub(crate) sampling: (&'static str, Value),
    /// A tool that asks the user (form elicitation) and shows the answer.
    pub(crate) elicitation: (&'static str, Value),
    /// A tool that asks for the client's roots and shows them.
    pub(crate) roots: &'static str,
}

/// The interop servers of `interop/ts` and `interop/py`: the reference server's names.
pub(crate) fn sdk_server() -> Profile {
    Profile {
        echo: ("echo", json!({"text": "hello"}), "hello"),
        structured: ("add", json!({"a": 2, "b": 40}), "sum"),
        resource: Some("server://info"),
        prompt: (
            "code_review",
            &[("code", "x = 1"), ("language", "rust")],
            "x = 1",
        ),
        progress: ("countdown", json!({"steps": 3, "interval_ms": 10}), 3),
        long: ("countdown", json!({"steps": 1000, "interval_ms": 50})),
        cancellations: Some("cancellations"),
        sampling: ("sample", json!({"prompt": "ping?"})),
        elicitation: ("elicit", json!({"message": "Who are you?"})),
        roots: "roots",
    }
}

/// `@modelcontextprotocol/server-everything`.
pub(crate) fn everything() -> Profile {
    Profile {
        echo: ("echo", json!({"message": "hello"}), "hello"),
        structured: (
            "get-structured-content",
            json!({"location": "Chicago"}),
            "temperature",
        ),
        resource: None,
        prompt: ("args-prompt", &[("city", "Oslo")], "Oslo"),
        progress: (
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            4,
        ),
        long: (
            "trigger-long-running-operation",
            json!({"duration": 100, "steps": 1000}),
        ),
        cancellations: None,
        sampling: (
            "trigger-sampling-request",
            json!({"prompt": "ping?", "maxTokens": 20}),
        ),
        elicitation: ("trigger-elicitation-request", json!({})),
        roots: "get-roots-list",
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn builder(version: ProtocolVersion) -> ferry::client::ClientBuilder {
    Client::builder("ferry-client", env!("CARGO_PKG_VERSION"))
        .version(version)
        .timeout(Duration::from_secs(60))
        .on_sampling(|params| async move {
            let asked = serde_json::to_value(&params.messages[0].content).unwrap_or_default();
            let asked = asked["text"].as_str().unwrap_or("?").to_owned();
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContents::text(format!("canned answer to {asked}")),
                model: "ferry-client".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        })
        .on_elicitation_with(ElicitationModes::Form, |params| async move {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(answer_form(&params)),
                meta: None,
            })
        })
        .roots(vec![Root {
            uri: ROOT.into(),
            name: Some("interop".into()),
            meta: None,
        }])
}

/// The root the client offers.
const ROOT: &str = "file:///interop-root";

/// A canned answer to a form: each field's default, or for its type `Ada`, `true`, 7 or the
/// first allowed value.
fn answer_form(params: &ElicitRequestParams) -> JsonObject {
    let ElicitRequestParams::Form(form) = params else {
        return JsonObject::new();
    };
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    let mut answer = JsonObject::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let value = if let Some(default) = field.get("default") {
            default.clone()
        } else if let Some(first) = field["enum"].get(0).or(field["oneOf"][0].get("const")) {
            first.clone()
        } else {
            match field["type"].as_str() {
                Some("boolean") => json!(true),
                Some("integer" | "number") => json!(7),
                Some("array") => json!([field["items"]["enum"][0].clone()]),
                _ => json!("Ada"),
            }
        };
        answer.insert(name.clone(), value);
    }
    answer
}

/// Spawn `program args` as a stdio server, connect in `version`, run the checks.
pub(crate) async fn over_stdio(
    program: &str,
    args: &[String],
    version: ProtocolVersion,
    profile: &Profile,
) -> Vec<Verdict> {
    let command = ChildCommand::new(program)
        .args(args)
        .stderr(StderrMode::Inherit);
    let (client, child) = match builder(version).spawn(&command).await {
        Ok(connected) => connected,
        Err(e) => return vec![Verdict::new("connect", false, e.to_string())],
    };
    let verdicts = run(&client, version, profile).await;
    // The spec's shutdown (stdin closed, then signals) while the client still reads the
    // server's stdout, so a server writing as it exits never meets a closed pipe.
    let _ = child.shutdown(ShutdownTimeouts::default()).await;
    drop(client);
    verdicts
}

/// Connect to `url` over HTTP in `version` (Streamable HTTP, or the 2024-11-05 HTTP+SSE
/// transport the client falls back to when the URL refuses the POST), run the checks.
pub(crate) async fn over_http(
    url: &str,
    version: ProtocolVersion,
    profile: &Profile,
) -> Vec<Verdict> {
    let config = ferry::http_client::HttpClientConfig::default();
    let (client, connection) = match builder(version).connect_http(url, config).await {
        Ok(connected) => connected,
        Err(e) => return vec![Verdict::new("connect", false, e.to_string())],
    };
    let verdicts = run(&client, version, profile).await;
    drop(client);
    connection.close().await;
    verdicts
}

/// The checks, each a verdict.
pub(crate) async fn run(
    client: &Client,
    version: ProtocolVersion,
    profile: &Profile,
) -> Vec<Verdict> {
    let mut out = vec![Verdict::new(
        "connect",
        client.version() == version,
        format!(
            "{} with {:?}",
            client.version().as_str(),
            client.server_info().map(|i| &i.name)
        ),
    )];
    macro_rules! check {
        ($name:literal, $body:expr) => {
            out.push(match $body {
                Ok((ok, detail)) => Verdict::new($name, ok, detail),
                Err(e) => Verdict::new($name, false, format!("{e}")),
            })
        };
    }
    check!("tools", tools(client, profile).await);
    if version.has(Feature::StructuredOutput) {
        check!("structured_output", structured(client, profile).await);
    }
    check!("resources", resources(client, profile).await);
    check!("prompts", prompts(client, profile).await);
    check!("progress", progress(client, profile).await);
    check!("cancellation", cancellation(client, profile).await);
    check!("sampling", sampling(client, profile).await);
    if version.has(Feature::Elicitation) {
        check!("elicitation", elicitation(client, profile).await);
    }
    check!("roots", roots(client, profile).await);
    out
}

type Outcome = Result<(bool, String), ferry::client::ClientError>;

async fn tools(client: &Client, p: &Profile) -> Outcome {
    let mut expected = vec![p.echo.0, p.progress.0, p.sampling.0, p.roots];
    if client.version().has(Feature::StructuredOutput) {
        expected.push(p.structured.0);
    }
    if client.version().has(Feature::Elicitation) {
        expected.push(p.elicitation.0);
    }
    let mut missing = Vec::new();
    // server-everything registers the tools that need client capabilities just after
    // initialization: list until they are there (or give up).
    for _ in 0..100 {
        let tools = client.list_all_tools().await?;
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        missing = expected
            .iter()
            .filter(|n| !names.contains(n))
            .copied()
            .collect();
        if missing.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let echoed = text(&client.call_tool(p.echo.0, p.echo.1.clone()).await?);
    Ok((
        missing.is_empty() && echoed.contains(p.echo.2),
        format!("missing {missing:?}; echo gave {echoed:?}"),
    ))
}

async fn structured(client: &Client, p: &Profile) -> Outcome {
    let result = client
        .call_tool(p.structured.0, p.structured.1.clone())
        .await?;
    let structured = result.structured_content.unwrap_or_default();
    Ok((
        structured.get(p.structured.2).is_some(),
        format!("{structured:?}"),
    ))
}

async fn resources(client: &Client, p: &Profile) -> Outcome {
    let listed = client.list_all_resources().await?;
    let uri = match p.resource {
        Some(uri) => uri.to_owned(),
        None => listed.first().map(|r| r.uri.clone()).unwrap_or_default(),
    };
    let read = client.read_resource(&uri).await?;
    let first = read.contents.first().map(|c| c.uri().to_owned());
    Ok((
        listed.iter().any(|r| r.uri == uri) && first.as_deref() == Some(uri.as_str()),
        format!("read {uri}: {} item(s)", read.contents.len()),
    ))
}

async fn prompts(client: &Client, p: &Profile) -> Outcome {
    let arguments: BTreeMap<String, String> = p
        .prompt
        .1
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let prompt = client.get_prompt(p.prompt.0, arguments).await?;
    let body = serde_json::to_string(&prompt.messages).unwrap_or_default();
    Ok((body.contains(p.prompt.2), body.chars().take(120).collect()))
}

async fn progress(client: &Client, p: &Profile) -> Outcome {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let result = client
        .call_tool_with(p.progress.0, p.progress.1.clone(), options)
        .await?;
    let mut seen = Vec::new();
    while let Ok(update) = rx.try_recv() {
        seen.push(update.progress);
    }
    let increasing = seen.windows(2).all(|w| w[0] < w[1]);
    Ok((
        seen.len() == p.progress.2 && increasing && result.is_error != Some(true),
        format!("progress {seen:?}; {}", text(&result)),
    ))
}

/// Start the long call, drop it at its first progress (the client sends
/// `notifications/cancelled`), then see the server carry on — and, where it can tell,
/// that it saw the cancellation.
async fn cancellation(client: &Client, p: &Profile) -> Outcome {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let mut call = Box::pin(client.call_tool_with(p.long.0, p.long.1.clone(), options));
    let started = tokio::select! {
        finished = &mut call => return Ok((false, format!("finished before the cancellation: {finished:?}"))),
        update = rx.recv() => update.is_some(),
    };
    drop(call);
    let mut seen_by_server = String::from("(the server cannot tell)");
    let mut server_saw_it = true;
    if let Some(tool) = p.cancellations {
        // The notification is on its way; ask until the server has acted on it.
        server_saw_it = false;
        for _ in 0..200 {
            let counted = client.call_tool(tool, json!({})).await?;
            let n = counted
                .structured_content
                .as_ref()
                .and_then(|s| s.get("cancelled"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            seen_by_server = format!("the server saw {n} cancellation(s)");
            if n >= 1 {
                server_saw_it = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    let after = text(&client.call_tool(p.echo.0, p.echo.1.clone()).await?);
    Ok((
        started && server_saw_it && after.contains(p.echo.2),
        format!("{seen_by_server}; then echo gave {after:?}"),
    ))
}

async fn sampling(client: &Client, p: &Profile) -> Outcome {
    let result = client.call_tool(p.sampling.0, p.sampling.1.clone()).await?;
    let got = text(&result);
    // server-everything puts context before the prompt; the SDK servers quote the model.
    let answered = got.contains("canned answer to") && got.contains("ping?");
    Ok((answered && got.contains("ferry-client"), got))
}

async fn elicitation(client: &Client, p: &Profile) -> Outcome {
    let result = client
        .call_tool(p.elicitation.0, p.elicitation.1.clone())
        .await?;
    let got = text(&result);
    Ok((got.contains("Ada") && result.is_error != Some(true), got))
}

async fn roots(client: &Client, p: &Profile) -> Outcome {
    let result = client.call_tool(p.roots, json!({})).await?;
    let got = text(&result);
    Ok((got.contains(ROOT) && result.is_error != Some(true), got))
}
