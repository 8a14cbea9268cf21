//! Version consistency over the whole run: a version the server offers in place of the
//! one asked for is one it serves; `server/discover`'s `supportedVersions` are the
//! revisions it accepts; and asked again on a fresh connection, it negotiates the same
//! revision with the same capabilities. (Every result is validated against the
//! negotiated revision's schema by the other checks.)

use ferry::protocol::types::keys;
use ferry::protocol::{Era, ProtocolVersion};
use serde_json::{Value, json};

use super::lifecycle::initialize_params;
use super::model::{Findings, Outcome, requirement};
use super::probe::client_info;
use super::target::{Reply, Target, Timing, shorten};

requirement!(
    COUNTER_OFFER_SERVED,
    "lifecycle.counter-offer-served",
    Lifecycle,
    Must,
    "a version the server offers in place of the one asked for is one it serves (initialize with it is accepted)",
    "basic/lifecycle#version-negotiation"
);
requirement!(
    SUPPORTED_HONEST,
    "lifecycle.supported-versions-honest",
    Lifecycle,
    Must,
    "server/discover's supportedVersions are the revisions the server accepts: each listed one tried is served, each served one is listed",
    "basic/versioning"
);
requirement!(
    SAME_AGAIN,
    "lifecycle.same-version-again",
    Lifecycle,
    Must,
    "asked again on a fresh connection, the server negotiates the same revision",
    "basic/lifecycle#version-negotiation"
);
requirement!(
    SAME_CAPABILITIES,
    "lifecycle.same-capabilities-again",
    Lifecycle,
    Should,
    "asked again on a fresh connection, the server declares the same capabilities",
    "basic/lifecycle#capability-negotiation"
);

/// What the run saw of versions.
#[derive(Default)]
pub(crate) struct Seen {
    /// The revisions checked, with the capabilities declared the first time.
    pub(crate) accepted: Vec<(ProtocolVersion, Value)>,
    /// Versions offered instead of the one asked for: (asked, offered).
    pub(crate) offers: Vec<(String, String)>,
    /// What `server/discover` listed, if it answered.
    pub(crate) claimed: Option<Vec<String>>,
    /// The revisions tried.
    pub(crate) tried: Vec<ProtocolVersion>,
}

/// Judge what was seen, and ask every accepted revision again.
pub(crate) async fn check(target: &Target, timing: Timing, seen: &Seen, findings: &mut Findings) {
    let served = |v: &str| seen.accepted.iter().any(|(r, _)| r.as_str() == v);
    for (asked, offered) in &seen.offers {
        let outcome = if served(offered) {
            Outcome::Pass
        } else if seen.tried.iter().any(|r| r.as_str() == offered) {
            Outcome::Fail(format!(
                "initialize {asked} was answered with {offered}, but initialize {offered} was not accepted"
            ))
        } else {
            Outcome::Skip(format!(
                "initialize {asked} was answered with {offered}, which this run did not try"
            ))
        };
        findings.record(&COUNTER_OFFER_SERVED, None, outcome);
    }
    if let Some(claimed) = &seen.claimed {
        let mut problems = Vec::new();
        for revision in &seen.tried {
            let listed = claimed.iter().any(|c| c == revision.as_str());
            match (listed, served(revision.as_str())) {
                (true, false) => problems.push(format!("{revision} is listed but not served")),
                (false, true) => problems.push(format!("{revision} is served but not listed")),
                _ => {}
            }
        }
        let outcome = if problems.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(format!(
                "supportedVersions {claimed:?}: {}",
                problems.join("; ")
            ))
        };
        findings.record(&SUPPORTED_HONEST, None, outcome);
    }
    for (revision, capabilities) in &seen.accepted {
        let Ok(mut conn) = target.open(timing) else {
            continue;
        };
        let rev = Some(revision.as_str());
        let (method, params) = match revision.era() {
            Era::Stateless => (
                "server/discover",
                json!({"_meta": {
                    keys::PROTOCOL_VERSION: revision.as_str(),
                    keys::CLIENT_CAPABILITIES: {},
                    keys::CLIENT_INFO: client_info(),
                }}),
            ),
            Era::Session => ("initialize", initialize_params(revision.as_str())),
        };
        let reply = conn.request(method, Some(params)).await;
        conn.close().await;
        let Reply::Result(result) = reply else {
            let evidence = format!("{method} {revision} again got {}", reply.describe());
            findings.record(&SAME_AGAIN, rev, Outcome::Fail(evidence));
            continue;
        };
        let same = match revision.era() {
            Era::Stateless => result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.contains(&json!(revision.as_str()))),
            Era::Session => result.get("protocolVersion") == Some(&json!(revision.as_str())),
        };
        findings.record(
            &SAME_AGAIN,
            rev,
            if same {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "{method} {revision} again got {}",
                    shorten(&result.to_string(), 160)
                ))
            },
        );
        let again = result.get("capabilities").cloned().unwrap_or(Value::Null);
        findings.record(
            &SAME_CAPABILITIES,
            rev,
            if &again == capabilities {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "first {}, then {}",
                    shorten(&capabilities.to_string(), 120),
                    shorten(&again.to_string(), 120)
                ))
            },
        );
    }
}
