//! [`TestClient`]: drive a [`Server`] in-process, without processes or sockets.

use std::borrow::Cow;
use std::sync::Arc;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::types::{
    CallToolResult, Cursor, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, ProgressNotificationParams, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, Tool, keys,
};
use ferry_protocol::{Feature, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::core::Server;
use crate::engine::{
    CallError, CallOptions, Engine, EngineConfig, EngineHandle, Handler, HandlerResult, Peer,
    RequestContext, ResultJson, Transport,
};

/// Answers the server's requests (sampling, roots, elicitation) in a [`TestClient`]:
/// the method and params in, a result or an error out.
pub type TestResponder = Arc<dyn Fn(&str, Value) -> Result<Value, ErrorObject> + Send + Sync>;

/// Input rounds a stateless-era [`TestClient`] answers before it gives up.
const MAX_INPUT_ROUNDS: usize = 32;

/// Progress updates a [`TestClient`] call keeps (more are dropped).
const MAX_PROGRESS_UPDATES: usize = 4096;

/// Pages a [`TestClient`] list follows before it takes the server to be looping.
const MAX_LIST_PAGES: usize = 10_000;

/// A client for tests: connects to a [`Server`] over an in-memory transport, speaks one
/// revision (a session-era client initializes first; a stateless-era client adds the
/// required `_meta` to every request), and records every notification the server sends.
///
/// [`TestClient::new`] speaks the newest revision; [`TestClient::builder`] chooses another,
/// the client's capabilities and a responder for the server's own requests. The typed
/// calls — [`call`](Self::call), [`call_tool_as`](Self::call_tool_as),
/// [`call_with_progress`](Self::call_with_progress), [`read_resource`](Self::read_resource),
/// [`get_prompt`](Self::get_prompt), [`list_tools`](Self::list_tools)... — return the
/// protocol's result types (with `text()`, `structured::<T>()`, `is_error()`) and a
/// [`TestError`] that is the same in every revision. The raw ones —
/// [`request`](Self::request), [`call_tool`](Self::call_tool),
/// [`raw_request`](Self::raw_request) — return the JSON the client received.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Server, TestClient, TestError};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     text: String,
/// }
///
/// let server = Server::builder("demo", "1.0.0")
///     .tool("echo", "Echo", |a: Echo| async move { a.text })
///     .build();
/// let client = TestClient::new(&server).await.unwrap();
/// let result = client.call("echo", json!({"text": "hi"})).await.unwrap();
/// assert_eq!(result.text(), "hi");
/// let missing = client.call("nope", json!({})).await.unwrap_err();
/// assert_eq!(missing, TestError::NotFound("nope".into()));
///
/// // Another revision, and the raw JSON it received.
/// let old = TestClient::builder(&server)
///     .version(ProtocolVersion::V2025_06_18)
///     .connect()
///     .await
///     .unwrap();
/// let raw = old.call_tool("echo", json!({"text": "hi"})).await.unwrap();
/// assert_eq!(raw["content"][0]["text"], "hi");
/// # });
/// ```
pub struct TestClient {
    peer: Peer,
    version: ProtocolVersion,
    capabilities: Value,
    notifications: mpsc::Receiver<(String, Value)>,
    responder: Option<TestResponder>,
    _client: EngineHandle,
    server: EngineHandle,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("version", &self.version)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

struct Recorder {
    notifications: mpsc::Sender<(String, Value)>,
    responder: Option<TestResponder>,
}

impl Handler for Recorder {
    async fn request(&self, request: Request, _cx: RequestContext) -> HandlerResult {
        let Some(responder) = &self.responder else {
            return Err(ErrorObject::method_not_found(&request.method));
        };
        let params = request
            .params
            .as_deref()
            .map(|p| serde_json::from_str(p.get()))
            .transpose()
            .map_err(ErrorObject::invalid_params)?
            .unwrap_or(Value::Null);
        let result = responder(&request.method, params)?;
        ResultJson::from_value(&result).map_err(ErrorObject::internal_error)
    }

    async fn notification(&self, notification: Notification, _peer: &Peer) {
        let params = notification
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        // A test that does not read notifications must not stall the connection.
        let _ = self
            .notifications
            .try_send((notification.method.into_owned(), params));
    }
}

/// Why a typed [`TestClient`] call failed: the same variant for the same failure in every
/// revision (a missing resource is `-32002` until 2025-11-25 and `-32602` after; both are
/// [`TestError::NotFound`]).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Server, TestClient, TestError};
///
/// let server = Server::builder("empty", "1").declare_resources().build();
/// for version in ProtocolVersion::ALL {
///     let client = TestClient::builder(&server).version(version).connect().await.unwrap();
///     let error = client.read_resource("notes://9").await.unwrap_err();
///     assert_eq!(error, TestError::NotFound("notes://9".into()), "{version:?}");
/// }
/// # });
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TestError {
    /// No such tool, prompt or resource (or the caller may not see it): its name or URI.
    #[error("not found: {0}")]
    NotFound(String),
    /// The server refused the request's params (`-32602`): the message. (Arguments that
    /// do not fit a tool's input schema are this before 2025-11-25, and an `isError`
    /// result from then on.)
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// The server failed (`-32603`): the message.
    #[error("internal error: {0}")]
    Internal(String),
    /// The tool answered with an `isError` result where a typed value was expected
    /// ([`TestClient::call_tool_as`]): its text.
    #[error("the tool failed: {0}")]
    ToolFailed(String),
    /// Any other error response, as the server sent it.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// The answer did not have the expected shape (not the result type, no structured
    /// content, an `input_required` result with no responder to answer it...).
    #[error("invalid result: {0}")]
    InvalidResult(String),
    /// The call itself failed: the connection ended, or no answer came in time.
    #[error("{0}")]
    Call(CallError),
}

/// What a request names, to tell "not found" from other invalid params.
#[derive(Clone, Copy)]
enum Target<'a> {
    Tool,
    Prompt,
    Resource(&'a str),
    Other,
}

impl TestError {
    fn of(error: CallError, target: Target<'_>) -> TestError {
        match error {
            CallError::Rpc(error) => TestError::of_rpc(error, target),
            CallError::InvalidResult(message) => TestError::InvalidResult(message),
            other => TestError::Call(other),
        }
    }

    /// An error response: Ferry names what was not found in `data` (`uri` for a resource,
    /// `name` for a tool or a prompt), whatever the revision's code.
    fn of_rpc(error: ErrorObject, target: Target<'_>) -> TestError {
        let named = |key: &str| {
            error
                .data
                .as_ref()
                .and_then(|data| data.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let not_found = match (error.code, target) {
            (error_codes::RESOURCE_NOT_FOUND_LEGACY, Target::Resource(uri)) => {
                Some(named("uri").unwrap_or_else(|| uri.to_owned()))
            }
            (error_codes::INVALID_PARAMS, Target::Resource(_)) => named("uri"),
            (error_codes::INVALID_PARAMS, Target::Tool | Target::Prompt) => named("name"),
            _ => None,
        };
        match (not_found, error.code) {
            (Some(what), _) => TestError::NotFound(what),
            (None, error_codes::INVALID_PARAMS) => TestError::InvalidParams(error.message),
            (None, error_codes::INTERNAL_ERROR) => TestError::Internal(error.message),
            (None, _) => TestError::Rpc(error),
        }
    }
}

impl From<CallError> for TestError {
    fn from(error: CallError) -> Self {
        TestError::of(error, Target::Other)
    }
}

/// Connects a [`TestClient`] with a chosen revision, capabilities and responder
/// ([`TestClient::builder`]).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Context, Server, TestClient};
/// use serde_json::json;
///
/// // A tool that asks the client for its roots.
/// let server = Server::builder("roots", "1")
///     .tool("roots", "The client's roots", |_: (), cx: Context| async move {
///         match cx.list_roots().await {
///             Ok(list) => list.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(" "),
///             Err(e) => e.to_string(),
///         }
///     })
///     .build();
/// let client = TestClient::builder(&server)
///     .version(ProtocolVersion::V2025_11_25)
///     .capabilities(json!({"roots": {}}))
///     .responder(|method, _params| {
///         assert_eq!(method, "roots/list");
///         Ok(json!({"roots": [{"uri": "file:///work"}]}))
///     })
///     .connect()
///     .await
///     .unwrap();
/// assert_eq!(client.call("roots", json!({})).await.unwrap().text(), "file:///work");
/// # });
/// ```
#[must_use = "a builder does nothing until `connect` is awaited"]
pub struct TestClientBuilder {
    server: Server,
    version: ProtocolVersion,
    capabilities: Value,
    responder: Option<TestResponder>,
}

impl std::fmt::Debug for TestClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClientBuilder")
            .field("version", &self.version)
            .field("capabilities", &self.capabilities)
            .field("responder", &self.responder.is_some())
            .finish_non_exhaustive()
    }
}

impl TestClientBuilder {
    /// Speak `version` (default: [`ProtocolVersion::LATEST`]).
    pub fn version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// Declare `capabilities`, a `ClientCapabilities` object such as
    /// `json!({"sampling": {}, "roots": {}})` (default: none).
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Answer the server's requests (sampling, roots, elicitation; in the stateless era
    /// the `inputRequests` of an `input_required` result) with `responder`: the method
    /// and params in, a result or an error out. Without one they are refused.
    pub fn responder(
        mut self,
        responder: impl Fn(&str, Value) -> Result<Value, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.responder = Some(Arc::new(responder));
        self
    }

    /// Connect: in the session era, `initialize` and `notifications/initialized` first.
    pub async fn connect(self) -> Result<TestClient, TestError> {
        TestClient::connect_with(
            &self.server,
            self.version,
            self.capabilities,
            self.responder,
        )
        .await
        .map_err(TestError::from)
    }
}

impl TestClient {
    /// Connect to `server` speaking the newest revision ([`ProtocolVersion::LATEST`]),
    /// declaring no client capabilities.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Server, TestClient};
    ///
    /// let client = TestClient::new(&Server::builder("demo", "1").build()).await.unwrap();
    /// assert_eq!(client.version(), ProtocolVersion::LATEST);
    /// # });
    /// ```
    pub async fn new(server: &Server) -> Result<Self, TestError> {
        Self::builder(server).connect().await
    }

    /// A client to configure before it connects: revision, capabilities, responder.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Server, TestClient};
    ///
    /// let server = Server::builder("demo", "1").build();
    /// let client = TestClient::builder(&server)
    ///     .version(ProtocolVersion::V2025_06_18)
    ///     .connect()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(client.version(), ProtocolVersion::V2025_06_18);
    /// # });
    /// ```
    pub fn builder(server: &Server) -> TestClientBuilder {
        TestClientBuilder {
            server: server.clone(),
            version: ProtocolVersion::LATEST,
            capabilities: json!({}),
            responder: None,
        }
    }

    /// Connect to `server` speaking `version`, declaring no client capabilities.
    pub async fn connect(server: &Server, version: ProtocolVersion) -> Result<Self, CallError> {
        Self::connect_with(server, version, json!({}), None).await
    }

    /// Connect declaring `capabilities` (a `ClientCapabilities` object), with `responder`
    /// answering the server's requests.
    pub async fn connect_with(
        server: &Server,
        version: ProtocolVersion,
        capabilities: Value,
        responder: Option<TestResponder>,
    ) -> Result<Self, CallError> {
        let (client_side, server_side) = Transport::pair(64);
        let server = server.serve(server_side);
        let (tx, notifications) = mpsc::channel(1024);
        let recorder = Recorder {
            notifications: tx,
            responder: responder.clone(),
        };
        let client = Engine::start(client_side, recorder, EngineConfig::default());
        let this = TestClient {
            peer: client.peer.clone(),
            version,
            capabilities,
            notifications,
            responder,
            _client: client,
            server,
        };
        if !version.has(Feature::RequestMeta) {
            this.raw_request(
                "initialize",
                json!({
                    "protocolVersion": version.as_str(),
                    "capabilities": this.capabilities,
                    "clientInfo": {"name": "ferry-test-client", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
            this.peer
                .notify("notifications/initialized", &json!({}))
                .await?;
            // The server handles messages in order: once this ping is answered, it has
            // seen `initialized`, so a test may rely on hearing notifications from here.
            this.raw_request("ping", json!({})).await?;
        }
        Ok(this)
    }

    /// The revision this client speaks.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Send a request and return its result. In the stateless era the revision and the
    /// client's capabilities are added to `params._meta`, and an `input_required` result
    /// is answered with the responder and the request retried, as a real client does.
    pub async fn request(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Value,
    ) -> Result<Value, CallError> {
        self.request_rounds(method.into(), params, None).await
    }

    /// [`request`](Self::request), with `progress` receiving the progress the server
    /// reports (a progress token is added to each round's `_meta`).
    async fn request_rounds(
        &self,
        method: Cow<'static, str>,
        params: Value,
        progress: Option<&mpsc::Sender<ProgressNotificationParams>>,
    ) -> Result<Value, CallError> {
        let mut params = params;
        for _ in 0..MAX_INPUT_ROUNDS {
            let result = self
                .request_once_with(method.clone(), params.clone(), progress)
                .await?;
            let (Some(responder), Some("input_required")) = (
                &self.responder,
                result.get("resultType").and_then(Value::as_str),
            ) else {
                return Ok(result);
            };
            let mut responses = serde_json::Map::new();
            if let Some(Value::Object(requests)) = result.get("inputRequests") {
                for (key, request) in requests {
                    let input_method = request["method"].as_str().unwrap_or_default();
                    let input_params = request.get("params").cloned().unwrap_or(json!({}));
                    let answer = responder(input_method, input_params).map_err(CallError::Rpc)?;
                    responses.insert(key.clone(), answer);
                }
            }
            if let Some(object) = params.as_object_mut() {
                object.insert("inputResponses".into(), Value::Object(responses));
                match result.get("requestState") {
                    Some(state) => object.insert("requestState".into(), state.clone()),
                    None => object.remove("requestState"),
                };
            }
        }
        Err(CallError::InvalidResult(format!(
            "still input_required after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// Send a request once (with the stateless era's `_meta`), returning whatever result
    /// it gets, `input_required` included.
    pub async fn request_once(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Value,
    ) -> Result<Value, CallError> {
        self.request_once_with(method.into(), params, None).await
    }

    async fn request_once_with(
        &self,
        method: Cow<'static, str>,
        params: Value,
        progress: Option<&mpsc::Sender<ProgressNotificationParams>>,
    ) -> Result<Value, CallError> {
        let mut params = params;
        if self.version.has(Feature::RequestMeta) {
            if !params.is_object() {
                params = json!({});
            }
            let meta = params
                .as_object_mut()
                .map(|p| p.entry("_meta").or_insert_with(|| json!({})));
            if let Some(Value::Object(meta)) = meta {
                meta.entry(keys::PROTOCOL_VERSION)
                    .or_insert_with(|| self.version.as_str().into());
                meta.entry(keys::CLIENT_CAPABILITIES)
                    .or_insert_with(|| self.capabilities.clone());
            }
        }
        self.raw_request_with(method, params, progress).await
    }

    /// Send a request exactly as given.
    pub async fn raw_request(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Value,
    ) -> Result<Value, CallError> {
        self.raw_request_with(method.into(), params, None).await
    }

    async fn raw_request_with(
        &self,
        method: Cow<'static, str>,
        params: Value,
        progress: Option<&mpsc::Sender<ProgressNotificationParams>>,
    ) -> Result<Value, CallError> {
        let options = CallOptions {
            progress: progress.cloned(),
            ..CallOptions::default()
        };
        let raw = self.peer.call(method, &params, options).await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }

    /// A request whose result is an `R`: an error the same in every revision, an
    /// `input_required` result left unanswered refused.
    async fn typed<R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Value,
        target: Target<'_>,
        progress: Option<&mpsc::Sender<ProgressNotificationParams>>,
    ) -> Result<R, TestError> {
        let result = self
            .request_rounds(method.into(), params, progress)
            .await
            .map_err(|e| TestError::of(e, target))?;
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return Err(TestError::InvalidResult(format!(
                "{method} asked for input (input_required) and the client has no responder to \
                 answer it: give one with TestClient::builder(..).responder(..)"
            )));
        }
        serde_json::from_value(result)
            .map_err(|e| TestError::InvalidResult(format!("the {method} result: {e}")))
    }

    /// `tools/call`, typed: the result as the protocol's [`CallToolResult`] (its
    /// [`text`](CallToolResult::text), [`structured`](CallToolResult::structured),
    /// [`is_error`](CallToolResult::is_error)). A tool that fails answers with an
    /// `isError` result, which is `Ok` here; an unknown tool is [`TestError::NotFound`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::server::{Server, TestClient};
    /// use serde_json::json;
    ///
    /// let server = Server::builder("demo", "1")
    ///     .tool("fail", "Fail", || async { Err::<String, _>("no luck") })
    ///     .build();
    /// let client = TestClient::new(&server).await.unwrap();
    /// let result = client.call("fail", json!({})).await.unwrap();
    /// assert!(result.is_error());
    /// assert_eq!(result.text(), "no luck");
    /// # });
    /// ```
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, TestError> {
        self.call_with_progress(name, arguments)
            .await
            .map(|(result, _)| result)
    }

    /// [`call`](Self::call), with the progress the tool reported: the request carries a
    /// progress token, and every `notifications/progress` for it sent before the result
    /// is returned with it, in order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::server::{Progress, Server, TestClient};
    /// use serde_json::json;
    ///
    /// async fn slow(_: (), progress: Progress) -> &'static str {
    ///     for step in 1..=3 {
    ///         progress.report(f64::from(step), Some(3.0), None).await;
    ///     }
    ///     "done"
    /// }
    ///
    /// let server = Server::builder("demo", "1").tool("slow", "Slow", slow).build();
    /// let client = TestClient::new(&server).await.unwrap();
    /// let (result, progress) = client.call_with_progress("slow", json!({})).await.unwrap();
    /// assert_eq!(result.text(), "done");
    /// let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    /// assert_eq!(steps, [1.0, 2.0, 3.0]);
    /// assert_eq!(progress[2].total, Some(3.0));
    /// # });
    /// ```
    pub async fn call_with_progress(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<(CallToolResult, Vec<ProgressNotificationParams>), TestError> {
        let (updates, mut received) = mpsc::channel(MAX_PROGRESS_UPDATES);
        let result = self
            .typed(
                "tools/call",
                json!({"name": name, "arguments": arguments}),
                Target::Tool,
                Some(&updates),
            )
            .await?;
        drop(updates);
        let mut progress = Vec::new();
        while let Ok(update) = received.try_recv() {
            progress.push(update);
        }
        Ok((result, progress))
    }

    /// `tools/call` returning the tool's typed output: its `structuredContent` read into
    /// `T` (see [`CallToolResult::structured`]), as the client's `Client::call_tool_as` does, or in
    /// revisions before 2025-06-18, which have no structured content, the JSON of its
    /// text (what `Json<T>` writes there). An `isError` result is
    /// [`TestError::ToolFailed`]; an output that is not a `T` is
    /// [`TestError::InvalidResult`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Json, Server, TestClient};
    /// use serde_json::json;
    ///
    /// async fn tags(_: ()) -> Json<Vec<String>> {
    ///     Json(vec!["red".into(), "blue".into()])
    /// }
    ///
    /// let server = Server::builder("tags", "1").tool("tags", "The tags", tags).build();
    /// for version in ProtocolVersion::ALL {
    ///     let client = TestClient::builder(&server).version(version).connect().await.unwrap();
    ///     let tags: Vec<String> = client.call_tool_as("tags", json!({})).await.unwrap();
    ///     assert_eq!(tags, ["red", "blue"]);
    /// }
    /// # });
    /// ```
    pub async fn call_tool_as<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<T, TestError> {
        let result = self.call(name, arguments).await?;
        if result.is_error() {
            return Err(TestError::ToolFailed(result.text()));
        }
        let typed = match result.structured_content {
            Some(_) => result.structured(),
            // Before 2025-06-18 results have no structured content: `Json<T>` is read from
            // the text block it writes beside it.
            None => serde_json::from_str(&result.text()),
        };
        typed.map_err(|e| {
            TestError::InvalidResult(format!(
                "tool {name:?}'s output as a {}: {e}",
                std::any::type_name::<T>()
            ))
        })
    }

    /// `resources/read`, typed: the contents as the protocol's [`ReadResourceResult`]
    /// (its [`text`](ReadResourceResult::text), [`blob`](ReadResourceResult::blob),
    /// [`json`](ReadResourceResult::json)). A resource that does not exist is
    /// [`TestError::NotFound`] with its URI, in every revision.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::protocol::types::Resource;
    /// use ferry::server::{Server, TestClient};
    ///
    /// let server = Server::builder("demo", "1")
    ///     .resource(Resource::new("motd://today", "motd"), || async { "Hello!" })
    ///     .build();
    /// let client = TestClient::new(&server).await.unwrap();
    /// let read = client.read_resource("motd://today").await.unwrap();
    /// assert_eq!(read.text(), "Hello!");
    /// assert_eq!(read.contents[0].mime_type(), Some("text/plain"));
    /// # });
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, TestError> {
        self.typed(
            "resources/read",
            json!({"uri": uri}),
            Target::Resource(uri),
            None,
        )
        .await
    }

    /// `prompts/get`, typed: the messages as the protocol's [`GetPromptResult`] (its
    /// [`text`](GetPromptResult::text)). `arguments` is an object of strings (`Null` for
    /// none); an unknown prompt is [`TestError::NotFound`], a missing required argument
    /// [`TestError::InvalidParams`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::server::{Server, TestClient};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Topic {
    ///     topic: String,
    /// }
    ///
    /// let server = Server::builder("demo", "1")
    ///     .prompt("essay", "An essay", |a: Topic| async move { format!("Write about {}.", a.topic) })
    ///     .build();
    /// let client = TestClient::new(&server).await.unwrap();
    /// let prompt = client.get_prompt("essay", json!({"topic": "rivers"})).await.unwrap();
    /// assert_eq!(prompt.text(), "Write about rivers.");
    /// # });
    /// ```
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<GetPromptResult, TestError> {
        let params = match arguments {
            Value::Null => json!({"name": name}),
            arguments => json!({"name": name, "arguments": arguments}),
        };
        self.typed("prompts/get", params, Target::Prompt, None)
            .await
    }

    /// Every tool (`tools/list`, following its pages).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::server::{Server, TestClient};
    ///
    /// let server = Server::builder("demo", "1").tool("ping", "Pong", || async { "pong" }).build();
    /// let tools = TestClient::new(&server).await.unwrap().list_tools().await.unwrap();
    /// assert_eq!(tools[0].name, "ping");
    /// # });
    /// ```
    pub async fn list_tools(&self) -> Result<Vec<Tool>, TestError> {
        self.list_all("tools/list", |page: ListToolsResult| {
            (page.tools, page.next_cursor)
        })
        .await
    }

    /// Every static resource (`resources/list`, following its pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, TestError> {
        self.list_all("resources/list", |page: ListResourcesResult| {
            (page.resources, page.next_cursor)
        })
        .await
    }

    /// Every resource template (`resources/templates/list`, following its pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, TestError> {
        self.list_all(
            "resources/templates/list",
            |page: ListResourceTemplatesResult| (page.resource_templates, page.next_cursor),
        )
        .await
    }

    /// Every prompt (`prompts/list`, following its pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, TestError> {
        self.list_all("prompts/list", |page: ListPromptsResult| {
            (page.prompts, page.next_cursor)
        })
        .await
    }

    async fn list_all<P: DeserializeOwned, T>(
        &self,
        method: &'static str,
        split: impl Fn(P) -> (Vec<T>, Option<Cursor>),
    ) -> Result<Vec<T>, TestError> {
        let mut all = Vec::new();
        let mut cursor: Option<Cursor> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let (items, next) = split(self.typed(method, params, Target::Other, None).await?);
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(TestError::InvalidResult(format!(
            "{method} still had a next page after {MAX_LIST_PAGES}"
        )))
    }

    /// `tools/call`, raw: the result as the JSON the client received (see
    /// [`call`](Self::call) for the typed result).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// The next notification from the server (method and params), waiting for it.
    pub async fn next_notification(&mut self) -> Option<(String, Value)> {
        self.notifications.recv().await
    }

    /// A notification already received, if any, without waiting.
    pub fn try_next_notification(&mut self) -> Option<(String, Value)> {
        self.notifications.try_recv().ok()
    }

    /// The client's peer handle (to send notifications such as `notifications/cancelled`).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Hang up and wait until the server has finished with the connection.
    pub async fn close(self) {
        let TestClient {
            server,
            _client,
            peer,
            ..
        } = self;
        _client.task.abort();
        // Every handle on the client's side of the connection goes before the wait: the
        // server sees its input end only once the last one is dropped.
        drop(_client.peer);
        drop(peer);
        let _ = server.task.await;
    }
}
