//! The MCP hosts' files as the built binary reads and writes them: `ferry install` into each
//! host's file (Claude Code, Claude Desktop, Cursor, VS Code; project, user and local
//! scopes), read back by `ferry servers`, and `ferry call --server NAME` (or `-- @NAME`)
//! reaching the installed `ferry serve` end to end, on stdio and over HTTP (Streamable
//! HTTP and 2024-11-05 HTTP+SSE); JSONC comments kept; a different entry of the same name
//! refused without `--force`; the search order (`--config`, the project, the user) and the
//! shadowed duplicates; the hosts' variables, `env` passed to the child and `headers` sent
//! (an `Authorization` header turning the CLI's own OAuth off); `ferry inspect` reading a
//! named server's entry once, when it connects.
//!
//! Every run points `HOME`, `XDG_CONFIG_HOME` and the current directory at a scratch
//! directory of its own: the real user's files are never read.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// What one run printed and how it exited.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl Run {
    #[track_caller]
    fn exit(self, code: i32) -> Run {
        assert_eq!(
            self.code,
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    fn ok(self) -> Run {
        self.exit(0)
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Run `command` to its end, without stdin.
fn run(mut command: Command) -> Run {
    let output = command.stdin(Stdio::null()).output().expect("run ferry");
    Run {
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// A home directory, its settings directory and a project, all scratch (removed after a
/// test that passed).
struct Place {
    root: PathBuf,
    home: PathBuf,
    config: PathBuf,
    project: PathBuf,
}

impl Place {
    fn new(name: &str) -> Place {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("hosts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let config = home.join(".config");
        let project = root.join("project");
        // The project is a repository's root (`.git`), as `ferry` looks for the project up
        // from the current directory: this scratch one, not the clone it sits in.
        for dir in [&config, &project.join(".git")] {
            std::fs::create_dir_all(dir).expect("create a scratch directory");
        }
        // The path `ferry` sees as its current directory (Claude Code's local scope keys).
        let project = project.canonicalize().expect("canonical project path");
        Place {
            root,
            home,
            config,
            project,
        }
    }

    /// Run `ferry args...` in the project, with `vars` set.
    fn ferry_with<S: AsRef<OsStr>>(&self, args: &[S], vars: &[(&str, &str)]) -> Run {
        run(self.command(args, vars))
    }

    fn ferry<S: AsRef<OsStr>>(&self, args: &[S]) -> Run {
        self.ferry_with(args, &[])
    }

    /// Run `ferry args...` in `dir` instead of the project.
    fn ferry_in<S: AsRef<OsStr>>(&self, dir: &Path, args: &[S]) -> Run {
        let mut command = self.command(args, &[]);
        command.current_dir(dir);
        run(command)
    }

    fn command<S: AsRef<OsStr>>(&self, args: &[S], vars: &[(&str, &str)]) -> Command {
        let mut command = Command::new(FERRY);
        command
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("COLUMNS", "200")
            .env_remove("FERRY_LOG");
        for (key, value) in vars {
            command.env(key, value);
        }
        command
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

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `ferry call echo text=hi` at the server named NAME: it must answer `hi`.
#[track_caller]
fn echo_through(place: &Place, target: &[&str]) -> Run {
    let mut args = vec!["call", "echo", "text=hi", "-v"];
    args.extend_from_slice(target);
    let run = place.ferry(&args).ok();
    assert_eq!(run.stdout, "hi\n", "stderr:\n{}", run.stderr);
    run
}

/// An entry that says on stderr which one it is, then runs `ferry serve`.
fn announcing(word: &str) -> Value {
    json!({
        "command": "sh",
        "args": ["-c", format!("echo {word} >&2; exec \"$0\" serve"), FERRY],
    })
}

#[test]
fn install_writes_each_hosts_file_in_its_shape_and_the_server_answers() {
    let place = Place::new("install");
    let home = &place.home;
    let project = place.project.to_string_lossy().into_owned();
    let stdio = json!({"command": FERRY, "args": ["serve"]});
    let typed = json!({"type": "stdio", "command": FERRY, "args": ["serve"]});
    // (host, scope, file, where the servers sit in it, the entry in the host's shape)
    let cases: [(&str, &str, PathBuf, Vec<&str>, &Value); 8] = [
        (
            "claude-code",
            "project",
            place.project.join(".mcp.json"),
            vec!["mcpServers"],
            &typed,
        ),
        (
            "claude-code",
            "user",
            home.join(".claude.json"),
            vec!["mcpServers"],
            &typed,
        ),
        (
            "claude-code",
            "local",
            home.join(".claude.json"),
            vec!["projects", &project, "mcpServers"],
            &typed,
        ),
        (
            "claude-desktop",
            "user",
            place.config.join("Claude/claude_desktop_config.json"),
            vec!["mcpServers"],
            &stdio,
        ),
        (
            "cursor",
            "project",
            place.project.join(".cursor/mcp.json"),
            vec!["mcpServers"],
            &stdio,
        ),
        (
            "cursor",
            "user",
            home.join(".cursor/mcp.json"),
            vec!["mcpServers"],
            &stdio,
        ),
        (
            "vscode",
            "project",
            place.project.join(".vscode/mcp.json"),
            vec!["servers"],
            &typed,
        ),
        (
            "vscode",
            "user",
            place.config.join("Code/User/mcp.json"),
            vec!["servers"],
            &typed,
        ),
    ];
    for (host, scope, file, section, entry) in &cases {
        let name = format!("{host}-{scope}");
        let run = place
            .ferry(&[
                "install", &name, "--host", host, "--scope", scope, "--", FERRY, "serve",
            ])
            .ok();
        assert!(
            run.stderr.contains(&file.display().to_string()),
            "{}",
            run.stderr
        );
        let mut servers = &read_json(file);
        for key in section {
            servers = &servers[key];
        }
        assert_eq!(&servers[&name], *entry, "{name} in {}", file.display());
    }
    // The user's ~/.claude.json holds two scopes side by side, each where Claude Code
    // looks for it.
    let claude = read_json(&home.join(".claude.json"));
    assert_eq!(
        claude["mcpServers"].as_object().unwrap().len(),
        1,
        "{claude:#}"
    );

    // `ferry servers` finds every one, in the search order, none shadowed.
    let listed = place.ferry(&["servers", "--json"]).ok().json();
    let order = [2, 0, 4, 6, 1, 3, 5, 7];
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 8, "{listed:#}");
    for (server, case) in servers.iter().zip(order) {
        let (host, scope, file, _, _) = &cases[case];
        assert_eq!(server["name"], format!("{host}-{scope}"), "{listed:#}");
        assert_eq!(server["host"], *host);
        assert_eq!(server["scope"], *scope);
        assert_eq!(server["kind"], "stdio");
        assert_eq!(server["file"], file.to_string_lossy().as_ref());
        assert_eq!(server["command"], json!([FERRY, "serve"]));
        assert_eq!(server["shadowed"], false);
    }
    let human = place.ferry(&["servers"]).ok().stdout;
    assert!(
        human.starts_with("NAME")
            && human.contains("claude-desktop-user")
            && human.contains("stdio"),
        "{human}"
    );

    // Each one, named by --server, is `ferry serve` answering a call; -v says which file.
    for (host, scope, file, _, _) in &cases {
        let name = format!("{host}-{scope}");
        let run = echo_through(&place, &["--server", &name]);
        let from = format!("from {} ({host}, {scope})", file.display());
        assert!(run.stderr.contains(&from), "{from}\n{}", run.stderr);
    }
    // `-- @NAME` is the same.
    echo_through(&place, &["--", "@vscode-user"]);
}

#[test]
fn jsonc_comments_trailing_commas_and_other_entries_are_kept() {
    let place = Place::new("jsonc");
    let file = place.project.join(".vscode/mcp.json");
    let original = r#"// The project's servers.
{
  "inputs": [
    { "type": "promptString", "id": "token", "description": "API token", "password": true },
  ],
  "servers": {
    // Asks the person for a token when it starts.
    "needs-input": {
      "type": "stdio",
      "command": "node",
      "args": ["${workspaceFolder}/server.js"],
      "env": { "TOKEN": "${input:token}" }, // asked for at start
    },
  },
}
"#;
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, original).unwrap();
    place
        .ferry(&["install", "ours", "--host", "vscode", "--", FERRY, "serve"])
        .ok();
    let edited = std::fs::read_to_string(&file).unwrap();
    // Every line of the file as it was is still there, in order: the entry was added
    // between them and nothing else moved.
    let mut lines = edited.lines();
    for line in original.lines() {
        assert!(
            lines.any(|l| l == line),
            "{line:?} is missing or moved:\n{edited}"
        );
    }
    assert!(edited.contains(r#""command": ""#), "{edited}");
    // The file as it was, kept.
    let backup = place.project.join(".vscode/mcp.json.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);

    let listed = place.ferry(&["servers", "--json"]).ok().json();
    let names: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["needs-input", "ours"], "{listed:#}");
    assert_eq!(listed["servers"][1]["kind"], "stdio");
    echo_through(&place, &["--", "@ours"]);

    // A variable Ferry cannot give is an error naming it and the file.
    let run = place.ferry(&["ping", "--server", "needs-input"]).exit(1);
    assert!(
        run.stderr.contains("${input:token}") && run.stderr.contains(&file.display().to_string()),
        "{}",
        run.stderr
    );
}

#[test]
fn a_different_entry_of_the_same_name_is_replaced_only_with_force() {
    let place = Place::new("force");
    let file = place.project.join(".mcp.json");
    let install = |extra: &[&str]| {
        let mut args = vec!["install", "x", "--env", "A=1", "--", FERRY, "serve"];
        args.extend_from_slice(extra);
        place.ferry(&args)
    };
    // Default host and scope: Claude Code's project file.
    let run = install(&[]).ok();
    assert!(run.stderr.contains("added x"), "{}", run.stderr);
    let first = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap(),
        json!({"mcpServers": {"x": {"type": "stdio", "command": FERRY, "args": ["serve"], "env": {"A": "1"}}}})
    );
    assert!(!place.project.join(".mcp.json.bak").exists());

    // The same again: said so, nothing written.
    let run = install(&[]).ok();
    assert!(run.stderr.contains("already"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);
    assert!(!place.project.join(".mcp.json.bak").exists());

    // A different one: refused, the file untouched.
    let run = install(&["--verbose"]).exit(1);
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // With --force: replaced, the file as it was kept.
    let run = place
        .ferry(&[
            "install",
            "x",
            "--force",
            "--env",
            "A=1",
            "--",
            FERRY,
            "serve",
            "--verbose",
        ])
        .ok();
    assert!(run.stderr.contains("replaced x"), "{}", run.stderr);
    let replaced = read_json(&file);
    assert_eq!(
        replaced["mcpServers"]["x"]["args"],
        json!(["serve", "--verbose"])
    );
    assert_eq!(
        std::fs::read_to_string(place.project.join(".mcp.json.bak")).unwrap(),
        first
    );
}

/// From a directory inside the project, its files are the project root's: found there,
/// `${workspaceFolder}` is the root, and an install in the project scope writes there.
#[test]
fn a_subdirectory_finds_the_project_at_its_root() {
    let place = Place::new("subdir");
    place.write(
        &place.project.join(".mcp.json"),
        &json!({"mcpServers": {"rooted": {
            "command": "sh",
            "args": ["-c", "echo \"W=$W\" >&2; exec \"$0\" serve", FERRY],
            "env": {"W": "${workspaceFolder}"},
        }}}),
    );
    let deep = place.project.join("src").join("deep");
    std::fs::create_dir_all(&deep).unwrap();
    let run = place
        .ferry_in(&deep, &["call", "echo", "text=hi", "--server", "rooted"])
        .ok();
    assert_eq!(run.stdout, "hi\n", "{}", run.stderr);
    let root = format!("W={}", place.project.display());
    assert!(run.stderr.contains(&root), "{root}\n{}", run.stderr);

    place
        .ferry_in(
            &deep,
            &[
                "install", "more", "--host", "cursor", "--", "ferry", "serve",
            ],
        )
        .ok();
    let written = read_json(&place.project.join(".cursor/mcp.json"));
    assert_eq!(
        written["mcpServers"]["more"]["command"], "ferry",
        "{written:#}"
    );
    assert!(!deep.join(".cursor").exists());
}

#[test]
fn config_then_project_then_user_and_the_shadowed_marked() {
    let place = Place::new("order");
    place.write(
        &place.home.join(".claude.json"),
        &json!({"mcpServers": {"dup": announcing("from-user"), "mine": announcing("from-user")}}),
    );
    place.write(
        &place.project.join(".cursor/mcp.json"),
        &json!({"mcpServers": {"dup": announcing("from-project")}}),
    );
    let extra = place.project.join("extra.json");
    place.write(
        &extra,
        &json!({"servers": {"dup": announcing("from-config")}}),
    );

    // The project's file before the user's.
    let run = echo_through(&place, &["--server", "dup"]);
    assert!(
        run.stderr.contains("from-project") && !run.stderr.contains("from-user"),
        "{}",
        run.stderr
    );
    let run = echo_through(&place, &["--server", "mine"]);
    assert!(run.stderr.contains("from-user"), "{}", run.stderr);
    // --config before both.
    let extra_arg = extra.to_string_lossy();
    let run = echo_through(&place, &["--config", &extra_arg, "--", "@dup"]);
    assert!(
        run.stderr.contains("from-config") && !run.stderr.contains("from-project"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("from {extra_arg} (--config)")),
        "{}",
        run.stderr
    );

    let listed = place
        .ferry(&["servers", "--json", "--config", &extra_arg])
        .ok()
        .json();
    let seen: Vec<(&str, &str, bool)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let file = s["file"].as_str().unwrap();
            let file = file.rsplit_once(['/', '\\']).map_or(file, |(_, f)| f);
            (
                s["name"].as_str().unwrap(),
                file,
                s["shadowed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("dup", "extra.json", false),
            ("dup", "mcp.json", true),
            ("dup", ".claude.json", true),
            ("mine", ".claude.json", false),
        ],
        "{listed:#}"
    );
    let human = place.ferry(&["servers"]).ok().stdout;
    assert!(human.contains("dup (shadowed)"), "{human}");

    // A name nowhere: exit 1, the files looked in named.
    let run = place.ferry(&["ping", "--server", "nowhere"]).exit(1);
    assert!(
        run.stderr.contains("no server named \"nowhere\"") && run.stderr.contains(".cursor"),
        "{}",
        run.stderr
    );
}

#[test]
fn variables_are_expanded_and_env_reaches_the_child() {
    let place = Place::new("vars");
    // Claude Code's syntax in its project file.
    place.write(
        &place.project.join(".mcp.json"),
        &json!({"mcpServers": {
            "cc": {
                "type": "stdio",
                "command": "${FERRY_TEST_SHELL:-sh}",
                "args": ["-c", "echo \"A=$A B=$B\" >&2; exec \"$0\" serve", "${FERRY_TEST_BIN}"],
                "env": {"A": "${FERRY_TEST_A}", "B": "${FERRY_TEST_UNSET:-fallback}"}
            },
            "unset": {"command": "sh", "args": ["${FERRY_TEST_UNSET}"]},
        }}),
    );
    // VS Code's and Cursor's syntax, and an envFile, in Cursor's project file.
    std::fs::write(
        place.project.join(".env"),
        "# from the env file\nFROM_FILE='yes'\n",
    )
    .unwrap();
    place.write(
        &place.project.join(".cursor/mcp.json"),
        &json!({"mcpServers": {
            "code": {
                "command": "sh",
                "args": ["-c", "echo \"W=$W H=$H E=$E F=$FROM_FILE\" >&2; exec \"$0\" serve", "${env:FERRY_TEST_BIN}"],
                "env": {"W": "${workspaceFolder}", "H": "${userHome}${/}x", "E": "[${env:FERRY_TEST_UNSET}]"},
                "envFile": "${workspaceFolder}/.env"
            },
            "computed": {"command": "sh", "args": ["${config:editor.fontSize}"]},
        }}),
    );
    let vars = [("FERRY_TEST_BIN", FERRY), ("FERRY_TEST_A", "one")];
    let call = |name: &str| place.ferry_with(&["call", "echo", "text=hi", "--server", name], &vars);
    let run = call("cc").ok();
    assert_eq!(run.stdout, "hi\n");
    assert!(run.stderr.contains("A=one B=fallback"), "{}", run.stderr);
    let run = call("code").ok();
    assert_eq!(run.stdout, "hi\n");
    let expected = format!(
        "W={} H={}/x E=[] F=yes",
        place.project.display(),
        place.home.display()
    );
    assert!(run.stderr.contains(&expected), "{expected}\n{}", run.stderr);

    // Unset without a default, and a variable of VS Code's that Ferry cannot compute: errors
    // naming the variable and the file, before anything runs.
    let run = call("unset").exit(1);
    assert!(
        run.stderr.contains("FERRY_TEST_UNSET") && run.stderr.contains(".mcp.json"),
        "{}",
        run.stderr
    );
    let run = call("computed").exit(1);
    assert!(
        run.stderr.contains("${config:editor.fontSize}") && run.stderr.contains(".cursor"),
        "{}",
        run.stderr
    );
}

/// `ferry serve --http 127.0.0.1:0`, killed when dropped; its Streamable HTTP URL.
struct Served(Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http() -> Served {
    let mut child = Command::new(FERRY)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry serve --http");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    let url = banner
        .trim()
        .split_once("MCP on ")
        .map(|(_, url)| url.to_owned())
        .unwrap_or_else(|| panic!("banner {banner:?}"));
    // Keep reading, so that the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Served(child, url)
}

#[test]
fn http_and_sse_entries_reach_ferry_serve_http() {
    let place = Place::new("http");
    let served = serve_http();
    let base = served.1.trim_end_matches("/mcp").to_owned();
    // Installed as Streamable HTTP, with a header (which the reference server ignores).
    place
        .ferry(&[
            "install",
            "web",
            "--host",
            "cursor",
            "--url",
            &served.1,
            "--header",
            "X-Team: a",
        ])
        .ok();
    assert_eq!(
        read_json(&place.project.join(".cursor/mcp.json")),
        json!({"mcpServers": {"web": {"url": served.1, "headers": {"X-Team": "a"}}}})
    );
    // An sse entry, in VS Code's shape, for the 2024-11-05 transport.
    let sse = format!("{base}/sse");
    place
        .ferry(&[
            "install", "legacy", "--host", "vscode", "--url", &sse, "--sse",
        ])
        .ok();
    assert_eq!(
        read_json(&place.project.join(".vscode/mcp.json")),
        json!({"servers": {"legacy": {"type": "sse", "url": sse}}})
    );
    let listed = place.ferry(&["servers", "--json"]).ok().json();
    let kinds: Vec<(&str, &str, &str)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["kind"].as_str().unwrap(),
                s["url"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("web", "http", served.1.as_str()), ("legacy", "sse", &sse)]
    );
    echo_through(&place, &["--server", "web"]);
    let run = echo_through(&place, &["--", "@legacy"]);
    assert!(run.stderr.contains("legacy (sse)"), "{}", run.stderr);
    // A session of the 2024-11-05 transport: the session era, never the stateless one.
    assert!(
        !run.stderr.contains("protocol 2026-07-28"),
        "{}",
        run.stderr
    );
}

/// A server on 127.0.0.1 that answers every request 401 and keeps each request's head.
fn refusing_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).to_lowercase();
            // The body read too: a socket closed with unread bytes is reset, and the
            // client could lose the answer.
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(0);
            let _ = std::io::copy(&mut (&mut stream).take(length), &mut std::io::sink());
            kept.lock().unwrap().push(head);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\n\
                  content-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (url, heads)
}

#[test]
fn entry_headers_are_sent_and_their_authorization_turns_oauth_off() {
    let place = Place::new("headers");
    let (url, heads) = refusing_server();
    place.write(
        &place.home.join(".cursor/mcp.json"),
        &json!({"mcpServers": {"guarded": {
            "url": url,
            "headers": {"Authorization": "Bearer ${env:FERRY_TEST_TOKEN}", "X-Tenant": "${FERRY_TEST_TENANT:-acme}"}
        }}}),
    );
    let run = place
        .ferry_with(
            &["ping", "--server", "guarded"],
            &[("FERRY_TEST_TOKEN", "s3cret")],
        )
        .exit(3);
    assert!(
        run.stderr.contains("authorization is off") && run.stderr.contains("the server's entry"),
        "{}",
        run.stderr
    );
    {
        let heads = heads.lock().unwrap();
        assert!(!heads.is_empty());
        for head in heads.iter() {
            // Only the MCP endpoint: no OAuth discovery.
            assert!(head.starts_with("post /mcp "), "{head}");
            assert!(
                head.contains("\r\nauthorization: bearer s3cret\r\n"),
                "{head}"
            );
            assert!(head.contains("\r\nx-tenant: acme\r\n"), "{head}");
        }
    }
    // --header adds to the entry's, replacing one of the same name.
    heads.lock().unwrap().clear();
    place
        .ferry_with(
            &["ping", "--server", "guarded", "--header", "x-tenant: other"],
            &[("FERRY_TEST_TOKEN", "s3cret")],
        )
        .exit(3);
    let heads = heads.lock().unwrap();
    assert!(!heads.is_empty());
    for head in heads.iter() {
        assert!(
            head.contains("\r\nx-tenant: other\r\n") && !head.contains("acme"),
            "{head}"
        );
    }
}

#[test]
fn named_servers_are_usage_checked() {
    let place = Place::new("usage");
    place.write(
        &place.home.join(".cursor/mcp.json"),
        &json!({"mcpServers": {"local": {"command": FERRY, "args": ["serve"]}}}),
    );
    // --server is one way to name the server: not with --url nor a command.
    place
        .ferry(&[
            "ping",
            "--server",
            "local",
            "--url",
            "http://127.0.0.1:1/mcp",
        ])
        .exit(2);
    place
        .ferry(&["ping", "--server", "local", "--", FERRY, "serve"])
        .exit(2);
    // HTTP-only options with a stdio server.
    let run = place
        .ferry(&["ping", "--server", "local", "--header", "A: b"])
        .exit(1);
    assert!(run.stderr.contains("stdio server"), "{}", run.stderr);
    // Nothing after @NAME; --config without a name.
    place.ferry(&["ping", "--", "@local", "more"]).exit(1);
    place.ferry(&["ping", "--config", "x.json"]).exit(1);
    // Claude Desktop's file takes stdio servers only.
    let run = place
        .ferry(&[
            "install",
            "w",
            "--host",
            "claude-desktop",
            "--url",
            "http://h/mcp",
        ])
        .exit(2);
    assert!(
        run.stderr.contains("ferry bridge --stdio"),
        "{}",
        run.stderr
    );
    // An invalid host file is refused, and left as it was.
    let broken = place.project.join(".vscode/mcp.json");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(&broken, "{ \"servers\": [").unwrap();
    place
        .ferry(&["install", "x", "--host", "vscode", "--", FERRY, "serve"])
        .exit(1);
    assert_eq!(
        std::fs::read_to_string(&broken).unwrap(),
        "{ \"servers\": ["
    );
    // ...and skipped by the search, which still finds the others.
    echo_through(&place, &["--server", "local"]);
}

/// The inspector at its printed URL, its launch code traded (once) for the page's cookie.
struct Inspector {
    host: String,
    cookie: String,
}

impl Inspector {
    /// Open the printed `url` as the page does: its answer sets the session's cookie.
    fn open(url: &str) -> Inspector {
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (host, launch) = rest.split_once('/').expect("a path");
        let (head, _) = exchange(
            host,
            &format!("GET /{launch} HTTP/1.1\r\nHost: {host}\r\n"),
            "",
        );
        assert!(head.starts_with("HTTP/1.1 303"), "{head}");
        let cookie = head
            .lines()
            .find_map(|line| line.strip_prefix("set-cookie: "))
            .and_then(|value| value.split(';').next())
            .unwrap_or_else(|| panic!("no cookie in {head}"))
            .to_owned();
        Inspector {
            host: host.to_owned(),
            cookie,
        }
    }

    /// `GET path`, as JSON.
    fn get(&self, path: &str) -> Value {
        self.request("GET", path, "")
    }

    /// `METHOD path` with a JSON `body`, as JSON.
    fn request(&self, method: &str, path: &str, body: &str) -> Value {
        let host = &self.host;
        let (head, body) = exchange(
            host,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {}\r\n\
                 Content-Type: application/json\r\n",
                self.cookie
            ),
            body,
        );
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    }
}

/// One request (`head`: its request line and headers, each ending in CRLF) on a connection
/// of its own: the answer's head and body.
fn exchange(host: &str, head: &str, body: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(host).expect("connect to the inspector");
    write!(
        stream,
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a response");
    (head.to_owned(), body.to_owned())
}

/// `ferry inspect --server mine --config CONFIG`, and the URL it prints.
fn inspect_named(place: &Place, config: &Path) -> (std::process::Child, String) {
    let config_arg = config.display().to_string();
    let args = [
        "inspect",
        "--no-browser",
        "--config",
        &config_arg,
        "--server",
        "mine",
    ];
    let mut child = place
        .command(&args, &[])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ferry inspect");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("ferry inspect prints its URL");
    (child, url)
}

#[test]
fn the_inspector_reads_a_named_servers_entry_once() {
    let place = Place::new("inspect-once");
    let config = place.root.join("mine.json");
    place.write(
        &config,
        &json!({"mcpServers": {"mine": {"command": FERRY, "args": ["serve"]}}}),
    );
    let (mut child, url) = inspect_named(&place, &config);
    let inspector = Inspector::open(url.trim());
    let target = || inspector.get("/api/state")["connections"][0]["target"].clone();
    let before = target();
    // The entry is gone: the connection still names the server its entry gave.
    std::fs::remove_file(&config).expect("remove the file");
    let after = target();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        before,
        json!({"kind": "stdio", "command": [FERRY, "serve"]})
    );
    assert_eq!(after, before);
}

/// The inspector's "check" runs `ferry check` on the named server's entry (its command and
/// environment), not on the reference server.
#[test]
fn the_inspectors_check_runs_on_a_named_servers_entry() {
    let place = Place::new("inspect-check");
    let config = place.root.join("mine.json");
    let log = place.root.join("started.log");
    place.write(
        &config,
        &json!({"mcpServers": {"mine": {
            "command": "sh",
            "args": ["-c", "echo \"$MARK\" >> \"$1\"; exec \"$0\" serve", FERRY, log.display().to_string()],
            "env": {"MARK": "from-the-entry"},
        }}}),
    );
    let (mut child, url) = inspect_named(&place, &config);
    let inspector = Inspector::open(url.trim());
    let conn = inspector.get("/api/state")["connections"][0]["id"].clone();
    let started = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(started(), 1, "the inspector's own connection");
    let answer = inspector.request("POST", "/api/check", &json!({"conn": conn}).to_string());
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer["report"].is_object(), "{answer}");
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        started() > 1,
        "ferry check started the entry's server: {lines:?}"
    );
    assert!(lines.lines().all(|l| l == "from-the-entry"), "{lines:?}");
}
