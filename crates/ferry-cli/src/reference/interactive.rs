//! Reference tools that talk back: progress and cancellation, logging, and asking the
//! client for sampling, roots and elicitation (which works the same in both eras: requests
//! to the client in the session era, `input_required` round trips in the stateless era).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ferry::protocol::types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitationSchema,
    LoggingLevel, PrimitiveSchemaDefinition, Role, SamplingContent, SamplingContents,
    SamplingMessage, StringSchema, TaskSupport, Tool, ToolExecution,
};
use ferry::server::{Context, ServerBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

/// `countdown` arguments.
#[derive(Deserialize, JsonSchema)]
struct CountdownArgs {
    /// Steps to count (1..=1000).
    steps: u32,
    /// Milliseconds per step (0..=10000; default 100).
    interval_ms: Option<u64>,
}

/// `sample` arguments.
#[derive(Deserialize, JsonSchema)]
struct SampleArgs {
    /// The question for the client's model.
    prompt: String,
    /// Most tokens to generate (default 200).
    max_tokens: Option<u32>,
}

/// `elicit` arguments.
#[derive(Deserialize, JsonSchema)]
struct ElicitArgs {
    /// What to ask the user.
    message: String,
}

/// `elicit_url` arguments.
#[derive(Deserialize, JsonSchema)]
struct ElicitUrlArgs {
    /// Where to send the user.
    url: String,
    /// Why.
    message: String,
}

/// `log` arguments.
#[derive(Deserialize, JsonSchema)]
struct LogArgs {
    /// The message to log at every level from debug to emergency.
    message: String,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Register the interactive tools.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool_with(
            Tool {
                // Clients of 2025-11-25 may run it as a task.
                execution: Some(ToolExecution {
                    task_support: Some(TaskSupport::Optional),
                }),
                ..Tool::described(
                    "countdown",
                    "Count down `steps` steps, reporting progress at each; honours \
                     cancellation; may run as a task.",
                )
            },
            countdown,
        )
        .tool("log", "Log a message at every level.", log)
        .tool(
            "sample",
            "Ask the client's model a question (sampling).",
            sample,
        )
        .tool(
            "roots",
            "List the client's roots.",
            |_: NoArgs, cx: Context| async move {
                let roots = cx.list_roots().await.map_err(|e| e.to_string())?;
                let lines: Vec<_> = roots
                    .roots
                    .iter()
                    .map(|r| match &r.name {
                        Some(name) => format!("{name}: {}", r.uri),
                        None => r.uri.clone(),
                    })
                    .collect();
                Ok::<_, String>(format!("{} roots\n{}", lines.len(), lines.join("\n")))
            },
        )
        .tool(
            "elicit",
            "Ask the user for their name and favourite colour (form).",
            elicit,
        )
        .tool(
            "elicit_url",
            "Send the user to a URL (URL-mode elicitation).",
            elicit_url,
        )
}

/// Countdowns cancelled before they finished, since the process started (in
/// `server://info`, so a client can tell its cancellation reached the tool).
pub(crate) static COUNTDOWNS_CANCELLED: AtomicU64 = AtomicU64::new(0);

/// Counts a countdown that ends unfinished: the engine drops a cancelled request's handler
/// at its next `.await`, and this guard's `Drop` runs then.
struct CountIfUnfinished {
    finished: bool,
}

impl Drop for CountIfUnfinished {
    fn drop(&mut self) {
        if !self.finished {
            COUNTDOWNS_CANCELLED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn countdown(args: CountdownArgs, cx: Context) -> CallToolResult {
    let mut unfinished = CountIfUnfinished { finished: false };
    let steps = args.steps.clamp(1, 1000);
    let interval = Duration::from_millis(args.interval_ms.unwrap_or(100).min(10_000));
    for step in 1..=steps {
        // A cancelled call is dropped here, at its sleep: the guard counts it.
        tokio::time::sleep(interval).await;
        if let Some(progress) = &cx.progress {
            let message = format!("step {step} of {steps}");
            let _ = progress
                .report(f64::from(step), Some(f64::from(steps)), Some(message))
                .await;
        }
    }
    unfinished.finished = true;
    CallToolResult::success(vec![ContentBlock::text(format!("counted {steps} steps"))])
}

async fn log(args: LogArgs, cx: Context) -> String {
    // Through `tracing`: to stderr, and (ClientLogLayer) to the client as a debug message.
    tracing::debug!(message = %args.message, "log tool called");
    let mut sent = 0;
    for level in [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ] {
        sent += u32::from(cx.log(level, Some("ferry"), args.message.clone()).await);
    }
    format!("sent {sent} log messages")
}

async fn sample(args: SampleArgs, cx: Context) -> Result<String, String> {
    let result = cx
        .sample(CreateMessageRequestParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContents::text(args.prompt),
                meta: None,
            }],
            max_tokens: args.max_tokens.unwrap_or(200).into(),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let text: Vec<_> = result
        .content
        .blocks()
        .iter()
        .filter_map(|b| match b {
            SamplingContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    Ok(format!("{} says: {}", result.model, text.join("")))
}

fn text_field(title: &str) -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::String(StringSchema {
        title: Some(title.into()),
        ..Default::default()
    })
}

async fn elicit(args: ElicitArgs, cx: Context) -> Result<String, String> {
    let schema = ElicitationSchema {
        properties: [
            ("name".to_owned(), text_field("Your name")),
            ("colour".to_owned(), text_field("Favourite colour")),
        ]
        .into_iter()
        .collect(),
        required: Some(vec!["name".into()]),
        ..Default::default()
    };
    let answer = cx
        .elicit(ElicitRequestParams::Form(ElicitRequestFormParams {
            message: args.message,
            requested_schema: schema,
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    Ok(match answer.action {
        ElicitAction::Accept => {
            let content = answer.content.unwrap_or_default();
            let field = |k: &str| {
                content
                    .get(k)
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .unwrap_or_else(|| "(none)".into())
            };
            format!(
                "accepted: name={}, colour={}",
                field("name"),
                field("colour")
            )
        }
        ElicitAction::Decline => "declined".into(),
        ElicitAction::Cancel => "cancelled".into(),
    })
}

async fn elicit_url(args: ElicitUrlArgs, cx: Context) -> Result<String, String> {
    let answer = cx
        .elicit(ElicitRequestParams::Url(ElicitRequestUrlParams {
            message: args.message,
            url: args.url,
            elicitation_id: Some(format!("ferry-{}", cx.session_key())),
            ..Default::default()
        }))
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("{:?}", answer.action).to_lowercase())
}
