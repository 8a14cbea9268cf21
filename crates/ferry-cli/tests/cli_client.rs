//! The client commands as the built binary runs them: each command's human and `--json`
//! output against the reference server in-process and against `ferry serve` as a child
//! (`-- ferry serve`), exit codes (0, 1 for a JSON-RPC error or `isError`, 2 for usage),
//! saved images, the server's sampling and elicitation requests answered by flags, the wire
//! trace, and Ctrl-C during a long call.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

/// What one run printed and how it exited.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    #[track_caller]
    fn ok(self) -> Run {
        assert_eq!(
            self.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

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
}

/// Run `ferry args...` in `dir`.
fn ferry_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Run {
    let output = Command::new(FERRY)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("COLUMNS", "100")
        .output()
        .expect("run ferry");
    Run {
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

fn ferry<S: AsRef<OsStr>>(args: &[S]) -> Run {
    ferry_in(&std::env::temp_dir(), args)
}

/// The targets every command is checked against: in-process, and `ferry serve` as a child.
fn targets() -> [Vec<&'static str>; 2] {
    [vec![], vec!["--", FERRY, "serve"]]
}

/// `args` then the target.
fn with(args: &[&str], target: &[&str]) -> Vec<String> {
    args.iter().chain(target).map(|a| (*a).to_owned()).collect()
}

/// A fresh empty directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

#[test]
fn lists_human_and_json() {
    for target in targets() {
        let run = ferry(&with(&["tools"], &target)).ok();
        let mut lines = run.stdout.lines();
        assert!(lines.next().unwrap().starts_with("NAME "), "{}", run.stdout);
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with("echo ") && l.contains("Send the text back unchanged.")),
            "{}",
            run.stdout
        );
        assert!(run.stdout.lines().all(|l| l.chars().count() <= 100));
        let tools = ferry(&with(&["tools", "--json"], &target)).ok().json();
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"echo") && names.contains(&"countdown"),
            "{names:?}"
        );

        let run = ferry(&with(&["resources"], &target)).ok();
        assert!(run.stdout.starts_with("URI "), "{}", run.stdout);
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with("server://info ") && l.contains("application/json")),
            "{}",
            run.stdout
        );
        let json = ferry(&with(&["resources", "--json"], &target)).ok().json();
        assert!(json["resources"].as_array().unwrap().len() >= 3);

        let run = ferry(&with(&["templates"], &target)).ok();
        assert!(run.stdout.contains("ferry://notes/{id}"), "{}", run.stdout);
        let json = ferry(&with(&["templates", "--json"], &target)).ok().json();
        assert_eq!(
            json["resourceTemplates"][0]["uriTemplate"],
            "ferry://notes/{id}"
        );

        let run = ferry(&with(&["prompts"], &target)).ok();
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with("code_review ") && l.contains("code language?")),
            "{}",
            run.stdout
        );
        let json = ferry(&with(&["prompts", "--json"], &target)).ok().json();
        assert!(json["prompts"].as_array().unwrap().len() >= 2);
    }
}

