//! Constructors and chainable setters of the types servers build by hand: tools, resources,
//! templates, prompts, icons and content blocks. Each constructor takes what the schema
//! requires; each setter sets one optional member and returns the value.
//!
//! ```
//! use ferry_protocol::types::{ContentBlock, Icon, Prompt, PromptArgument, Resource, Tool, ToolAnnotations};
//!
//! let tool = Tool::described("delete", "Delete a note")
//!     .title("Delete note")
//!     .annotations(ToolAnnotations::new().destructive(true).idempotent(true))
//!     .icon(Icon::new("https://example.com/bin.png").mime_type("image/png"));
//! assert_eq!(tool.annotations.unwrap().destructive_hint, Some(true));
//!
//! let resource = Resource::new("notes://all", "all").mime_type("text/plain").size(12);
//! assert_eq!(resource.size, Some(12));
//!
//! let prompt = Prompt::new("summarize")
//!     .description("Summarize a note")
//!     .argument(PromptArgument::new("id").required(true));
//! assert_eq!(prompt.arguments.unwrap()[0].required, Some(true));
//!
//! let image = ContentBlock::image("aGk=", "image/png");
//! assert_eq!(image.kind(), "image");
//! ```

use super::common::{Icon, IconTheme, Role};
use super::content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
};
use super::meta::{JsonObject, Meta};
use super::prompts::{Prompt, PromptArgument, PromptMessage};
use super::resources::{Resource, ResourceTemplate};
use super::tools::{TaskSupport, Tool, ToolAnnotations, ToolExecution};

/// Setters of one optional member each, for the types that have it.
macro_rules! setters {
    ($ty:ty { $($member:ident: $value:ty => $doc:literal),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = $doc]
                #[must_use]
                pub fn $member(mut self, $member: impl Into<$value>) -> Self {
                    self.$member = Some($member.into());
                    self
                }
            )*
        }
    };
}

/// `icon` (appends) and `meta` (replaces), for the types that carry them.
macro_rules! icons_and_meta {
    ($($ty:ty),*) => {
        $(
            impl $ty {
                /// Add an icon (from 2025-11-25).
                #[must_use]
                pub fn icon(mut self, icon: Icon) -> Self {
                    self.icons.get_or_insert_with(Vec::new).push(icon);
                    self
                }

                /// Set `_meta`.
                #[must_use]
                pub fn meta(mut self, meta: Meta) -> Self {
                    self.meta = Some(meta);
                    self
                }
            }
        )*
    };
}

setters!(Tool {
    title: String => "Set the display name (`title`, from 2025-06-18).",
    description: String => "Set the description the model reads.",
    output_schema: JsonObject => "Set the JSON Schema of `structuredContent` (from 2025-06-18).",
    annotations: ToolAnnotations => "Set the behaviour hints (from 2025-03-26).",
});

setters!(ToolAnnotations {
    title: String => "Set the display name.",
});

setters!(Resource {
    title: String => "Set the display name (from 2025-06-18).",
    description: String => "Set the description.",
    mime_type: String => "Set the MIME type.",
});

impl Resource {
    /// Set the size in bytes. (A `u64` itself, not `impl Into<u64>`: an integer literal
    /// then needs no suffix.)
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

setters!(ResourceTemplate {
    title: String => "Set the display name (from 2025-06-18).",
    description: String => "Set the description.",
    mime_type: String => "Set the MIME type of every resource the template matches.",
});

setters!(Prompt {
    title: String => "Set the display name (from 2025-06-18).",
    description: String => "Set the description.",
});

setters!(PromptArgument {
    title: String => "Set the display name (from 2025-06-18).",
    description: String => "Set the description.",
    required: bool => "Set whether the argument must be given.",
});

setters!(Icon {
    mime_type: String => "Set the MIME type (when `src` does not tell).",
    theme: IconTheme => "Set the theme the icon is meant for.",
});

icons_and_meta!(Tool, Resource, ResourceTemplate, Prompt);

impl Tool {
    /// Set the input schema (a server derives it from the arguments' type).
    #[must_use]
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.input_schema = schema;
        self
    }

    /// Set whether the tool can, must or must not run as a task (2025-11-25).
    #[must_use]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.execution = Some(ToolExecution {
            task_support: Some(support),
        });
        self
    }
}

impl ToolAnnotations {
    /// No hints (each is unset: clients assume the spec's defaults).
    pub fn new() -> Self {
        Self::default()
    }

    /// Set whether the tool leaves its environment unchanged (`readOnlyHint`).
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only_hint = Some(read_only);
        self
    }

    /// Set whether the tool may destroy data (`destructiveHint`).
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive_hint = Some(destructive);
        self
    }

    /// Set whether calling twice with the same arguments has no further effect
    /// (`idempotentHint`).
    #[must_use]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent_hint = Some(idempotent);
        self
    }

    /// Set whether the tool reaches an open world such as the web (`openWorldHint`).
    #[must_use]
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world_hint = Some(open_world);
        self
    }
}

impl Resource {
    /// A resource with its URI and programmatic name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            ..Default::default()
        }
    }
}

impl ResourceTemplate {
    /// A template with its RFC 6570 URI template and programmatic name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..Default::default()
        }
    }
}

impl Prompt {
    /// A prompt with its programmatic name (a server derives its arguments from the
    /// arguments' type).
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Add a declared argument.
    #[must_use]
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }
}

impl PromptArgument {
    /// An argument with its name (optional unless [`required`](Self::required)).
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            ..Default::default()
        }
    }
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

impl Icon {
    /// An icon at `src` (an `https:` or `data:` URI).
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            ..Default::default()
        }
    }

    /// Add a size it is drawn at (`"48x48"`, `"any"`).
    #[must_use]
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.get_or_insert_with(Vec::new).push(size.into());
        self
    }
}

impl ContentBlock {
    /// An image: base64 `data` of type `mime_type`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// Audio: base64 `data` of type `mime_type` (from 2025-03-26).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// A link to a resource the client may read (from 2025-06-18).
    pub fn resource_link(resource: Resource) -> Self {
        ContentBlock::ResourceLink(ResourceLink {
            uri: resource.uri,
            name: resource.name,
            title: resource.title,
            description: resource.description,
            mime_type: resource.mime_type,
            size: resource.size,
            icons: resource.icons,
            annotations: resource.annotations,
            meta: resource.meta,
        })
    }

    /// A resource's contents, embedded.
    pub fn embedded(contents: ResourceContents) -> Self {
        ContentBlock::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}
