//! [`TestClient`]: drive a [`Server`] in-process, without processes or sockets.

use std::borrow::Cow;
use std::sync::Arc;

use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::types::keys;
use ferry_protocol::{Feature, ProtocolVersion};
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

/// A client for tests: connects to a [`Server`] over an in-memory transport, speaks one
/// revision (a session-era client initializes first; a stateless-era client adds the
/// required `_meta` to every request), and records every notification the server sends.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Context, Server, TestClient};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     text: String,
/// }
///
/// let server = Server::builder("demo", "1.0.0")
///     .tool("echo", "Echo", |a: Echo, _cx: Context| async move { a.text })
///     .build();
/// let client = TestClient::connect(&server, ProtocolVersion::V2025_06_18).await.unwrap();
/// let result = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
/// assert_eq!(result["content"][0]["text"], "hi");
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

impl TestClient {
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
        let method = method.into();
        let mut params = params;
        for _ in 0..MAX_INPUT_ROUNDS {
            let result = self.request_once(method.clone(), params.clone()).await?;
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
        self.raw_request(method, params).await
    }

    /// Send a request exactly as given.
    pub async fn raw_request(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Value,
    ) -> Result<Value, CallError> {
        let raw = self
            .peer
            .call(method, &params, CallOptions::default())
            .await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }

    /// `tools/call`.
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
