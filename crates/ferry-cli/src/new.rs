//! `ferry new NAME`: a new MCP server crate on Ferry, the shapes a server grows from in
//! place — tools written with `#[tool]` (one with a typed `Json<T>` output, one that
//! reports progress), a resource template, a prompt, shared state behind a lock — served
//! on stdio or with `--http ADDRESS` over Streamable HTTP, and a test that calls them
//! through `TestClient` in both eras. serde and schemars are direct dependencies, so
//! `#[derive(Serialize, Deserialize, JsonSchema)]` works as written. Ferry is not on
//! crates.io yet: the crate depends on the Ferry checkout this `ferry` was built from (or
//! `--ferry-path`), and starts from that checkout's `Cargo.lock` (the versions Ferry is
//! tested with). Like `cargo new`, it makes the crate a git repository unless it is
//! inside one already.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::Args;

use crate::client::output;

/// `ferry new`.
#[derive(Args)]
pub(crate) struct NewArgs {
    /// The crate's name (letters, digits, `-` and `_`, starting with a letter).
    name: String,
    /// Create the crate in this directory (default: ./NAME); it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// The Ferry checkout to depend on: its root or its `crates/ferry` (default: the one
    /// this `ferry` was built from).
    #[arg(long, value_name = "DIR")]
    ferry_path: Option<PathBuf>,
}

/// Where the `ferry` crate was when this binary was built.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ferry");

