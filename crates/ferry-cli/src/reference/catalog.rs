//! The reference server's resources, templates, prompts and completions: the seed 001
//! `server://info` resource (live JSON), a text and a binary resource, a template of notes,
//! and prompts with arguments and completions.

use std::sync::OnceLock;
use std::time::Instant;

use ferry::protocol::types::{
    ContentBlock, GetPromptResult, PromptMessage, Resource, ResourceContents, ResourceTemplate,
    Role,
};
use ferry::server::{Context, Json, ResourceError, ServerBuilder, TemplateVars};
use schemars::JsonSchema;
use serde::Deserialize;

/// The text of `ferry://readme`.
pub(crate) const README: &str = "# Ferry reference server\n\nTools: echo, add, calculate, \
get_timestamp, evaluate, countdown, log, sample, roots, elicit, elicit_url, image, audio, \
embedded_resource, resource_link, mixed, weather, change_tools, change_prompts, tick_clock.\n\
Resources: server://info, ferry://readme, ferry://logo.png, ferry://clock, ferry://notes/{id}.\n\
Prompts: code_review, summarize.\n\nChanges while serving: change_tools and change_prompts \
add or remove the tool and the prompt `surprise` (tools/list_changed, prompts/list_changed); \
ferry://clock is updated every 10 s and by tick_clock (resources/updated to its \
subscribers). With several instances (--redis) every instance follows.\n";

/// The notes behind `ferry://notes/{id}`.
const NOTES: &[(&str, &str)] = &[
    ("1", "Buy rope."),
    ("2", "Check the tide tables."),
    ("3", "Paint the hull."),
    ("10", "Ferry the goat across first."),
];

/// Languages `code_review` suggests.
const LANGUAGES: &[&str] = &[
    "c",
    "go",
    "java",
    "javascript",
    "python",
    "ruby",
    "rust",
    "typescript",
];

fn started() -> Instant {
    static STARTED: OnceLock<Instant> = OnceLock::new();
    *STARTED.get_or_init(Instant::now)
}

/// `code_review` arguments.
#[derive(Deserialize, JsonSchema)]
struct CodeReview {
    /// The code to review.
    code: String,
    /// Its language (completions offered).
    language: Option<String>,
}

/// `summarize` arguments.
#[derive(Deserialize, JsonSchema)]
struct Summarize {
    /// The text to summarize.
    text: String,
}

/// Register the resources, templates, prompts and completions.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    started();
    builder
        .resource(
            Resource {
                uri: "server://info".into(),
                name: "info".into(),
                title: Some("Server information".into()),
                description: Some(
                    "Live server facts: uptime, sessions, requests, runtime tasks, cancelled countdowns, version"
                        .into(),
                ),
                mime_type: Some("application/json".into()),
                ..Default::default()
            },
            |cx: Context| async move {
                let stats = cx.server().stats();
                let info = serde_json::json!({
                    "name": "ferry",
                    "version": env!("CARGO_PKG_VERSION"),
                    "uptime_seconds": started().elapsed().as_secs_f64(),
                    "sessions": stats.connections_open,
                    "sessions_total": stats.connections_total,
                    "requests_served": stats.requests_served,
                    // The runtime's live tasks: what the soak watches for leaks.
                    "tasks_alive": tokio::runtime::Handle::current().metrics().num_alive_tasks(),
                    "protocol_version": cx.version.as_str(),
                    "countdowns_cancelled": super::interactive::COUNTDOWNS_CANCELLED
                        .load(std::sync::atomic::Ordering::Relaxed),
                });
                // The JSON text, typed application/json by the resource.
                Json(info)
            },
        )
        .resource(
            Resource {
                uri: "ferry://readme".into(),
                name: "readme".into(),
                mime_type: Some("text/markdown".into()),
                ..Default::default()
            },
            |_cx: Context| async { README },
        )
        .resource(
            Resource {
                uri: "ferry://logo.png".into(),
                name: "logo".into(),
                mime_type: Some("image/png".into()),
                size: Some(super::media::PNG_1X1.len() as u64),
                ..Default::default()
            },
            // A blob, typed image/png by the resource.
            |_cx: Context| async { super::media::PNG_1X1 },
        )
        .resource_template(
            ResourceTemplate {
                uri_template: "ferry://notes/{id}".into(),
                name: "note".into(),
                description: Some("A note by id".into()),
                mime_type: Some("text/plain".into()),
                ..Default::default()
            },
            |uri: String, vars: TemplateVars, _cx: Context| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                match NOTES.iter().find(|(n, _)| *n == id) {
                    Some((_, text)) => Ok(vec![ResourceContents::text(uri, "text/plain", *text)]),
                    None => Err(ResourceError::NotFound(uri)),
                }
            },
        )
        .complete_template_variable("ferry://notes/{id}", "id", |req, _cx| async move {
            NOTES
                .iter()
                .map(|(id, _)| (*id).to_owned())
                .filter(|id| id.starts_with(&req.value))
                .collect()
        })
        .prompt(
            "code_review",
            "Ask for a review of a piece of code.",
            |args: CodeReview, _cx: Context| async move {
                let language = args.language.unwrap_or_else(|| "the code".into());
                format!("Please review this {language}:\n\n{}", args.code)
            },
        )
        .complete_prompt_argument("code_review", "language", |req, _cx| async move {
            LANGUAGES
                .iter()
                .filter(|l| l.starts_with(&req.value))
                .map(|l| (*l).to_owned())
                .collect()
        })
        .prompt(
            "summarize",
            "Summarize a text, with the readme as context.",
            |args: Summarize, _cx: Context| async move {
                GetPromptResult {
                    description: Some("Summarize a text".into()),
                    messages: vec![
                        PromptMessage {
                            role: Role::User,
                            content: ContentBlock::Resource(
                                ferry::protocol::types::EmbeddedResource {
                                    resource: ResourceContents::text(
                                        "ferry://readme",
                                        "text/markdown",
                                        README,
                                    ),
                                    annotations: None,
                                    meta: None,
                                },
                            ),
                        },
                        PromptMessage {
                            role: Role::User,
                            content: ContentBlock::text(format!("Summarize:\n\n{}", args.text)),
                        },
                    ],
                    ..Default::default()
                }
            },
        )
}
