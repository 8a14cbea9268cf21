//! A `tracing` layer that feeds MCP logging: an event emitted while a server handler runs
//! (in its task) becomes `notifications/message` to the client that made the request, if
//! that client wants the level (`logging/setLevel` in the session era, the request's
//! `io.modelcontextprotocol/logLevel` in the stateless era).
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let subscriber = tracing_subscriber::registry().with(ferry::server::ClientLogLayer::new());
//! // tracing::subscriber::set_global_default(subscriber)
//! # drop(subscriber);
//! ```
//!
//! Layers are synchronous, so a message is queued without waiting: when the connection's
//! write queue is full the message is dropped rather than stalling the handler.

use std::fmt::Write as _;
use std::future::Future;

use ferry_protocol::types::{LoggingLevel, LoggingMessageNotificationParams};
use futures_util::future::Either;
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer};

use super::context::Context;
use crate::engine::Peer;

/// Where a handler's events go: the client of its request, and the least severe level
/// that client wants.
pub(crate) struct LogTarget {
    level: LoggingLevel,
    peer: Peer,
}

impl LogTarget {
    /// The target of a request's handler; `None` when its client wants no log messages
    /// (then the handler runs unscoped: the layer would send nothing).
    pub(crate) fn of(cx: &Context) -> Option<LogTarget> {
        cx.log_level.map(|level| LogTarget {
            level,
            peer: cx.peer.clone(),
        })
    }
}

tokio::task_local! {
    /// The client a running handler's events go to, seen by the layer.
    static CURRENT: LogTarget;
}

/// Run `handler` with `target` as where the layer reports its events; unscoped when there
/// is none. Not an `async fn`: that would hold `handler` twice (as its argument and in the
/// scope).
pub(crate) fn scoped<F: Future>(
    target: Option<LogTarget>,
    handler: F,
) -> impl Future<Output = F::Output> {
    match target {
        Some(target) => Either::Left(CURRENT.scope(target, handler)),
        None => Either::Right(handler),
    }
}

/// Forwards `tracing` events inside server handlers to their clients (see the module
/// docs). Add it to a `tracing_subscriber` registry next to your usual layers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientLogLayer {
    _private: (),
}

impl ClientLogLayer {
    /// The layer.
    pub fn new() -> Self {
        ClientLogLayer::default()
    }
}

fn level(level: &Level) -> LoggingLevel {
    match *level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Collects an event's fields: `message` apart, the others as JSON.
#[derive(Default)]
struct Fields {
    message: String,
    others: Map<String, Value>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.others.insert(field.name().into(), value.into());
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.others.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.others.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.others.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.others.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.others
                .insert(field.name().into(), format!("{value:?}").into());
        }
    }
}

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _: LayerContext<'_, S>) {
        let _ = CURRENT.try_with(|target| {
            let level = level(event.metadata().level());
            if level < target.level {
                return;
            }
            let mut fields = Fields::default();
            event.record(&mut fields);
            let data = if fields.others.is_empty() {
                Value::String(fields.message)
            } else {
                fields
                    .others
                    .insert("message".into(), fields.message.into());
                Value::Object(fields.others)
            };
            let params = LoggingMessageNotificationParams {
                level,
                logger: Some(event.metadata().target().to_owned()),
                data,
                meta: None,
            };
            target.peer.try_notify("notifications/message", &params);
        });
    }
}
