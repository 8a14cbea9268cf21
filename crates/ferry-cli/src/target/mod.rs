//! Which server a command talks to, named the same way by every command that talks to one
//! (the client commands, `check`, `inspect`, `replay`): one set of options ([`TargetArgs`],
//! flattened into each command, so the help reads the same everywhere) and one resolution
//! ([`TargetArgs::resolve`]).
//!
//! Nothing is the reference server, in this process; `-- command args...` a stdio server
//! run as a child; `--url URL` a Streamable HTTP server (a 2024-11-05 HTTP+SSE one is
//! detected too), `--header` adding headers and the authorization options its OAuth;
//! `--server NAME` (or `-- @NAME`) either, as a host's file says (see `hosts`), `--config
//! FILE` being looked in first. A child is waited for while it runs (see [`starting`]).

pub(crate) mod starting;

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};
use ferry::engine::ChildCommand;
use ferry::protocol::Era;
use serde_json::{Value, json};

use crate::client::args::header;
use crate::client::oauth::AuthArgs;
use crate::stderr::note;

/// The heading of the options naming the server, in every command's help.
pub(crate) const HEADING: &str = "Server (default: the reference server, in this process)";

/// How long a child is waited for when `--connect-timeout` is not given: it may be
/// building itself first (`cargo run`, `npx`).
pub(crate) const CHILD_CONNECT_TIMEOUT: Duration = Duration::from_secs(600);

/// The options naming the server.
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = HEADING)]
// The options that name an HTTP server: `--header` and the authorization options need one.
#[command(group(ArgGroup::new("remote").args(["url", "server_name"]).multiple(true)))]
pub(crate) struct TargetArgs {
    /// The server at this Streamable HTTP URL, e.g. http://127.0.0.1:8080/mcp (a 2024-11-05
    /// HTTP+SSE server's too, except for `ferry check`).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// Send this header with every HTTP request, e.g. 'Authorization: Bearer x'
    /// (repeatable; with --url, or --server naming an HTTP server: it replaces the entry's
    /// header of the same name).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "remote", conflicts_with = "command", value_parser = header)]
    headers: Vec<(String, String)>,
    /// A server configured in an MCP host's file (Claude Code, Claude Desktop, Cursor, VS
    /// Code), by its name there: `ferry servers` lists them. Also `-- @NAME`.
    #[arg(long = "server", value_name = "NAME", conflicts_with_all = ["url", "command"])]
    server_name: Option<String>,
    /// Look for the server named by --server (or `-- @NAME`) in this file first (any
    /// host's shape: `mcpServers` or `servers`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How long to wait for the server's first answer, in seconds. A command is waited for
    /// while it runs (it may be building itself: `cargo run`), saying so on stderr every
    /// 10 s, up to 600 s by default; its exit ends the wait at once. A URL: the request
    /// timeout.
    #[arg(long, value_name = "SECONDS", value_parser = crate::client::seconds)]
    connect_timeout: Option<Duration>,
    /// `-- command args...` runs the server as a child on stdio; `-- @NAME` is the server
    /// named NAME in a host's file.
    #[arg(last = true, value_name = "COMMAND", help_heading = HEADING)]
    command: Vec<String>,
    // Last: its options are listed under a heading of their own.
    #[command(flatten)]
    auth: AuthArgs,
}

/// A server as found: where it is and how to reach it.
#[derive(Clone, Debug)]
pub(crate) enum Endpoint {
    /// The reference server, in this process.
    InProcess,
    /// A command (the program, then its arguments) run as a child on stdio, with `env`
    /// added to this process's environment, in `cwd` if given.
    Stdio {
        command: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP (or 2024-11-05 HTTP+SSE) server and the headers sent to it.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// The server named by [`TargetArgs`], a named server's entry looked up.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) endpoint: Endpoint,
    /// The era a named server's entry gives (`"x-ferry": {"era": ...}`): no probe.
    pub(crate) era: Option<Era>,
    /// The authorization options (for an HTTP server).
    pub(crate) auth: AuthArgs,
    connect_timeout: Option<Duration>,
}

impl TargetArgs {
    /// The options naming a server the person named in the inspector's page: an HTTP URL
    /// with its headers, or a stdio command; the authorization options and the connect
    /// timeout stay.
    pub(crate) fn retarget(
        &self,
        url: Option<String>,
        headers: Vec<(String, String)>,
        command: Vec<String>,
    ) -> TargetArgs {
        TargetArgs {
            url,
            headers,
            command,
            server_name: None,
            config: None,
            ..self.clone()
        }
    }

