//! `ferry servers`: every server the hosts' files name, in search order, each with its
//! kind (and the era it pins, if any), command or URL (as written, variables not expanded) and file; a name already
//! found in an earlier file is marked shadowed (`--server NAME` takes the first).

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::{HostFile, Places, Reader, era, kind, search_order, target_text};
use crate::client::output;

/// `ferry servers`.
#[derive(Args)]
pub(crate) struct ServersArgs {
    /// Read this file first (any host's shape: `mcpServers` or `servers`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

/// Run `ferry servers`.
pub(crate) fn run(args: &ServersArgs) -> ExitCode {
    let places = match Places::from_env() {
        Ok(places) => places,
        Err(e) => {
            output::note(&format!("ferry: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let files = search_order(&places, args.config.as_deref());
    let mut reader = Reader::default();
    let mut seen = HashSet::new();
    let mut listed = Vec::new();
    let mut problems = Vec::new();
    let mut failed = false;
    for file in &files {
        let entries = match reader.read(&file.path) {
            Ok(Some(root)) => file.entries(&root),
            Ok(None) if file.host.is_none() => {
                Err(format!("--config {}: no such file", file.path.display()))
            }
            Ok(None) => continue,
            Err(e) => Err(e),
        };
        let entries = match entries {
            Ok(entries) => entries,
            Err(e) => {
                failed |= file.host.is_none();
                output::note(&format!("ferry: {e}"));
                problems.push(json!({ "file": file.path, "error": e }));
                continue;
            }
        };
        for (name, entry) in entries {
            let shadowed = !seen.insert(name.clone());
            listed.push(describe(&name, &entry, file, shadowed));
        }
    }
    if args.json {
        output::json(&json!({ "servers": listed, "problems": problems }));
    } else {
        print(&listed, &files);
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One server as `--json` shows it.
fn describe(name: &str, entry: &Value, file: &HostFile, shadowed: bool) -> Value {
    let mut described = json!({
        "name": name,
        "kind": null,
        "file": file.path,
        "host": file.host.map(|h| h.name()),
        "scope": file.scope.map(|s| s.name()),
        "shadowed": shadowed,
    });
    match kind(entry) {
        Ok(kind) => {
            described["kind"] = json!(kind.name());
            let target = target_text(entry);
            match kind {
                super::Kind::Stdio => described["command"] = json!(target),
                _ => described["url"] = json!(target.first()),
            }
        }
        Err(e) => described["error"] = json!(e),
    }
    // The era an entry pins (`ferry install --era`): connected without the probe.
    match era(entry) {
        Ok(era) => {
            described["era"] = json!(era.map(|era| match era {
                ferry::protocol::Era::Session => "session",
                ferry::protocol::Era::Stateless => "stateless",
            }));
        }
        Err(e) => described["error"] = json!(e),
    }
    described
}

fn print(listed: &[Value], files: &[HostFile]) {
    let rows: Vec<Vec<String>> = listed
        .iter()
        .map(|server| {
            let text = |key: &str| server[key].as_str().unwrap_or_default().to_owned();
            let mut name = text("name");
            if server["shadowed"] == true {
                name.push_str(" (shadowed)");
            }
            let target = match (&server["command"], &server["url"]) {
                (Value::Array(command), _) => command
                    .iter()
                    .map(|a| shell_word(a.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" "),
                (_, Value::String(url)) => url.clone(),
                _ => format!("(invalid: {})", text("error")),
            };
            let place = match (server["host"].as_str(), server["scope"].as_str()) {
                (Some(host), Some(scope)) => format!("{host}, {scope}"),
                _ => "--config".to_owned(),
            };
            let mut kind = server["kind"].as_str().unwrap_or("?").to_owned();
            if let Some(era) = server["era"].as_str() {
                kind = format!("{kind}, {era}");
            }
            vec![name, kind, target, format!("{} ({place})", text("file"))]
        })
        .collect();
    let looked: Vec<String> = files
        .iter()
        .map(|f| format!("  {}", f.path.display()))
        .collect();
    let empty = format!(
        "No servers: none of the hosts' files names one. Looked in:\n{}",
        looked.join("\n")
    );
    output::table(&["NAME", "KIND", "COMMAND OR URL", "FILE"], rows, &empty);
}

/// A word as a shell would need it written: quoted when it holds anything but plain
/// characters.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
