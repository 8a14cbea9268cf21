//! Samples: resources and resource templates (`resources/list`,
//! `resources/templates/list`), resource contents (`resources/read`), subscriptions
//! (`resources/subscribe` / `unsubscribe`, session era) and the resource notifications.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{ClientRequest, ServerNotification};
use ferry_protocol::types::*;

use crate::schema::Sample;
use crate::schema::samples::support::{
    annotations, client_request, icon, meta, notification_meta, notification_with_meta,
    progress_meta, request_with_meta, result_meta, server_notification, server_result,
};

fn resource_minimal() -> Resource {
    Resource {
        uri: "file:///project/src/main.rs".into(),
        name: "main.rs".into(),
        ..Default::default()
    }
}

fn resource_full() -> Resource {
    Resource {
        uri: "file:///project/README.md".into(),
        name: "README.md".into(),
        title: Some("Project README".into()),
        description: Some("What the project is".into()),
        mime_type: Some("text/markdown".into()),
        size: Some(1024),
        icons: Some(vec![icon()]),
        annotations: Some(annotations()),
        meta: Some(meta()),
    }
}

fn template_minimal() -> ResourceTemplate {
    ResourceTemplate {
        uri_template: "file:///{path}".into(),
        name: "project-files".into(),
        ..Default::default()
    }
}

fn template_full() -> ResourceTemplate {
    ResourceTemplate {
        uri_template: "weather://{city}/current".into(),
        name: "current-weather".into(),
        title: Some("Current weather".into()),
        description: Some("Current weather in a city".into()),
        mime_type: Some("application/json".into()),
        icons: Some(vec![icon()]),
        annotations: Some(Annotations {
            audience: Some(vec![Role::Assistant]),
            priority: Some(1.0),
            last_modified: None,
        }),
        meta: Some(meta()),
    }
}

fn text_contents_full() -> ResourceContents {
    ResourceContents::Text(TextResourceContents {
        uri: "file:///project/src/main.rs".into(),
        mime_type: Some("text/x-rust".into()),
        text: "fn main() {}".into(),
        meta: Some(meta()),
    })
}

fn blob_contents_full() -> ResourceContents {
    ResourceContents::Blob(BlobResourceContents {
        uri: "file:///project/logo.png".into(),
        mime_type: Some("image/png".into()),
        blob: "iVBORw0KGgo=".into(),
        meta: Some(meta()),
    })
}

pub fn samples() -> Vec<Sample> {
    let mut all = objects();
    all.extend(listing());
    all.extend(reading());
    all.extend(subscriptions());
    all
}

fn objects() -> Vec<Sample> {
    let text: &[&str] = &["TextResourceContents", "ResourceContents"];
    let blob: &[&str] = &["BlobResourceContents", "ResourceContents"];
    vec![
        Sample::object(
            "resource, minimal",
            &["Resource", "BaseMetadata"],
            resource_minimal(),
        ),
        Sample::object(
            "resource, full",
            &["Resource", "BaseMetadata", "Icons"],
            resource_full(),
        ),
        Sample::object(
            "resource template, minimal",
            &["ResourceTemplate", "BaseMetadata"],
            template_minimal(),
        ),
        Sample::object(
            "resource template, full",
            &["ResourceTemplate", "BaseMetadata", "Icons"],
            template_full(),
        ),
        Sample::object(
            "text resource contents, minimal",
            text,
            ResourceContents::Text(TextResourceContents {
                uri: "file:///notes.txt".into(),
                text: String::new(),
                ..Default::default()
            }),
        ),
        Sample::object("text resource contents, full", text, text_contents_full()),
        Sample::object(
            "blob resource contents, minimal",
            blob,
            ResourceContents::Blob(BlobResourceContents {
                uri: "file:///data.bin".into(),
                blob: "AAE=".into(),
                ..Default::default()
            }),
        ),
        Sample::object("blob resource contents, full", blob, blob_contents_full()),
    ]
}

