//! Running a `ferry` client command as a real process, with a person on the other side of
//! its authorization: when the command prints an authorization URL on stderr, the
//! [`Person`] approves it on the provider's pages and delivers the redirect to the
//! command's loopback listener, as a browser would.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use tokio::sync::mpsc;

use super::login::{Person, deliver};
use super::{Running, WAIT};

/// How a command ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// How many authorization URLs it printed (each approved by the person, if any).
    pub authorizations: usize,
}

impl Run {
    /// Panic with the output unless the command exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "{self:#?}");
        self
    }
}

/// Run `ferry ARGS...`; when it asks for authorization, `person` (if any) approves.
pub async fn run(args: &[&str], mut person: Option<&mut Person>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        // The listener and the URL only: no browser, whatever the test's environment.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry");
    let mut stdout = child.stdout.take().expect("stdout");
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let (tx, mut lines) = mpsc::unbounded_channel();
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    std::thread::spawn(move || {
        for line in stderr.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let child = Running(child);
    let mut stderr = String::new();
    let mut authorizations = 0;
    let mut asked = false;
    let read = async {
        while let Some(line) = lines.recv().await {
            stderr.push_str(&line);
            stderr.push('\n');
            // LoopbackAuthorizer: "Authorization needed: ...", a blank line, "  URL".
            if line.starts_with("Authorization needed") {
                asked = true;
            } else if asked && line.trim_start().starts_with("http") {
                asked = false;
                authorizations += 1;
                if let Some(person) = person.as_deref_mut() {
                    let redirect = person
                        .approve(line.trim())
                        .await
                        .unwrap_or_else(|e| panic!("approving {line}: {e}\n{stderr}"));
                    deliver(&redirect)
                        .await
                        .unwrap_or_else(|e| panic!("delivering the redirect: {e}\n{stderr}"));
                }
            }
        }
    };
    if tokio::time::timeout(WAIT, read).await.is_err() {
        panic!("ferry {args:?} did not finish within {WAIT:?}; stderr so far:\n{stderr}");
    }
    let mut child = child;
    let status = tokio::task::spawn_blocking(move || {
        let status = child.0.wait();
        (status, child)
    })
    .await
    .expect("wait");
    Run {
        code: status.0.expect("exit status").code(),
        stdout: stdout.join().expect("stdout reader"),
        stderr,
        authorizations,
    }
}
