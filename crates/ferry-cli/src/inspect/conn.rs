//! One open connection to a server: the client, what keeps the target alive, the roots the
//! page edits, and the wire tap that shows the page every message.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry::client::{Client, ElicitationModes, Subscription};
use ferry::protocol::Era;
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::{
    CreateMessageResult, ElicitAction, ElicitResult, Root, SubscriptionFilter,
};
use serde_json::{Value, json};

use super::hub::{Asked, Asks, Hub, lock, now_ms};
use crate::client::Common;
use crate::client::target::{self, Target, Unconnected};
use crate::client::trace::{self, Direction, Seen};

/// The longest message text a wire event carries (the size is always the real one).
const WIRE_TEXT: usize = 256 << 10;

/// The code of a sampling request the person declined (the spec's "user rejected").
const DECLINED: i64 = -1;

/// What the connections share: the event stream and the requests waiting for the person.
pub(crate) struct Shared {
    pub(crate) hub: Hub,
    pub(crate) asks: Asks,
}

/// An open connection.
pub(crate) struct Conn {
    pub(crate) id: u64,
    /// How the server was named (reconnecting names it the same way).
    pub(crate) common: Common,
    /// The target as the page is told of it, a named server's entry looked up once, when
    /// the connection opened.
    shown: Value,
    pub(crate) client: Client,
    target: tokio::sync::Mutex<Option<Target>>,
    /// Set when the page ends the connection: the child's exit is then expected.
    closing: Arc<AtomicBool>,
    /// The roots the client offers, as edited in the page.
    pub(crate) roots: Arc<Mutex<Vec<Root>>>,
    /// The subscribed URIs, with the open `subscriptions/listen` stream of each in the
    /// stateless era.
    pub(crate) listens: Mutex<HashMap<String, Option<Subscription>>>,
}

impl Conn {
    /// Start the target named by `common` and connect to it, the server's sampling and
    /// elicitation requests going to the page, its `roots/list` answered with `roots`.
    pub(crate) async fn open(
        shared: &Arc<Shared>,
        id: u64,
        common: Common,
        roots: Vec<Root>,
        request_timeout: Duration,
    ) -> Result<Conn, String> {
        // A named server's entry, read once for the whole connection.
        let resolved = common.target.resolve(false);
        let shown = match &resolved {
            Ok(resolved) => resolved.describe(),
            Err(_) => common.target.describe(),
        };
        // Before any of its messages: where the page's wire export says a connection began.
        shared.hub.emit(json!({
            "type": "connecting", "conn": id, "target": shown, "time": now_ms(),
        }));
        let resolved = resolved?;
        let (target, transport) = target::start(&common, &resolved)?;
        let tap_shared = shared.clone();
        let (transport, _relay) = trace::tap(transport, move |direction, seen| {
            wire_event(&tap_shared.hub, id, direction, &seen);
        });
        let roots = Arc::new(Mutex::new(roots));
        let handlers = {
            let sampling = shared.clone();
            let elicitation = shared.clone();
            let roots = roots.clone();
            move |builder: ferry::client::ClientBuilder| {
                builder
                    .timeout(request_timeout)
                    .on_sampling(move |params| {
                        let shared = sampling.clone();
                        async move {
                            let params = serde_json::to_value(&params).unwrap_or_default();
                            let asked = shared
                                .asks
                                .ask(&shared.hub, id, "sampling/createMessage", params)
                                .await;
                            match asked {
                                Asked::Answered(Ok(result)) => {
                                    serde_json::from_value::<CreateMessageResult>(result)
                                        .map_err(ErrorObject::internal_error)
                                }
                                Asked::Answered(Err(why)) => Err(ErrorObject::new(DECLINED, why)),
                                Asked::TimedOut => Err(ErrorObject::new(
                                    DECLINED,
                                    "nobody answered in the inspector in time",
                                )),
                            }
                        }
                    })
                    .on_elicitation_with(ElicitationModes::FormAndUrl, move |params| {
                        let shared = elicitation.clone();
                        async move {
                            let params = serde_json::to_value(&params).unwrap_or_default();
                            let asked = shared
                                .asks
                                .ask(&shared.hub, id, "elicitation/create", params)
                                .await;
                            match asked {
                                Asked::Answered(Ok(result)) => {
                                    serde_json::from_value::<ElicitResult>(result)
                                        .map_err(ErrorObject::internal_error)
                                }
                                // Declined or unanswered: the person dismissed it.
                                Asked::Answered(Err(_)) | Asked::TimedOut => Ok(ElicitResult {
                                    action: ElicitAction::Cancel,
                                    content: None,
                                    meta: None,
                                }),
                            }
                        }
                    })
                    .roots_with(move || {
                        let roots = roots.clone();
                        async move { lock(&roots).clone() }
                    })
            }
        };
        let connected = target
            .connect_with(&common, &resolved, transport, handlers)
            .await;
        let client = match connected {
            Ok(client) => client,
            Err(Unconnected::Child(why)) => {
                target.close(true).await;
                return Err(format!("cannot connect: {why}"));
            }
            Err(Unconnected::Client(e)) => {
                let why = target
                    .auth_failure(&e)
                    .map(|why| format!("authorization failed: {why}"))
                    .or_else(|| target.child_status())
                    .map_or_else(|| e.to_string(), |more| format!("{e} ({more})"));
                target.close(true).await;
                return Err(format!("cannot connect: {why}"));
            }
        };
        let closing = Arc::new(AtomicBool::new(false));
        if let Some(exit) = target.child_exit() {
            // A child that dies on its own is noticed at once, not at the next call; one
            // ended by Disconnect or Reconnect is not news.
            let (hub, closing) = (shared.clone(), closing.clone());
            tokio::spawn(async move {
                let why = exit.await;
                if !closing.load(Ordering::Relaxed) {
                    hub.hub
                        .emit(json!({"type": "closed", "conn": id, "why": why, "exited": true}));
                }
            });
        }
        Ok(Conn {
            id,
            common,
            shown,
            client,
            target: tokio::sync::Mutex::new(Some(target)),
            closing,
            roots,
            listens: Mutex::new(HashMap::new()),
        })
    }

