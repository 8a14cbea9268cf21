//! The prompts of the `prompts-*` scenarios and the completion of `completion-complete`.

use ferry::protocol::types::{
    ContentBlock, EmbeddedResource, ImageContent, PromptMessage, ResourceContents, Role,
};
use ferry::server::{Context, ServerBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::PNG_BASE64;

/// The arguments of a prompt that takes none.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// The arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, JsonSchema)]
struct TwoArgs {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

/// The arguments of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct EmbedArgs {
    /// URI of the resource to embed.
    resource_uri: String,
}

/// What `completion/complete` suggests for `arg1` and `arg2` of
/// `test_prompt_with_arguments`, filtered by what the user typed.
const SUGGESTIONS: [&str; 5] = ["paris", "park", "party", "testValue1", "testValue2"];

/// A user message.
fn user(content: ContentBlock) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

/// The suggestions starting with `typed`.
fn suggest(typed: &str) -> Vec<String> {
    SUGGESTIONS
        .into_iter()
        .filter(|s| s.starts_with(typed))
        .map(str::to_owned)
        .collect()
}

/// Register the prompts and their completions.
pub(super) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .prompt(
            "test_simple_prompt",
            "A simple prompt without arguments",
            |_: NoArgs, _cx: Context| async {
                String::from("This is a simple prompt for testing.")
            },
        )
        .prompt(
            "test_prompt_with_arguments",
            "A prompt with required arguments",
            |args: TwoArgs, _cx: Context| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.arg1, args.arg2
                )
            },
        )
        .prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that includes an embedded resource",
            |args: EmbedArgs, _cx: Context| async move {
                vec![
                    user(ContentBlock::Resource(EmbeddedResource {
                        resource: ResourceContents::text(
                            args.resource_uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        ),
                        annotations: None,
                        meta: None,
                    })),
                    user(ContentBlock::text(
                        "Please process the embedded resource above.",
                    )),
                ]
            },
        )
        .prompt(
            "test_prompt_with_image",
            "A prompt that includes image content",
            |_: NoArgs, _cx: Context| async {
                vec![
                    user(ContentBlock::Image(ImageContent {
                        data: PNG_BASE64.into(),
                        mime_type: "image/png".into(),
                        ..Default::default()
                    })),
                    user(ContentBlock::text("Please analyze the image above.")),
                ]
            },
        )
        .complete_prompt_argument(
            "test_prompt_with_arguments",
            "arg1",
            |request, _cx| async move { suggest(&request.value) },
        )
        .complete_prompt_argument(
            "test_prompt_with_arguments",
            "arg2",
            |request, _cx| async move { suggest(&request.value) },
        )
}
