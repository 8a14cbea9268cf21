//! Reference tools returning every kind of content: image, audio, an embedded resource, a
//! resource link, several blocks at once, and structured content with an output schema.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferry::protocol::types::{
    AudioContent, CallToolResult, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
    ResourceLink,
};
use ferry::server::{Context, Json, ServerBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A 1x1 red PNG.
pub(crate) const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A silent WAV: 8 kHz, 8-bit mono, 8 samples.
fn wav() -> Vec<u8> {
    let samples = [0x80u8; 8];
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// `weather` arguments.
#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// A city name.
    city: String,
}

/// A structured weather report.
#[derive(Serialize, JsonSchema)]
struct Weather {
    /// The city.
    city: String,
    /// Degrees Celsius.
    temperature_c: f64,
    /// Sky condition.
    conditions: String,
}

fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: STANDARD.encode(PNG_1X1),
        mime_type: "image/png".into(),
        annotations: None,
        meta: None,
    })
}

fn embedded() -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::text("ferry://readme", "text/markdown", super::catalog::README),
        annotations: None,
        meta: None,
    })
}

/// Register the content tools.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            "image",
            "Return a 1x1 PNG image.",
            |_: NoArgs, _cx: Context| async { CallToolResult::success(vec![image()]) },
        )
        .tool(
            "audio",
            "Return a short silent WAV clip.",
            |_: NoArgs, _cx: Context| async {
                CallToolResult::success(vec![ContentBlock::Audio(AudioContent {
                    data: STANDARD.encode(wav()),
                    mime_type: "audio/wav".into(),
                    annotations: None,
                    meta: None,
                })])
            },
        )
        .tool(
            "embedded_resource",
            "Return the ferry://readme resource embedded in the result.",
            |_: NoArgs, _cx: Context| async { CallToolResult::success(vec![embedded()]) },
        )
        .tool(
            "resource_link",
            "Return a link to the ferry://readme resource.",
            |_: NoArgs, _cx: Context| async {
                CallToolResult::success(vec![ContentBlock::ResourceLink(ResourceLink {
                    uri: "ferry://readme".into(),
                    name: "readme".into(),
                    mime_type: Some("text/markdown".into()),
                    description: Some("What the reference server offers".into()),
                    ..Default::default()
                })])
            },
        )
        .tool(
            "mixed",
            "Return text, an image and an embedded resource together.",
            |_: NoArgs, _cx: Context| async {
                CallToolResult::success(vec![
                    ContentBlock::text("three blocks"),
                    image(),
                    embedded(),
                ])
            },
        )
        .tool(
            "weather",
            "A made-up weather report as structured content (with an output schema).",
            |args: WeatherArgs, _cx: Context| async move {
                let seed = args
                    .city
                    .bytes()
                    .fold(0u32, |h, b| h.wrapping_mul(31) + u32::from(b));
                Json(Weather {
                    temperature_c: f64::from(seed % 35),
                    conditions: ["sunny", "cloudy", "rain", "fog"][(seed % 4) as usize].into(),
                    city: args.city,
                })
            },
        )
}
