//! Typed calls for every server method, with capability checks, the stateless era's
//! `_meta`, `input_required` round trips, and pagination helpers.

use std::collections::BTreeMap;

use ferry_protocol::conform::Conform;
use ferry_protocol::types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionArgument, GetPromptRequestParams, GetPromptResult, InputRequest, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, Prompt, ReadResourceRequestParams, ReadResourceResult, Reference, Resource,
    ResourceTemplate, ServerCapabilities, SubscriptionFilter, Tool, keys,
};
use ferry_protocol::{Era, Feature};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::connect::stateless_meta;
use super::middleware::{End, Next, Outgoing};
use super::{CallOptions, Client, ClientError, MAX_INPUT_ROUNDS};

/// The most pages a `list_all_*` helper follows (a server that keeps returning cursors
/// would otherwise loop forever).
pub const MAX_PAGES: usize = 1000;

impl Client {
    /// Send a request and parse its result: `params` gain the stateless era's `_meta`, and
    /// an `input_required` result is answered and retried.
    pub async fn request<P, R>(&self, method: &'static str, params: &P) -> Result<R, ClientError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        self.request_with(method, params, CallOptions::default())
            .await
    }

    /// [`Client::request`] with per-call options (timeout, progress...).
    pub async fn request_with<P, R>(
        &self,
        method: &'static str,
        params: &P,
        options: CallOptions,
    ) -> Result<R, ClientError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        let mut params =
            serde_json::to_value(params).map_err(|e| ClientError::NotInRevision(e.to_string()))?;
        if !params.is_object() {
            params = json!({});
        }
        self.add_meta(&mut params);
        let result = if self.inner.middleware.is_empty() {
            self.request_attempts(method, params, options).await
        } else {
            let request = Outgoing {
                method,
                params,
                version: self.inner.version,
                session_id: self.inner.session_id.as_ref().and_then(|id| id()),
            };
            let end: End<'_> = Box::new(move |request: Outgoing| {
                Box::pin(self.request_attempts(request.method, request.params, options))
            });
            Next::new(&self.inner.middleware, end).run(request).await
        }?;
        serde_json::from_value(result).map_err(|e| ClientError::InvalidResult(e.to_string()))
    }

    /// A request (its params complete) through the application's hook: sent again as long
    /// as the hook's `retry` says so.
    async fn request_attempts(
        &self,
        method: &'static str,
        params: Value,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        let Some(hook) = &self.inner.hook else {
            return self.request_rounds(method, params, options).await;
        };
        let mut attempt = 0;
        loop {
            let mut sent = params.clone();
            hook.before(method, &mut sent);
            attempt += 1;
            let options = CallOptions {
                timeout: options.timeout,
                progress: options.progress.clone(),
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                max_total_timeout: options.max_total_timeout,
            };
            match self.request_rounds(method, sent, options).await {
                Err(error) => match hook.retry(method, attempt, &error) {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => return Err(error),
                },
                done => return done,
            }
        }
    }

    /// A request with its `_meta`, its `input_required` rounds answered and retried.
    async fn request_rounds(
        &self,
        method: &'static str,
        mut params: Value,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        let mut options = options;
        for _ in 0..=MAX_INPUT_ROUNDS {
            let this_round = CallOptions {
                timeout: options.timeout,
                progress: options.progress.clone(),
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                max_total_timeout: options.max_total_timeout,
            };
            let id = self.inner.peer.next_request_id();
            for middleware in self.inner.middleware.iter() {
                middleware.sent(method, &id);
            }
            let peer = &self.inner.peer;
            let raw = peer.call_with_id(id, method, &params, this_round).await?;
            let result: Value = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::InvalidResult(e.to_string()))?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            self.answer_input(&mut params, &result).await?;
            options.progress = options.progress.take();
        }
        Err(ClientError::TooManyRounds(MAX_INPUT_ROUNDS))
    }

    /// Stateless era: the request's revision, capabilities, identity and log level.
    fn add_meta(&self, params: &mut Value) {
        if self.era() != Era::Stateless {
            return;
        }
        let Value::Object(object) = params else {
            return;
        };
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        let Value::Object(meta) = meta else { return };
        let inner = &self.inner;
        if let Value::Object(required) =
            stateless_meta(inner.version, &inner.capabilities, &inner.info)
        {
            for (key, value) in required {
                meta.entry(key).or_insert(value);
            }
        }
        let level = *inner.log_level.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(level) = level {
            meta.entry(keys::LOG_LEVEL)
                .or_insert_with(|| serde_json::to_value(level).unwrap_or_default());
        }
    }

    /// Answer an `input_required` result with the client's handlers and prepare the retry:
    /// `inputResponses`, and `requestState` echoed exactly (or absent, if it was).
    async fn answer_input(&self, params: &mut Value, result: &Value) -> Result<(), ClientError> {
        let mut responses = serde_json::Map::new();
        if let Some(Value::Object(requests)) = result.get("inputRequests") {
            for (key, request) in requests {
                let request: InputRequest = serde_json::from_value(request.clone())
                    .map_err(|e| ClientError::InvalidResult(e.to_string()))?;
                let answer = self
                    .inner
                    .handlers
                    .answer(request)
                    .await
                    .map_err(ClientError::Rpc)?;
                responses.insert(key.clone(), answer);
            }
        }
        if let Value::Object(object) = params {
            object.insert("inputResponses".into(), Value::Object(responses));
            match result.get("requestState") {
                Some(state) => object.insert("requestState".into(), state.clone()),
                None => object.remove("requestState"),
            };
        }
        Ok(())
    }

    fn require(&self, offered: bool, what: &'static str) -> Result<(), ClientError> {
        if offered || self.inner.resumed {
            Ok(())
        } else {
            Err(ClientError::Unsupported(what))
        }
    }

    pub(super) fn conform<T: Conform>(&self, mut value: T) -> Result<T, ClientError> {
        value
            .conform(self.inner.version)
            .map_err(|e| ClientError::NotInRevision(e.to_string()))?;
        Ok(value)
    }

    /// `ping` (session era; the stateless era has none, so it sends `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.version().has(Feature::Ping) {
            let _: Value = self.request("ping", &json!({})).await?;
        } else {
            let _: Value = self.request("server/discover", &json!({})).await?;
        }
        Ok(())
    }

    /// `tools/list`, one page.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every tool, following pagination.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListToolsResult>().await
    }

    /// `resources/list`, one page.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource, following pagination.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResourcesResult>().await
    }

    /// `resources/templates/list`, one page.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource template, following pagination.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplatesResult>().await
    }

    /// `prompts/list`, one page.
    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every prompt, following pagination.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPromptsResult>().await
    }

    /// One page of a list.
    pub(super) async fn list_page<P: Paged>(
        &self,
        cursor: Option<String>,
    ) -> Result<P, ClientError> {
        self.require(P::offered(self.server_capabilities()), P::CAPABILITY)?;
        self.request(P::METHOD, &cursor_params(cursor)).await
    }

    /// Every item of a list, following its cursors (at most [`MAX_PAGES`] pages).
    pub(super) async fn list_all<P: Paged>(&self) -> Result<Vec<P::Item>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let (items, next) = self.list_page::<P>(cursor).await?.split();
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(ClientError::InvalidResult(format!(
            "{} returned more than {MAX_PAGES} pages",
            P::METHOD
        )))
    }

    /// `tools/call`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// `tools/call` with per-call options.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.require(self.server_capabilities().tools.is_some(), "tools")?;
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ClientError::NotInRevision(format!(
                    "tool arguments must be an object, not {other}"
                )));
            }
        };
        let params = self.conform(CallToolRequestParams {
            name: name.to_owned(),
            arguments,
            ..Default::default()
        })?;
        self.request_with("tools/call", &params, options).await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.require(self.server_capabilities().resources.is_some(), "resources")?;
        let params = self.conform(ReadResourceRequestParams {
            uri: uri.to_owned(),
            ..Default::default()
        })?;
        self.request("resources/read", &params).await
    }

    /// `resources/subscribe` (session era; the stateless era uses [`Client::listen`]).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        let offered = self
            .server_capabilities()
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true));
        self.require(offered && self.era() == Era::Session, "resources/subscribe")?;
        let _: Value = self
            .request("resources/subscribe", &json!({"uri": uri}))
            .await?;
        Ok(())
    }

    /// `resources/unsubscribe` (session era).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.require(self.era() == Era::Session, "resources/unsubscribe")?;
        let _: Value = self
            .request("resources/unsubscribe", &json!({"uri": uri}))
            .await?;
        Ok(())
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        self.require(self.server_capabilities().prompts.is_some(), "prompts")?;
        let params = self.conform(GetPromptRequestParams {
            name: name.to_owned(),
            arguments: (!arguments.is_empty()).then_some(arguments),
            ..Default::default()
        })?;
        self.request("prompts/get", &params).await
    }

    /// `completion/complete` for an argument of a prompt or resource template.
    pub async fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
        context: Option<BTreeMap<String, String>>,
    ) -> Result<CompleteResult, ClientError> {
        self.require(
            self.server_capabilities().completions.is_some()
                || !self.version().has(Feature::CompletionsCapability),
            "completions",
        )?;
        let params = self.conform(CompleteRequestParams {
            reference,
            argument: CompletionArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: context.map(|arguments| ferry_protocol::types::CompletionContext {
                arguments: Some(arguments),
            }),
            meta: None,
        })?;
        self.request("completion/complete", &params).await
    }

    /// Set the level of log messages to receive: `logging/setLevel` in the session era;
    /// in the stateless era the level travels in every later request's `_meta`.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.require(self.server_capabilities().logging.is_some(), "logging")?;
        if self.era() == Era::Stateless {
            *self
                .inner
                .log_level
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(level);
            return Ok(());
        }
        let _: Value = self
            .request("logging/setLevel", &json!({"level": level}))
            .await?;
        Ok(())
    }

    /// Tell the server the roots changed (`notifications/roots/list_changed`, session era).
    pub async fn roots_changed(&self) -> Result<(), ClientError> {
        if self.era() == Era::Session && self.inner.handlers.roots.is_some() {
            self.inner
                .peer
                .notify("notifications/roots/list_changed", &json!({}))
                .await?;
        }
        Ok(())
    }

    /// `subscriptions/listen` (stateless era): the stream's notifications arrive on
    /// [`Client::notifications`] carrying the returned id as their subscription id; the
    /// stream ends when the returned handle is dropped (the request is cancelled).
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        self.require(self.era() == Era::Stateless, "subscriptions/listen")?;
        let id = self.inner.peer.next_request_id();
        let mut params = json!({"notifications": filter});
        self.add_meta(&mut params);
        let peer = self.inner.peer.clone();
        let stream_id = id.clone();
        let task = tokio::spawn(async move {
            let options = CallOptions {
                timeout: Some(std::time::Duration::from_secs(u64::from(u32::MAX))),
                ..Default::default()
            };
            let _ = peer
                .call_with_id(stream_id, "subscriptions/listen", &params, options)
                .await;
        });
        Ok(Subscription { id, task })
    }

    /// `server/discover` (stateless era).
    pub async fn discover(&self) -> Result<ferry_protocol::types::DiscoverResult, ClientError> {
        self.require(self.version().has(Feature::Discover), "server/discover")?;
        self.request("server/discover", &json!({})).await
    }
}

