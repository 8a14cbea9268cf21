//! The stateless era (2026-07-28): `server/discover`, the per-request `_meta` fields, the
//! unsupported-version error, `resultType` and the server's identity on results.

use ferry::protocol::ProtocolVersion;
use ferry::protocol::types::keys;
use serde_json::{Value, json};

use super::model::{Findings, Outcome, requirement};
use super::probe::{Probe, client_info};
use super::schema::Schema;
use super::target::{Conn, Reply};

requirement!(
    DISCOVER,
    "stateless.discover",
    Stateless,
    Must,
    "server/discover is answered with a valid DiscoverResult listing the revision among supportedVersions",
    "server/discover (2026-07-28)"
);
requirement!(
    UNSUPPORTED_VERSION,
    "stateless.unsupported-version",
    Stateless,
    Must,
    "a request naming an unsupported protocolVersion is answered with error -32022 and data.supported",
    "basic/versioning (2026-07-28)"
);
requirement!(
    MISSING_META,
    "stateless.missing-required-meta",
    Stateless,
    Must,
    "a request without the required clientCapabilities _meta field is refused with error -32602",
    "basic (2026-07-28: request _meta)"
);
requirement!(
    RESULT_TYPE,
    "stateless.result-type",
    Stateless,
    Must,
    "every result carries resultType",
    "schema (2026-07-28: Result.resultType)"
);
requirement!(
    SERVER_INFO,
    "stateless.server-info",
    Stateless,
    Should,
    "every result carries the server's identity in _meta (io.modelcontextprotocol/serverInfo)",
    "basic (2026-07-28: result _meta)"
);

/// `server/discover` for `revision` on a fresh connection: the declared capabilities and
/// the supported versions if the server speaks the revision; `None` (nothing recorded) if
/// it does not know the method at all, which is how a session-era server answers.
pub(crate) async fn discover(
    conn: &mut Conn,
    revision: ProtocolVersion,
    schema: &mut Schema,
    findings: &mut Findings,
) -> Option<(Value, Vec<String>)> {
    let rev = Some(revision.as_str());
    let params = json!({"_meta": {
        keys::PROTOCOL_VERSION: revision.as_str(),
        keys::CLIENT_CAPABILITIES: {},
        keys::CLIENT_INFO: client_info(),
    }});
    let reply = conn.request("server/discover", Some(params)).await;
    let result = match reply {
        Reply::Result(result) => result,
        Reply::Error(_) | Reply::Nothing => return None,
        other => {
            findings.record(
                &DISCOVER,
                rev,
                Outcome::Fail(format!("server/discover got {}", other.describe())),
            );
            return None;
        }
    };
    let mut problems = schema.problems("DiscoverResult", &result);
    let listed = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.contains(&json!(revision.as_str())));
    if !listed {
        problems.push(format!(
            "supportedVersions does not list {}",
            revision.as_str()
        ));
    }
    let outcome = if problems.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("server/discover: {}", problems.join("; ")))
    };
    findings.record(&DISCOVER, rev, outcome);
    let supported = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    Some((
        result.get("capabilities").cloned().unwrap_or(Value::Null),
        supported,
    ))
}

/// The era's request rules.
pub(crate) async fn check(probe: &mut Probe<'_>) {
    let unsupported = "1999-01-01";
    let params = json!({"_meta": {
        keys::PROTOCOL_VERSION: unsupported,
        keys::CLIENT_CAPABILITIES: {},
        keys::CLIENT_INFO: client_info(),
    }});
    let reply = probe.conn.request("server/discover", Some(params)).await;
    let ok = reply.code() == Some(-32022)
        && matches!(&reply, Reply::Error(e) if e.pointer("/data/supported").is_some_and(Value::is_array));
    probe.expect(&UNSUPPORTED_VERSION, ok, || {
        format!(
            "server/discover with protocolVersion {unsupported} got {}",
            reply.describe()
        )
    });

    let params = json!({"_meta": {keys::PROTOCOL_VERSION: probe.revision.as_str()}});
    let reply = probe.conn.request("server/discover", Some(params)).await;
    probe.expect(&MISSING_META, reply.code() == Some(-32602), || {
        format!(
            "server/discover without clientCapabilities got {}",
            reply.describe()
        )
    });
}

/// Judge a result of this era: `resultType`, and the server's identity.
pub(crate) fn judge_result(probe: &mut Probe<'_>, method: &str, result: &Value) {
    probe.expect(
        &RESULT_TYPE,
        result.get("resultType").is_some_and(Value::is_string),
        || format!("the {method} result has no resultType"),
    );
    let has_info = result
        .pointer("/_meta")
        .and_then(|m| m.get(keys::SERVER_INFO))
        .is_some();
    probe.expect(&SERVER_INFO, has_info, || {
        format!("the {method} result has no _meta serverInfo")
    });
}
