//! A shared session's tasks (2025-11-25 `tasks/*`) in the session store, so every
//! instance answers for them: the [`TaskShare`] each shared session's engine gets.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_protocol::jsonrpc::{ErrorObject, RawJson};
use ferry_protocol::types::{Task, TaskStatus};
use futures_util::future::BoxFuture;

use crate::engine::{Cancellation, HandlerResult, ResultJson, SharedTask, TaskShare};
use crate::http::store::{BusMessage, MAX_SHARED_TASK_BYTES, SessionStore, StoreError, TaskRecord};

/// The tasks running on this instance, by (session, task), to stop when any instance asks.
#[derive(Default)]
pub(crate) struct RunningTasks(Mutex<HashMap<(String, String), Cancellation>>);

impl RunningTasks {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Cancellation>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a task of `session` runs here.
    pub(super) fn any(&self, session: &str) -> bool {
        self.map().keys().any(|(s, _)| s == session)
    }

    /// Stop task `task` of `session` if it runs here; whether it did.
    pub(super) fn stop(&self, session: &str, task: &str) -> bool {
        let found = self.map().remove(&(session.to_owned(), task.to_owned()));
        found.map(|cancel| cancel.cancel()).is_some()
    }
}

/// The tasks of one shared session.
pub(super) struct StoreTasks {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) session: String,
    pub(super) instance: Arc<str>,
    pub(super) running: Arc<RunningTasks>,
}

/// The retention when a task names none (the server always names one).
const DEFAULT_RETENTION: Duration = Duration::from_secs(300);

fn unavailable(error: StoreError) -> ErrorObject {
    super::shared::store_error(&error)
}

impl StoreTasks {
    /// `task` as the store keeps it: an outcome too large to keep becomes a failure.
    fn record(&self, task: &SharedTask) -> Result<TaskRecord, ErrorObject> {
        // The task's state is copied only when it must change (an outcome too large).
        let mut state = std::borrow::Cow::Borrowed(&task.task);
        let mut outcome = task.outcome.as_ref().map(outcome_json).transpose()?;
        if let Some(json) = outcome.as_ref().filter(|j| j.len() > MAX_SHARED_TASK_BYTES) {
            let error = ErrorObject::internal_error(format!(
                "the task's result ({} bytes) is larger than the session store keeps \
                 ({MAX_SHARED_TASK_BYTES} bytes)",
                json.len()
            ));
            let state = state.to_mut();
            state.status = TaskStatus::Failed;
            state.status_message = Some(error.message.clone());
            outcome = Some(outcome_json(&Err(error))?);
        }
        Ok(TaskRecord {
            id: state.task_id.clone(),
            ended: crate::engine::terminal(state.status),
            task: serde_json::to_string(&*state).map_err(ErrorObject::internal_error)?,
            outcome,
            instance: self.instance.to_string(),
        })
    }

    /// A kept task whose instance stopped before it ended is failed (and kept so).
    /// `alive` remembers the instances asked about.
    async fn checked(
        &self,
        record: TaskRecord,
        alive: &mut HashMap<String, bool>,
    ) -> Result<SharedTask, ErrorObject> {
        let task = shared_task(&record)?;
        if record.ended || *record.instance == *self.instance {
            return Ok(task);
        }
        let running = match alive.get(&record.instance) {
            Some(running) => *running,
            None => {
                let running = self
                    .store
                    .alive(&record.instance)
                    .await
                    .map_err(unavailable)?;
                alive.insert(record.instance.clone(), running);
                running
            }
        };
        if running {
            return Ok(task);
        }
        let error = ErrorObject::internal_error(
            "the instance running the task stopped before the task ended",
        );
        let mut failed = task;
        failed.task.status = TaskStatus::Failed;
        failed.task.status_message = Some(error.message.clone());
        failed.outcome = Some(Err(error));
        let record = self.record(&failed)?;
        let kept = self
            .store
            .save_task(&self.session, &record, retention(&failed.task))
            .await
            .map_err(unavailable)?;
        kept.map_or(Ok(failed), |kept| shared_task(&kept))
    }
}

fn retention(task: &Task) -> Duration {
    task.ttl.map_or(DEFAULT_RETENTION, Duration::from_millis)
}

/// An outcome as the store keeps it: `{"result": ..}` or `{"error": ..}`.
fn outcome_json(outcome: &HandlerResult) -> Result<String, ErrorObject> {
    match outcome {
        Ok(result) => Ok(format!("{{\"result\":{}}}", result.get())),
        Err(error) => serde_json::to_string(&serde_json::json!({ "error": error }))
            .map_err(ErrorObject::internal_error),
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Result(RawJson),
    Error(ErrorObject),
}

fn shared_task(record: &TaskRecord) -> Result<SharedTask, ErrorObject> {
    let task: Task = serde_json::from_str(&record.task).map_err(|e| {
        ErrorObject::internal_error(format!("a task in the session store is unreadable: {e}"))
    })?;
    let outcome = record
        .outcome
        .as_ref()
        .map(|json| match serde_json::from_str::<Outcome>(json) {
            Ok(Outcome::Result(raw)) => Ok(ResultJson::from(raw)),
            Ok(Outcome::Error(error)) => Err(error),
            Err(e) => Err(ErrorObject::internal_error(format!(
                "a task's outcome in the session store is unreadable: {e}"
            ))),
        });
    Ok(SharedTask { task, outcome })
}

impl TaskShare for StoreTasks {
    fn save<'a>(&'a self, task: &'a SharedTask) -> BoxFuture<'a, Result<SharedTask, ErrorObject>> {
        Box::pin(async move {
            if task.ended() {
                self.running
                    .map()
                    .remove(&(self.session.clone(), task.task.task_id.clone()));
            }
            let record = self.record(task)?;
            let kept = self
                .store
                .save_task(&self.session, &record, retention(&task.task))
                .await
                .map_err(unavailable)?;
            match kept {
                Some(kept) => shared_task(&kept),
                // Forgotten meanwhile (its retention ended): what was saved stands.
                None => shared_task(&record),
            }
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SharedTask>, ErrorObject>> {
        Box::pin(async move {
            let kept = self
                .store
                .load_task(&self.session, id)
                .await
                .map_err(unavailable)?;
            match kept {
                Some(record) => self.checked(record, &mut HashMap::new()).await.map(Some),
                None => Ok(None),
            }
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Task>, ErrorObject>> {
        Box::pin(async move {
            let records = self
                .store
                .list_tasks(&self.session)
                .await
                .map_err(unavailable)?;
            let mut tasks = Vec::with_capacity(records.len());
            let mut alive = HashMap::new();
            for record in records {
                tasks.push(self.checked(record, &mut alive).await?.task);
            }
            Ok(tasks)
        })
    }

    fn running(&self, id: &str, cancel: Cancellation) {
        self.running
            .map()
            .insert((self.session.clone(), id.to_owned()), cancel);
    }

    fn stop<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.running.stop(&self.session, id) {
                return;
            }
            let message = BusMessage {
                to: None,
                session: self.session.clone(),
                frame: String::new(),
                legacy: false,
                change: None,
                from: self.instance.to_string(),
                task: Some(id.to_owned()),
                record: false,
            };
            if let Err(e) = self.store.publish(&message).await {
                tracing::warn!("cannot tell the other instances to stop task {id}: {e}");
            }
        })
    }
}
