//! Human output of each result: tables for lists, text printed, images, audio and binary
//! resources saved to files (`<name>-<n>.<ext>` in `--out DIR` or the current directory)
//! and named, structured content as pretty JSON.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferry::client::Client;
use ferry::protocol::Era;
use ferry::protocol::types::{
    CallToolResult, CompleteResult, ContentBlock, DiscoverResult, GetPromptResult, Prompt,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, Tool,
};
use serde_json::Value;

use super::output::{note, out, summary, table};

/// Saves binary content as `<stem>-<n>.<ext>`, overwriting; remembers a failure.
pub(crate) struct Saver {
    dir: PathBuf,
    stem: String,
    count: usize,
    /// Whether a file could not be written (the command then exits 1).
    pub(crate) failed: bool,
}

impl Saver {
    /// Files named after `stem` (a tool, prompt or resource name) in `dir`.
    pub(crate) fn new(dir: Option<&Path>, stem: &str) -> Saver {
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Saver {
            dir: dir.map_or_else(PathBuf::new, Path::to_path_buf),
            stem: if stem.is_empty() {
                "content".into()
            } else {
                stem
            },
            count: 0,
            failed: false,
        }
    }

    /// Decode `base64` and write it; print what was saved where.
    fn save(&mut self, what: &str, base64: &str, mime: Option<&str>) {
        let bytes = match STANDARD.decode(base64.trim()) {
            Ok(bytes) => bytes,
            Err(e) => {
                note(&format!("ferry: {what}: invalid base64 data: {e}"));
                self.failed = true;
                return;
            }
        };
        self.count += 1;
        let name = format!("{}-{}.{}", self.stem, self.count, extension(mime));
        let path = self.dir.join(name);
        let written = if self.dir.as_os_str().is_empty() {
            Ok(())
        } else {
            std::fs::create_dir_all(&self.dir)
        }
        .and_then(|()| std::fs::write(&path, &bytes));
        match written {
            Ok(()) => out(&format!(
                "{what} saved to {} ({}, {} bytes)",
                path.display(),
                mime.unwrap_or("unknown type"),
                bytes.len()
            )),
            Err(e) => {
                note(&format!("ferry: cannot write {}: {e}", path.display()));
                self.failed = true;
            }
        }
    }
}

fn extension(mime: Option<&str>) -> &'static str {
    let mime = mime.unwrap_or_default();
    let essence = mime.split(';').next().unwrap_or_default().trim();
    match essence {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/json" => "json",
        _ if essence.starts_with("text/") => "txt",
        _ => "bin",
    }
}

pub(crate) fn tools(tools: &[Tool]) {
    let rows = tools
        .iter()
        .map(|t| {
            let title = t
                .title
                .as_deref()
                .or_else(|| t.annotations.as_ref().and_then(|a| a.title.as_deref()));
            vec![t.name.clone(), summary(title, t.description.as_deref())]
        })
        .collect();
    table(&["NAME", "DESCRIPTION"], rows, "(no tools)");
}

pub(crate) fn resources(resources: &[Resource]) {
    let rows = resources
        .iter()
        .map(|r| {
            vec![
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                summary(r.title.as_deref(), r.description.as_deref()),
            ]
        })
        .collect();
    table(
        &["URI", "NAME", "TYPE", "DESCRIPTION"],
        rows,
        "(no resources)",
    );
}

pub(crate) fn templates(templates: &[ResourceTemplate]) {
    let rows = templates
        .iter()
        .map(|t| {
            vec![
                t.uri_template.clone(),
                t.name.clone(),
                summary(t.title.as_deref(), t.description.as_deref()),
            ]
        })
        .collect();
    table(
        &["URI TEMPLATE", "NAME", "DESCRIPTION"],
        rows,
        "(no resource templates)",
    );
}

pub(crate) fn prompts(prompts: &[Prompt]) {
    let rows = prompts
        .iter()
        .map(|p| {
            let arguments: Vec<String> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    let optional = if a.required == Some(true) { "" } else { "?" };
                    format!("{}{optional}", a.name)
                })
                .collect();
            vec![
                p.name.clone(),
                arguments.join(" "),
                summary(p.title.as_deref(), p.description.as_deref()),
            ]
        })
        .collect();
    table(&["NAME", "ARGUMENTS", "DESCRIPTION"], rows, "(no prompts)");
}

