//! Asking the client for input — sampling, roots, elicitation — the same way in both eras.
//!
//! A handler calls [`Context::sample`], [`Context::list_roots`] or [`Context::elicit`] and
//! awaits the answer:
//!
//! - **Session era**: the server sends the client a request (`sampling/createMessage`,
//!   `roots/list`, `elicitation/create`) through the engine and waits for its response.
//! - **Stateless era** (2026-07-28, multi round-trip requests): the server cannot call the
//!   client back, so the handler is *replayed*. The first time it asks for something the
//!   client has not answered yet, the handler is stopped and the server answers
//!   `input_required` with the question and a sealed `requestState`
//!   ([`super::request_state`]). The client retries with the answers; the handler runs again
//!   from the start, and this time each question it asks, in the same order, is answered
//!   at once from the answers so far. A handler must therefore ask the same questions in
//!   the same order on every run (side effects before its last question run once per
//!   round).
//!
//! Asking for something the client did not declare (e.g. elicitation without the
//! `elicitation` capability) fails at once with [`InputError::MissingCapability`]; a
//! stateless-era request whose handler then fails is answered `-32021` naming the
//! capability.

use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::task::Poll;

use ferry_protocol::ProtocolVersion;
use ferry_protocol::conform::Conform;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, InputRequest, InputRequests, ListRootsResult, RequestParams,
};
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::Context;
use crate::engine::CallError;

/// Why asking the client for input failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability the request needs (`sampling`, `roots`,
    /// `elicitation`, `elicitation.url`, `sampling.tools`...).
    #[error("the client does not support {0}")]
    MissingCapability(&'static str),
    /// The request cannot be expressed in the client's revision.
    #[error("{0}")]
    NotInRevision(String),
    /// This request cannot ask for input (in the stateless era only `tools/call`,
    /// `resources/read` and `prompts/get` can).
    #[error("{0} cannot ask the client for input")]
    NotAllowed(String),
    /// The client answered with an error (session era).
    #[error("the client answered with error {}: {}", .0.code, .0.message)]
    Refused(ErrorObject),
    /// The client's answer did not have the expected shape.
    #[error("the client's answer is invalid: {0}")]
    InvalidResponse(String),
    /// No answer: timeout or connection lost (session era).
    #[error("{0}")]
    Failed(String),
}

impl InputError {
    /// The `ClientCapabilities` object naming a missing capability (`-32021`'s
    /// `data.requiredCapabilities`).
    pub(crate) fn required_capabilities(what: &str) -> Value {
        match what {
            "elicitation.url" => serde_json::json!({"elicitation": {"url": {}}}),
            "elicitation.form" => serde_json::json!({"elicitation": {"form": {}}}),
            "sampling.tools" => serde_json::json!({"sampling": {"tools": {}}}),
            other => serde_json::json!({ other: {} }),
        }
    }
}

/// The input rounds of one stateless-era request: answers so far, and what this run asked.
#[derive(Debug, Default)]
pub(crate) struct Rounds {
    /// Answers by key, from the sealed state and the retry's `inputResponses`.
    pub(crate) answers: IndexMap<String, Value>,
    /// What a `requestState` issued for this request is bound to.
    pub(crate) binding: Binding,
    /// Rounds completed before this run.
    pub(crate) completed: u32,
    state: Mutex<RoundState>,
}

/// What binds a `requestState` to one request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    /// The parts of the request the state is bound to (a tool's name and arguments, say),
    /// hashed into [`Binding::digest`] only when a state is opened or sealed: most requests
    /// never ask for input, and the hash was a large share of every stateless call.
    salient: Vec<Salient>,
    digest: std::sync::OnceLock<String>,
    pub(crate) principal: Option<String>,
}

/// One salient part of a request.
#[derive(Clone, Debug)]
pub(crate) enum Salient {
    /// A value.
    Value(Value),
    /// JSON text as it came (a tool's raw arguments), read into a value only for the
    /// digest: building a `Value` of every stateless call's arguments, for the few that ask
    /// for input, cost each call allocations for the map, keys and strings.
    Json(String),
}

