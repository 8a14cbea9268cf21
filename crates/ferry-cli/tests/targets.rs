//! One grammar for the server every command talks to, as the built binary runs it: `ferry
//! check` and every client command, `ferry replay` and `ferry inspect` reach `ferry serve`
//! named by each form — `-- command`, `--url` with `--header`, `--server NAME` and `--
//! @NAME` from a `--config FILE` (a stdio entry) and from a project's `.mcp.json` (an HTTP
//! entry with headers) — and `ferry check` also with nothing (the reference server in this
//! process) and the positional URL of earlier versions. The HTTP server sits behind a relay
//! on 127.0.0.1 that refuses every request without the header, so each command's requests
//! (`ferry check`'s raw ones included) carry it. `ferry bridge` takes the forms of its
//! direction (a stdio server for `--http`, an HTTP one for `--stdio`). The options naming
//! the server read the same in every command's help.
//!
//! Every run points `HOME`, `XDG_CONFIG_HOME` and the current directory at a scratch
//! directory of its own: the real user's files are never read.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// The header the relay requires.
const HEADER: &str = "X-Ferry-Test: yes";

/// Every command that talks to a server.
const COMMANDS: [&str; 13] = [
    "tools",
    "resources",
    "templates",
    "prompts",
    "call",
    "read",
    "prompt",
    "complete",
    "ping",
    "discover",
    "check",
    "inspect",
    "replay",
];

