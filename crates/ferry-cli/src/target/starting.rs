//! Waiting for a server run as a child to answer for the first time. It may take minutes
//! (`cargo run` building it): while it runs, the wait goes on up to the connect timeout,
//! saying on stderr every so often what it waits for and the last line the child wrote on
//! its stderr; its exit ends the wait at once, reported with its exit status and its last
//! stderr lines.

use std::future::Future;
use std::time::Duration;

use ferry::engine::ChildProcess;
use tokio::time::Instant;

/// The first note after this long without an answer, then one this often for a minute.
const FIRST_NOTES: Duration = Duration::from_secs(10);

/// After the first minute, a note this often.
const LATER_NOTES: Duration = Duration::from_secs(30);

/// How many of the child's last stderr lines an exit report quotes.
const EXIT_LINES: usize = 8;

/// How long, once the child's output has ended, its exit is waited for to report it.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How a wait for the first answer ended.
pub(crate) enum Waited<T> {
    /// The awaited future completed (an answer, or a failure of its own).
    Done(T),
    /// The child exited first, or the wait timed out: what to tell the person.
    Failed(String),
}

/// A child being waited for: how to name it, and how long it is given.
pub(crate) struct Starting<'a> {
    pub(crate) child: &'a ChildProcess,
    /// The command as typed (see [`super::shown`]).
    pub(crate) shown: &'a str,
    /// The connect timeout.
    pub(crate) limit: Duration,
}

impl Starting<'_> {
    /// Run `answer` while the child runs: `note` gets a line to print on stderr now and
    /// then; the child's exit or the end of `limit` ends the wait.
    pub(crate) async fn wait<F: Future>(
        &self,
        answer: F,
        note: impl Fn(&str),
    ) -> Waited<F::Output> {
        let started = Instant::now();
        let deadline = started + self.limit;
        let exited = self.child.exited();
        tokio::pin!(answer, exited);
        let mut next = started + FIRST_NOTES;
        loop {
            tokio::select! {
                biased;
                done = &mut answer => return Waited::Done(done),
                status = &mut exited => return Waited::Failed(self.exited(status.ok())),
                () = tokio::time::sleep_until(deadline) => return Waited::Failed(self.timed_out()),
                () = tokio::time::sleep_until(next) => {
                    let waited = next - started;
                    note(&self.still_waiting(waited));
                    next += if waited < Duration::from_secs(60) {
                        FIRST_NOTES
                    } else {
                        LATER_NOTES
                    };
                }
            }
        }
    }

    /// What to say when the connect timeout has passed.
    pub(crate) fn timed_out(&self) -> String {
        format!(
            "no answer from `{}` within {} s (--connect-timeout); {}",
            self.shown,
            self.limit.as_secs_f64(),
            self.running()
        )
    }

    /// What to say while waiting, `waited` after the start.
    pub(crate) fn still_waiting(&self, waited: Duration) -> String {
        format!(
            "no answer from `{}` after {} s; {}",
            self.shown,
            waited.as_secs(),
            self.running()
        )
    }

    /// That the child still runs, and what it last said.
    fn running(&self) -> String {
        let said = match self.child.stderr_tail().pop() {
            Some(line) => format!("its last stderr line: {line}"),
            None => "it has written nothing on stderr".to_owned(),
        };
        format!("it is still running (pid {}); {said}", self.child.id())
    }

    /// The report of a child that exited before answering.
    pub(crate) fn exited(&self, status: Option<std::process::ExitStatus>) -> String {
        let status = status.map_or_else(|| "its status unknown".to_owned(), |s| s.to_string());
        let tail = self.child.stderr_tail();
        let said = match tail.len() {
            0 => "it wrote nothing on stderr".to_owned(),
            n => {
                let last = &tail[n.saturating_sub(EXIT_LINES)..];
                let lines: Vec<String> = last.iter().map(|l| format!("  {l}")).collect();
                format!(
                    "its last stderr {}:\n{}",
                    if last.len() == 1 { "line" } else { "lines" },
                    lines.join("\n")
                )
            }
        };
        format!(
            "`{}` exited before answering ({status}); {said}",
            self.shown
        )
    }

    /// The report of the child's exit, if it exits within a moment: for a wait that failed
    /// because the child's output ended (it is exiting, or has).
    pub(crate) async fn exit_report(&self) -> Option<String> {
        match tokio::time::timeout(EXIT_GRACE, self.child.exited()).await {
            Ok(status) => Some(self.exited(status.ok())),
            Err(_) => None,
        }
    }
}
