//! The stdio transport: stdout carries only protocol messages, and the server stays up.

use super::model::{Outcome, requirement};
use super::probe::Probe;

requirement!(
    ONLY_MESSAGES,
    "stdio.stdout-only-messages",
    Stdio,
    Must,
    "the server writes nothing to stdout that is not a JSON-RPC message",
    "basic/transports#stdio"
);
requirement!(
    STAYS_UP,
    "stdio.stays-up",
    Stdio,
    Must,
    "the server process keeps running while its stdin is open",
    "basic/transports#stdio"
);

/// The reference server in this process has no stdio: its requirements are skipped.
pub(crate) fn not_checked(probe: &mut Probe<'_>) {
    let why = "the reference server in this process has no stdio (`ferry check -- ferry serve` checks it)";
    probe.record(&ONLY_MESSAGES, Outcome::Skip(why.into()));
    probe.record(&STAYS_UP, Outcome::Skip(why.into()));
}

/// Judge what the connection saw (stdio targets only).
pub(crate) fn check(probe: &mut Probe<'_>) {
    let garbage = std::mem::take(&mut probe.conn.garbage);
    match garbage.first() {
        None => probe.record(&ONLY_MESSAGES, Outcome::Pass),
        Some(first) => probe.record(
            &ONLY_MESSAGES,
            Outcome::Fail(format!(
                "{} line(s) that are not JSON, the first: {first}",
                garbage.len()
            )),
        ),
    }
    let outcome = match probe.conn.exit_status() {
        Some(status) => Outcome::Fail(format!("the server exited ({status})")),
        None if probe.conn.is_closed() => Outcome::Fail("the server closed its stdout".into()),
        None => Outcome::Pass,
    };
    probe.record(&STAYS_UP, outcome);
}
