//! Real servers for the several-instances tests, each started on a free loopback port and
//! stopped when dropped: `redis-server`, `ferry serve --http --redis`, and nginx as a
//! round-robin proxy without affinity (all from Debian: `.ci/run` installs them).

#![allow(unreachable_pub)]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A free port on 127.0.0.1 (bound, then released for the server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "ferry-{name}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&path).expect("a temp dir");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn program(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return path;
        }
    }
    panic!("{name} is not installed (Debian: apt-get install redis-server nginx)");
}

/// A `redis-server` of this test's own, with an append-only file so a restart keeps the
/// data (as a production Redis with persistence would).
pub struct Redis {
    pub port: u16,
    dir: TempDir,
    child: Option<Child>,
}

impl Redis {
    pub fn start() -> Redis {
        let mut redis = Redis {
            port: free_port(),
            dir: TempDir::new("redis"),
            child: None,
        };
        redis.restart();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Start (again) on the same port and directory.
    pub fn restart(&mut self) {
        let child = Command::new(program("redis-server"))
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(&self.dir.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.cli(&["PING"]).as_deref() != Some("PONG") {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill it at once (SIGKILL): as a crash or a network cut looks to its clients.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Send `signal` (`STOP`, `CONT`) to the server: a stopped Redis accepts connections
    /// and never answers, as an overloaded one.
    pub fn signal(&self, signal: &str) {
        if let Some(child) = &self.child {
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status();
        }
    }

    /// One command through `redis-cli`; its output, trimmed, or `None` if it failed.
    pub fn cli(&self, args: &[&str]) -> Option<String> {
        let output = Command::new(program("redis-cli"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        (output.status.success() && !text.starts_with("Could not connect")).then_some(text)
    }

    /// How many keys start with `prefix`.
    pub fn keys(&self, prefix: &str) -> usize {
        self.key_names(prefix).len()
    }

    /// The names of the keys starting with `prefix`.
    pub fn key_names(&self, prefix: &str) -> Vec<String> {
        self.cli(&["--scan", "--pattern", &format!("{prefix}*")])
            .map(|text| {
                text.lines()
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `INFO memory`'s `used_memory`.
    pub fn used_memory(&self) -> u64 {
        let info = self.cli(&["INFO", "memory"]).unwrap_or_default();
        info.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `ferry serve --http 127.0.0.1:0 --redis URL` with its address.
pub struct Instance {
    pub addr: String,
    child: Child,
}

impl Instance {
    pub fn start(redis: &str, prefix: &str, extra: &[&str]) -> Instance {
        let mut args = vec!["serve", "--http", "127.0.0.1:0", "--redis", redis];
        args.extend(["--redis-prefix", prefix]);
        args.extend(extra);
        Instance::spawn(&args)
    }

    /// `ferry bridge --http 127.0.0.1:0 --redis URL [mode] -- ferry serve`.
    pub fn bridge(redis: &str, prefix: &str, mode: &str) -> Instance {
        let ferry = env!("CARGO_BIN_EXE_ferry");
        Instance::spawn(&[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--redis",
            redis,
            "--redis-prefix",
            prefix,
            mode,
            "--",
            ferry,
            "serve",
        ])
    }

    /// `ferry ARGS`, once it has printed the address it serves.
    pub fn spawn(args: &[&str]) -> Instance {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .expect("ferry");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut addr = None;
        let mut line = String::new();
        while addr.is_none() {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("ferry {args:?} ended before its banner");
            }
            addr = line
                .trim()
                .split_once(": MCP on http://")
                .and_then(|(_, rest)| rest.strip_suffix("/mcp"))
                .map(str::to_owned);
        }
        // The rest of stderr, read on (the server must never block on it).
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = stderr.read_to_string(&mut sink);
        });
        Instance {
            addr: addr.expect("an address"),
            child,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// SIGKILL: the instance dies with whatever it was doing.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// nginx proxying to `upstreams` round-robin, no affinity, SSE unbuffered.
pub struct Nginx {
    pub port: u16,
    child: Child,
    _dir: TempDir,
}

impl Nginx {
    pub fn start(upstreams: &[u16]) -> Nginx {
        let dir = TempDir::new("nginx");
        let port = free_port();
        let servers: String = upstreams
            .iter()
            .map(|p| format!("    server 127.0.0.1:{p} max_fails=1 fail_timeout=30s;\n"))
            .collect();
        let d = dir.0.display();
        // `user root` matters only when the test runs as root (CI): the workers may then
        // write their temporary files in this directory.
        let user = if is_root() { "user root;" } else { "" };
        let config = format!(
            "{user}
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log off;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  upstream ferry {{
{servers}  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://ferry;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Connection \"\";
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout;
    }}
  }}
}}
"
        );
        let path = dir.0.join("nginx.conf");
        std::fs::write(&path, config).expect("nginx.conf");
        let child = Command::new(program("nginx"))
            .arg("-p")
            .arg(&dir.0)
            .arg("-c")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx {
            port,
            child,
            _dir: dir,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Nginx {
    /// SIGTERM, which the master passes to its workers (SIGKILL would orphan them, still
    /// listening); SIGKILL only if it has not ended within 5 s.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|v| v.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false)
}

/// A session-era client over plain HTTP requests.
pub struct Session {
    pub http: reqwest::Client,
    pub id: String,
    /// The revision negotiated (sent as `MCP-Protocol-Version`).
    pub revision: &'static str,
}

pub const REVISION: &str = "2025-06-18";

pub fn initialize_body() -> Value {
    initialize_at(REVISION)
}

fn initialize_at(revision: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": revision, "capabilities": {},
        "clientInfo": {"name": "redis-test", "version": "1"}}})
}

pub fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    post_at(http, url, session, REVISION, body)
}

/// [`post`] in a session of `revision`.
pub fn post_at(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    revision: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", revision);
    }
    request
}

impl Session {
    pub async fn open(url: &str) -> Session {
        Session::open_at(url, REVISION).await
    }

    /// A session of `revision`.
    pub async fn open_at(url: &str, revision: &'static str) -> Session {
        let http = reqwest::Client::new();
        let response = post_at(&http, url, None, revision, &initialize_at(revision))
            .send()
            .await
            .expect("initialize");
        assert_eq!(response.status(), 200, "initialize");
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = post_at(&http, url, Some(&id), revision, &initialized)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        Session { http, id, revision }
    }

    /// POST `body` on the session; the status and every JSON-RPC message of the answer
    /// (one JSON body, or each SSE event's data).
    pub async fn send(&self, url: &str, body: &Value) -> Result<(u16, Vec<Value>), String> {
        let response = post_at(&self.http, url, Some(&self.id), self.revision, body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response.text().await.map_err(|e| e.to_string())?;
        if text.is_empty() {
            return Ok((status, Vec::new()));
        }
        if !sse {
            let value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
            return Ok((status, vec![value]));
        }
        Ok((status, sse_data(&text)))
    }

    /// Call tool `name`; its result (or the error response) as the last message.
    pub async fn call(
        &self,
        url: &str,
        id: u64,
        name: &str,
        arguments: Value,
    ) -> Result<(u16, Vec<Value>), String> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}});
        self.send(url, &body).await
    }
}

/// Every SSE event's `data` in `text`, as JSON.
pub fn sse_data(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
                .collect();
            let joined = data.join("\n");
            (!joined.trim().is_empty()).then(|| serde_json::from_str(&joined).ok())?
        })
        .collect()
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}
