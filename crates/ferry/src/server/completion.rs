//! `completion/complete`: suggestions for prompt arguments and template variables.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::jsonrpc::{ErrorObject, quoted};
use ferry_protocol::types::{CompleteRequestParams, CompleteResult, Completion, Reference};

use super::context::Context;
use super::core::Server;
use super::reply::Call;
use crate::engine::HandlerResult;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The most values one completion result carries (the spec's limit).
const MAX_VALUES: usize = 100;

/// What a completer is asked to complete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument or variable being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments or variables already resolved (from 2025-06-18).
    pub context: BTreeMap<String, String>,
}

/// Suggests values for one argument.
pub(crate) type CompleteFn =
    Arc<dyn Fn(CompletionRequest, Context) -> BoxFuture<Vec<String>> + Send + Sync>;

/// What a completer belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// An argument of the named prompt.
    Prompt(String),
    /// A variable of the resource template with this URI template.
    Template(String),
}

/// The registered completers, by target and argument name.
pub(crate) type Completers = HashMap<(Target, String), CompleteFn>;

/// Wrap a completion function.
pub(crate) fn completer<F, Fut>(f: F) -> CompleteFn
where
    F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |request, cx| Box::pin(f(request, cx)))
}

/// `completion/complete`: an unknown prompt or template -> `-32602`; an argument without
/// a completer gets no suggestions.
pub(crate) async fn complete(
    server: &Server,
    call: &Call,
    params: CompleteRequestParams,
    cx: Context,
) -> HandlerResult {
    let target = match params.reference {
        Reference::Prompt(prompt) => {
            if !server
                .prompts()
                .snapshot()
                .entries
                .contains_key(&prompt.name)
            {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown prompt {:?}",
                    quoted(&prompt.name)
                )));
            }
            Target::Prompt(prompt.name)
        }
        Reference::Resource(template) => {
            if !server
                .templates()
                .snapshot()
                .entries
                .contains_key(&template.uri)
            {
                return Err(ErrorObject::invalid_params(format!(
                    "unknown resource template {:?}",
                    template.uri
                )));
            }
            Target::Template(template.uri)
        }
        other => {
            return Err(ErrorObject::invalid_params(format!(
                "cannot complete for {other:?}"
            )));
        }
    };
    let key = (target, params.argument.name);
    let mut values = match server.completer(&key) {
        Some(complete) => {
            let request = CompletionRequest {
                argument: key.1.clone(),
                value: params.argument.value,
                context: params.context.and_then(|c| c.arguments).unwrap_or_default(),
            };
            complete(request, cx).await
        }
        None => Vec::new(),
    };
    let total = values.len();
    values.truncate(MAX_VALUES);
    server.reply(
        CompleteResult {
            completion: Completion {
                values,
                total: Some(total as u64),
                has_more: Some(total > MAX_VALUES),
            },
            ..Default::default()
        },
        call.version,
    )
}
