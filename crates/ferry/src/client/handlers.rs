//! What the client does for the server: answer sampling, roots and elicitation (as
//! session-era requests, or as `input_required` answers in the stateless era — the same
//! handlers; in 2025-11-25 sampling and elicitation also as tasks), and pass the server's
//! notifications on.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::jsonrpc::{ErrorObject, Notification, Request};
use ferry_protocol::methods::{ServerNotification, ServerRequest};
use ferry_protocol::types::{
    ClientCapabilities, ClientTaskRequests, ClientTasksCapability, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationCapability,
    ElicitationTaskRequests, InputRequest, ListRootsResult, Root, RootsCapability,
    SamplingCapability, SamplingTaskRequests, TaskMetadata,
};
use serde_json::Value;
use tokio::sync::broadcast;

use super::receiver::ReceivedTasks;
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
            // Sampling and elicitation may run as tasks (2025-11-25; `conform` drops this
            // for other revisions).
            tasks: (self.sampling.is_some() || self.elicitation.is_some()).then(|| {
                ClientTasksCapability {
                    list: Some(Default::default()),
                    cancel: Some(Default::default()),
                    requests: Some(ClientTaskRequests {
                        sampling: self.sampling.as_ref().map(|_| SamplingTaskRequests {
                            create_message: Some(Default::default()),
                        }),
                        elicitation: self.elicitation.as_ref().map(|_| ElicitationTaskRequests {
                            create: Some(Default::default()),
                        }),
                    }),
                }
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

/// Take the task request out of an elicitation's params.
fn task_of(params: &mut ElicitRequestParams) -> Option<TaskMetadata> {
    match params {
        ElicitRequestParams::Form(form) => form.task.take(),
        ElicitRequestParams::Url(url) => url.task.take(),
    }
}

/// The client side of the engine: answers the server's requests (also as tasks, see
/// `receiver.rs`), forwards notifications.
pub(crate) struct ClientSide {
    pub(crate) handlers: Handlers,
    pub(crate) notifications: broadcast::Sender<ServerNotification>,
    pub(crate) tasks: Arc<ReceivedTasks>,
}

impl Handler for ClientSide {
    async fn request(&self, request: Request, cx: RequestContext) -> HandlerResult {
        let parsed = ServerRequest::parse(&request.method, request.params.as_deref())?;
        let tasks = &self.tasks;
        let value = match parsed {
            ServerRequest::Ping(_) => Ok(serde_json::json!({})),
            ServerRequest::CreateMessage(mut p) => match p.task.take() {
                Some(task) if self.handlers.sampling.is_some() => tasks.start(
                    InputRequest::CreateMessage(p),
                    task,
                    self.handlers.clone(),
                    cx.peer,
                ),
                _ => self.handlers.answer(InputRequest::CreateMessage(p)).await,
            },
            ServerRequest::Elicit(mut p) => match task_of(&mut p) {
                Some(task) if self.handlers.elicitation.is_some() => tasks.start(
                    InputRequest::Elicit(p),
                    task,
                    self.handlers.clone(),
                    cx.peer,
                ),
                _ => self.handlers.answer(InputRequest::Elicit(p)).await,
            },
            ServerRequest::ListRoots(p) => self.handlers.answer(InputRequest::ListRoots(p)).await,
            ServerRequest::GetTask(p) => tasks.status(&p.task_id),
            ServerRequest::GetTaskPayload(p) => tasks.result(&p.task_id).await,
            ServerRequest::ListTasks(_) => tasks.list(),
            ServerRequest::CancelTask(p) => tasks.cancel(&p.task_id),
            other => return Err(ErrorObject::method_not_found(other.method())),
        }?;
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