impl From<Value> for Salient {
    fn from(value: Value) -> Self {
        Salient::Value(value)
    }
}

impl Binding {
    pub(crate) fn new(
        method: &'static str,
        salient: Vec<Salient>,
        principal: Option<String>,
    ) -> Self {
        Binding {
            method,
            salient,
            digest: std::sync::OnceLock::new(),
            principal,
        }
    }

    /// The digest of the salient parts (see [`super::request_state::digest`]); JSON text
    /// that does not parse counts as `null`.
    pub(crate) fn digest(&self) -> &str {
        self.digest.get_or_init(|| {
            super::request_state::digest(self.salient.iter().map(|part| match part {
                Salient::Value(value) => std::borrow::Cow::Borrowed(value),
                Salient::Json(text) => {
                    std::borrow::Cow::Owned(serde_json::from_str(text).unwrap_or_default())
                }
            }))
        })
    }
}

#[derive(Debug, Default)]
struct RoundState {
    /// Questions asked so far in this run.
    next: usize,
    /// Questions without an answer: what the `input_required` result asks.
    asked: InputRequests,
    /// A capability the handler asked for and the client lacks.
    missing: Option<&'static str>,
    /// An answer that did not fit its question: the request is refused with `-32602`.
    invalid: Option<String>,
}

/// How a handler run with [`Rounds`] ended.
pub(crate) enum Ran<T> {
    /// It finished.
    Done(T),
    /// It asked for input the client has not given yet.
    NeedsInput(InputRequests),
    /// The client's answers were invalid.
    Invalid(String),
}

