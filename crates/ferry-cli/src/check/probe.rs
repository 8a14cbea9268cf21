//! One revision's connection as the checks see it: requests in that revision's dialect
//! (per-request `_meta` in the stateless era), the server's declared capabilities, the
//! schema, and where findings go.

use ferry::protocol::types::keys;
use ferry::protocol::{Era, ProtocolVersion};
use serde_json::{Value, json};

use super::model::{Findings, Outcome, Requirement};
use super::schema::Schema;
use super::target::{Conn, Reply};

/// What a check run may do beyond asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ToolPolicy {
    /// Call no tool.
    None,
    /// Call tools annotated `readOnlyHint: true` (the default).
    ReadOnly,
    /// Call every tool whose input schema the checker can satisfy.
    All,
}

/// A revision under check.
pub(crate) struct Probe<'a> {
    pub(crate) conn: Conn,
    pub(crate) revision: ProtocolVersion,
    /// The server's declared capabilities (`initialize` or `server/discover`).
    pub(crate) capabilities: Value,
    pub(crate) schema: Schema,
    pub(crate) findings: &'a mut Findings,
    pub(crate) tools: ToolPolicy,
    /// Progress tokens the checker has sent.
    pub(crate) progress_tokens: Vec<Value>,
    /// How many notifications had arrived when `logging/setLevel warning` was answered.
    pub(crate) level_set_at: Option<usize>,
    /// A tool that took a while and reported progress meanwhile (name, arguments, how
    /// long it took): the in-flight cancellation check uses it.
    pub(crate) slow_tool: Option<(String, Value, std::time::Duration)>,
    /// A tool call that reported progress before its result (name, arguments, how many
    /// progress notifications it sent): the resumability check cuts its stream.
    pub(crate) resumable_call: Option<(String, Value, usize)>,
    /// A tool that sent log messages during its call (name, arguments): the logging
    /// check calls it at several levels.
    pub(crate) logging_tool: Option<(String, Value)>,
    /// Whether to check cancellation in flight (once per run: it waits for a slow tool).
    pub(crate) cancel_in_flight: bool,
}

impl Probe<'_> {
    /// The revision's wire string.
    pub(crate) fn rev(&self) -> Option<&'static str> {
        Some(self.revision.as_str())
    }

    /// Whether this is the stateless era.
    pub(crate) fn stateless(&self) -> bool {
        self.revision.era() == Era::Stateless
    }

    /// Record an outcome under this revision.
    pub(crate) fn record(&mut self, requirement: &'static Requirement, outcome: Outcome) {
        let revision = self.rev();
        self.findings.record(requirement, revision, outcome);
    }

    /// Record a pass or a failure with `evidence`.
    pub(crate) fn expect(
        &mut self,
        requirement: &'static Requirement,
        ok: bool,
        evidence: impl FnOnce() -> String,
    ) {
        let outcome = if ok {
            Outcome::Pass
        } else {
            Outcome::Fail(evidence())
        };
        self.record(requirement, outcome);
    }

    /// Whether the server declared capability `name`.
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|c| !c.is_null())
    }

    /// `params` with the per-request `_meta` fields of the stateless era added.
    pub(crate) fn params(&self, params: Value) -> Value {
        let mut params = match params {
            Value::Object(map) => Value::Object(map),
            _ => json!({}),
        };
        if self.stateless() {
            let meta = &mut params["_meta"];
            if !meta.is_object() {
                *meta = json!({});
            }
            meta[keys::PROTOCOL_VERSION] = json!(self.revision.as_str());
            meta[keys::CLIENT_CAPABILITIES] = json!({});
            meta[keys::CLIENT_INFO] = client_info();
        }
        params
    }

    /// Send a request in this revision's dialect and wait for its response.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Reply {
        let params = self.params(params);
        let params = (params.as_object().is_some_and(|m| !m.is_empty())).then_some(params);
        let reply = self.conn.request(method, params).await;
        super::jsonrpc::check_response_shape(self, method, &reply);
        if self.stateless()
            && let Reply::Result(result) = &reply
        {
            super::stateless::judge_result(self, method, result);
        }
        reply
    }

    /// A cheap request the server must answer with a result: `ping`, or `server/discover`
    /// in the stateless era (which has no `ping`). The checker sends one after input that
    /// must not be answered, or must be answered with an error, to know when the server
    /// has read it.
    pub(crate) fn barrier_method(&self) -> &'static str {
        if self.stateless() {
            "server/discover"
        } else {
            "ping"
        }
    }

    /// Send the barrier request with `id` and wait for its response.
    pub(crate) async fn barrier(&mut self, id: &str) -> Reply {
        let params = self.params(json!({}));
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": self.barrier_method()});
        if params.as_object().is_some_and(|m| !m.is_empty()) {
            message["params"] = params;
        }
        self.conn.send(&message).await;
        let within = self.conn.timing.request;
        self.conn.response(&json!(id), within).await
    }

    /// Validate `value` against definition `def` of the revision's schema, recording the
    /// outcome under `requirement` (pass only adds to earlier passes).
    pub(crate) fn check_shape(
        &mut self,
        requirement: &'static Requirement,
        def: &'static str,
        what: &str,
        value: &Value,
    ) -> bool {
        let problems = self.schema.problems(def, value);
        let ok = problems.is_empty();
        self.expect(requirement, ok, || {
            format!("{what} is not a valid {def}: {}", problems.join("; "))
        });
        ok
    }
}

/// The checker's `clientInfo`.
pub(crate) fn client_info() -> Value {
    json!({"name": "ferry-check", "version": env!("CARGO_PKG_VERSION")})
}
