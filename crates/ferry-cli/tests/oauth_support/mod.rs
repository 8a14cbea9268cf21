//! Test support for authorization: the real OpenID Provider (npm `oidc-provider`, pinned in
//! `auth-server/package.json`, started from `auth-server/server.mjs` on 127.0.0.1),
//! `ferry serve --http` protected by it, and a headless person who approves authorization
//! requests on the provider's development login and consent pages.
//!
//! The provider is installed by the tests themselves (`npm ci` in `auth-server/`, under a
//! file lock so concurrent test processes install once), so they need only Node.js and npm.

#![allow(dead_code, unreachable_pub)]

pub mod cli;
pub mod login;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// How long a test waits for something that should come (a line, an event) before failing.
pub const WAIT: Duration = Duration::from_secs(60);

/// The resource of the grant that marks the end of [`Provider::events_so_far`].
const MARKER: &str = "http://127.0.0.1:1/events-marker";

/// `auth-server/` at the workspace root.
fn auth_server_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../auth-server")
}

/// A directory created atomically as a lock between processes; removed when dropped. A
/// lock older than ten minutes is taken to be left over from a killed run.
struct DirLock(PathBuf);

impl DirLock {
    fn acquire(path: PathBuf) -> DirLock {
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return DirLock(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > Duration::from_secs(600));
                    if stale {
                        let _ = std::fs::remove_dir(&path).or_else(|_| std::fs::remove_file(&path));
                    } else {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
                Err(e) => panic!("cannot create the lock {path:?}: {e}"),
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// `npm ci` unless the packages are there; one process at a time.
fn install() {
    let dir = auth_server_dir();
    let marker = dir.join("node_modules/oidc-provider/package.json");
    let _lock = DirLock::acquire(dir.join(".install-lock"));
    if !marker.exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("npm runs (Node.js is needed for the authorization tests)");
        assert!(status.success(), "npm ci in {dir:?} failed");
    }
    assert!(marker.exists(), "{marker:?} missing after npm ci");
}

/// A child process killed when the test ends.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The OpenID Provider, running, reporting its events (grants, registrations, login and
/// consent pages shown) as JSON lines.
pub struct Provider {
    /// Its issuer URL, `http://127.0.0.1:PORT`.
    pub issuer: String,
    events: mpsc::Receiver<Value>,
    _child: Running,
}

impl Provider {
    /// Start the provider; `token_ttl`: the access tokens' lifetime in seconds (default 300).
    pub fn start(token_ttl: Option<u32>) -> Provider {
        install();
        let mut command = Command::new("node");
        command
            .arg("server.mjs")
            .current_dir(auth_server_dir())
            .env("EVENTS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(ttl) = token_ttl {
            command.env("TOKEN_TTL", ttl.to_string());
        }
        let mut child = command.spawn().expect("node starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the provider's ready line");
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let issuer = ready["issuer"].as_str().expect("issuer").to_owned();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if let Ok(event) = serde_json::from_str(&line)
                    && tx.send(event).is_err()
                {
                    break;
                }
            }
        });
        Provider {
            issuer,
            events,
            _child: Running(child),
        }
    }

    /// The provider's JWKS URL (from its discovery document).
    pub async fn jwks_uri(&self, http: &reqwest::Client) -> String {
        let discovery: Value = serde_json::from_slice(
            &http
                .get(format!("{}/.well-known/openid-configuration", self.issuer))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap(),
        )
        .unwrap();
        discovery["jwks_uri"].as_str().expect("jwks_uri").to_owned()
    }

    /// Every event up to a marker: a client-credentials grant for the resource [`MARKER`]
    /// this asks for now. Everything the provider did before the marker is
    /// in the list (its events are written in order, as they happen).
    pub async fn events_so_far(&self, http: &reqwest::Client) -> Vec<Value> {
        self.service_token(http, MARKER, "mcp:tools").await;
        let mut seen = Vec::new();
        loop {
            let event = self
                .events
                .recv_timeout(WAIT)
                .expect("the provider reports the marker grant");
            let marker = event["event"] == "grant" && event["resource"] == MARKER;
            if marker {
                return seen;
            }
            seen.push(event);
        }
    }

    /// An access token for `resource` from the client-credentials grant of `ferry-service`.
    pub async fn service_token(
        &self,
        http: &reqwest::Client,
        resource: &str,
        scope: &str,
    ) -> String {
        let response = http
            .post(format!("{}/token", self.issuer))
            .basic_auth("ferry-service", Some("ferry-service-secret"))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("a token: {body}"))
            .to_owned()
    }
}

/// Count the events of `kind` (`grant`, `registration`, `interaction`) whose `field` is
/// `value` (say `grant_type` = `refresh_token`).
pub fn count(events: &[Value], kind: &str, field: &str, value: &str) -> usize {
    events
        .iter()
        .filter(|e| e["event"] == kind && e[field] == value)
        .count()
}

/// Start `ferry serve --http` with `args`; returns it and its endpoint URL.
pub fn start_ferry(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("banner");
    // Keep reading, so that the server's later lines never meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let endpoint = line
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    (Running(child), endpoint)
}

/// `ferry serve --http` accepting the provider's JWT access tokens for itself with scope
/// `mcp:tools` (and `mcp:admin` for the tool `add`).
pub async fn start_protected_ferry(provider: &Provider) -> (Running, String) {
    let jwks = provider.jwks_uri(&reqwest::Client::new()).await;
    start_ferry(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-jwks",
        &jwks,
        "--auth-scope",
        "mcp:tools",
        "--auth-tool-scope",
        "add=mcp:admin",
    ])
}