impl Rounds {
    pub(crate) fn new(answers: IndexMap<String, Value>, binding: Binding, completed: u32) -> Self {
        Rounds {
            answers,
            binding,
            completed,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RoundState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The capability a failed handler lacked, if any.
    pub(crate) fn missing_capability(&self) -> Option<&'static str> {
        self.lock().missing
    }

    fn note_missing(&self, what: &'static str) {
        self.lock().missing.get_or_insert(what);
    }

    /// The answer to the next question, or `None` after recording the question.
    fn ask(&self, request: InputRequest) -> Option<Value> {
        let mut state = self.lock();
        let key = format!("input-{}", state.next);
        state.next += 1;
        if let Some(answer) = self.answers.get(&key) {
            return Some(answer.clone());
        }
        state.asked.insert(key, request);
        None
    }

    fn note_invalid(&self, message: String) {
        self.lock().invalid.get_or_insert(message);
    }

    /// Run `handler`, stopping it as soon as it waits for input the client has not given.
    pub(crate) async fn run<F: Future>(&self, handler: F) -> Ran<F::Output> {
        let mut handler = pin!(handler);
        std::future::poll_fn(|cx| {
            let polled = handler.as_mut().poll(cx);
            let mut state = self.lock();
            if let Some(message) = state.invalid.take() {
                return Poll::Ready(Ran::Invalid(message));
            }
            match polled {
                Poll::Ready(output) => Poll::Ready(Ran::Done(output)),
                Poll::Pending if !state.asked.is_empty() => {
                    Poll::Ready(Ran::NeedsInput(std::mem::take(&mut state.asked)))
                }
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }
}

impl Context {
    /// Ask the client's LLM for a completion (`sampling/createMessage`). Needs the client's
    /// `sampling` capability (and `sampling.tools` when `tools` are given).
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, InputError> {
        let sampling = self.client_capabilities.sampling.as_ref();
        if sampling.is_none() {
            return Err(self.missing("sampling"));
        }
        if (params.tools.is_some() || params.tool_choice.is_some())
            && sampling.is_some_and(|s| s.tools.is_none())
        {
            return Err(self.missing("sampling.tools"));
        }
        self.input(InputRequest::CreateMessage(params)).await
    }

    /// Ask the client for its roots (`roots/list`). Needs the client's `roots` capability.
    pub async fn list_roots(&self) -> Result<ListRootsResult, InputError> {
        if self.client_capabilities.roots.is_none() {
            return Err(self.missing("roots"));
        }
        self.input(InputRequest::ListRoots(RequestParams::default()))
            .await
    }

    /// Ask the user for information through the client (`elicitation/create`), in form or
    /// URL mode. Needs the client's `elicitation` capability (with `url` for URL mode).
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, InputError> {
        let Some(elicitation) = self.client_capabilities.elicitation.as_ref() else {
            return Err(self.missing("elicitation"));
        };
        let (supported, what) = match &params {
            ElicitRequestParams::Url(_) => (elicitation.supports_url(), "elicitation.url"),
            _ => (elicitation.supports_form(), "elicitation.form"),
        };
        if !supported {
            return Err(self.missing(what));
        }
        self.input(InputRequest::Elicit(params)).await
    }

    fn missing(&self, what: &'static str) -> InputError {
        if let Some(rounds) = &self.rounds {
            rounds.note_missing(what);
        }
        InputError::MissingCapability(what)
    }

    async fn input<R: DeserializeOwned>(&self, mut request: InputRequest) -> Result<R, InputError> {
        request
            .conform(self.version)
            .map_err(|e| InputError::NotInRevision(e.to_string()))?;
        if self.version.era() == ferry_protocol::Era::Session {
            return self.send(request).await;
        }
        let Some(rounds) = &self.rounds else {
            return Err(InputError::NotAllowed(self.method.to_string()));
        };
        let method = request.method();
        let Some(answer) = rounds.ask(request) else {
            // Not answered yet: the runner stops the handler and asks the client.
            return std::future::pending().await;
        };
        match serde_json::from_value(answer) {
            Ok(answer) => Ok(answer),
            Err(e) => {
                let message = format!("the answer to {method} does not fit it: {e}");
                rounds.note_invalid(message);
                // The runner refuses the request; the handler never sees a bad answer.
                std::future::pending().await
            }
        }
    }

    /// Session era: a real request to the client. A tool running as a task (2025-11-25)
    /// names its task in the request's `_meta`, and the task waits for input meanwhile.
    async fn send<R: DeserializeOwned>(&self, request: InputRequest) -> Result<R, InputError> {
        let method = request.method();
        let params = match &request {
            InputRequest::CreateMessage(p) => serde_json::to_value(p),
            InputRequest::ListRoots(p) => serde_json::to_value(p),
            InputRequest::Elicit(p) => serde_json::to_value(p),
            other => {
                return Err(InputError::NotInRevision(format!(
                    "{} is not a request Ferry can send",
                    other.method()
                )));
            }
        };
        let mut params = params.map_err(|e| InputError::Failed(e.to_string()))?;
        let task = super::tasks::current();
        if let (Some(task), Value::Object(object)) = (&task, &mut params) {
            let meta = object
                .entry("_meta")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(meta) = meta {
                meta.insert(
                    ferry_protocol::types::keys::RELATED_TASK.into(),
                    serde_json::json!({ "taskId": task.id() }),
                );
            }
            task.asking().await;
        }
        let outcome = self.peer.request::<_, Value>(method, &params).await;
        if let Some(task) = &task {
            task.answered().await;
        }
        let value = outcome.map_err(|e| match e {
            CallError::Rpc(error) => InputError::Refused(error),
            other => InputError::Failed(other.to_string()),
        })?;
        serde_json::from_value(value).map_err(|e| InputError::InvalidResponse(e.to_string()))
    }
}

/// Whether `version` answers a missing capability with `-32021` (2026-07-28).
pub(crate) fn missing_capability_is_error(version: ProtocolVersion) -> bool {
    version.has(ferry_protocol::Feature::RequestMeta)
}

/// The client capabilities a request runs with: those of the session, or of the request's
/// `_meta` in the stateless era.
pub(crate) type ClientCaps = std::sync::Arc<ClientCapabilities>;
