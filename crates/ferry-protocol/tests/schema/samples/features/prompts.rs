//! Samples: prompts and their arguments (`prompts/list`), prompt messages of every content
//! kind (`prompts/get`), and `notifications/prompts/list_changed`.

use std::collections::BTreeMap;

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{ClientRequest, ServerNotification};
use ferry_protocol::types::*;

use crate::schema::Sample;
use crate::schema::samples::support::{
    annotations, client_request, icon, meta, notification_meta, progress_meta, request_with_meta,
    result_meta, server_notification, server_result,
};

fn argument_minimal() -> PromptArgument {
    PromptArgument {
        name: "code".into(),
        ..Default::default()
    }
}

fn argument_full() -> PromptArgument {
    PromptArgument {
        name: "language".into(),
        title: Some("Language".into()),
        description: Some("The programming language".into()),
        required: Some(false),
    }
}

fn prompt_minimal() -> Prompt {
    Prompt {
        name: "summarize".into(),
        ..Default::default()
    }
}

fn prompt_full() -> Prompt {
    Prompt {
        name: "code_review".into(),
        title: Some("Request Code Review".into()),
        description: Some("Asks the LLM to analyze code quality and suggest improvements".into()),
        arguments: Some(vec![
            PromptArgument {
                required: Some(true),
                ..argument_minimal()
            },
            argument_full(),
        ]),
        icons: Some(vec![icon()]),
        meta: Some(meta()),
    }
}

fn message(role: Role, content: ContentBlock) -> PromptMessage {
    PromptMessage { role, content }
}

fn text(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent {
        text: text.into(),
        annotations: Some(annotations()),
        meta: Some(meta()),
    })
}

fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
        annotations: None,
        meta: None,
    })
}

fn embedded() -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::text("file:///main.rs", "text/x-rust", "fn main() {}"),
        annotations: Some(annotations()),
        meta: None,
    })
}

fn audio() -> ContentBlock {
    ContentBlock::Audio(AudioContent {
        data: "UklGRg==".into(),
        mime_type: "audio/wav".into(),
        annotations: None,
        meta: None,
    })
}

fn resource_link() -> ContentBlock {
    ContentBlock::ResourceLink(ResourceLink {
        uri: "file:///main.rs".into(),
        name: "main.rs".into(),
        ..Default::default()
    })
}

pub fn samples() -> Vec<Sample> {
    let mut all = objects();
    all.extend(listing());
    all.extend(getting());
    all
}

fn objects() -> Vec<Sample> {
    let prompt_message: &[&str] = &["PromptMessage"];
    vec![
        Sample::object(
            "prompt, minimal",
            &["Prompt", "BaseMetadata"],
            prompt_minimal(),
        ),
        Sample::object(
            "prompt, full",
            &["Prompt", "BaseMetadata", "Icons"],
            prompt_full(),
        ),
        Sample::object(
            "prompt, no arguments",
            &["Prompt"],
            Prompt {
                arguments: Some(Vec::new()),
                ..prompt_minimal()
            },
        ),
        Sample::object(
            "prompt argument, minimal",
            &["PromptArgument", "BaseMetadata"],
            argument_minimal(),
        ),
        Sample::object(
            "prompt argument, full",
            &["PromptArgument", "BaseMetadata"],
            argument_full(),
        ),
        Sample::object(
            "prompt message, user text",
            prompt_message,
            message(Role::User, ContentBlock::text("Review this")),
        ),
        Sample::object(
            "prompt message, assistant text with annotations",
            prompt_message,
            message(Role::Assistant, text("Looks good")),
        ),
        Sample::object(
            "prompt message, image",
            prompt_message,
            message(Role::User, image()),
        ),
        Sample::object(
            "prompt message, embedded resource",
            prompt_message,
            message(Role::User, embedded()),
        ),
        Sample::object(
            "prompt message, audio",
            prompt_message,
            message(Role::User, audio()),
        )
        .revisions(V2025_03_26, V2026_07_28),
        Sample::object(
            "prompt message, resource link",
            prompt_message,
            message(Role::Assistant, resource_link()),
        )
        .revisions(V2025_06_18, V2026_07_28),
    ]
}