fn listing() -> Vec<Sample> {
    let list: &[&str] = &["ListResourcesRequest", "PaginatedRequest"];
    let templates: &[&str] = &["ListResourceTemplatesRequest", "PaginatedRequest"];
    let result: &[&str] = &["ListResourcesResult", "PaginatedResult", "CacheableResult"];
    let templates_result: &[&str] = &[
        "ListResourceTemplatesResult",
        "PaginatedResult",
        "CacheableResult",
    ];
    let next_page = || PaginatedRequestParams {
        cursor: Some("cursor-2".into()),
        meta: None,
    };
    vec![
        client_request(
            "resources/list, first page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListResources(PaginatedRequestParams::default()),
        ),
        client_request(
            "resources/list, next page",
            &["PaginatedRequestParams"],
            list,
            ClientRequest::ListResources(next_page()),
        ),
        server_result(
            "resources/list result, empty",
            result,
            &["ListResourcesResultResponse"],
            ListResourcesResult::default(),
        ),
        server_result(
            "resources/list result, full",
            result,
            &["ListResourcesResultResponse"],
            ListResourcesResult {
                resources: vec![resource_minimal(), resource_full()],
                next_cursor: Some("cursor-3".into()),
                ttl_ms: Some(30_000),
                cache_scope: Some(CacheScope::Private),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        client_request(
            "resources/templates/list, first page",
            &["PaginatedRequestParams"],
            templates,
            ClientRequest::ListResourceTemplates(PaginatedRequestParams::default()),
        ),
        client_request(
            "resources/templates/list, next page",
            &["PaginatedRequestParams"],
            templates,
            ClientRequest::ListResourceTemplates(next_page()),
        ),
        server_result(
            "resources/templates/list result, empty",
            templates_result,
            &["ListResourceTemplatesResultResponse"],
            ListResourceTemplatesResult::default(),
        ),
        server_result(
            "resources/templates/list result, full",
            templates_result,
            &["ListResourceTemplatesResultResponse"],
            ListResourceTemplatesResult {
                resource_templates: vec![template_minimal(), template_full()],
                next_cursor: Some("cursor-3".into()),
                ttl_ms: Some(3_600_000),
                cache_scope: Some(CacheScope::Public),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
        server_notification(
            "resources list changed",
            &["NotificationParams"],
            &["ResourceListChangedNotification"],
            ServerNotification::ResourceListChanged(NotificationParams::default()),
        ),
        server_notification(
            "resources list changed, with _meta",
            &["NotificationParams"],
            &["ResourceListChangedNotification"],
            ServerNotification::ResourceListChanged(NotificationParams {
                meta: Some(notification_meta()),
            }),
        ),
    ]
}

fn reading() -> Vec<Sample> {
    let params: &[&str] = &["ReadResourceRequestParams", "ResourceRequestParams"];
    let result: &[&str] = &["ReadResourceResult", "CacheableResult"];
    let response: &[&str] = &["ReadResourceResultResponse"];
    vec![
        client_request(
            "resources/read",
            params,
            &["ReadResourceRequest"],
            ClientRequest::ReadResource(ReadResourceRequestParams {
                uri: "file:///project/src/main.rs".into(),
                ..Default::default()
            }),
        ),
        request_with_meta(
            "resources/read, with _meta",
            params,
            ClientRequest::ReadResource(ReadResourceRequestParams {
                uri: "file:///project/src/main.rs".into(),
                meta: Some(progress_meta("read-1")),
                ..Default::default()
            }),
        ),
        server_result(
            "resources/read result, empty",
            result,
            response,
            ReadResourceResult::default(),
        ),
        server_result(
            "resources/read result, text and blob, full",
            result,
            response,
            ReadResourceResult {
                contents: vec![text_contents_full(), blob_contents_full()],
                ttl_ms: Some(5_000),
                cache_scope: Some(CacheScope::Public),
                meta: Some(result_meta()),
                ..Default::default()
            },
        ),
    ]
}

/// `resources/subscribe` and `resources/unsubscribe` are session-era requests; 2026-07-28
/// subscribes with `subscriptions/listen` (see the interaction samples).
fn subscriptions() -> Vec<Sample> {
    let uri = || ResourceRequestParams {
        uri: "file:///project/src/main.rs".into(),
        meta: None,
    };
    let updated: &[&str] = &["ResourceUpdatedNotificationParams"];
    vec![
        client_request(
            "resources/subscribe",
            &["SubscribeRequestParams", "ResourceRequestParams"],
            &["SubscribeRequest"],
            ClientRequest::Subscribe(uri()),
        )
        .revisions(V2024_11_05, V2025_11_25),
        request_with_meta(
            "resources/subscribe, with _meta",
            &["SubscribeRequestParams", "ResourceRequestParams"],
            ClientRequest::Subscribe(ResourceRequestParams {
                meta: Some(progress_meta("subscribe-1")),
                ..uri()
            }),
        )
        .revisions(V2024_11_05, V2025_11_25),
        client_request(
            "resources/unsubscribe",
            &["UnsubscribeRequestParams", "ResourceRequestParams"],
            &["UnsubscribeRequest"],
            ClientRequest::Unsubscribe(uri()),
        )
        .revisions(V2024_11_05, V2025_11_25),
        server_notification(
            "resource updated",
            updated,
            &["ResourceUpdatedNotification"],
            ServerNotification::ResourceUpdated(ResourceUpdatedNotificationParams {
                uri: "file:///project/src/main.rs".into(),
                meta: None,
            }),
        ),
        notification_with_meta(
            "resource updated, with _meta",
            updated,
            ServerNotification::ResourceUpdated(ResourceUpdatedNotificationParams {
                uri: "file:///project/src/main.rs".into(),
                meta: Some(notification_meta()),
            }),
        ),
    ]
}
