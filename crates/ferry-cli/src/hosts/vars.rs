//! The variables of the hosts' files, expanded in an entry's command, arguments, `env`,
//! `envFile`, `cwd`, URL and headers. One syntax for every file, the union of the hosts':
//!
//! - `${env:NAME}` (VS Code, Cursor): the environment variable, empty when unset (as VS
//!   Code does);
//! - `${NAME}`, `${NAME:-default}` (Claude Code): the environment variable, else the
//!   default; unset without a default is an error (as Claude Code refuses it);
//! - `${workspaceFolder}` (the project's root, see `Places::project`), `${workspaceFolderBasename}`,
//!   `${userHome}`, `${pathSeparator}` and `${/}` (VS Code, Cursor).
//!
//! Anything else — `${input:token}`, `${config:...}`, `${command:...}` — is an error naming
//! the variable: the host would ask or compute something Ferry cannot.

use std::path::{MAIN_SEPARATOR_STR, Path, PathBuf};

/// What the variables stand for.
pub(crate) struct Vars {
    /// `${workspaceFolder}`.
    pub(crate) workspace: PathBuf,
    /// `${userHome}`.
    pub(crate) home: Option<PathBuf>,
}

impl Vars {
    /// `text` with its variables replaced; `${` without a closing `}` is kept as it is.
    pub(crate) fn expand(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            out.push_str(&self.value(&after[..end])?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of `${inner}`.
    fn value(&self, inner: &str) -> Result<String, String> {
        match inner {
            "workspaceFolder" => return Ok(text(&self.workspace)),
            "workspaceFolderBasename" => {
                return Ok(self
                    .workspace
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default());
            }
            "userHome" => {
                return self
                    .home
                    .as_deref()
                    .map(text)
                    .ok_or_else(|| "${userHome}: no home directory".into());
            }
            "pathSeparator" | "/" => return Ok(MAIN_SEPARATOR_STR.to_owned()),
            _ => {}
        }
        if let Some(name) = inner.strip_prefix("env:")
            && is_name(name)
        {
            return Ok(std::env::var(name).unwrap_or_default());
        }
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if !is_name(name) {
            let hint = if inner.starts_with("input:") {
                " (VS Code asks the user for inputs; Ferry cannot: put the value in an \
                 environment variable and write ${env:NAME})"
            } else {
                ""
            };
            return Err(format!("unsupported variable ${{{inner}}}{hint}"));
        }
        match (std::env::var(name), default) {
            (Ok(value), _) => Ok(value),
            (Err(_), Some(default)) => Ok(default.to_owned()),
            (Err(_), None) => Err(format!(
                "${{{name}}}: the environment has no {name} (`${{{name}:-default}}` gives a \
                 default)"
            )),
        }
    }
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// An environment variable's name: a letter or `_`, then letters, digits or `_`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