    /// A stdio child's last stderr lines (none for other servers, or once closed).
    pub(crate) async fn stderr_tail(&self) -> Vec<String> {
        self.target
            .lock()
            .await
            .as_ref()
            .map(Target::stderr_tail)
            .unwrap_or_default()
    }

    /// What the page shows of the connection.
    pub(crate) fn info(&self) -> Value {
        let client = &self.client;
        let era = match client.era() {
            Era::Session => "session",
            Era::Stateless => "stateless",
        };
        json!({
            "id": self.id,
            "target": self.shown,
            "connected": client.is_connected(),
            "protocolVersion": client.version().as_str(),
            "era": era,
            "serverInfo": client.server_info(),
            "capabilities": client.server_capabilities(),
            "instructions": client.instructions(),
            "clientCapabilities": client.capabilities(),
            "roots": *lock(&self.roots),
            "subscriptions": lock(&self.listens).keys().collect::<Vec<_>>(),
        })
    }

    /// Stateless era: listen for updates of `uri` (`on`), or stop.
    pub(crate) async fn listen(
        &self,
        uri: &str,
        on: bool,
    ) -> Result<(), ferry::client::ClientError> {
        if !on {
            lock(&self.listens).remove(uri);
            return Ok(());
        }
        let filter = SubscriptionFilter {
            resource_subscriptions: Some(vec![uri.to_owned()]),
            ..SubscriptionFilter::default()
        };
        let subscription = self.client.listen(filter).await?;
        lock(&self.listens).insert(uri.to_owned(), Some(subscription));
        Ok(())
    }

    /// End the connection: stop listening, end the HTTP session or shut the child down.
    pub(crate) async fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
        lock(&self.listens).clear();
        if let Some(target) = self.target.lock().await.take() {
            target.close(false).await;
        }
    }
}

/// Tell the page of a frame that passed.
fn wire_event(hub: &Hub, conn: u64, direction: Direction, seen: &Seen<'_>) {
    let dir = match direction {
        Direction::Sent => "sent",
        Direction::Received => "received",
    };
    let (size, text, truncated) = match seen {
        Seen::Frame(frame) => {
            let text = String::from_utf8_lossy(frame);
            if text.len() > WIRE_TEXT {
                let mut end = WIRE_TEXT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                (frame.len(), text[..end].to_owned(), true)
            } else {
                (frame.len(), text.into_owned(), false)
            }
        }
        Seen::Oversized(bytes) => (*bytes, "(over the size limit: dropped)".to_owned(), true),
        Seen::Other => (0, "(a transport event that is no message)".to_owned(), true),
    };
    hub.emit(json!({
        "type": "wire", "conn": conn, "dir": dir, "time": now_ms(), "size": size,
        "text": text, "truncated": truncated,
    }));
}
