//! Multi round-trip requests (2026-07-28) at the request level: resuming a retried request
//! from its `requestState` and `inputResponses`, and answering `input_required` when a
//! handler asks for input the client has not given yet. The handler side is in
//! [`super::input`]; sealing is in [`super::request_state`].

use std::future::Future;
use std::sync::Arc;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{InputRequests, InputRequiredResult, InputResponses};
use futures_util::FutureExt;
use futures_util::future::Either;
use indexmap::IndexMap;

use super::core::Server;
use super::input::{Binding, InputError, Ran, Rounds, Salient, missing_capability_is_error};
use super::reply::Call;
use super::request_state::RequestState;
use crate::engine::HandlerResult;

/// The most input rounds one request may take; past it the request fails (a handler
/// that keeps asking would otherwise grow its state without end).
pub(crate) const MAX_ROUNDS: u32 = 32;

/// The rounds of a stateless-era request that may ask for input: fresh, or resumed from
/// the sealed state of an earlier round plus the client's answers to that round.
pub(crate) fn resume(
    server: &Server,
    method: &'static str,
    salient: Vec<Salient>,
    request_state: Option<&str>,
    responses: Option<InputResponses>,
) -> Result<Arc<Rounds>, ErrorObject> {
    let binding = Binding::new(method, salient, None);
    let Some(sealed) = request_state else {
        // No state: nothing was asked, so any `inputResponses` answer nothing.
        return Ok(Arc::new(Rounds::new(IndexMap::new(), binding, 0)));
    };
    let state = server
        .sealer()
        .open(
            sealed,
            method,
            binding.digest(),
            binding.principal.as_deref(),
        )
        .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
    let mut answers = state.answers;
    let mut responses = responses.unwrap_or_default();
    for key in state.asked {
        // Unasked keys are ignored; unanswered ones are asked again.
        if let Some(response) = responses.shift_remove(&key) {
            let value = serde_json::to_value(response).map_err(ErrorObject::internal_error)?;
            answers.insert(key, value);
        }
    }
    Ok(Arc::new(Rounds::new(answers, binding, state.rounds)))
}

/// Run a handler's future; in the stateless era, with its input rounds. `Err` holds the
/// answer to send instead of the handler's output: `input_required`, or an error.
///
/// Without rounds (the session era) the handler's future is awaited as it is; the rounds'
/// machinery is a boxed future of its own, so that its code and state stay out of every
/// other call's.
pub(crate) fn drive<'a, F: Future + 'a>(
    server: &'a Server,
    call: &'a Call,
    rounds: Option<&'a Arc<Rounds>>,
    handler: F,
) -> impl Future<Output = Result<F::Output, HandlerResult>> + 'a {
    match rounds {
        None => Either::Left(handler.map(Ok)),
        Some(rounds) => Either::Right(Box::pin(async move {
            match rounds.run(handler).await {
                Ran::Done(output) => Ok(output),
                Ran::Invalid(message) => Err(Err(ErrorObject::invalid_params(message))),
                Ran::NeedsInput(asked) => Err(input_required(server, call, rounds, asked)),
            }
        })),
    }
}

fn input_required(
    server: &Server,
    call: &Call,
    rounds: &Rounds,
    asked: InputRequests,
) -> HandlerResult {
    if rounds.completed >= MAX_ROUNDS {
        return Err(ErrorObject::internal_error(format!(
            "the handler asked for input more than {MAX_ROUNDS} times"
        )));
    }
    let sealer = server.sealer();
    let state = RequestState {
        method: rounds.binding.method.to_owned(),
        digest: rounds.binding.digest().to_owned(),
        principal: rounds.binding.principal.clone(),
        expires_ms: sealer.expiry(),
        answers: rounds.answers.clone(),
        asked: asked.keys().cloned().collect(),
        rounds: rounds.completed + 1,
    };
    let sealed = sealer.seal(&state).map_err(ErrorObject::internal_error)?;
    server.reply(
        InputRequiredResult {
            input_requests: Some(asked),
            request_state: Some(sealed),
            ..Default::default()
        },
        call.version,
    )
}

/// The `-32021` error for a handler that failed after asking for a capability the client
/// lacks (stateless era only; session-era revisions have no such code).
pub(crate) fn missing_capability(call: &Call, rounds: Option<&Arc<Rounds>>) -> Option<ErrorObject> {
    if !missing_capability_is_error(call.version) {
        return None;
    }
    let what = rounds?.missing_capability()?;
    Some(
        ErrorObject::new(
            error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("this request needs the client capability {what}"),
        )
        .with_data(serde_json::json!({
            "requiredCapabilities": InputError::required_capabilities(what),
        })),
    )
}
