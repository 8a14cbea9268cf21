//! The servers people have already configured in their MCP hosts — Claude Code, Claude
//! Desktop, Cursor, VS Code — found by name (`--server NAME`, `-- @NAME`), listed (`ferry
//! servers`) and added to (`ferry install`).
//!
//! Where each host keeps its file, per operating system, is [`location`]; the search
//! order is [`search_order`]: `--config FILE` first, then the project's files (the project
//! being the nearest directory up from the current one with a host's project file or a
//! `.git`), then the user's; the first file naming the server wins. Entries are read
//! the way their hosts read them: `type` stdio, http or sse (or none: `command` is stdio,
//! `url` HTTP), `command`, `args`, `env`, `envFile`, `cwd`, `url`, `headers`, with the
//! variables of [`vars`] expanded when the entry is used.

pub(crate) mod install;
pub(crate) mod servers;
mod vars;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub(crate) use vars::Vars;

/// An MCP host whose configuration files Ferry reads and writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub(crate) enum Host {
    /// Claude Code: `.mcp.json` in the project, `~/.claude.json` for the user.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json` in its configuration directory.
    ClaudeDesktop,
    /// Cursor: `.cursor/mcp.json` in the project and in the home directory.
    Cursor,
    /// VS Code: `.vscode/mcp.json` in the project, `mcp.json` of the user's profile.
    Vscode,
}

impl Host {
    /// The name `--host` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::ClaudeDesktop => "claude-desktop",
            Host::Cursor => "cursor",
            Host::Vscode => "vscode",
        }
    }

    /// The key of the servers object in the host's files.
    fn key(self) -> &'static str {
        match self {
            Host::Vscode => "servers",
            _ => "mcpServers",
        }
    }
}

/// Which of a host's files.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub(crate) enum Scope {
    /// The project's file, at the project's root (shared with the project).
    Project,
    /// The user's file, for every project.
    User,
    /// Claude Code only: this project's private entries in `~/.claude.json`.
    Local,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Local => "local",
        }
    }
}

/// The directories the hosts' files are found from.
pub(crate) struct Places {
    /// The project: the nearest directory up from the current one (below the home
    /// directory) holding a host's project file or `.git`; the current directory if none.
    pub(crate) project: PathBuf,
    /// `$HOME` (`%USERPROFILE%` on Windows).
    pub(crate) home: Option<PathBuf>,
    /// Where applications keep their settings: `$XDG_CONFIG_HOME` or `~/.config` on
    /// Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    pub(crate) app_data: Option<PathBuf>,
}

impl Places {
    /// The places of this process's environment.
    pub(crate) fn from_env() -> Result<Places, String> {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot tell the current directory: {e}"))?;
        let home = env_path(if cfg!(windows) { "USERPROFILE" } else { "HOME" });
        let app_data = if cfg!(target_os = "macos") {
            home.as_ref()
                .map(|h| h.join("Library").join("Application Support"))
        } else if cfg!(windows) {
            env_path("APPDATA")
        } else {
            env_path("XDG_CONFIG_HOME")
                .filter(|p| p.is_absolute())
                .or_else(|| home.as_ref().map(|h| h.join(".config")))
        };
        Ok(Places {
            project: project_of(&cwd, home.as_deref()),
            home,
            app_data,
        })
    }

    /// The variables of entries found from here.
    pub(crate) fn vars(&self) -> Vars {
        Vars {
            workspace: self.project.clone(),
            home: self.home.clone(),
        }
    }
}

