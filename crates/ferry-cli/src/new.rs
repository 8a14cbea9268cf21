//! `ferry new NAME`: a new MCP server crate on Ferry — one tool written with `#[tool]`,
//! served on stdio or with `--http ADDRESS` over Streamable HTTP, and a test that calls
//! the tool through `TestClient` in both eras. Ferry is not on crates.io under its name
//! yet: the crate depends on the Ferry checkout this `ferry` was built from (or
//! `--ferry-path`), and starts from that checkout's `Cargo.lock` (the versions Ferry is
//! tested with).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        Ok(dir) => {
            output::note(&format!(
                "ferry: created {} in {}\n\n    cd {}\n    cargo test\n    ferry tools -- cargo run -q",
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

fn create(args: &NewArgs) -> Result<PathBuf, String> {
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
    let library = name.replace('-', "_");
    let dependency = toml_string(&ferry.to_string_lossy());
    let files = [
        ("Cargo.toml", cargo_toml(name, &dependency)),
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
    // The checkout's lock file, when there is one: the versions Ferry is tested with.
    let lock = ferry.join("../../Cargo.lock");
    if lock.is_file() {
        std::fs::copy(&lock, dir.join("Cargo.lock"))
            .map_err(|e| format!("cannot copy {}: {e}", lock.display()))?;
    }
    Ok(dir)
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

fn cargo_toml(name: &str, ferry: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
# Ferry from a checkout (it is not on crates.io under this name yet). `http-server`: the
# `--http` option; `macros`: `#[tool]`.
ferry-mcp = {{ path = {ferry}, default-features = false, features = ["macros", "http-server"] }}
tokio = {{ version = "1.47", features = ["rt", "macros", "net"] }}

[dev-dependencies]
serde_json = "1"

# A project of its own, not a member of an enclosing workspace.
[workspace]
"#
    )
}

const LIB: &str = r#"//! The server: its tools, written with Ferry's macros.

use ferry::server::Server;
use ferry::tool;

/// Greet someone by name.
#[tool(read_only, idempotent)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// The server with its tools (add more with `.with(other_tool())`).
pub fn server() -> Server {
    Server::builder(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
        .with(greet_tool())
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

const TEST: &str = r#"//! The server's tools called in-process, as a client of each era calls them.

use ferry::protocol::ProtocolVersion;
use ferry::server::TestClient;
use serde_json::json;

#[tokio::test]
async fn greet_greets() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = TestClient::connect(&LIB::server(), version).await.unwrap();
        let result = client.call_tool("greet", json!({"name": "Ada"})).await.unwrap();
        assert_eq!(result["content"][0]["text"], "Hello, Ada!", "{version:?}");
    }
}
"#;