#[test]
fn call_human_and_json() {
    for target in targets() {
        // The schema says string: `42` stays a string.
        let run = ferry(&with(&["call", "echo", "text=42"], &target)).ok();
        assert_eq!(run.stdout, "42\n");
        let json = ferry(&with(&["call", "echo", "text=42", "--json"], &target))
            .ok()
            .json();
        assert_eq!(json["content"][0]["text"], "42");

        // Numbers parse as JSON; structured content is printed once, as pretty JSON.
        let run = ferry(&with(&["call", "add", "a=2", "b=40"], &target)).ok();
        assert_eq!(run.stdout, "{\n  \"sum\": 42.0\n}\n");
        let json = ferry(&with(&["call", "add", "a=2", "b=40", "--json"], &target))
            .ok()
            .json();
        assert_eq!(json["structuredContent"]["sum"], 42.0);

        let run = ferry(&with(
            &["call", "echo", "--args", r#"{"text":"x y"}"#],
            &target,
        ))
        .ok();
        assert_eq!(run.stdout, "x y\n");

        let run = ferry(&with(&["call", "resource_link"], &target)).ok();
        assert!(
            run.stdout
                .starts_with("link: ferry://readme (readme, text/markdown)")
        );
        let run = ferry(&with(&["call", "embedded_resource"], &target)).ok();
        assert!(
            run.stdout
                .starts_with("resource ferry://readme (text/markdown):\n# Ferry")
        );
    }
}

#[test]
fn exit_code_1_for_is_error_and_json_rpc_errors() {
    for target in targets() {
        let run = ferry(&with(&["call", "calculate", "expression=1/0"], &target)).exit(1);
        assert!(run.stdout.contains("division by zero"), "{}", run.stdout);
        assert!(run.stderr.contains("isError"), "{}", run.stderr);
        let json = ferry(&with(
            &["call", "calculate", "expression=1/0", "--json"],
            &target,
        ))
        .exit(1)
        .json();
        assert_eq!(json["isError"], true);

        let run = ferry(&with(&["call", "no_such_tool"], &target)).exit(1);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(
            run.stderr.contains("InvalidParams") && run.stderr.contains("no_such_tool"),
            "{}",
            run.stderr
        );
        let json = ferry(&with(&["call", "no_such_tool", "--json"], &target))
            .exit(1)
            .json();
        assert_eq!(json["error"]["code"], -32602);

        let run = ferry(&with(&["read", "ferry://notes/99"], &target)).exit(1);
        assert!(run.stderr.contains("resource not found"), "{}", run.stderr);
    }
}

/// An answer over `--max-message-bytes` fails the call at once (not after the timeout),
/// saying the limit and the size.
#[test]
fn an_answer_over_the_message_limit_fails_at_once() {
    // (`tools/list`, which `call` reads first, is under the limit; the answer is over.)
    let text = format!("text={}", "x".repeat(20_000));
    let started = std::time::Instant::now();
    let run = ferry(&[
        "call",
        "echo",
        &text,
        "--max-message-bytes",
        "15000",
        "--timeout",
        "30",
        "--",
        FERRY,
        "serve",
    ])
    .exit(1);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        run.stderr.contains("tools/call echo failed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("limit of 15000 bytes"),
        "{}",
        run.stderr
    );
    // The default takes it.
    ferry(&["call", "echo", &text, "--", FERRY, "serve"]).exit(0);
}

#[test]
fn exit_code_2_for_usage_errors() {
    for args in [
        &["call"][..],
        &["call", "echo", "no_equals_sign"],
        &["call", "echo", "=x"],
        &["call", "echo", "--args", "[1]"],
        &["call", "echo", "--args", "{"],
        &["call", "echo", "text=x", "--args", "{}"],
        &["call", "echo", "--elicit-reply", "3"],
        &["tools", "--protocol-version", "1999-01-01"],
        &["tools", "--timeout", "soon"],
        &["prompt", "code_review", "code"],
        &["complete", "language=ru"],
        &["complete", "--prompt", "code_review", "=ru"],
        &["no_such_command"],
        // Authorization options apply to --url only; without it they are a usage error.
        &["tools", "--scope", "mcp:tools"],
        &["tools", "--no-auth"],
        &["ping", "--client-id", "c", "--", "ferry", "serve"],
        &["ping", "--header", "A: b", "--", "ferry", "serve"],
    ] {
        let run = ferry(args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert!(run.stderr.contains("error"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn exit_code_1_when_the_server_cannot_be_reached() {
    let run = ferry(&["ping", "--", "/nonexistent/mcp-server"]).exit(1);
    assert!(run.stderr.contains("cannot start"), "{}", run.stderr);
    // A child that exits before answering: said at once, with its status.
    let run = ferry(&["ping", "--", "false"]).exit(1);
    assert!(
        run.stderr
            .contains("`false` exited before answering (exit status: 1)"),
        "{}",
        run.stderr
    );
}

#[test]
fn images_and_audio_are_saved_and_named() {
    for (i, target) in targets().into_iter().enumerate() {
        let dir = scratch(&format!("media-{i}"));
        let run = ferry_in(&dir, &with(&["call", "image"], &target)).ok();
        assert_eq!(
            run.stdout,
            "image saved to image-1.png (image/png, 69 bytes)\n"
        );
        let png = std::fs::read(dir.join("image-1.png")).expect("the image file");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));

        let run = ferry_in(&dir, &with(&["call", "mixed", "--out", "shots"], &target)).ok();
        assert!(
            run.stdout
                .starts_with("three blocks\nimage saved to shots/mixed-1.png")
        );
        assert!(dir.join("shots/mixed-1.png").is_file());

        let run = ferry_in(&dir, &with(&["call", "audio", "--out", "sound"], &target)).ok();
        assert!(
            run.stdout
                .starts_with("audio saved to sound/audio-1.wav (audio/wav")
        );
        let wav = std::fs::read(dir.join("sound/audio-1.wav")).expect("the audio file");
        assert!(wav.starts_with(b"RIFF"));

        // --json prints the data and saves nothing.
        let json = ferry_in(
            &dir,
            &with(&["call", "audio", "--json", "--out", "j"], &target),
        )
        .ok()
        .json();
        assert_eq!(json["content"][0]["type"], "audio");
        assert!(!dir.join("j").exists());

        let run = ferry_in(&dir, &with(&["read", "ferry://logo.png"], &target)).ok();
        assert!(
            run.stdout
                .starts_with("resource ferry://logo.png saved to logo-1.png")
        );
        assert!(dir.join("logo-1.png").is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn read_prompt_complete_human_and_json() {
    for target in targets() {
        let run = ferry(&with(&["read", "ferry://notes/1"], &target)).ok();
        assert_eq!(run.stdout, "Buy rope.\n");
        let json = ferry(&with(&["read", "ferry://readme", "--json"], &target))
            .ok()
            .json();
        assert_eq!(json["contents"][0]["mimeType"], "text/markdown");
        let json = ferry(&with(&["read", "server://info"], &target))
            .ok()
            .json();
        assert_eq!(json["name"], "ferry");

        let run = ferry(&with(
            &[
                "prompt",
                "code_review",
                "code=fn main() {}",
                "language=rust",
            ],
            &target,
        ))
        .ok();
        assert_eq!(
            run.stdout,
            "[user]\nPlease review this rust:\n\nfn main() {}\n"
        );
        let json = ferry(&with(
            &["prompt", "summarize", "text=a=b", "--json"],
            &target,
        ))
        .ok()
        .json();
        assert_eq!(json["messages"][1]["content"]["text"], "Summarize:\n\na=b");

        let run = ferry(&with(
            &["complete", "--prompt", "code_review", "language=ru"],
            &target,
        ))
        .ok();
        assert_eq!(run.stdout, "ruby\nrust\n");
        let run = ferry(&with(
            &["complete", "--template", "ferry://notes/{id}", "id=1"],
            &target,
        ))
        .ok();
        assert_eq!(run.stdout, "1\n10\n");
        let json = ferry(&with(
            &["complete", "--prompt", "code_review", "language", "--json"],
            &target,
        ))
        .ok()
        .json();
        assert_eq!(json["completion"]["values"].as_array().unwrap().len(), 8);
    }
}

#[test]
fn ping_and_discover_in_both_eras() {
    for target in targets() {
        let run = ferry(&with(&["ping"], &target)).ok();
        assert!(run.stdout.starts_with("pong from ferry "), "{}", run.stdout);
        assert_eq!(
            ferry(&with(&["ping", "--json"], &target)).ok().json(),
            serde_json::json!({})
        );
        let run = ferry(&with(
            &["ping", "--protocol-version", "2024-11-05"],
            &target,
        ))
        .ok();
        assert!(run.stdout.starts_with("pong"));

        let run = ferry(&with(&["discover"], &target)).ok();
        assert!(
            run.stdout
                .contains("protocol:      2026-07-28 (stateless era)"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("supported:     2026-07-28, 2025-11-25"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("tools (listChanged)"), "{}", run.stdout);
        let json = ferry(&with(&["discover", "--json"], &target)).ok().json();
        assert!(json["supportedVersions"].as_array().unwrap().len() >= 5);

        let session = ["discover", "--protocol-version", "2025-06-18"];
        let run = ferry(&with(&session, &target)).ok();
        assert!(
            run.stdout
                .contains("protocol:      2025-06-18 (session era)"),
            "{}",
            run.stdout
        );
        let json = ferry(&with(&[&session[..], &["--json"]].concat(), &target))
            .ok()
            .json();
        assert_eq!(json["protocolVersion"], "2025-06-18");
        assert_eq!(json["serverInfo"]["name"], "ferry");
    }
}

#[test]
fn sampling_elicitation_and_roots_answered_by_flags() {
    for target in targets() {
        for era in [&[][..], &["--protocol-version", "2025-06-18"]] {
            let call = |args: &[&str]| ferry(&with(&[args, era].concat(), &target));
            let run = call(&["call", "sample", "prompt=hi?", "--sampling-reply", "hello"]).ok();
            assert_eq!(run.stdout, "ferry-cli says: hello\n");
            assert!(run.stderr.contains("sampling): hi?"), "{}", run.stderr);

            let run = call(&["call", "sample", "prompt=hi?"]).exit(1);
            assert!(
                run.stderr.contains("--sampling-reply TEXT"),
                "{}",
                run.stderr
            );

            let run = call(&["call", "elicit", "message=Who?"]).ok();
            assert_eq!(run.stdout, "declined\n");
            assert!(
                run.stderr.contains("Who?") && run.stderr.contains("name (string, required)"),
                "{}",
                run.stderr
            );
            let reply = r#"{"name":"Ann","colour":"teal"}"#;
            let run = call(&["call", "elicit", "message=Who?", "--elicit-reply", reply]).ok();
            assert_eq!(run.stdout, "accepted: name=Ann, colour=teal\n");

            let run = call(&["call", "roots", "--root", "file:///srv/a", "--root", "/b"]).ok();
            assert_eq!(run.stdout, "2 roots\nfile:///srv/a\nfile:///b\n");
        }
    }
}

#[test]
fn progress_and_trace_stay_off_stdout() {
    for target in targets() {
        let run = ferry(&with(
            &["call", "countdown", "steps=3", "interval_ms=1", "-v"],
            &target,
        ))
        .ok();
        assert_eq!(run.stdout, "counted 3 steps\n");
        assert!(
            run.stderr.contains("--> {\"jsonrpc\":\"2.0\",\"id\":"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("<-- "), "{}", run.stderr);
        assert!(
            run.stderr.contains("notifications/progress"),
            "{}",
            run.stderr
        );
    }
}

fn alive(pid: u32) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Start a long countdown with a wire trace, wait for its first progress, press Ctrl-C
/// (SIGINT), and return the exit code, how long the exit took and the trace.
fn interrupt(target: &[&'static str]) -> (Option<i32>, Duration, String) {
    let args = [
        &["call", "countdown", "steps=1000", "interval_ms=20", "-v"][..],
        target,
    ]
    .concat();
    let mut child = Command::new(FERRY)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ferry");
    let (lines_tx, lines) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut trace = String::new();
    let started = Instant::now();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("progress before the timeout");
        trace.push_str(&line);
        trace.push('\n');
        if line.starts_with("<-- ") && line.contains("notifications/progress") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{trace}");
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let sent = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("ferry did not exit after SIGINT:\n{trace}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(2)) {
        trace.push_str(&line);
        trace.push('\n');
    }
    (code, took, trace)
}

#[test]
fn ctrl_c_cancels_the_call_and_shuts_the_child_down() {
    let (code, took, trace) = interrupt(&["--", FERRY, "serve"]);
    assert_eq!(code, Some(130), "{trace}");
    assert!(took < Duration::from_secs(2), "took {took:?}:\n{trace}");
    assert!(
        trace
            .lines()
            .any(|l| l.starts_with("--> ") && l.contains("\"notifications/cancelled\"")),
        "{trace}"
    );
    assert!(trace.contains("interrupted"), "{trace}");
    let pid: u32 = trace
        .lines()
        .find_map(|l| l.strip_prefix("ferry: started "))
        .and_then(|l| l.rsplit("(pid ").next())
        .and_then(|p| p.trim_end_matches(')').parse().ok())
        .expect("the child's pid in the trace");
    assert!(!alive(pid), "the server process {pid} is still running");
}

#[test]
fn ctrl_c_cancels_an_in_process_call() {
    let (code, took, trace) = interrupt(&[]);
    assert_eq!(code, Some(130), "{trace}");
    assert!(took < Duration::from_secs(2), "took {took:?}:\n{trace}");
    assert!(trace.contains("\"notifications/cancelled\""), "{trace}");
}