    /// These options with `url` as `--url` (`ferry bridge --stdio URL`).
    pub(crate) fn with_url(&self, url: &str) -> TargetArgs {
        TargetArgs {
            url: Some(url.to_owned()),
            ..self.clone()
        }
    }

    /// Whether a server is named (`--url`, `--server`, or after `--`).
    pub(crate) fn names_a_server(&self) -> bool {
        self.url.is_some() || self.server_name.is_some() || !self.command.is_empty()
    }

    /// Whether `--connect-timeout` was given.
    pub(crate) fn connect_timeout_given(&self) -> bool {
        self.connect_timeout.is_some()
    }

    /// `--no-browser`: never open a browser (`ferry inspect` honours it for its page too).
    pub(crate) fn no_browser(&self) -> bool {
        self.auth.no_browser()
    }

    /// The name of the server to look up in the hosts' files, if one is named; a usage
    /// error for `-- @NAME args` or `--config` without a name.
    fn name(&self) -> Result<Option<String>, String> {
        match (&self.server_name, self.command.split_first()) {
            (Some(name), _) => Ok(Some(name.clone())),
            (None, Some((first, rest))) if first.len() > 1 && first.starts_with('@') => {
                if rest.is_empty() {
                    Ok(Some(first[1..].to_owned()))
                } else {
                    Err(format!(
                        "nothing may follow {first} after `--`: a named server's command comes \
                         from its file"
                    ))
                }
            }
            _ if self.config.is_some() => Err(
                "--config is where to look for a named server: add --server NAME (or `-- @NAME`)"
                    .into(),
            ),
            _ => Ok(None),
        }
    }

    /// The server these options name: a named server looked up in the hosts' files (see
    /// `hosts`) and put in its place, a stdio command with its environment and working
    /// directory, or a URL with its headers (`--header` adds to them, replacing a header of
    /// the same name), and the era its entry gives. With `verbose`, says on stderr which
    /// file it came from.
    pub(crate) fn resolve(&self, verbose: bool) -> Result<Resolved, String> {
        let resolved = |endpoint, era| Resolved {
            endpoint,
            era,
            auth: self.auth.clone(),
            connect_timeout: self.connect_timeout,
        };
        let Some(name) = self.name()? else {
            let endpoint = match (&self.url, self.command.is_empty()) {
                (Some(url), _) => Endpoint::Http {
                    url: http_url(url)?,
                    headers: self.headers.clone(),
                },
                (None, false) => Endpoint::Stdio {
                    command: self.command.clone(),
                    env: Vec::new(),
                    cwd: None,
                },
                (None, true) => Endpoint::InProcess,
            };
            return Ok(resolved(endpoint, None));
        };
        let found = crate::hosts::find(&name, self.config.as_deref())?;
        if verbose {
            note!(
                "ferry: server {name} ({}) from {} ({})",
                found.kind.name(),
                found.file.path.display(),
                found.file.label()
            );
        }
        let endpoint = match found.spec {
            crate::hosts::Spec::Stdio { command, env, cwd } => {
                if !self.headers.is_empty() || self.auth.given() {
                    return Err(format!(
                        "{name} is a stdio server: --header and the authorization options are \
                         for HTTP servers"
                    ));
                }
                Endpoint::Stdio { command, env, cwd }
            }
            crate::hosts::Spec::Http { url, headers } => {
                let given = |name: &str| {
                    self.headers
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case(name))
                };
                let headers = headers
                    .into_iter()
                    .filter(|(name, _)| !given(name))
                    .chain(self.headers.iter().cloned())
                    .collect();
                Endpoint::Http {
                    url: http_url(&url).map_err(|e| format!("server {name:?}: {e}"))?,
                    headers,
                }
            }
        };
        Ok(resolved(endpoint, found.era))
    }

