//! `subscriptions/listen` (2026-07-28): a long-lived request whose notifications carry its
//! id as `io.modelcontextprotocol/subscriptionId`. The acknowledgement comes first and names
//! what the server agreed to send (only kinds it offers, only resources it has); then only
//! the opted-in kinds follow. The client ends it with `notifications/cancelled` (no
//! response); the server ends it gracefully, with a `complete` result, when the connection
//! is closing or the server is dropped.

use ferry_protocol::RequestId;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    NotificationMeta, NotificationParams, ResourceUpdatedNotificationParams, ResultMeta,
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
use tokio::sync::broadcast;

use super::core::Server;
use super::registry::Change;
use super::reply::Call;
use super::resources;
use crate::engine::{CallError, HandlerResult, Peer, RequestContext};

/// Resource URIs one listener (2026-07-28) or one session (`resources/subscribe`) may
/// subscribe to; more are refused with `-32602`.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1024;

/// The longest URI a session may subscribe to (`resources/subscribe`; longer: `-32602`).
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 8 * 1024;

/// `subscriptions/listen`: acknowledge, then forward opted-in changes until the stream ends.
pub(crate) async fn listen(
    server: &Server,
    call: &Call,
    params: SubscriptionsListenRequestParams,
    cx: RequestContext,
) -> HandlerResult {
    let wanted = params.notifications;
    if wanted
        .resource_subscriptions
        .as_ref()
        .is_some_and(|uris| uris.len() > MAX_RESOURCE_SUBSCRIPTIONS)
    {
        return Err(ErrorObject::invalid_params(format!(
            "at most {MAX_RESOURCE_SUBSCRIPTIONS} resource subscriptions per listener"
        )));
    }
    let accepted = accept(server, wanted);
    // Subscribe before acknowledging, so no change after the acknowledgement is missed.
    let mut changes = server.subscribe_changes();
    let id = cx.id.clone();
    let ack = SubscriptionsAcknowledgedNotificationParams {
        notifications: accepted.clone(),
        meta: Some(meta(&id)),
    };
    if cx
        .peer
        .notify("notifications/subscriptions/acknowledged", &ack)
        .await
        .is_err()
    {
        return Err(ErrorObject::internal_error("connection lost"));
    }
    loop {
        let change = tokio::select! {
            () = cx.closing.cancelled() => break,
            change = changes.recv() => change,
        };
        let sent = match change {
            Ok(change) => forward(&cx.peer, &accepted, &id, &change).await,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(%id, "{missed} changes missed; announcing every list");
                let mut sent = Ok(());
                for change in [Change::Tools, Change::Resources, Change::Prompts] {
                    sent = sent.and(forward(&cx.peer, &accepted, &id, &change).await);
                }
                sent
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        if sent.is_err() {
            return Err(ErrorObject::internal_error("connection lost"));
        }
    }
    server.reply(
        SubscriptionsListenResult {
            meta: meta_result(&id),
            ..Default::default()
        },
        call.version,
    )
}

/// The part of `wanted` the server honours.
fn accept(server: &Server, wanted: SubscriptionFilter) -> SubscriptionFilter {
    let offers = server.capabilities();
    let yes = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let resource_subscriptions = wanted
        .resource_subscriptions
        .filter(|_| offers.resources.is_some())
        .map(|uris| {
            uris.into_iter()
                .filter(|uri| resources::exists(server, uri))
                .collect::<Vec<_>>()
        })
        .filter(|uris| !uris.is_empty());
    SubscriptionFilter {
        tools_list_changed: yes(wanted.tools_list_changed, offers.tools.is_some()),
        prompts_list_changed: yes(wanted.prompts_list_changed, offers.prompts.is_some()),
        resources_list_changed: yes(wanted.resources_list_changed, offers.resources.is_some()),
        resource_subscriptions,
    }
}

async fn forward(
    peer: &Peer,
    accepted: &SubscriptionFilter,
    id: &RequestId,
    change: &Change,
) -> Result<(), CallError> {
    let list = |method, on: Option<bool>| {
        on.is_some_and(|on| on).then(|| {
            (
                method,
                NotificationParams {
                    meta: Some(meta(id)),
                },
            )
        })
    };
    match change {
        Change::Tools => match list(
            "notifications/tools/list_changed",
            accepted.tools_list_changed,
        ) {
            Some((method, params)) => peer.notify(method, &params).await,
            None => Ok(()),
        },
        Change::Prompts => {
            match list(
                "notifications/prompts/list_changed",
                accepted.prompts_list_changed,
            ) {
                Some((method, params)) => peer.notify(method, &params).await,
                None => Ok(()),
            }
        }
        Change::Resources => match list(
            "notifications/resources/list_changed",
            accepted.resources_list_changed,
        ) {
            Some((method, params)) => peer.notify(method, &params).await,
            None => Ok(()),
        },
        Change::ResourceUpdated(uri) => {
            let subscribed = accepted
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| **u == **uri));
            if !subscribed {
                return Ok(());
            }
            let params = ResourceUpdatedNotificationParams {
                uri: uri.to_string(),
                meta: Some(meta(id)),
            };
            peer.notify("notifications/resources/updated", &params)
                .await
        }
    }
}

fn meta(id: &RequestId) -> NotificationMeta {
    NotificationMeta {
        subscription_id: Some(id.clone()),
        ..Default::default()
    }
}

fn meta_result(id: &RequestId) -> ResultMeta {
    ResultMeta {
        subscription_id: Some(id.clone()),
        ..Default::default()
    }
}