/// The project `cwd` is in: the nearest directory up from it, the home directory and
/// those above it excluded (`~/.cursor/mcp.json` is Cursor's user file, not a project's),
/// that holds a host's project file or a `.git`, as the hosts take the root of the
/// repository or folder opened; `cwd` itself when there is none.
fn project_of(cwd: &Path, home: Option<&Path>) -> PathBuf {
    const MARKERS: [&str; 4] = [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json", ".git"];
    cwd.ancestors()
        .take_while(|dir| Some(*dir) != home && home.is_none_or(|h| !h.starts_with(dir)))
        .find(|dir| MARKERS.iter().any(|marker| dir.join(marker).exists()))
        .unwrap_or(cwd)
        .to_path_buf()
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where a file keeps its servers.
#[derive(Clone, Debug)]
pub(crate) enum Section {
    /// A top-level key: `mcpServers`, or VS Code's `servers`.
    Key(&'static str),
    /// Claude Code's local scope: `projects[DIR].mcpServers` of `~/.claude.json`.
    Project(String),
    /// A file given with `--config`: `mcpServers` or `servers`, whichever it has.
    Either,
}

/// A host's file, or a file given with `--config`.
#[derive(Clone, Debug)]
pub(crate) struct HostFile {
    /// `None` for a file given with `--config`.
    pub(crate) host: Option<Host>,
    /// `None` for a file given with `--config`.
    pub(crate) scope: Option<Scope>,
    pub(crate) path: PathBuf,
    pub(crate) section: Section,
}

impl HostFile {
    /// A file given with `--config`, read in whichever shape it has.
    pub(crate) fn given(path: &Path) -> HostFile {
        HostFile {
            host: None,
            scope: None,
            path: path.to_owned(),
            section: Section::Either,
        }
    }

    /// `claude-code, project`, or `--config`.
    pub(crate) fn label(&self) -> String {
        match (self.host, self.scope) {
            (Some(host), Some(scope)) => format!("{}, {}", host.name(), scope.name()),
            (Some(host), None) => host.name().to_owned(),
            _ => "--config".to_owned(),
        }
    }

    /// The servers of the file's parsed contents, in the file's order.
    pub(crate) fn entries(&self, root: &Value) -> Result<Vec<(String, Value)>, String> {
        let root = match root {
            // An empty file.
            Value::Null => return Ok(Vec::new()),
            Value::Object(root) => root,
            _ => return Err(format!("{} is not a JSON object", self.path.display())),
        };
        let objects: Vec<(String, Option<&Value>)> = match &self.section {
            Section::Key(key) => vec![((*key).to_owned(), root.get(*key))],
            Section::Project(dir) => vec![(
                format!("projects[{dir:?}].mcpServers"),
                root.get("projects")
                    .and_then(|p| p.get(dir))
                    .and_then(|p| p.get("mcpServers")),
            )],
            Section::Either => ["mcpServers", "servers"]
                .into_iter()
                .map(|key| (key.to_owned(), root.get(key)))
                .collect(),
        };
        let mut entries = Vec::new();
        for (key, object) in objects {
            match object {
                None | Some(Value::Null) => {}
                Some(Value::Object(servers)) => {
                    entries.extend(servers.iter().map(|(n, v)| (n.clone(), v.clone())));
                }
                Some(_) => {
                    return Err(format!("{}: {key} is not an object", self.path.display()));
                }
            }
        }
        Ok(entries)
    }
}

/// The file of `host` for `scope`.
pub(crate) fn location(host: Host, scope: Scope, places: &Places) -> Result<HostFile, String> {
    let home = || {
        places.home.clone().ok_or_else(|| {
            format!(
                "no home directory (${}) to find the user's file of {}",
                if cfg!(windows) { "USERPROFILE" } else { "HOME" },
                host.name()
            )
        })
    };
    let app_data = || {
        places
            .app_data
            .clone()
            .ok_or_else(|| format!("no settings directory to find the file of {}", host.name()))
    };
    let (path, section) = match (host, scope) {
        (Host::ClaudeCode, Scope::Project) => (places.project.join(".mcp.json"), None),
        (Host::ClaudeCode, Scope::User) => (home()?.join(".claude.json"), None),
        (Host::ClaudeCode, Scope::Local) => (
            home()?.join(".claude.json"),
            Some(Section::Project(
                places.project.to_string_lossy().into_owned(),
            )),
        ),
        (Host::ClaudeDesktop, Scope::User) => (
            app_data()?
                .join("Claude")
                .join("claude_desktop_config.json"),
            None,
        ),
        (Host::Cursor, Scope::Project) => (places.project.join(".cursor").join("mcp.json"), None),
        (Host::Cursor, Scope::User) => (home()?.join(".cursor").join("mcp.json"), None),
        (Host::Vscode, Scope::Project) => (places.project.join(".vscode").join("mcp.json"), None),
        (Host::Vscode, Scope::User) => {
            (app_data()?.join("Code").join("User").join("mcp.json"), None)
        }
        (Host::ClaudeDesktop, _) => {
            return Err("Claude Desktop has one file, the user's: --scope user".into());
        }
        (_, Scope::Local) => {
            return Err(format!(
                "--scope local is Claude Code's; {} has project and user",
                host.name()
            ));
        }
    };
    Ok(HostFile {
        host: Some(host),
        scope: Some(scope),
        path,
        section: section.unwrap_or(Section::Key(host.key())),
    })
}

/// The project's files, then the user's, in the order they are searched (Claude Code's
/// local scope first, as Claude Code itself prefers it to the project's file).
const ORDER: [(Host, Scope); 8] = [
    (Host::ClaudeCode, Scope::Local),
    (Host::ClaudeCode, Scope::Project),
    (Host::Cursor, Scope::Project),
    (Host::Vscode, Scope::Project),
    (Host::ClaudeCode, Scope::User),
    (Host::ClaudeDesktop, Scope::User),
    (Host::Cursor, Scope::User),
    (Host::Vscode, Scope::User),
];

/// Every file searched, in order: `config` first, then the project's, then the user's
/// (those that cannot be located, for want of a home directory, left out).
pub(crate) fn search_order(places: &Places, config: Option<&Path>) -> Vec<HostFile> {
    config
        .map(HostFile::given)
        .into_iter()
        .chain(
            ORDER
                .iter()
                .filter_map(|(host, scope)| location(*host, *scope, places).ok()),
        )
        .collect()
}

/// Parse JSON or JSONC (comments, trailing commas) text.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    jsonc_parser::parse_to_serde_value::<Value>(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| e.to_string())
}

/// Reads files once each (`~/.claude.json` holds two scopes).
#[derive(Default)]
pub(crate) struct Reader {
    read: HashMap<PathBuf, Result<Option<Value>, String>>,
}

impl Reader {
    /// The parsed contents of `path`; `None` when there is no such file.
    pub(crate) fn read(&mut self, path: &Path) -> Result<Option<Value>, String> {
        self.read
            .entry(path.to_owned())
            .or_insert_with(|| match std::fs::read_to_string(path) {
                Ok(text) => parse(&text)
                    .map(Some)
                    .map_err(|e| format!("{} is not valid JSON: {e}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            })
            .clone()
    }
}

/// How a server is reached.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Stdio,
    Http,
    /// The 2024-11-05 HTTP+SSE transport.
    Sse,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Stdio => "stdio",
            Kind::Http => "http",
            Kind::Sse => "sse",
        }
    }
}

/// The kind of an entry: its `type`, else stdio for a `command`, HTTP for a `url`.
pub(crate) fn kind(entry: &Value) -> Result<Kind, String> {
    let Some(object) = entry.as_object() else {
        return Err("the entry is not a JSON object".into());
    };
    match object.get("type") {
        Some(Value::String(kind)) => match kind.as_str() {
            "stdio" => Ok(Kind::Stdio),
            "http" | "streamable-http" | "streamableHttp" => Ok(Kind::Http),
            "sse" => Ok(Kind::Sse),
            other => Err(format!("unknown type {other:?} (stdio, http or sse)")),
        },
        Some(other) => Err(format!("its type is {other}, not a string")),
        None if object.contains_key("command") => Ok(Kind::Stdio),
        None if object.contains_key("url") => Ok(Kind::Http),
        None => Err("it has neither a command nor a url".into()),
    }
}

/// What a named server is, its variables expanded.
#[derive(Clone, Debug)]
pub(crate) enum Spec {
    /// Run `command` (the program, then its arguments) with `env` added to this process's
    /// environment, in `cwd` if given.
    Stdio {
        command: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    /// Connect to `url` sending `headers` (an sse entry too: the HTTP client finds the
    /// 2024-11-05 HTTP+SSE transport when its POST is refused).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A server found by name.
pub(crate) struct Found {
    pub(crate) file: HostFile,
    pub(crate) kind: Kind,
    pub(crate) spec: Spec,
    /// The era the entry says its server speaks (see [`era`]).
    pub(crate) era: Option<ferry::protocol::Era>,
}

/// The key of Ferry's own settings in a host's entry: an object the hosts ignore (their
/// schemas name the keys they need and pass over others).
pub(crate) const FERRY_KEY: &str = "x-ferry";

/// The era an entry says its server speaks, `"x-ferry": {"era": "session"}` (or
/// `"stateless"`): the client then connects in that era without probing `server/discover`.
pub(crate) fn era(entry: &Value) -> Result<Option<ferry::protocol::Era>, String> {
    let Some(settings) = entry.get(FERRY_KEY) else {
        return Ok(None);
    };
    let Some(settings) = settings.as_object() else {
        return Err(format!("{FERRY_KEY} is not an object"));
    };
    match settings.get("era") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(era)) => match era.as_str() {
            "session" => Ok(Some(ferry::protocol::Era::Session)),
            "stateless" => Ok(Some(ferry::protocol::Era::Stateless)),
            other => Err(format!(
                "{FERRY_KEY}.era is {other:?}: session or stateless"
            )),
        },
        Some(other) => Err(format!("{FERRY_KEY}.era is {other}, not a string")),
    }
}

/// Find the server `name`: in `config` first, then in the project's files, then in the
/// user's. A host's file that cannot be read is skipped (and named if the server is not
/// found); `config` must be readable.
pub(crate) fn find(name: &str, config: Option<&Path>) -> Result<Found, String> {
    let places = Places::from_env()?;
    let files = search_order(&places, config);
    let mut reader = Reader::default();
    let mut looked = Vec::new();
    for file in &files {
        let given = file.host.is_none();
        let entries = match reader.read(&file.path) {
            Ok(Some(root)) => file.entries(&root),
            Ok(None) if given => {
                return Err(format!("--config {}: no such file", file.path.display()));
            }
            Ok(None) => {
                looked.push(format!(
                    "  {} ({}; none)",
                    file.path.display(),
                    file.label()
                ));
                continue;
            }
            Err(e) => Err(e),
        };
        let entries = match entries {
            Ok(entries) => entries,
            Err(e) if given => return Err(e),
            Err(e) => {
                looked.push(format!(
                    "  {} ({}; skipped: {e})",
                    file.path.display(),
                    file.label()
                ));
                continue;
            }
        };
        looked.push(format!("  {} ({})", file.path.display(), file.label()));
        let Some((_, entry)) = entries.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let context = |e: String| format!("server {name:?} in {}: {e}", file.path.display());
        let kind = kind(entry).map_err(context)?;
        let spec = spec(entry, kind, &places.vars()).map_err(context)?;
        let era = era(entry).map_err(context)?;
        return Ok(Found {
            file: file.clone(),
            kind,
            spec,
            era,
        });
    }
    Err(format!(
        "no server named {name:?} in the hosts' files (`ferry servers` lists them); looked in:\n{}",
        looked.join("\n")
    ))
}

/// The entry's command line or URL as written (variables not expanded), for lists.
pub(crate) fn target_text(entry: &Value) -> Vec<String> {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return vec![url.to_owned()];
    }
    let command = entry.get("command").and_then(Value::as_str);
    let args = entry.get("args").and_then(Value::as_array);
    command
        .into_iter()
        .map(str::to_owned)
        .chain(args.into_iter().flatten().map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }))
        .collect()
}

