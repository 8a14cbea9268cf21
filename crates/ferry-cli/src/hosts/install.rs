//! `ferry install NAME`: add a server to a host's file, in that host's shape. The file is
//! edited through its concrete syntax tree (`jsonc-parser`): its formatting, comments and
//! other entries stay as they were; the file as it was is kept as `FILE.bak`; a missing
//! file (and its directory) is created. An entry of the same name is left alone when it is
//! the same, and replaced only with `--force` when it is not.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgGroup, Args};
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::{Map, Value, json};

use super::{Host, HostFile, Places, Scope, Section, location, parse};
use crate::client::output;

/// `ferry install`.
#[derive(Args)]
#[command(group(ArgGroup::new("target").required(true).args(["url", "command"])))]
pub(crate) struct InstallArgs {
    /// The server's name in the host's file.
    name: String,
    /// The host whose file to write (default: claude-code; with --config, vscode when the
    /// file has `servers`, else claude-code).
    #[arg(long, value_enum)]
    host: Option<Host>,
    /// Which of the host's files: project (at the project's root: the nearest directory up
    /// with a host's project file or .git, else the current one), user, or local
    /// (Claude Code's private entries for this project in ~/.claude.json). Default: project;
    /// user for Claude Desktop, which has no other.
    #[arg(long, value_enum)]
    scope: Option<Scope>,
    /// Write this file instead of the host's (in the host's shape).
    #[arg(long, value_name = "FILE", conflicts_with = "scope")]
    config: Option<PathBuf>,
    /// Replace an entry of the same name that differs.
    #[arg(long)]
    force: bool,
    /// An environment variable of the server's process (repeatable; stdio servers).
    #[arg(long = "env", value_name = "KEY=VALUE", conflicts_with = "url")]
    env: Vec<String>,
    /// A server over HTTP at this URL, instead of a command.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The server at --url speaks the 2024-11-05 HTTP+SSE transport (its URL is the SSE
    /// stream's, often /sse): written as `"type": "sse"` for the hosts that write a type.
    #[arg(long, requires = "url")]
    sse: bool,
    /// A header sent with every request, e.g. 'Authorization: Bearer x' (repeatable; with
    /// --url).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url", value_parser = crate::client::args::header)]
    headers: Vec<(String, String)>,
    /// The era the server speaks, written in the entry as `"x-ferry": {"era": ...}` (hosts
    /// ignore it): Ferry's client then connects without probing `server/discover` first.
    #[arg(long, value_enum)]
    era: Option<EraArg>,
    /// The command that runs the server on stdio: `-- command args...`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `--era`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub(crate) enum EraArg {
    /// 2024-11-05 .. 2025-11-25: `initialize` first.
    Session,
    /// 2026-07-28 onwards: no handshake.
    Stateless,
}

impl EraArg {
    fn name(self) -> &'static str {
        match self {
            EraArg::Session => "session",
            EraArg::Stateless => "stateless",
        }
    }
}

/// Run `ferry install`.
pub(crate) fn run(args: &InstallArgs) -> ExitCode {
    match install(args) {
        Ok(done) => {
            output::note(&format!("ferry: {done}"));
            ExitCode::SUCCESS
        }
        Err(Refusal::Usage(e)) => {
            output::note(&format!(
                "error: {e}\n\nFor more information, try '--help'."
            ));
            ExitCode::from(2)
        }
        Err(Refusal::Failed(e)) => {
            output::note(&format!("ferry: {e}"));
            ExitCode::FAILURE
        }
    }
}

enum Refusal {
    /// The command line asks for something impossible (exit 2).
    Usage(String),
    /// The file could not be changed, or holds another entry of that name (exit 1).
    Failed(String),
}

fn install(args: &InstallArgs) -> Result<String, Refusal> {
    let places = Places::from_env().map_err(Refusal::Failed)?;
    let file = match &args.config {
        Some(path) => {
            let host = match args.host {
                Some(host) => host,
                None => guess_host(path),
            };
            HostFile {
                host: Some(host),
                scope: None,
                path: path.clone(),
                section: Section::Key(host.key()),
            }
        }
        None => {
            let host = args.host.unwrap_or(Host::ClaudeCode);
            let scope = args.scope.unwrap_or(match host {
                Host::ClaudeDesktop => Scope::User,
                _ => Scope::Project,
            });
            location(host, scope, &places).map_err(Refusal::Usage)?
        }
    };
    let host = file.host.unwrap_or(Host::ClaudeCode);
    let entry = entry(host, args).map_err(Refusal::Usage)?;
    let path = &file.path;
    let label = file.label();
    let original = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Refusal::Failed(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let text = original.as_deref().unwrap_or_default();
    let invalid = |e: String| {
        Refusal::Failed(format!(
            "{} is not valid JSON ({e}); left unchanged",
            path.display()
        ))
    };
    // What the file holds under that name now, read as its host reads it.
    let current = parse(text).map_err(invalid)?;
    let existing = file
        .entries(&current)
        .map_err(|e| Refusal::Failed(format!("{e}; left unchanged")))?
        .into_iter()
        .find(|(n, _)| *n == args.name)
        .map(|(_, value)| value);
    let replacing = match existing {
        Some(existing) if existing == entry => {
            return Ok(format!(
                "{} is already in {} ({label}), the same; unchanged",
                args.name,
                path.display()
            ));
        }
        Some(existing) if !args.force => {
            return Err(Refusal::Failed(format!(
                "{} ({label}) already has a different server named {}: {existing}\n\
                 (--force replaces it with {entry})",
                path.display(),
                args.name
            )));
        }
        Some(_) => true,
        None => false,
    };
    let root = CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| invalid(e.to_string()))?;
    let servers = servers_object(&root, &file.section).map_err(Refusal::Failed)?;
    let value = input(&entry);
    match servers.get(&args.name) {
        Some(property) => property.set_value(value),
        None => {
            servers.append(&args.name, value);
        }
    }
    let mut edited = root.to_string();
    if !edited.ends_with('\n') {
        edited.push('\n');
    }
    let backup = write(path, original.is_some(), &edited).map_err(Refusal::Failed)?;
    let (verb, preposition) = if replacing {
        ("replaced", "in")
    } else {
        ("added", "to")
    };
    let mut done = format!(
        "{verb} {} {preposition} {} ({label})",
        args.name,
        path.display()
    );
    if let Some(backup) = backup {
        done.push_str(&format!("; the file as it was is {}", backup.display()));
    }
    Ok(done)
}

