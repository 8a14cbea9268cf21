//! What the client does for the server: answer sampling, roots and elicitation (as
//! session-era requests, or as `input_required` answers in the stateless era — the same
//! handlers), and pass the server's notifications on.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::methods::{ServerNotification, ServerRequest};
use ferry_protocol::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, InputRequest, ListRootsResult, Root, RootsCapability,
    SamplingCapability,
};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::engine::{Handler, HandlerResult, Peer, RequestContext, ResultJson};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Answers `sampling/createMessage`.
pub type SamplingHandler = Arc<
    dyn Fn(CreateMessageRequestParams) -> BoxFuture<Result<CreateMessageResult, ErrorObject>>
        + Send
        + Sync,
>;

/// Answers `elicitation/create` (form and URL modes).
pub type ElicitationHandler =
    Arc<dyn Fn(ElicitRequestParams) -> BoxFuture<Result<ElicitResult, ErrorObject>> + Send + Sync>;

/// Produces the client's roots for `roots/list`.
pub type RootsHandler = Arc<dyn Fn() -> BoxFuture<Vec<Root>> + Send + Sync>;

/// The handlers a client was built with, and the capabilities they imply.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<SamplingHandler>,
    pub(crate) elicitation: Option<ElicitationHandler>,
    pub(crate) elicitation_url: bool,
    pub(crate) roots: Option<RootsHandler>,
}

impl Handlers {
    /// The capabilities these handlers let the client declare.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            sampling: self
                .sampling
                .as_ref()
                .map(|_| SamplingCapability::default()),
            elicitation: self.elicitation.as_ref().map(|_| ElicitationCapability {
                form: Some(Default::default()),
                url: self.elicitation_url.then(Default::default),
            }),
            roots: self.roots.as_ref().map(|_| RootsCapability {
                list_changed: Some(true),
            }),
            ..Default::default()
        }
    }

    /// Answer one request of the server, as a JSON result.
    pub(crate) async fn answer(&self, request: InputRequest) -> Result<Value, ErrorObject> {
        let method = request.method();
        let refused = || ErrorObject::method_not_found(method);
        let value = match request {
            InputRequest::CreateMessage(params) => {
                let handler = self.sampling.as_ref().ok_or_else(refused)?;
                serde_json::to_value(handler(params).await?)
            }
            InputRequest::Elicit(params) => {
                let handler = self.elicitation.as_ref().ok_or_else(refused)?;
                serde_json::to_value(handler(params).await?)
            }
            InputRequest::ListRoots(_) => {
                let handler = self.roots.as_ref().ok_or_else(refused)?;
                serde_json::to_value(ListRootsResult {
                    roots: handler().await,
                    meta: None,
                })
            }
            _ => return Err(refused()),
        };
        value.map_err(ErrorObject::internal_error)
    }
}

/// The client side of the engine: answers the server's requests, forwards notifications.
pub(crate) struct ClientSide {
    pub(crate) handlers: Handlers,
    pub(crate) notifications: broadcast::Sender<ServerNotification>,
}

impl Handler for ClientSide {
    async fn request(&self, request: Request, _cx: RequestContext) -> HandlerResult {
        let parsed = ServerRequest::parse(&request.method, request.params.as_deref())?;
        let input = match parsed {
            ServerRequest::Ping(_) => {
                return ResultJson::from_value(&serde_json::json!({}))
                    .map_err(ErrorObject::internal_error);
            }
            ServerRequest::CreateMessage(p) => InputRequest::CreateMessage(p),
            ServerRequest::Elicit(p) => InputRequest::Elicit(p),
            ServerRequest::ListRoots(p) => InputRequest::ListRoots(p),
            other => return Err(ErrorObject::method_not_found(other.method())),
        };
        let value = self.handlers.answer(input).await?;
        ResultJson::from_value(&value).map_err(ErrorObject::internal_error)
    }

    async fn notification(&self, notification: Notification, _peer: &Peer) {
        match ServerNotification::parse(&notification.method, notification.params.as_deref()) {
            // No receiver: nobody listens, which is fine.
            Ok(parsed) => {
                let _ = self.notifications.send(parsed);
            }
            Err(e) => tracing::debug!(
                method = %notification.method,
                "unparsable notification from the server: {}",
                e.message
            ),
        }
    }
}