/// The entry as a [`Spec`], its variables expanded.
fn spec(entry: &Value, kind: Kind, vars: &Vars) -> Result<Spec, String> {
    let object = entry.as_object().cloned().unwrap_or_default();
    let expand = |text: &str| vars.expand(text);
    match kind {
        Kind::Stdio => {
            let command = string(&object, "command")?.ok_or("a stdio server needs a command")?;
            let mut line = vec![expand(command)?];
            match object.get("args") {
                None | Some(Value::Null) => {}
                Some(Value::Array(args)) => {
                    for arg in args {
                        line.push(expand(&scalar(arg).ok_or("args holds a non-string")?)?);
                    }
                }
                Some(_) => return Err("args is not an array".into()),
            }
            let cwd = string(&object, "cwd")?
                .map(|dir| expand(dir).map(|dir| vars.workspace.join(dir)))
                .transpose()?;
            let mut env = Vec::new();
            if let Some(file) = string(&object, "envFile")? {
                let path = vars.workspace.join(expand(file)?);
                env.extend(env_file(&path)?);
            }
            for (key, value) in map(&object, "env")? {
                env.push((key, expand(&value)?));
            }
            Ok(Spec::Stdio {
                command: line,
                env,
                cwd,
            })
        }
        Kind::Http | Kind::Sse => {
            let url = string(&object, "url")?.ok_or("an HTTP server needs a url")?;
            let headers = map(&object, "headers")?
                .into_iter()
                .map(|(name, value)| Ok((name, expand(&value)?)))
                .collect::<Result<_, String>>()?;
            Ok(Spec::Http {
                url: expand(url)?,
                headers,
            })
        }
    }
}