/// The host whose shape a `--config` file has: VS Code's when it has `servers`.
fn guess_host(path: &Path) -> Host {
    let has_servers = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| parse(&text).ok())
        .is_some_and(|root| root.get("servers").is_some());
    if has_servers {
        Host::Vscode
    } else {
        Host::ClaudeCode
    }
}

/// The entry in `host`'s shape: `type` for the hosts that write it (VS Code, Claude Code),
/// `env` and `headers` only when there are some; Ferry's own key last, with `--era`.
fn entry(host: Host, args: &InstallArgs) -> Result<Value, String> {
    let mut entry = host_entry(host, args)?;
    if let (Some(era), Value::Object(object)) = (args.era, &mut entry) {
        object.insert(super::FERRY_KEY.into(), json!({"era": era.name()}));
    }
    Ok(entry)
}

/// The entry as the host itself reads it.
fn host_entry(host: Host, args: &InstallArgs) -> Result<Value, String> {
    let typed = matches!(host, Host::Vscode | Host::ClaudeCode);
    let mut entry = Map::new();
    if let Some(url) = &args.url {
        if host == Host::ClaudeDesktop {
            return Err(format!(
                "Claude Desktop's file takes stdio servers only; put the HTTP server behind a \
                 stdio bridge instead: ferry install {} --host claude-desktop -- ferry bridge \
                 --stdio {url}",
                args.name
            ));
        }
        if typed {
            entry.insert("type".into(), json!(if args.sse { "sse" } else { "http" }));
        }
        entry.insert("url".into(), json!(url));
        if !args.headers.is_empty() {
            let headers: Map<String, Value> = args
                .headers
                .iter()
                .map(|(name, value)| (name.clone(), json!(value)))
                .collect();
            entry.insert("headers".into(), Value::Object(headers));
        }
        return Ok(Value::Object(entry));
    }
    let (command, arguments) = args
        .command
        .split_first()
        .ok_or("give the server's command after `--`, or --url")?;
    if typed {
        entry.insert("type".into(), json!("stdio"));
    }
    entry.insert("command".into(), json!(command));
    entry.insert("args".into(), json!(arguments));
    if !args.env.is_empty() {
        let mut env = Map::new();
        for item in &args.env {
            match item.split_once('=') {
                Some((key, value)) if !key.is_empty() => {
                    env.insert(key.to_owned(), json!(value));
                }
                _ => return Err(format!("--env: expected KEY=VALUE, got {item:?}")),
            }
        }
        entry.insert("env".into(), Value::Object(env));
    }
    Ok(Value::Object(entry))
}

/// The servers object of the file (created, with what leads to it, when missing).
fn servers_object(root: &CstRootNode, section: &Section) -> Result<CstObject, String> {
    let top = match root.value() {
        None => root.object_value_or_set(),
        Some(_) => root
            .object_value()
            .ok_or("the file is not a JSON object; left unchanged")?,
    };
    let path: Vec<&str> = match section {
        Section::Key(key) => vec![key],
        Section::Project(dir) => vec!["projects", dir, "mcpServers"],
        Section::Either => vec!["mcpServers"],
    };
    let mut object = top;
    for key in path {
        object = match object.get(key) {
            None => object.object_value_or_set(key),
            Some(property) => match property.value() {
                Some(value) if value.as_null_keyword().is_some() => property.object_value_or_set(),
                _ => property
                    .object_value()
                    .ok_or_else(|| format!("{key} is not an object; left unchanged"))?,
            },
        };
    }
    Ok(object)
}

/// A JSON value for the syntax tree.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(members) => CstInputValue::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), input(value)))
                .collect(),
        ),
    }
}

/// Write `text` to `path`: the file as it was copied to `FILE.bak` first (when it
/// `existed`); the new text written beside it and renamed over it, so that a host reading
/// the file never sees half of it; its permissions kept. Returns the backup's path.
fn write(path: &Path, existed: bool, text: &str) -> Result<Option<PathBuf>, String> {
    let shown = path.display();
    let sibling = |suffix: &str| {
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(suffix);
        path.with_file_name(name)
    };
    let backup = if existed {
        let backup = sibling(".bak");
        std::fs::copy(path, &backup).map_err(|e| {
            format!(
                "cannot keep a backup of {shown} in {}: {e}",
                backup.display()
            )
        })?;
        Some(backup)
    } else {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        None
    };
    let temporary = sibling(&format!(".ferry-{}.tmp", std::process::id()));
    let written = std::fs::write(&temporary, text).and_then(|()| {
        if existed {
            let permissions = std::fs::metadata(path)?.permissions();
            std::fs::set_permissions(&temporary, permissions)?;
        }
        std::fs::rename(&temporary, path)
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(format!("cannot write {shown}: {e}"));
    }
    Ok(backup)
}