fn listing() -> Vec<Sample> {
    let list: &[&str] = &["ListPromptsRequest", "PaginatedRequest"];
    let result: &[&str] = &["ListPromptsResult", "PaginatedResult", "CacheableResult"];
    let response: &[&str] = &["ListPromptsResultResponse"];
    vec![
        client_request(
            "prompts/list, first page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListPrompts(PaginatedRequestParams::default()),
        ),
        client_request(
            "prompts/list, next page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListPrompts(PaginatedRequestParams {
                cursor: Some("prompts-2".into()),
                meta: None,
            }),
        ),
        server_result(
            "prompts/list result, empty",
            result,
            response,
            ListPromptsResult::default(),
        ),
        server_result(
            "prompts/list result, full",
            result,
            response,
            ListPromptsResult {
                prompts: vec![prompt_minimal(), prompt_full()],
                next_cursor: Some("prompts-3".into()),
                ttl_ms: Some(60_000),
                cache_scope: Some(CacheScope::Public),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        server_notification(
            "prompts list changed",
            &["NotificationParams"],
            &["PromptListChangedNotification"],
            ServerNotification::PromptListChanged(NotificationParams::default()),
        ),
        server_notification(
            "prompts list changed, with _meta",
            &["NotificationParams"],
            &["PromptListChangedNotification"],
            ServerNotification::PromptListChanged(NotificationParams {
                meta: Some(notification_meta()),
            }),
        ),
    ]
}

fn getting() -> Vec<Sample> {
    let params: &[&str] = &["GetPromptRequestParams"];
    let get: &[&str] = &["GetPromptRequest"];
    let result: &[&str] = &["GetPromptResult"];
    let response: &[&str] = &["GetPromptResultResponse"];
    let arguments: BTreeMap<String, String> = [
        (
            "code".to_owned(),
            "def hello():\n    print('world')".to_owned(),
        ),
        ("language".to_owned(), "python".to_owned()),
    ]
    .into();
    vec![
        client_request(
            "prompts/get, no arguments",
            params,
            get,
            ClientRequest::GetPrompt(GetPromptRequestParams {
                name: "summarize".into(),
                ..Default::default()
            }),
        ),
        client_request(
            "prompts/get, arguments",
            params,
            get,
            ClientRequest::GetPrompt(GetPromptRequestParams {
                name: "code_review".into(),
                arguments: Some(arguments.clone()),
                ..Default::default()
            }),
        ),
        request_with_meta(
            "prompts/get, with _meta",
            params,
            ClientRequest::GetPrompt(GetPromptRequestParams {
                name: "code_review".into(),
                arguments: Some(arguments),
                meta: Some(progress_meta("prompt-1")),
                ..Default::default()
            }),
        ),
        server_result(
            "prompts/get result, minimal",
            result,
            response,
            GetPromptResult {
                messages: vec![message(Role::User, ContentBlock::text("Summarize this"))],
                ..Default::default()
            },
        ),
        server_result(
            "prompts/get result, no messages",
            result,
            response,
            GetPromptResult::default(),
        ),
        server_result(
            "prompts/get result, full",
            result,
            response,
            GetPromptResult {
                description: Some("Code review prompt".into()),
                messages: vec![
                    message(Role::User, text("Please review this code")),
                    message(Role::User, embedded()),
                    message(Role::User, image()),
                    message(Role::Assistant, ContentBlock::text("Reviewing")),
                ],
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        server_result(
            "prompts/get result, audio and resource link",
            result,
            response,
            GetPromptResult {
                messages: vec![
                    message(Role::User, audio()),
                    message(Role::Assistant, resource_link()),
                ],
                ..Default::default()
            },
        )
        .revisions(V2025_06_18, V2026_07_28),
    ]
}
