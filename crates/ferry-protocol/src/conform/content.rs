//! Content blocks, resource contents and sampling content.

use super::*;

macro_rules! conform_content_struct {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                keep_if!(v >= V2025_06_18, self.meta);
                self.annotations.conform(v)
            }
        }
    )*};
}
conform_content_struct!(TextContent, ImageContent, AudioContent, EmbeddedResource);

impl Conform for ResourceLink {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::ResourceLinks) {
            return reject("resource_link content", v);
        }
        keep_if!(v.has(Feature::Icons), self.icons);
        self.annotations.conform(v)
    }
}

impl Conform for ResourceContents {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        let meta = match self {
            ResourceContents::Text(t) => &mut t.meta,
            ResourceContents::Blob(b) => &mut b.meta,
        };
        keep_if!(v >= V2025_06_18, *meta);
        Ok(())
    }
}

impl Conform for ContentBlock {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            ContentBlock::Text(c) => c.conform(v),
            ContentBlock::Image(c) => c.conform(v),
            ContentBlock::Audio(_) if !v.has(Feature::AudioContent) => reject("audio content", v),
            ContentBlock::Audio(c) => c.conform(v),
            ContentBlock::ResourceLink(c) => c.conform(v),
            ContentBlock::Resource(c) => {
                c.resource.conform(v)?;
                c.conform(v)
            }
        }
    }
}

impl Conform for SamplingContent {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            SamplingContent::Text(c) => c.conform(v),
            SamplingContent::Image(c) => c.conform(v),
            SamplingContent::Audio(_) if !v.has(Feature::AudioContent) => {
                reject("audio content", v)
            }
            SamplingContent::Audio(c) => c.conform(v),
            SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_)
                if !v.has(Feature::SamplingTools) =>
            {
                reject("tool use in sampling", v)
            }
            SamplingContent::ToolUse(_) => Ok(()),
            SamplingContent::ToolResult(c) => {
                if let Some(structured) = &c.structured_content
                    && !structured.is_object()
                    && v < V2026_07_28
                {
                    return reject("non-object structuredContent", v);
                }
                c.content.conform(v)
            }
        }
    }
}

impl Conform for SamplingContents {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if let SamplingContents::Many(blocks) = self
            && !v.has(Feature::SamplingTools)
        {
            match blocks.len() {
                1 => *self = SamplingContents::One(blocks.remove(0)),
                _ => return reject("several content blocks in one sampling message", v),
            }
        }
        match self {
            SamplingContents::One(block) => block.conform(v),
            SamplingContents::Many(blocks) => blocks.conform(v),
        }
    }
}
