//! Prompts: typed arguments (declared from the argument type), validation, rendering.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::jsonrpc::{ErrorObject, quoted};
use ferry_protocol::types::{
    ContentBlock, Cursor, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
use schemars::JsonSchema;

use super::builder::CacheHint;
use super::context::Context;
use super::core::Server;
use super::extract::HandlerFn;
use super::list::Listed;
use super::pipeline::{Answer, Answering};
use super::registry::Registry;
use super::tools::schema_for;
use super::visibility::{Rules, Visibility, visible};
use crate::engine::HandlerResult;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Renders a prompt from its (string) arguments.
pub(crate) type PromptFn = Arc<
    dyn Fn(BTreeMap<String, String>, Context) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;

/// A registered prompt.
#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) get: PromptFn,
}

/// A prompt's rendering, from a handler's return value.
///
/// Implemented for [`GetPromptResult`] (as is), `Vec<PromptMessage>`, one [`PromptMessage`],
/// `String` and `&'static str` (one user message), and `Result<T, E>` where an `Err`
/// becomes a `-32603` error with `E`'s message, or, when `E` is an [`ErrorObject`], that
/// error as it is: return `Err(ErrorObject::invalid_params(...))` for an argument value the
/// prompt does not accept.
///
/// ```
/// use ferry::protocol::ProtocolVersion;
/// use ferry::protocol::types::PromptMessage;
/// use ferry::server::{Server, TestClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder("prompts", "1")
///     .prompt("hello", "Say hello", || async { "Say hello to the user." })
///     .prompt("reply", "Reply", || async { PromptMessage::assistant("Hello!") })
///     .build();
/// let client = TestClient::connect(&server, ProtocolVersion::V2025_06_18).await.unwrap();
/// let hello = client
///     .request("prompts/get", serde_json::json!({"name": "hello"}))
///     .await
///     .unwrap();
/// assert_eq!(hello["messages"][0]["role"], "user");
/// assert_eq!(hello["messages"][0]["content"]["text"], "Say hello to the user.");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    note = "return a String or &'static str (one user message), a PromptMessage, a \
            Vec<PromptMessage>, a GetPromptResult, or a Result of one of these (an \
            `Err(ErrorObject)` is answered as it is)"
)]
pub trait IntoPromptResult {
    /// The rendering, or the error to answer with.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult {
            messages: self,
            ..Default::default()
        })
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text(self),
        }]
        .into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.to_owned().into_prompt_result()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        vec![self].into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: std::fmt::Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.map_err(
            |error| match (&error as &dyn std::any::Any).downcast_ref::<ErrorObject>() {
                Some(chosen) => chosen.clone(),
                None => ErrorObject::internal_error(error),
            },
        )?
        .into_prompt_result()
    }
}

/// The prompt's declared arguments, from the properties of `A`'s schema (names,
/// descriptions, which are required).
fn arguments_of<A: JsonSchema>() -> Vec<PromptArgument> {
    let schema = schema_for::<A>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            title: property
                .get("title")
                .and_then(|t| t.as_str())
                .map(str::to_owned),
            description: property
                .get("description")
                .and_then(|d| d.as_str())
                .map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
        })
        .collect()
}

/// Build a prompt entry from a typed async function. `A` is deserialized from the
/// arguments (a map of strings), so its fields are `String` or `Option<String>`.
pub(crate) fn typed_prompt<M, H>(mut prompt: Prompt, handler: H) -> PromptEntry
where
    H: HandlerFn<M>,
    H::Output: IntoPromptResult,
{
    let arguments = arguments_of::<H::Args>();
    prompt.arguments = (!arguments.is_empty()).then_some(arguments);
    let handler = Arc::new(handler);
    let get: PromptFn = Arc::new(move |arguments, cx| {
        let handler = Arc::clone(&handler);
        Box::pin(async move {
            // A prompt without an arguments parameter (`()`) ignores what it is given.
            let value = if std::any::TypeId::of::<H::Args>() == std::any::TypeId::of::<()>() {
                serde_json::Value::Null
            } else {
                serde_json::to_value(arguments).map_err(ErrorObject::internal_error)?
            };
            let args: H::Args = serde_path_to_error::deserialize(value).map_err(|e| {
                let path = e.path().to_string();
                ErrorObject::invalid_params(if path == "." {
                    format!("invalid prompt arguments: {}", e.inner())
                } else {
                    format!("invalid prompt argument `{path}`: {}", e.inner())
                })
            })?;
            handler.call(args, cx).await?.into_prompt_result()
        })
    });
    PromptEntry { prompt, get }
}

impl Listed for PromptEntry {
    const LIST: &'static str = "prompts";
    type Item = Prompt;
    type Result = ListPromptsResult;

    fn registry(server: &Server) -> &Registry<Self> {
        server.prompts()
    }

    fn rules(visibility: &Visibility) -> &Rules {
        &visibility.prompts
    }

    fn item(&self) -> Prompt {
        self.prompt.clone()
    }

    fn result(
        prompts: Vec<Prompt>,
        next_cursor: Option<Cursor>,
        cache: CacheHint,
    ) -> ListPromptsResult {
        ListPromptsResult {
            prompts,
            next_cursor,
            ttl_ms: cache.ttl_ms(),
            cache_scope: cache.scope(),
            ..Default::default()
        }
    }
}

/// `prompts/get`: the prompt's future (see [`Answer`] for its answer); an unknown prompt
/// (named in `data.name`) or a missing required argument -> `-32602`.
pub(crate) fn get(
    server: &Server,
    name: &str,
    arguments: BTreeMap<String, String>,
    cx: Context,
) -> Result<BoxFuture<Result<GetPromptResult, ErrorObject>>, ErrorObject> {
    let snapshot = server.prompts().snapshot();
    let entry = snapshot
        .entries
        .get(name)
        .filter(|_| visible(&server.visibility().prompts, name, &cx));
    let Some(entry) = entry else {
        return Err(
            ErrorObject::invalid_params(format!("unknown prompt {:?}", quoted(name)))
                .with_data(serde_json::json!({ "name": name })),
        );
    };
    let declared = entry.prompt.arguments.as_deref().unwrap_or_default();
    if let Some(missing) = declared
        .iter()
        .find(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
    {
        return Err(ErrorObject::invalid_params(format!(
            "prompt {name:?} requires the argument {:?}",
            missing.name
        )));
    }
    Ok((entry.get)(arguments, cx))
}

/// A prompt's rendering as the answer; its error as it is (`-32021` in the stateless era
/// if it failed for want of a client capability).
impl Answer for Result<GetPromptResult, ErrorObject> {
    fn answer(self, to: &Answering<'_>) -> HandlerResult {
        match self {
            Ok(result) => to.result(result),
            Err(e) => Err(to.missing_capability().unwrap_or(e)),
        }
    }
}
