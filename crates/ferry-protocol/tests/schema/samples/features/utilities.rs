//! Samples: the server utilities: argument completion (`completion/complete` and its
//! references), logging (levels, `logging/setLevel`, `notifications/message`), and
//! pagination cursors.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{ClientRequest, ServerNotification};
use ferry_protocol::types::*;
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    client_request, notification_meta, notification_with_meta, progress_meta, request_with_meta,
    result_meta, server_notification, server_result,
};

pub fn samples() -> Vec<Sample> {
    let mut all = completion();
    all.extend(logging());
    all.push(Sample::object(
        "cursor",
        &["Cursor"],
        Cursor::from("eyJvZmZzZXQiOjEwMH0="),
    ));
    all
}

fn prompt_reference() -> Reference {
    Reference::Prompt(PromptReference {
        name: "code_review".into(),
        title: None,
    })
}

fn resource_reference() -> Reference {
    Reference::Resource(ResourceTemplateReference {
        uri: "file:///{path}".into(),
    })
}

fn complete(reference: Reference, context: Option<CompletionContext>) -> ClientRequest {
    ClientRequest::Complete(CompleteRequestParams {
        reference,
        argument: CompletionArgument {
            name: "language".into(),
            value: "py".into(),
        },
        context,
        meta: None,
    })
}

fn completion() -> Vec<Sample> {
    let params: &[&str] = &["CompleteRequestParams"];
    let request: &[&str] = &["CompleteRequest"];
    let result: &[&str] = &["CompleteResult"];
    let response: &[&str] = &["CompleteResultResponse"];
    let context = CompletionContext {
        arguments: Some([("framework".to_owned(), "flask".to_owned())].into()),
    };
    let values = |n: usize| (0..n).map(|i| format!("value-{i}")).collect::<Vec<_>>();
    vec![
        Sample::object("prompt reference", &["PromptReference"], prompt_reference()),
        Sample::object(
            "prompt reference, titled",
            &["PromptReference"],
            Reference::Prompt(PromptReference {
                name: "code_review".into(),
                title: Some("Code review".into()),
            }),
        ),
        Sample::object(
            "resource template reference",
            &["ResourceReference", "ResourceTemplateReference"],
            resource_reference(),
        ),
        client_request(
            "completion/complete, prompt argument",
            params,
            request,
            complete(prompt_reference(), None),
        ),
        client_request(
            "completion/complete, template variable with context",
            params,
            request,
            complete(resource_reference(), Some(context)),
        ),
        client_request(
            "completion/complete, empty context",
            params,
            request,
            complete(prompt_reference(), Some(CompletionContext::default())),
        ),
        request_with_meta("completion/complete, with _meta", params, {
            let ClientRequest::Complete(mut p) = complete(resource_reference(), None) else {
                unreachable!("a completion request")
            };
            p.meta = Some(progress_meta("complete-1"));
            ClientRequest::Complete(p)
        }),
        server_result(
            "completion/complete result, values only",
            result,
            response,
            CompleteResult {
                completion: Completion {
                    values: vec!["python".into(), "pytorch".into()],
                    ..Default::default()
                },
                ..Default::default()
            },
        ),
        server_result(
            "completion/complete result, empty",
            result,
            response,
            CompleteResult::default(),
        ),
        server_result(
            "completion/complete result, full",
            result,
            response,
            CompleteResult {
                completion: Completion {
                    values: values(10),
                    total: Some(10),
                    has_more: Some(false),
                },
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        // More than a result may carry: the first 100, with `hasMore` and `total`.
        server_result(
            "completion/complete result, more than 100 values",
            result,
            response,
            CompleteResult {
                completion: Completion {
                    values: values(150),
                    ..Default::default()
                },
                ..Default::default()
            },
        ),
    ]
}

const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

fn logging() -> Vec<Sample> {
    let message: &[&str] = &["LoggingMessageNotificationParams"];
    let mut all: Vec<Sample> = LEVELS
        .into_iter()
        .flat_map(|level| {
            [
                Sample::object(
                    &format!("logging level {level:?}"),
                    &["LoggingLevel"],
                    level,
                ),
                server_notification(
                    &format!("log message, {level:?}"),
                    message,
                    &["LoggingMessageNotification"],
                    ServerNotification::LoggingMessage(LoggingMessageNotificationParams {
                        level,
                        logger: None,
                        data: json!("Connection pool at 80%"),
                        meta: None,
                    }),
                ),
            ]
        })
        .collect();
    all.extend([
        // Session era only: 2026-07-28 sets the level per request, in `_meta`.
        client_request(
            "logging/setLevel",
            &["SetLevelRequestParams"],
            &["SetLevelRequest"],
            ClientRequest::SetLevel(SetLevelRequestParams {
                level: LoggingLevel::Warning,
                meta: None,
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        request_with_meta(
            "logging/setLevel, with _meta",
            &["SetLevelRequestParams"],
            ClientRequest::SetLevel(SetLevelRequestParams {
                level: LoggingLevel::Debug,
                meta: Some(progress_meta("level-1")),
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        server_notification(
            "log message, structured data from a named logger",
            message,
            &["LoggingMessageNotification"],
            ServerNotification::LoggingMessage(LoggingMessageNotificationParams {
                level: LoggingLevel::Error,
                logger: Some("database".into()),
                data: json!({"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}),
                meta: None,
            }),
        ),
        notification_with_meta(
            "log message, with _meta",
            message,
            ServerNotification::LoggingMessage(LoggingMessageNotificationParams {
                level: LoggingLevel::Info,
                logger: Some("http".into()),
                data: json!(["GET /", 200]),
                meta: Some(notification_meta()),
            }),
        ),
    ]);
    all
}
