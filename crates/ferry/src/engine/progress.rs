//! Progress reporting for an incoming request (and for the task it started, if any).

use std::sync::Arc;

use tokio::sync::Mutex;

use ferry_protocol::jsonrpc::Notification;
use ferry_protocol::types::{
    NotificationMeta, ProgressNotificationParams, ProgressToken, RelatedTaskMetadata,
};

use super::peer::Peer;

/// Sends `notifications/progress` for one request: only while the request is active, and
/// only with strictly increasing values.
#[derive(Clone, Debug)]
pub struct ProgressReporter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    token: ProgressToken,
    peer: Peer,
    /// The task the reports belong to (their `_meta` names it), for a request run as one.
    task: Option<String>,
    /// Held across the send, so a report in flight is queued before the response.
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    last: Option<f64>,
    active: bool,
}

/// Why a progress update was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgressError {
    /// The request already has its response (or was cancelled).
    #[error("the request is no longer active")]
    Inactive,
    /// The value did not increase.
    #[error("progress must increase with every notification")]
    NotIncreasing,
    /// The connection is gone.
    #[error("connection lost")]
    ConnectionClosed,
}

impl ProgressReporter {
    pub(crate) fn new(token: ProgressToken, peer: Peer) -> Self {
        Self::with_task(token, peer, None)
    }

    /// A reporter for a request run as task `task` (2025-11-25): its token stays valid
    /// for the task's life, and each report names the task.
    pub(crate) fn with_task(token: ProgressToken, peer: Peer, task: Option<String>) -> Self {
        ProgressReporter {
            inner: Arc::new(Inner {
                token,
                peer,
                task,
                state: Mutex::new(State {
                    last: None,
                    active: true,
                }),
            }),
        }
    }

    /// Report `progress` (out of `total`, if known) with an optional message.
    pub async fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ProgressError> {
        let mut state = self.inner.state.lock().await;
        if !state.active {
            return Err(ProgressError::Inactive);
        }
        if state.last.is_some_and(|l| progress <= l) || !progress.is_finite() {
            return Err(ProgressError::NotIncreasing);
        }
        state.last = Some(progress);
        let params = ProgressNotificationParams {
            progress_token: self.inner.token.clone(),
            progress,
            total,
            message,
            meta: self.inner.task.as_ref().map(|id| NotificationMeta {
                related_task: Some(RelatedTaskMetadata {
                    task_id: id.clone(),
                }),
                ..Default::default()
            }),
        };
        let frame = serde_json::to_vec(&Notification::new("notifications/progress", params))
            .map_err(|_| ProgressError::ConnectionClosed)?;
        self.inner
            .peer
            .send_frame(frame)
            .await
            .map_err(|_| ProgressError::ConnectionClosed)
    }

    /// The token the peer asked progress to carry.
    pub fn token(&self) -> &ProgressToken {
        &self.inner.token
    }

    /// Stop reporting; waits for a report being sent, so it is queued before the response.
    pub(crate) async fn deactivate(&self) {
        self.inner.state.lock().await.active = false;
    }
}