/// An open `subscriptions/listen` stream; dropping it cancels the stream.
#[derive(Debug)]
pub struct Subscription {
    id: ferry_protocol::RequestId,
    task: tokio::task::JoinHandle<()>,
}

impl Subscription {
    /// The subscription id notifications carry.
    pub fn id(&self) -> &ferry_protocol::RequestId {
        &self.id
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A page of one of the paginated lists.
pub(super) trait Paged: DeserializeOwned {
    /// What the list holds.
    type Item;
    /// The method.
    const METHOD: &'static str;
    /// The server capability the list needs.
    const CAPABILITY: &'static str;
    /// Whether the server offers the capability.
    fn offered(capabilities: &ServerCapabilities) -> bool;
    /// The items and the next cursor.
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

macro_rules! paged {
    ($($result:ty => $item:ty, $field:ident, $method:literal, $capability:ident;)*) => {$(
        impl Paged for $result {
            type Item = $item;
            const METHOD: &'static str = $method;
            const CAPABILITY: &'static str = stringify!($capability);
            fn offered(capabilities: &ServerCapabilities) -> bool {
                capabilities.$capability.is_some()
            }
            fn split(self) -> (Vec<$item>, Option<String>) {
                (self.$field, self.next_cursor)
            }
        }
    )*};
}

paged! {
    ListToolsResult => Tool, tools, "tools/list", tools;
    ListResourcesResult => Resource, resources, "resources/list", resources;
    ListResourceTemplatesResult => ResourceTemplate, resource_templates, "resources/templates/list", resources;
    ListPromptsResult => Prompt, prompts, "prompts/list", prompts;
    ferry_protocol::types::ListTasksResult => ferry_protocol::types::Task, tasks, "tasks/list", tasks;
}

fn cursor_params(cursor: Option<String>) -> JsonObject {
    let mut params = JsonObject::new();
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), Value::String(cursor));
    }
    params
}