/// Run `ferry new`.
pub(crate) fn run(args: &NewArgs) -> ExitCode {
    match create(args) {
        Ok((dir, git)) => {
            let git = match git {
                Git::Created => "\ninitialized a git repository".to_owned(),
                Git::Inside => String::new(),
                Git::Missing => "\ngit is not installed: no repository was created".to_owned(),
                Git::Failed(why) => format!("\ngit init failed ({why}): no repository was created"),
            };
            output::note(&format!(
                "ferry: created {} in {}{git}\n\n    cd {}\n    cargo test\n    ferry tools -- cargo run -q",
                args.name,
                dir.display(),
                dir.display()
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::note(&format!("ferry: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// What became of the crate's git repository.
enum Git {
    /// `git init` made one.
    Created,
    /// The crate is inside a repository already: none of its own.
    Inside,
    /// There is no `git` to run.
    Missing,
    /// `git` failed, saying why.
    Failed(String),
}

/// Make `dir` a git repository, as `cargo new` does, unless it is inside one already.
fn git_init(dir: &Path) -> Git {
    let inside = Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output();
    match inside {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Git::Missing,
        Err(e) => return Git::Failed(e.to_string()),
        Ok(out) if out.status.success() && out.stdout.starts_with(b"true") => return Git::Inside,
        Ok(_) => {}
    }
    let init = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output();
    match init {
        Ok(out) if out.status.success() => Git::Created,
        Ok(out) => Git::Failed(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
        Err(e) => Git::Failed(e.to_string()),
    }
}

fn create(args: &NewArgs) -> Result<(PathBuf, Git), String> {
    let name = &args.name;
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(format!(
            "{name:?} is not a crate name: letters, digits, `-` and `_`, starting with a letter"
        ));
    }
    let ferry = ferry_crate(args.ferry_path.as_deref())?;
    let dir = args.path.clone().unwrap_or_else(|| PathBuf::from(name));
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(format!("{} exists and is not empty", dir.display()));
    }
    // The checkout's lock file, when there is one: the versions Ferry is tested with.
    let lock_path = ferry.join("../../Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path).ok();
    let library = name.replace('-', "_");
    let dependency = toml_string(&ferry.to_string_lossy());
    let files = [
        ("Cargo.toml", cargo_toml(name, &dependency, lock.as_deref())),
        (".gitignore", "/target\n".to_owned()),
        ("src/lib.rs", LIB.to_owned()),
        (
            "src/main.rs",
            MAIN.replace("NAME", name).replace("LIB", &library),
        ),
        ("tests/server.rs", TEST.replace("LIB", &library)),
    ];
    for (file, text) in files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if lock.is_some() {
        std::fs::copy(&lock_path, dir.join("Cargo.lock"))
            .map_err(|e| format!("cannot copy {}: {e}", lock_path.display()))?;
    }
    let git = git_init(&dir);
    Ok((dir, git))
}

/// The `ferry` crate's directory, absolute: `given` (a checkout's root or the crate
/// itself), else the one this binary was built from.
fn ferry_crate(given: Option<&Path>) -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match given {
        Some(dir) => vec![dir.join("crates").join("ferry"), dir.to_owned()],
        None => vec![PathBuf::from(BUILT_FROM)],
    };
    candidates
        .iter()
        .find(|dir| is_ferry(dir))
        .and_then(|dir| std::fs::canonicalize(dir).ok())
        .ok_or_else(|| match given {
            Some(dir) => format!("--ferry-path {}: no Ferry checkout there", dir.display()),
            None => format!(
                "the Ferry checkout this ferry was built from ({}) is gone: give --ferry-path",
                Path::new(BUILT_FROM).display()
            ),
        })
}

/// Whether `dir` holds the `ferry` crate.
fn is_ferry(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .is_ok_and(|manifest| manifest.lines().any(|l| l.trim() == "name = \"ferry-mcp\""))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The newest version of `package` with major version `major` in the lock file `lock`
/// (`[[package]]` entries of `name = ".."` then `version = ".."`), else `major`.
fn locked(lock: Option<&str>, package: &str, major: &str) -> String {
    let numbers = |version: &str| -> Vec<u64> {
        version
            .split(['.', '-', '+'])
            .map_while(|part| part.parse().ok())
            .collect()
    };
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.unwrap_or_default().lines();
    let mut newest: Option<&str> = None;
    while let Some(line) = lines.next() {
        if line != wanted {
            continue;
        }
        let version = lines
            .next()
            .and_then(|l| l.strip_prefix("version = \""))
            .and_then(|l| l.strip_suffix('"'));
        if let Some(version) = version
            && version.split('.').next() == Some(major)
            && newest.is_none_or(|n| numbers(version) > numbers(n))
        {
            newest = Some(version);
        }
    }
    newest.unwrap_or(major).to_owned()
}

fn cargo_toml(name: &str, ferry: &str, lock: Option<&str>) -> String {
    // `0.3`: what a crates.io requirement on this release of Ferry reads.
    let release: Vec<&str> = env!("CARGO_PKG_VERSION").split('.').take(2).collect();
    let release = release.join(".");
    let serde = locked(lock, "serde", "1");
    let schemars = locked(lock, "schemars", "1");
    let tokio = locked(lock, "tokio", "1");
    let serde_json = locked(lock, "serde_json", "1");
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
# Ferry from a checkout: it is not on crates.io yet. Once it is, this line reads
#     ferry-mcp = {{ version = "{release}", default-features = false, features = ["macros", "http-server"] }}
# The library is imported as `ferry` (`use ferry::server::Server`). `macros`: `#[tool]`,
# `#[resource]`, `#[prompt]`; `http-server`: the `--http` option.
ferry-mcp = {{ path = {ferry}, default-features = false, features = ["macros", "http-server"] }}
# `#[derive(Serialize, Deserialize, JsonSchema)]` on the types of arguments and `Json<T>`
# outputs; schemars in the major version Ferry derives schemas with.
serde = {{ version = "{serde}", features = ["derive"] }}
schemars = "{schemars}"
tokio = {{ version = "{tokio}", features = ["rt", "macros", "net"] }}

[dev-dependencies]
serde_json = "{serde_json}"

# A project of its own, not a member of an enclosing workspace.
[workspace]
"#
    )
}

const LIB: &str = r#"//! The server: its tools, resource and prompt, written with Ferry's macros, and the
//! state they share.

use std::sync::Mutex;

use ferry::server::{Json, Progress, Server, State};
use ferry::{prompt, resource, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The notes the server keeps: one value for every client and request, given to the
/// builder with `.state(..)` and taken by handlers as `State<Notes>`. Handlers run
/// concurrently, so what changes sits behind a lock.
#[derive(Default)]
pub struct Notes(Mutex<Vec<String>>);

/// A note as `add_note` returns it: `Json<Note>` gives the tool an output schema, and
/// clients get it as structured content.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// Its number: read it back at `notes://{id}`.
    pub id: usize,
    /// What it says.
    pub text: String,
}

/// Greet someone by name.
#[tool(read_only, idempotent)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Keep a note.
#[tool]
async fn add_note(
    /// What to remember.
    text: String,
    notes: State<Notes>,
) -> Json<Note> {
    let mut notes = notes.0.lock().unwrap();
    notes.push(text.clone());
    Json(Note {
        id: notes.len() - 1,
        text,
    })
}

/// A note, by number (none: not found).
#[resource("notes://{id}", mime_type = "text/plain")]
async fn note(id: usize, notes: State<Notes>) -> Option<String> {
    notes.0.lock().unwrap().get(id).cloned()
}

/// Ask the model to summarize the notes.
#[prompt]
async fn summarize(
    /// How to summarize them (default: in one sentence).
    style: Option<String>,
    notes: State<Notes>,
) -> String {
    let style = style.unwrap_or_else(|| "in one sentence".into());
    let notes = notes.0.lock().unwrap().join("\n");
    format!("Summarize these notes {style}:\n\n{notes}")
}

/// Count to `to` (at most 100), reporting progress at each step.
#[tool(read_only)]
async fn count(
    /// Where to stop.
    to: u32,
    progress: Progress,
) -> String {
    let to = to.min(100);
    for step in 1..=to {
        let message = format!("{step} of {to}");
        progress
            .report(f64::from(step), Some(f64::from(to)), Some(message))
            .await;
    }
    format!("counted to {to}")
}

/// The server with its state, tools, resource and prompt (add more with `.with(..)`).
pub fn server() -> Server {
    Server::builder(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
        .state(Notes::default())
        .with((
            greet_tool(),
            add_note_tool(),
            count_tool(),
            note_resource(),
            summarize_prompt(),
        ))
        .build()
}
"#;

const MAIN: &str = r#"//! NAME, an MCP server: on stdio (what MCP hosts run), or over Streamable HTTP with
//! `--http ADDRESS` (at /mcp).
//!
//!     ferry tools -- cargo run -q
//!     ferry call greet name=Ada -- cargo run -q
//!     cargo run -- --http 127.0.0.1:8080

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => LIB::server().serve_stdio().await,
        [flag, address] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(address).await?;
            eprintln!("NAME: MCP on http://{}/mcp", listener.local_addr()?);
            let config = ferry::http::HttpConfig::default();
            ferry::http::serve(LIB::server(), listener, config).await
        }
        _ => {
            eprintln!("usage: NAME [--http ADDRESS]");
            std::process::exit(2);
        }
    }
}
"#;

const TEST: &str = r#"//! The server called in-process through `TestClient`, as clients of each era call it.

use ferry::protocol::ProtocolVersion;
use ferry::server::{TestClient, TestError};
use serde_json::json;

use LIB::{Note, server};

#[tokio::test]
async fn greet_greets() {
    let client = TestClient::new(&server()).await.unwrap();
    let greeting = client.call("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(greeting.text(), "Hello, Ada!");
}

/// A note kept by a tool, read back as a resource and summarized by the prompt, in a
/// session-era and a stateless-era revision.
#[tokio::test]
async fn notes_are_kept_read_and_summarized() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = TestClient::builder(&server())
            .version(version)
            .connect()
            .await
            .unwrap();
        let note: Note = client
            .call_tool_as("add_note", json!({"text": "buy milk"}))
            .await
            .unwrap();
        let expected = Note {
            id: 0,
            text: "buy milk".into(),
        };
        assert_eq!(note, expected, "{version:?}");
        let read = client.read_resource("notes://0").await.unwrap();
        assert_eq!(read.text(), "buy milk");
        let missing = client.read_resource("notes://7").await.unwrap_err();
        assert_eq!(missing, TestError::NotFound("notes://7".into()));
        let prompt = client.get_prompt("summarize", json!({})).await.unwrap();
        assert!(prompt.text().contains("buy milk"), "{}", prompt.text());
    }
}

#[tokio::test]
async fn count_reports_progress() {
    let client = TestClient::new(&server()).await.unwrap();
    let (result, progress) = client
        .call_with_progress("count", json!({"to": 3}))
        .await
        .unwrap();
    assert_eq!(result.text(), "counted to 3");
    let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    assert_eq!(progress[2].message.as_deref(), Some("3 of 3"));
}
"#;