/// A tool's result. Text blocks that repeat the structured content (as servers do for
/// older clients) are not printed twice.
pub(crate) fn call(result: &CallToolResult, saver: &mut Saver) {
    let structured = result.structured_content.as_ref();
    for block in &result.content {
        if let (ContentBlock::Text(text), Some(structured)) = (block, structured)
            && serde_json::from_str::<serde_json::Value>(&text.text)
                .ok()
                .as_ref()
                == Some(structured)
        {
            continue;
        }
        content(block, saver);
    }
    if let Some(structured) = structured {
        super::output::json(structured);
    }
}

/// One content block.
pub(crate) fn content(block: &ContentBlock, saver: &mut Saver) {
    match block {
        ContentBlock::Text(text) => out(&text.text),
        ContentBlock::Image(image) => saver.save("image", &image.data, Some(&image.mime_type)),
        ContentBlock::Audio(audio) => saver.save("audio", &audio.data, Some(&audio.mime_type)),
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("link: {} ({}", link.uri, link.name);
            if let Some(mime) = &link.mime_type {
                line.push_str(&format!(", {mime}"));
            }
            line.push(')');
            if let Some(description) = &link.description {
                line.push_str(&format!(" — {description}"));
            }
            out(&line);
        }
        ContentBlock::Resource(embedded) => resource(&embedded.resource, saver, true),
        other => super::output::json(other),
    }
}

/// One resource's contents; `header` names it first.
fn resource(contents: &ResourceContents, saver: &mut Saver, header: bool) {
    match contents {
        ResourceContents::Text(text) => {
            if header {
                let mime = text.mime_type.as_deref().unwrap_or("text");
                out(&format!("resource {} ({mime}):", text.uri));
            }
            out(&text.text);
        }
        ResourceContents::Blob(blob) => {
            let what = format!("resource {}", blob.uri);
            saver.save(&what, &blob.blob, blob.mime_type.as_deref());
        }
    }
}

/// `resources/read`: one content alone is printed as is; several are each named first.
pub(crate) fn read(result: &ReadResourceResult, saver: &mut Saver) {
    let several = result.contents.len() > 1;
    for contents in &result.contents {
        resource(contents, saver, several);
    }
}

/// `prompts/get`: the description, then each message after its role.
pub(crate) fn prompt(result: &GetPromptResult, saver: &mut Saver) {
    if let Some(description) = &result.description {
        out(&format!("# {description}"));
    }
    for message in &result.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out(&format!("[{role}]"));
        content(&message.content, saver);
    }
}

/// `completion/complete`: one value per line; how many more there are on stderr.
pub(crate) fn completion(result: &CompleteResult) {
    let completion = &result.completion;
    if !completion.values.is_empty() {
        out(&completion.values.join("\n"));
    }
    let shown = completion.values.len() as u64;
    match completion.total {
        Some(total) if total > shown => note(&format!("({} more)", total - shown)),
        _ if completion.has_more == Some(true) => note("(more available)"),
        _ => {}
    }
}

/// `ping`: who answered, how fast.
pub(crate) fn pong(client: &Client, elapsed: Duration) {
    let from = client
        .server_info()
        .map(|i| format!(" from {} {}", i.name, i.version))
        .unwrap_or_default();
    out(&format!(
        "pong{from} in {:.1} ms",
        elapsed.as_secs_f64() * 1000.0
    ));
}

/// `discover`: the server's identity, revision, capabilities and instructions.
pub(crate) fn discovered(client: &Client, discovered: Option<&DiscoverResult>) {
    let mut lines = Vec::new();
    if let Some(info) = client.server_info() {
        let title = info
            .title
            .as_deref()
            .map(|t| format!(" — {t}"))
            .unwrap_or_default();
        lines.push(format!(
            "server:        {} {}{title}",
            info.name, info.version
        ));
    }
    let era = match client.era() {
        Era::Session => "session era",
        Era::Stateless => "stateless era",
    };
    lines.push(format!(
        "protocol:      {} ({era})",
        client.version().as_str()
    ));
    if let Some(discovered) = discovered {
        lines.push(format!(
            "supported:     {}",
            discovered.supported_versions.join(", ")
        ));
    }
    let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
    lines.push(format!("capabilities:  {}", features(&capabilities)));
    if let Some(instructions) = client.instructions() {
        lines.push(format!("instructions:  {instructions}"));
    }
    out(&lines.join("\n"));
}

/// `tools (listChanged), resources (subscribe, listChanged), logging`.
fn features(capabilities: &Value) -> String {
    let Some(object) = capabilities.as_object() else {
        return "none".into();
    };
    let names: Vec<String> = object
        .iter()
        .map(|(name, value)| {
            let flags: Vec<&str> = value
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, v)| v.as_bool() == Some(true))
                        .map(|(k, _)| k.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