fn string<'a>(object: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key} is not a string")),
    }
}

/// A string, number or boolean as text.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(value.to_string()),
        _ => None,
    }
}

/// An object of strings (`env`, `headers`), in order.
fn map(object: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(values)) => values
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| format!("{key}.{k} is not a string"))
            })
            .collect(),
        Some(_) => Err(format!("{key} is not an object")),
    }
}

/// The variables of an `envFile`: `KEY=VALUE` lines (`export ` allowed, values may be
/// quoted), `#` comments and blank lines skipped.
fn env_file(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("envFile {}: {e}", path.display()))?;
    let mut vars = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "envFile {}: {line:?} is not KEY=VALUE",
                path.display()
            ));
        };
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        vars.push((key.trim().to_owned(), unquoted.to_owned()));
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::project_of;

    /// The walk up stops below the home directory, whose `.cursor/mcp.json` is Cursor's
    /// user file: a directory under home with no project marker is its own project.
    #[test]
    fn the_project_is_found_below_home_only() {
        let root = std::env::temp_dir().join(format!("ferry-project-of-{}", std::process::id()));
        let home = root.join("home");
        let repo = home.join("code").join("repo");
        let deep = repo.join("src").join("deep");
        let loose = home.join("notes").join("today");
        for dir in [&home.join(".cursor"), &repo.join(".git"), &deep, &loose] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".cursor").join("mcp.json"), "{}").unwrap();
        assert_eq!(project_of(&deep, Some(&home)), repo);
        assert_eq!(project_of(&repo, Some(&home)), repo);
        assert_eq!(project_of(&loose, Some(&home)), loose);
        assert_eq!(project_of(&home, Some(&home)), home);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
