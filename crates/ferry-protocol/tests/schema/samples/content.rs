//! Samples: content blocks, annotations, icons, resource contents.

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::types::*;
use serde_json::json;

use crate::schema::Sample;

fn annotations() -> Annotations {
    Annotations {
        audience: Some(vec![Role::User, Role::Assistant]),
        priority: Some(0.5),
        last_modified: Some("2025-01-12T15:00:58Z".into()),
    }
}

fn meta() -> Meta {
    json!({"example.com/key": "value"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

pub fn samples() -> Vec<Sample> {
    let content_defs: &[&str] = &["ContentBlock"];
    vec![
        Sample::object("text, minimal", &["TextContent"], ContentBlock::text("hi")),
        Sample::object(
            "text, full",
            &[
                "TextContent",
                "ContentBlock",
                "SamplingMessageContentBlock",
                "Annotated",
            ],
            ContentBlock::Text(TextContent {
                text: "hello".into(),
                annotations: Some(annotations()),
                meta: Some(meta()),
            }),
        ),
        Sample::object(
            "image, full",
            &["ImageContent", "ContentBlock"],
            ContentBlock::Image(ImageContent {
                data: "aGk=".into(),
                mime_type: "image/png".into(),
                annotations: Some(annotations()),
                meta: Some(meta()),
            }),
        ),
        Sample::object(
            "audio, full",
            &["AudioContent", "ContentBlock"],
            ContentBlock::Audio(AudioContent {
                data: "aGk=".into(),
                mime_type: "audio/wav".into(),
                annotations: Some(annotations()),
                meta: Some(meta()),
            }),
        )
        .revisions(V2025_03_26, V2026_07_28),
        Sample::object(
            "resource link, minimal",
            content_defs,
            ContentBlock::ResourceLink(ResourceLink {
                uri: "file:///a.txt".into(),
                name: "a".into(),
                ..Default::default()
            }),
        )
        .revisions(V2025_06_18, V2026_07_28),
        Sample::object(
            "resource link, full",
            &["ResourceLink", "ContentBlock"],
            ContentBlock::ResourceLink(ResourceLink {
                uri: "file:///a.txt".into(),
                name: "a".into(),
                title: Some("A".into()),
                description: Some("the a file".into()),
                mime_type: Some("text/plain".into()),
                size: Some(12),
                icons: Some(vec![icon()]),
                annotations: Some(annotations()),
                meta: Some(meta()),
            }),
        )
        .revisions(V2025_06_18, V2026_07_28),
        Sample::object(
            "embedded text resource",
            &["EmbeddedResource", "ContentBlock"],
            ContentBlock::Resource(EmbeddedResource {
                resource: ResourceContents::Text(TextResourceContents {
                    uri: "file:///a.txt".into(),
                    mime_type: Some("text/plain".into()),
                    text: "a".into(),
                    meta: Some(meta()),
                }),
                annotations: Some(annotations()),
                meta: Some(meta()),
            }),
        ),
        Sample::object(
            "embedded blob resource",
            &["EmbeddedResource"],
            ContentBlock::Resource(EmbeddedResource {
                resource: ResourceContents::Blob(BlobResourceContents {
                    uri: "file:///a.bin".into(),
                    mime_type: None,
                    blob: "AAE=".into(),
                    meta: None,
                }),
                annotations: None,
                meta: None,
            }),
        ),
        Sample::object("annotations", &["Annotations"], annotations()),
        Sample::object("icon", &["Icon"], icon()),
    ]
}

fn icon() -> Icon {
    Icon {
        src: "https://example.com/icon.png".into(),
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["48x48".into()]),
        theme: Some(IconTheme::Dark),
    }
}
