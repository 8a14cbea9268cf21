//! The resources and the template of the `resources-*` scenarios, and the completion of the
//! template's variable.

use ferry::protocol::types::{Resource, ResourceContents, ResourceTemplate};
use ferry::server::{Context, ResourceError, ServerBuilder, TemplateVars};

use super::PNG_BASE64;

/// The text of `test://static-text`.
const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// The URI template of `resources-templates-read`.
const TEMPLATE: &str = "test://template/{id}/data";

/// A listed resource.
fn resource(uri: &str, name: &str, title: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        uri: uri.into(),
        name: name.into(),
        title: Some(title.into()),
        description: Some(description.into()),
        mime_type: Some(mime_type.into()),
        ..Default::default()
    }
}

/// What `test://template/{id}/data` reads for `id`: JSON naming the id.
fn template_text(id: &str) -> String {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
        .to_string()
}

/// Register the resources, the template and its completion.
pub(super) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .resource(
            resource(
                "test://static-text",
                "static-text",
                "Static Text Resource",
                "A static text resource for testing",
                "text/plain",
            ),
            // Its text, typed text/plain by the resource.
            |_cx: Context| async { STATIC_TEXT },
        )
        .resource(
            resource(
                "test://static-binary",
                "static-binary",
                "Static Binary Resource",
                "A static binary resource (image) for testing",
                "image/png",
            ),
            |_cx: Context| async {
                ResourceContents::blob("test://static-binary", "image/png", PNG_BASE64)
            },
        )
        .resource(
            // `resources-subscribe` and `resources-unsubscribe` subscribe to it; Ferry
            // refuses subscriptions to resources it does not have.
            resource(
                "test://watched-resource",
                "watched-resource",
                "Watched Resource",
                "A resource to subscribe to",
                "text/plain",
            ),
            |_cx: Context| async { "Watched resource content" },
        )
        .resource_template(
            ResourceTemplate {
                uri_template: TEMPLATE.into(),
                name: "template".into(),
                title: Some("Resource Template".into()),
                description: Some("A resource template with parameter substitution".into()),
                mime_type: Some("application/json".into()),
                ..Default::default()
            },
            |uri: String, vars: TemplateVars, _cx: Context| async move {
                let Some(id) = vars.get("id") else {
                    return Err(ResourceError::NotFound(uri));
                };
                let text = template_text(id);
                Ok(vec![ResourceContents::text(uri, "application/json", text)])
            },
        )
        .complete_template_variable(TEMPLATE, "id", |request, _cx| async move {
            ["123", "456", "789"]
                .into_iter()
                .filter(|id| id.starts_with(&request.value))
                .map(str::to_owned)
                .collect()
        })
}