    /// What reports and the inspector call the server: its entry's command or URL for a
    /// named server (looked up quietly), else as given.
    pub(crate) fn describe(&self) -> Value {
        match self.resolve(false) {
            Ok(resolved) => resolved.describe(),
            Err(_) => match (self.name(), &self.url) {
                (Ok(Some(name)), _) => json!({"kind": "named", "name": name}),
                (_, Some(url)) => json!({"kind": "http", "url": url}),
                _ => json!({"kind": "stdio", "command": self.command}),
            },
        }
    }

    /// These options as arguments of another `ferry` command (`ferry inspect` runs `ferry
    /// check` on its server so).
    pub(crate) fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(url) = &self.url {
            args.extend(["--url".to_owned(), url.clone()]);
        }
        for (name, value) in &self.headers {
            args.extend(["--header".to_owned(), format!("{name}: {value}")]);
        }
        if let Some(name) = &self.server_name {
            args.extend(["--server".to_owned(), name.clone()]);
        }
        if let Some(config) = &self.config {
            args.extend(["--config".to_owned(), config.display().to_string()]);
        }
        if let Some(timeout) = self.connect_timeout {
            args.extend([
                "--connect-timeout".to_owned(),
                timeout.as_secs_f64().to_string(),
            ]);
        }
        args.extend(self.auth.to_args());
        if !self.command.is_empty() {
            args.push("--".to_owned());
            args.extend(self.command.iter().cloned());
        }
        args
    }
}

impl Resolved {
    /// What reports and the inspector call the server.
    pub(crate) fn describe(&self) -> Value {
        match &self.endpoint {
            Endpoint::InProcess => json!({"kind": "in-process"}),
            Endpoint::Stdio { command, .. } => json!({"kind": "stdio", "command": command}),
            Endpoint::Http { url, .. } => json!({"kind": "http", "url": url}),
        }
    }

    /// How long to wait for the server's first answer: `--connect-timeout`, else
    /// [`CHILD_CONNECT_TIMEOUT`] for a child, else `otherwise` (the request timeout).
    pub(crate) fn connect_timeout(&self, otherwise: Duration) -> Duration {
        match (&self.endpoint, self.connect_timeout) {
            (_, Some(given)) => given,
            (Endpoint::Stdio { .. }, None) => CHILD_CONNECT_TIMEOUT,
            (_, None) => otherwise,
        }
    }

    /// The child to run, for a stdio server (its stderr: the default, to be set).
    pub(crate) fn child_command(&self) -> Option<ChildCommand> {
        let Endpoint::Stdio { command, env, cwd } = &self.endpoint else {
            return None;
        };
        let (program, args) = command.split_first()?;
        let mut child = ChildCommand::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = cwd {
            child = child.current_dir(dir);
        }
        Some(child)
    }
}

/// `url`, if it is an http:// or https:// URL.
fn http_url(url: &str) -> Result<String, String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url.to_owned())
    } else {
        Err(format!("{url:?} is not an http:// or https:// URL"))
    }
}

/// A command line as a person would type it: words with spaces or quotes quoted.
pub(crate) fn shown(command: &[String]) -> String {
    command
        .iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
            if plain {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_typed() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(shown(&words(&["cargo", "run", "-q"])), "cargo run -q");
        assert_eq!(
            shown(&words(&["sh", "-c", "echo 'hi' >&2", ""])),
            r"sh -c 'echo '\''hi'\'' >&2' ''"
        );
    }
}