/// What one run printed and how it exited.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl Run {
    #[track_caller]
    fn ok(self, what: &str) -> Run {
        assert_eq!(
            self.code,
            Some(0),
            "{what}\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    fn json(&self, what: &str) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// A home directory, its settings directory and a project (a repository's root), all
/// scratch (removed after a test that passed).
struct Place {
    root: PathBuf,
    home: PathBuf,
    config: PathBuf,
    project: PathBuf,
}

impl Place {
    fn new(name: &str) -> Place {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("targets-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let config = home.join(".config");
        let project = root.join("project");
        for dir in [&config, &project.join(".git")] {
            std::fs::create_dir_all(dir).expect("create a scratch directory");
        }
        let project = project.canonicalize().expect("canonical project path");
        Place {
            root,
            home,
            config,
            project,
        }
    }

    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new(FERRY);
        command
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("COLUMNS", "200")
            .env_remove("FERRY_LOG");
        command
    }

    /// Run `ferry args...` in the project to its end, without stdin.
    fn ferry<S: AsRef<OsStr>>(&self, args: &[S]) -> Run {
        let output = self
            .command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run ferry");
        Run {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code(),
        }
    }

    fn write(&self, path: &Path, value: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ferry serve --http 127.0.0.1:0`, and its URL (from its banner on stderr).
fn serve_http() -> (Running, String) {
    let mut child = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry serve --http");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let running = Running(child);
    let mut banner = String::new();
    stderr.read_line(&mut banner).expect("the banner");
    // Keep reading, so that the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = banner
        .trim()
        .strip_prefix("ferry serve: MCP on ")
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    (running, url)
}

/// `ferry serve --http` behind a relay on 127.0.0.1 that answers 401 (without a challenge)
/// every request lacking [`HEADER`] and passes the others on, one request per connection.
struct Guarded {
    /// The relay's URL.
    url: String,
    /// The server's own URL.
    direct: String,
    refused: Arc<AtomicUsize>,
    passed: Arc<AtomicUsize>,
    _server: Running,
}

impl Guarded {
    fn start() -> Guarded {
        let (server, direct) = serve_http();
        let upstream = direct
            .strip_prefix("http://")
            .and_then(|rest| rest.split_once('/'))
            .map(|(host, _)| host.to_owned())
            .expect("host:port");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let refused = Arc::new(AtomicUsize::new(0));
        let passed = Arc::new(AtomicUsize::new(0));
        let counts = (refused.clone(), passed.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let upstream = upstream.clone();
                let counts = (counts.0.clone(), counts.1.clone());
                std::thread::spawn(move || relay(stream, &upstream, &counts.0, &counts.1));
            }
        });
        Guarded {
            url,
            direct,
            refused,
            passed,
            _server: server,
        }
    }
}

/// One request from `client`: refused without [`HEADER`], else sent to `upstream` (asking
/// it to close the connection after its answer) and its answer streamed back.
fn relay(mut client: TcpStream, upstream: &str, refused: &AtomicUsize, passed: &AtomicUsize) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let lines: Vec<&str> = head.trim_end().split("\r\n").collect();
    let header = |name: &str| {
        lines.iter().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let length: u64 = header("content-length")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut body = Vec::new();
    if (&mut client).take(length).read_to_end(&mut body).is_err() {
        return;
    }
    let (name, value) = HEADER.split_once(": ").unwrap();
    if header(name).as_deref() != Some(value) {
        refused.fetch_add(1, Ordering::SeqCst);
        let _ = client.write_all(
            b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        return;
    }
    passed.fetch_add(1, Ordering::SeqCst);
    let mut forwarded: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| !line.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    forwarded.push("connection: close");
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    let mut request = forwarded.join("\r\n").into_bytes();
    request.extend_from_slice(b"\r\n\r\n");
    request.extend_from_slice(&body);
    if server.write_all(&request).is_ok() {
        let _ = std::io::copy(&mut server, &mut client);
    }
}

/// Where the forms of naming a server point: a `--config FILE` with a stdio entry `local`
/// (`ferry serve`), a project `.mcp.json` with an HTTP entry `web` (the guarded server,
/// with the header), and the guarded server itself.
struct Setup {
    place: Place,
    guarded: Guarded,
    config: String,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let place = Place::new(name);
        let guarded = Guarded::start();
        let config = place.root.join("servers.json");
        place.write(
            &config,
            &json!({"mcpServers": {"local": {"command": FERRY, "args": ["serve"]}}}),
        );
        place.write(
            &place.project.join(".mcp.json"),
            &json!({"mcpServers": {"web": {
                "type": "http",
                "url": guarded.url,
                "headers": {"X-Ferry-Test": "yes"},
            }}}),
        );
        Setup {
            place,
            guarded,
            config: config.display().to_string(),
        }
    }

    /// Each form: its name, its arguments, and the kind of server it names.
    fn forms(&self) -> Vec<(&'static str, Vec<String>, &'static str)> {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let url = self.guarded.url.as_str();
        let config = self.config.as_str();
        vec![
            ("-- command", words(&["--", FERRY, "serve"]), "stdio"),
            (
                "--url with --header",
                words(&["--url", url, "--header", HEADER]),
                "http",
            ),
            (
                "--server NAME --config FILE",
                words(&["--server", "local", "--config", config]),
                "stdio",
            ),
            (
                "-- @NAME --config FILE",
                words(&["--config", config, "--", "@local"]),
                "stdio",
            ),
            (
                "--server NAME of .mcp.json",
                words(&["--server", "web"]),
                "http",
            ),
            ("-- @NAME of .mcp.json", words(&["--", "@web"]), "http"),
        ]
    }

    /// Every request reached the relay with the header.
    #[track_caller]
    fn assert_headers_sent(&self) {
        assert_eq!(
            self.guarded.refused.load(Ordering::SeqCst),
            0,
            "a request lacked {HEADER}"
        );
        assert!(self.guarded.passed.load(Ordering::SeqCst) > 0);
    }
}

/// `args` then `form`.
fn with(args: &[&str], form: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| (*a).to_owned())
        .chain(form.iter().cloned())
        .collect()
}

#[test]
fn check_takes_every_form() {
    let setup = Setup::new("check");
    let quick = [
        "check",
        "--json",
        "--revision",
        "2025-11-25",
        "--call-tools",
        "none",
    ];
    let mut forms = setup.forms();
    let direct = setup.guarded.direct.clone();
    forms.push(("nothing: in-process", Vec::new(), "in-process"));
    forms.push(("a positional URL", vec![direct], "http"));
    for (name, form, kind) in forms {
        let run = setup.place.ferry(&with(&quick, &form)).ok(name);
        let report = run.json(name);
        assert_eq!(
            report["revisions"][0]["checked"], true,
            "{name}: {report:#}"
        );
        assert_eq!(report["summary"]["mustFailed"], 0, "{name}: {report:#}");
        let target = report["target"].as_str().unwrap_or_default();
        assert!(target.starts_with(&format!("{kind}: ")), "{name}: {target}");
        if kind == "in-process" {
            assert_eq!(status(&report, "stdio.stays-up"), "skip", "{name}");
        }
    }
    setup.assert_headers_sent();
    // Without the header, the relay refuses it all: nothing to check.
    let bare = setup
        .place
        .ferry(&with(&quick, &["--url".into(), setup.guarded.url.clone()]));
    assert_eq!(bare.code, Some(2), "{}", bare.stderr);
    assert!(setup.guarded.refused.load(Ordering::SeqCst) > 0);
    // The positional URL is not in the help (`--url` is).
    let help = setup.place.ferry(&["check", "--help"]).ok("help");
    assert!(
        help.stdout
            .contains("Usage: ferry check [OPTIONS] [-- <COMMAND>...]"),
        "{}",
        help.stdout
    );
    // Named in two ways at once, or named wrongly: a usage error.
    let url = setup.guarded.url.as_str();
    for wrong in [
        &["check", "--url", url, "--", FERRY, "serve"][..],
        &["check", "--server", "web", "--url", url],
        &["check", "http://127.0.0.1:1/mcp", "--url", url],
        &["check", "--config", &setup.config],
        &["check", "--url", "ftp://127.0.0.1/mcp"],
        &["check", "--server", "nowhere"],
    ] {
        let run = setup.place.ferry(wrong);
        assert_eq!(run.code, Some(2), "{wrong:?}: {}", run.stderr);
    }
}

/// The status of requirement `id` in a JSON report of `ferry check`.
fn status(report: &Value, id: &str) -> String {
    report["requirements"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["id"] == id))
        .and_then(|r| r["status"].as_str())
        .unwrap_or_else(|| panic!("{id} not in the report"))
        .to_owned()
}

#[test]
fn every_client_command_takes_every_form() {
    let setup = Setup::new("clients");
    // One representative call of each command, and what its output must show.
    let calls: [(&[&str], &str); 10] = [
        (&["tools"], "echo "),
        (&["resources"], "server://info"),
        (&["templates"], "{"),
        (&["prompts"], "code_review"),
        (&["call", "echo", "text=hi"], "hi"),
        (&["read", "server://info"], "ferry"),
        (&["prompt", "code_review", "code=x = 1"], "x = 1"),
        (
            &["complete", "--prompt", "code_review", "language=ru"],
            "rust",
        ),
        (&["ping"], "pong"),
        (&["discover"], "ferry"),
    ];
    for (name, form, _) in setup.forms() {
        for (call, shows) in calls {
            let what = format!("{call:?} {name}");
            let run = setup.place.ferry(&with(call, &form)).ok(&what);
            assert!(run.stdout.contains(shows), "{what}: {}", run.stdout);
        }
    }
    setup.assert_headers_sent();
}

/// The recording of a session with `ferry serve` (see `replay.rs`) replays against the
/// server named by every form.
#[test]
fn replay_takes_every_form() {
    let setup = Setup::new("replay");
    let recording = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replay/session.jsonl");
    let recording = recording.to_str().expect("a UTF-8 path");
    // What changes from run to run, and (one HTTP server for every form) what it counts.
    let volatile = [
        "--ignore",
        "sessions_total",
        "--ignore",
        "requests_served",
        "--ignore",
        "uptime_seconds",
        "--ignore",
        "tasks_alive",
        "--ignore",
        "countdowns_cancelled",
        "--ignore",
        "version",
    ];
    for (name, form, kind) in setup.forms() {
        let mut args = vec!["replay", recording, "--json"];
        args.extend(volatile);
        let run = setup.place.ferry(&with(&args, &form)).ok(name);
        let report = run.json(name);
        assert_eq!(report["target"]["kind"], kind, "{name}: {report:#}");
        let summary = &report["summary"];
        assert_eq!(summary["differed"], 0, "{name}: {report:#}");
        assert_eq!(summary["unanswered"], 0, "{name}: {report:#}");
    }
    setup.assert_headers_sent();
}

/// `ferry inspect` connects to the server named by every form (its page's state says so).
#[test]
fn inspect_takes_every_form() {
    let setup = Setup::new("inspect");
    for (name, form, kind) in setup.forms() {
        let mut child = setup
            .place
            .command(&with(&["inspect", "--no-browser"], &form))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ferry inspect");
        let mut url = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut url)
            .expect("ferry inspect prints its URL");
        let _running = Running(child);
        assert!(url.starts_with("http://127.0.0.1:"), "{name}: {url:?}");
        let state = inspector_get(url.trim(), "/api/state");
        let connection = &state["connections"][0];
        assert_eq!(connection["target"]["kind"], kind, "{name}: {state:#}");
        assert_eq!(
            connection["serverInfo"]["name"], "ferry",
            "{name}: {state:#}"
        );
    }
    setup.assert_headers_sent();
}

/// `GET path` of the inspector at `url` (its printed URL, whose launch code is traded for
/// the page's cookie first: it works once), as JSON.
fn inspector_get(url: &str, path: &str) -> Value {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, launch) = rest.split_once('/').expect("a path");
    let (head, _) = exchange(host, &format!("GET /{launch} HTTP/1.1\r\nHost: {host}\r\n"));
    assert!(head.starts_with("HTTP/1.1 303"), "{head}");
    let cookie = head
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: "))
        .and_then(|value| value.split(';').next())
        .unwrap_or_else(|| panic!("no cookie in {head}"));
    let (head, body) = exchange(
        host,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n"),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// One request (`head`: its request line and headers, each ending in CRLF) on a connection
/// of its own: the answer's head and body.
fn exchange(host: &str, head: &str) -> (String, String) {
    let mut stream = TcpStream::connect(host).expect("connect to the inspector");
    write!(stream, "{head}Connection: close\r\n\r\n").expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a response");
    (head.to_owned(), body.to_owned())
}

/// The sections of `help` whose heading starts with `heading`, up to the next blank line.
fn section(help: &str, heading: &str) -> String {
    let mut lines = help.lines().skip_while(|line| !line.starts_with(heading));
    let mut text: Vec<&str> = Vec::new();
    for line in lines.by_ref() {
        if line.is_empty() {
            break;
        }
        text.push(line);
    }
    text.join("\n")
}

#[test]
fn the_options_naming_the_server_read_the_same_in_every_command() {
    let place = Place::new("help");
    let helps: Vec<(&str, String)> = COMMANDS
        .iter()
        .map(|command| {
            (
                *command,
                place.ferry(&[command, "--help"]).ok(command).stdout,
            )
        })
        .collect();
    for heading in ["Server", "Authorization"] {
        let (first, help) = &helps[0];
        let expected = section(help, heading);
        for option in [
            "--url",
            "--header",
            "--server",
            "--config",
            "--connect-timeout",
        ] {
            if heading == "Server" {
                assert!(
                    expected.contains(option),
                    "{first}: {option} in\n{expected}"
                );
            }
        }
        assert!(expected.lines().count() > 3, "{first}: {heading}:\n{help}");
        for (command, help) in &helps[1..] {
            assert_eq!(
                section(help, heading),
                expected,
                "ferry {command} --help, section {heading}, differs from ferry {first}'s"
            );
        }
    }
    for (command, help) in &helps {
        assert!(
            help.lines()
                .any(|l| l.starts_with("Usage: ferry ") && l.ends_with("[-- <COMMAND>...]")),
            "{command}:\n{help}"
        );
    }
    // The bridge's too, but for the default it does not have and the wait it leaves to its
    // clients (aligned to its own widest option, then).
    let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
    let bridge = place.ferry(&["bridge", "--help"]).ok("bridge").stdout;
    let others = section(&helps[0].1, "Server");
    let expected: Vec<String> = others
        .lines()
        .skip(1)
        .filter(|l| !l.contains("--connect-timeout"))
        .map(words)
        .collect();
    let server = section(&bridge, "Server:");
    let got: Vec<String> = server.lines().skip(1).map(words).collect();
    assert_eq!(got, expected, "ferry bridge --help:\n{bridge}");
    assert_eq!(
        section(&bridge, "Authorization"),
        section(&helps[0].1, "Authorization")
    );
}

/// `ferry bridge` takes the forms of its direction: `--http` a stdio server named in a
/// `--config FILE`, `--stdio` an HTTP server named in the project's `.mcp.json` (its
/// headers sent) or given with `--url` and `--header`; the other kind is refused.
#[test]
fn the_bridge_takes_the_forms_of_its_direction() {
    let setup = Setup::new("bridge");
    let config = setup.config.as_str();
    // --http: the entry's command behind the bridge, reached by a client command.
    let mut bridge = setup
        .place
        .command(&[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--server",
            "local",
            "--config",
            config,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ferry bridge --http");
    let mut stderr = BufReader::new(bridge.stderr.take().expect("stderr"));
    let _bridge = Running(bridge);
    let mut banner = String::new();
    stderr.read_line(&mut banner).expect("the banner");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = banner
        .split("MCP on ")
        .nth(1)
        .map(str::trim)
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    let run = setup
        .place
        .ferry(&["call", "echo", "text=bridged", "--url", &url]);
    assert_eq!(run.ok("through the bridge").stdout, "bridged\n");
    // --stdio: a session over the bridge's stdin and stdout.
    let url = setup.guarded.url.as_str();
    for form in [
        &["--stdio", "--server", "web"][..],
        &["--stdio", "--", "@web"],
        &["--stdio", "--url", url, "--header", HEADER],
        &["--stdio", url, "--header", HEADER],
    ] {
        let mut args = vec!["bridge"];
        args.extend(form);
        let mut bridge = setup
            .place
            .command(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ferry bridge --stdio");
        let mut stdin = bridge.stdin.take().expect("stdin");
        let stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
        let _bridge = Running(bridge);
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
        .and_then(|()| writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#))
        .and_then(|()| writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#))
        .expect("write to the bridge");
        drop(stdin);
        let answers: Vec<Value> = stdout
            .lines()
            .map(|line| serde_json::from_str(&line.expect("a line")).expect("JSON"))
            .collect();
        assert_eq!(answers.len(), 2, "{form:?}: {answers:#?}");
        assert_eq!(
            answers[0]["result"]["serverInfo"]["name"], "ferry",
            "{form:?}"
        );
        assert_eq!(
            answers[1],
            json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
            "{form:?}"
        );
    }
    setup.assert_headers_sent();
    // Each direction refuses the other kind of server, and needs one.
    for wrong in [
        &["bridge", "--http", "127.0.0.1:0", "--server", "web"][..],
        &["bridge", "--http", "127.0.0.1:0"],
        &["bridge", "--stdio", "--server", "local", "--config", config],
        &["bridge", "--stdio"],
        &["bridge", "--stdio", url, "--url", url],
    ] {
        let run = setup.place.ferry(wrong);
        assert_eq!(run.code, Some(2), "{wrong:?}: {}", run.stderr);
    }
}
