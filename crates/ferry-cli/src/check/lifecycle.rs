//! Lifecycle (session era): `initialize` and version negotiation, the `initialized`
//! notification, requests before `initialize`.

use ferry::protocol::ProtocolVersion;
use serde_json::{Value, json};

use super::model::{Findings, Outcome, requirement};
use super::probe::client_info;
use super::schema::Schema;
use super::target::{Conn, Reply};

requirement!(
    INITIALIZE_ANSWERED,
    "lifecycle.initialize-answered",
    Lifecycle,
    Must,
    "initialize is answered with a result (for a revision the server supports, or another one it offers)",
    "basic/lifecycle#initialization"
);
requirement!(
    INITIALIZE_SHAPE,
    "lifecycle.initialize-result-shape",
    Lifecycle,
    Must,
    "the initialize result is a valid InitializeResult of the negotiated revision",
    "basic/lifecycle#initialization"
);
requirement!(
    VERSION_COUNTER_OFFER,
    "lifecycle.unsupported-version-counter-offer",
    Lifecycle,
    Must,
    "initialize with an unsupported protocolVersion is answered with another version the server supports",
    "basic/lifecycle#version-negotiation"
);
requirement!(
    REQUEST_BEFORE_INITIALIZE,
    "lifecycle.request-before-initialize",
    Lifecycle,
    Should,
    "a request other than ping before initialize is refused with an error",
    "basic/lifecycle#initialization"
);
requirement!(
    SECOND_INITIALIZE,
    "lifecycle.second-initialize",
    Lifecycle,
    Should,
    "a second initialize on an initialized connection is refused with an error",
    "basic/lifecycle#initialization"
);

/// The `initialize` request of the checker for `version`.
pub(crate) fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": client_info(),
    })
}

/// How an `initialize` for one revision went.
pub(crate) enum Handshake {
    /// The server speaks the revision: its declared capabilities.
    Accepted { capabilities: Value },
    /// It offered another revision instead.
    CounterOffer(String),
    /// It failed: the evidence (not recorded yet: whether it is a failure depends on what
    /// the server claims to support).
    Failed(String),
}

/// Initialize `conn` for `revision`, recording what the handshake shows; on acceptance the
/// `initialized` notification is sent.
pub(crate) async fn handshake(
    conn: &mut Conn,
    revision: ProtocolVersion,
    schema: &mut Schema,
    findings: &mut Findings,
) -> Handshake {
    let rev = Some(revision.as_str());
    let reply = conn
        .request("initialize", Some(initialize_params(revision.as_str())))
        .await;
    let Reply::Result(result) = reply else {
        return Handshake::Failed(format!(
            "initialize {} got {}{}",
            revision.as_str(),
            reply.describe(),
            conn.http_status()
        ));
    };
    findings.record(&INITIALIZE_ANSWERED, rev, Outcome::Pass);
    let offered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if offered != revision.as_str() {
        return Handshake::CounterOffer(offered.to_owned());
    }
    let problems = schema.problems("InitializeResult", &result);
    let outcome = if problems.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("InitializeResult: {}", problems.join("; ")))
    };
    findings.record(&INITIALIZE_SHAPE, rev, outcome);
    conn.notify("notifications/initialized", None).await;
    let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
    Handshake::Accepted { capabilities }
}

/// Record that `initialize` failed for a revision the server should speak.
pub(crate) fn record_failure(revision: ProtocolVersion, evidence: String, findings: &mut Findings) {
    findings.record(
        &INITIALIZE_ANSWERED,
        Some(revision.as_str()),
        Outcome::Fail(evidence),
    );
}

/// A second `initialize` on an initialized connection (stdio: over HTTP, an `initialize`
/// starts another session).
pub(crate) async fn second_initialize(
    conn: &mut Conn,
    revision: ProtocolVersion,
    findings: &mut Findings,
) {
    if conn.http.is_some() {
        return;
    }
    let reply = conn
        .request("initialize", Some(initialize_params(revision.as_str())))
        .await;
    let outcome = match reply {
        Reply::Error(_) => Outcome::Pass,
        other => Outcome::Fail(format!("a second initialize got {}", other.describe())),
    };
    findings.record(&SECOND_INITIALIZE, Some(revision.as_str()), outcome);
}

/// The checks that need a connection of their own and no revision: a request before
/// `initialize`, then `initialize` with a version nobody supports (what was offered
/// instead is returned: `(asked, offered)`).
pub(crate) async fn fresh_connection_checks(
    conn: &mut Conn,
    findings: &mut Findings,
) -> Option<(String, String)> {
    let reply = conn.request("tools/list", None).await;
    // Over HTTP, a 4xx status is the refusal (its body cannot name a session's request).
    let http_refused = conn
        .http
        .as_ref()
        .and_then(|h| h.exchanges.last())
        .is_some_and(|e| e.status.is_client_error());
    let outcome = match reply {
        _ if http_refused => Outcome::Pass,
        Reply::Error(_) => Outcome::Pass,
        other => Outcome::Fail(format!(
            "tools/list before initialize got {}",
            other.describe()
        )),
    };
    findings.record(&REQUEST_BEFORE_INITIALIZE, None, outcome);

    let unsupported = "1999-01-01";
    let reply = conn
        .request("initialize", Some(initialize_params(unsupported)))
        .await;
    let outcome = match &reply {
        Reply::Result(result) => match result.get("protocolVersion").and_then(Value::as_str) {
            Some(offered) if offered != unsupported => Outcome::Pass,
            _ => Outcome::Fail(format!("initialize {unsupported} got {}", reply.describe())),
        },
        other => Outcome::Fail(format!(
            "initialize {unsupported} got {} (expected a result offering another version)",
            other.describe()
        )),
    };
    findings.record(&VERSION_COUNTER_OFFER, None, outcome);
    let offered = match &reply {
        Reply::Result(result) => result.get("protocolVersion").and_then(Value::as_str),
        _ => None,
    };
    offered
        .filter(|o| *o != unsupported)
        .map(|o| (unsupported.to_owned(), o.to_owned()))
}
