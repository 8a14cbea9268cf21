//! The official peers: installed once (`interop/install.sh`), located, and run as real
//! processes; the verdicts every cell produces.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest one cell's peer may run before the test gives up on it (a safety net
/// against a hung peer, far above a cell's real few seconds; not a measurement).
pub(crate) const PEER_DEADLINE: Duration = Duration::from_secs(180);

/// `interop/` at the workspace root.
pub(crate) fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// Install the npm packages and the Python SDK (once; `install.sh` reuses an install whose
/// lock file is unchanged and serializes concurrent test binaries).
pub(crate) fn install() {
    static INSTALL: Mutex<bool> = Mutex::new(false);
    let mut done = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        return;
    }
    let script = interop_dir().join("install.sh");
    let status = Command::new(&script)
        .status()
        .unwrap_or_else(|e| panic!("{script:?} runs (needs sh, npm, python3): {e}"));
    assert!(status.success(), "{script:?} failed");
    *done = true;
}

/// `node` and the script's path, for a program of `interop/ts/`.
pub(crate) fn node(script: &str) -> (String, Vec<String>) {
    install();
    let path = interop_dir().join("ts").join(script);
    ("node".into(), vec![path.to_string_lossy().into_owned()])
}

/// The venv's Python and the script's path, for a program of `interop/py/`.
pub(crate) fn python(script: &str) -> (String, Vec<String>) {
    install();
    let dir = interop_dir();
    let python = dir.join(".venv/bin/python");
    let path = dir.join("py").join(script);
    (
        python.to_string_lossy().into_owned(),
        vec![path.to_string_lossy().into_owned()],
    )
}

/// `@modelcontextprotocol/server-everything`'s entry point.
pub(crate) fn everything() -> (String, Vec<String>) {
    install();
    let path =
        interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    ("node".into(), vec![path.to_string_lossy().into_owned()])
}

/// The `ferry` binary under test.
pub(crate) fn ferry() -> String {
    env!("CARGO_BIN_EXE_ferry").into()
}

/// One check's outcome, as the peers print it (one JSON object per line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Verdict {
    /// The check's name (`tools`, `progress`...).
    pub(crate) check: String,
    /// Whether it passed.
    pub(crate) ok: bool,
    /// What was seen.
    pub(crate) detail: String,
}

impl Verdict {
    pub(crate) fn new(check: &str, ok: bool, detail: impl Into<String>) -> Verdict {
        Verdict {
            check: check.into(),
            ok,
            detail: detail.into(),
        }
    }
}

/// A process killed when dropped (a failing test leaves nothing behind).
pub(crate) struct Running {
    pub(crate) child: Child,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start a server that announces its URL on one line (`listening URL` on stdout for the
/// SDK peers, `ferry serve: MCP on URL` on stderr for Ferry) and return it with the URL.
pub(crate) fn start_http_server(
    program: &str,
    args: &[String],
    banner_on_stderr: bool,
) -> (Running, String) {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null());
    if banner_on_stderr {
        command.stdout(Stdio::null()).stderr(Stdio::piped());
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::inherit());
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    let pipe: Box<dyn std::io::Read + Send> = if banner_on_stderr {
        Box::new(child.stderr.take().expect("stderr"))
    } else {
        Box::new(child.stdout.take().expect("stdout"))
    };
    let running = Running { child };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(pipe).lines();
        while let Some(Ok(line)) = lines.next() {
            if let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].trim().to_owned());
                break;
            }
        }
        // Keep draining, so the server never blocks on a full pipe.
        for _ in lines {}
    });
    let url = rx
        .recv_timeout(PEER_DEADLINE)
        .unwrap_or_else(|_| panic!("{program} {args:?} announced no URL"));
    (running, url)
}

/// Start `server-everything` on HTTP (`streamableHttp` or `sse`) and return it with its
/// URL. It listens on the port in `PORT` and reports no port it chose itself, so the test
/// picks a free one — and picks again if another process took it meanwhile.
pub(crate) fn start_everything(mode: &str) -> (Running, String) {
    let (program, mut args) = everything();
    args.push(mode.into());
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new(&program)
            .args(&args)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
        let stderr = child.stderr.take().expect("stderr");
        let running = Running { child };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            while let Some(Ok(line)) = lines.next() {
                if line.contains(&format!("port {port}")) || line.contains("in use") {
                    let _ = tx.send(!line.contains("in use"));
                    break;
                }
            }
            for _ in lines {}
        });
        match rx.recv_timeout(PEER_DEADLINE) {
            Ok(true) => {
                let path = if mode == "sse" { "/sse" } else { "/mcp" };
                return (running, format!("http://127.0.0.1:{port}{path}"));
            }
            Ok(false) => continue,
            Err(_) => panic!("server-everything {mode} did not start"),
        }
    }
    panic!("server-everything {mode}: no free port in five tries")
}

/// Run a client peer to its end and collect its verdicts (stdout, one JSON per line);
/// anything else it prints, and its exit status, become failed verdicts.
pub(crate) fn run_client_peer(program: &str, args: &[String]) -> Vec<Verdict> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let mut running = Running { child };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut verdicts = Vec::new();
    let deadline = std::time::Instant::now() + PEER_DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => verdicts.push(serde_json::from_str(&line).unwrap_or_else(|_| {
                Verdict::new("output", false, format!("not a verdict: {line}"))
            })),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                verdicts.push(Verdict::new(
                    "deadline",
                    false,
                    format!("still running after {PEER_DEADLINE:?}"),
                ));
                return verdicts;
            }
        }
    }
    let status = running.child.wait().expect("wait for the client peer");
    if !status.success() {
        verdicts.push(Verdict::new("exit", false, format!("{status}")));
    }
    verdicts
}
