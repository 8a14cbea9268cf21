//! Session records shared by several instances of one HTTP server, so any instance serves
//! any session-era request (no sticky sessions) and losing one loses no session.
//!
//! Each session-era session has a [`SessionRecord`] in a [`SessionStore`]: what an
//! instance needs to serve it without the client initializing again (the client's
//! `initialize` request, the negotiated revision, its owner, log level and resource
//! subscriptions). An instance that gets a request for a session it does not hold
//! **adopts** it: it starts a local engine for the session and replays the recorded
//! `initialize`, `notifications/initialized`, `logging/setLevel` and
//! `resources/subscribe` to it (their answers are not sent anywhere), then serves the
//! request. Every request of a session refreshes its record's expiry (one round trip);
//! a session whose record is gone (deleted on any instance, or idle past the expiry) is
//! unknown everywhere (404).
//!
//! The store also keeps each session's tasks (2025-11-25 `tasks/*`, as [`TaskRecord`]s),
//! so a task started on one instance is polled, awaited and cancelled on any.
//!
//! Two stores come with Ferry: [`MemorySessionStore`] (one process: routers sharing it
//! behave as instances sharing Redis; tests use it) and, with feature `redis`,
//! [`RedisSessionStore`]. Without a store (the default) sessions live in their
//! instance only, as a single-instance server needs.

#[cfg(feature = "redis")]
mod redis;

#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use self::redis::{RedisConfig, RedisSessionStore};

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use crate::engine::{DataEntry, DataSaved};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};

/// The largest `initialize` request a shared session records (its body as posted). Real
/// ones are a few KiB; a larger one is refused (400) when a store is configured, since
/// every instance that adopts the session reads it back.
pub const MAX_RECORDED_INITIALIZE_BYTES: usize = 64 * 1024;

/// The most resource subscriptions one session's record keeps (as many as a Ferry server
/// takes per session); later ones are served by the instance that took them but not
/// carried to others.
pub const MAX_RECORDED_SUBSCRIPTIONS: usize = 1024;

/// The longest subscribed URI a record keeps (longer ones are not carried; a Ferry server
/// refuses them).
pub const MAX_RECORDED_URI_BYTES: usize = 8 * 1024;

/// What an instance needs to serve a session it did not start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session id (`MCP-Session-Id`).
    pub id: String,
    /// The negotiated revision, as on the wire (`2025-06-18`).
    pub revision: String,
    /// The client's `initialize` request, as posted (JSON text).
    pub initialize: String,
    /// The principal the session is bound to ([`SessionOwner`](super::SessionOwner)), if
    /// any: other principals get 404 on every instance.
    pub owner: Option<String>,
    /// The level the client set with `logging/setLevel`, if it did.
    pub log_level: Option<String>,
    /// The URIs the client subscribed to (`resources/subscribe`), oldest first.
    pub subscriptions: Vec<String>,
    /// How many changes the record has had (0 when created): an instance serving the
    /// session compares it with the changes it has applied, and catches up.
    #[serde(default)]
    pub version: u64,
    /// For a 2024-11-05 HTTP+SSE session, the instance holding its stream (the session
    /// lives there; others pass the client's POSTs on to it). `None` for a Streamable
    /// HTTP session, which any instance serves.
    #[serde(default)]
    pub instance: Option<String>,
}

/// A message between the instances of a server, about one session (see
/// [`SessionStore::publish`]): a client's answer to a request another instance sent, or a
/// cancellation every instance should see.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusMessage {
    /// The instance it is for (its id), or `None` for every instance.
    pub to: Option<String>,
    /// The session it belongs to.
    pub session: String,
    /// The JSON-RPC message, as the client posted it.
    pub frame: String,
    /// For a 2024-11-05 HTTP+SSE session (posted on another instance than the one
    /// holding its stream).
    #[serde(default)]
    pub legacy: bool,
    /// Instead of a message: a change of what the sending instance serves (its tools,
    /// a resource...), which every other instance tells its own clients.
    #[serde(default)]
    pub change: Option<crate::engine::BackendChange>,
    /// The instance that sent it.
    #[serde(default)]
    pub from: String,
    /// Instead of a message: stop this task of the session, if it runs on the instance
    /// that gets this.
    #[serde(default)]
    pub task: Option<String>,
    /// Instead of a message: the session's record changed (a subscription, a log
    /// level); an instance serving the session catches up at once.
    #[serde(default)]
    pub record: bool,
}

/// The most tasks a store keeps per session (the oldest go first).
pub const MAX_SHARED_TASKS: usize = 1024;

/// The largest task outcome (its result or error as JSON text) a store keeps: a larger
/// result is kept as a failure that says so.
pub const MAX_SHARED_TASK_BYTES: usize = 4 * 1024 * 1024;

/// A session's task as a store keeps it (see [`SessionStore::save_task`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id.
    pub id: String,
    /// Whether the task has ended (completed, failed or cancelled): an ended task is
    /// never changed again.
    pub ended: bool,
    /// The task (its `Task` object as JSON text).
    pub task: String,
    /// Its outcome once ended, as JSON text: `{"result": ..}` or `{"error": ..}`.
    pub outcome: Option<String>,
    /// The instance running it.
    pub instance: String,
}

/// The most events a shared stream log keeps (the oldest go first).
pub const MAX_SHARED_STREAM_EVENTS: usize = 1000;

/// How long a shared stream log is kept after its last event: 5 minutes.
pub const SHARED_STREAM_TTL: Duration = Duration::from_secs(300);

/// What an instance writes of a session's SSE stream so another can resume it (see
/// [`SessionStore::append_stream`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StreamEntry {
    /// A POST stream opened by `instance` for the requests `ids` (each as JSON text).
    Opened {
        /// The instance running the requests.
        instance: String,
        /// Their ids.
        ids: Vec<String>,
    },
    /// The next event of the stream; `last` for its final response.
    Event {
        /// Its sequence number in the stream.
        seq: u64,
        /// The JSON-RPC message.
        frame: String,
        /// Whether it ends the stream.
        last: bool,
    },
}

/// A shared stream's log (see [`SessionStore::stream_log`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamLog {
    /// The instance running its requests: `None` for a stream without requests (a GET
    /// stream).
    pub instance: Option<String>,
    /// Its requests' ids, as JSON text.
    pub ids: Vec<String>,
    /// The events kept, oldest first: `(seq, frame, last)`.
    pub events: Vec<(u64, String, bool)>,
}

impl StreamLog {
    fn add(&mut self, entry: &StreamEntry) {
        match entry {
            StreamEntry::Opened { instance, ids } => {
                self.instance = Some(instance.clone());
                self.ids = ids.clone();
            }
            StreamEntry::Event { seq, frame, last } => {
                self.events.push((*seq, frame.clone(), *last));
                let over = self.events.len().saturating_sub(MAX_SHARED_STREAM_EVENTS);
                self.events.drain(..over);
            }
        }
    }
}

/// Why a store could not answer: the HTTP layer answers 503 with a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the session store is unavailable: {0}")]
pub struct StoreError(pub String);

/// A change to a session's record, made when the client's request asking for it is
/// accepted by the server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordChange {
    /// `logging/setLevel`.
    LogLevel(String),
    /// `resources/subscribe`.
    Subscribe(String),
    /// `resources/unsubscribe`.
    Unsubscribe(String),
}

/// Session records shared by the instances of one server (see the module docs). Every
/// call is bounded in time by the store itself: a store that cannot answer fails with
/// [`StoreError`] rather than waiting.
pub trait SessionStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep `record`, expiring after `ttl` without [`touch`](SessionStore::touch).
    fn create<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The record of session `id`, unless it ended or expired.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>>;

    /// Push session `id`'s expiry `ttl` into the future and tell the record's version;
    /// `None` when it has no record (ended or expired).
    fn touch<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>>;

    /// Apply `change` to session `id`'s record and count it in the record's version:
    /// the new version, or `None` when there is no record.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a RecordChange,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>>;

    /// Forget session `id` (it was deleted).
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Send `message` to the instance it names (or to all). Delivery is at most once:
    /// an instance that is not listening at that moment misses it.
    fn publish<'a>(&'a self, message: &'a BusMessage) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The messages for instance `instance` and for all, from now on, for as long as the
    /// receiver is kept. The store re-establishes its listening by itself after a failure.
    fn subscribe<'a>(
        &'a self,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<BusMessage>, StoreError>>;

    /// Add `entries` to the log of stream `stream` of session `session`, kept `ttl` after
    /// the last addition and bounded to [`MAX_SHARED_STREAM_EVENTS`] events.
    fn append_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        entries: &'a [StreamEntry],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The log of a session's stream, if it is kept.
    fn stream_log<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<Option<StreamLog>, StoreError>>;

    /// Say `instance` is alive for `ttl` more.
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Whether `instance`'s last heartbeat has not expired.
    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Keep `task` of session `session` for `ttl` from its first save, unless the kept one
    /// has ended (then it stays) or an ended task comes for one no longer kept (it is not
    /// made again): the task as kept, or `None` when it is not kept. At most
    /// [`MAX_SHARED_TASKS`] per session: saving a new one past that forgets the oldest.
    fn save_task<'a>(
        &'a self,
        session: &'a str,
        task: &'a TaskRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Task `id` of session `session`, if it is kept.
    fn load_task<'a>(
        &'a self,
        session: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// The tasks of session `session`, oldest first, without their outcomes.
    fn list_tasks<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>>;

    /// Value `key` of session `session`'s application data (see `server::SessionData`),
    /// or `None` when the session has no record. Kept with the session's record: it
    /// expires and is removed with it. Default: the store keeps no data (an error).
    fn load_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<DataEntry>, StoreError>> {
        let _ = (session, key);
        Box::pin(std::future::ready(Err(no_data())))
    }

    /// Save `json` as value `key` of session `session` if its version is still `version`
    /// and the session's values (keys and JSON) stay within `max_bytes`; `None` when the
    /// session has no record. Atomic: of two saves from the same version, one conflicts.
    fn save_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        version: u64,
        json: &'a str,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<DataSaved>, StoreError>> {
        let _ = (session, key, version, json, max_bytes);
        Box::pin(std::future::ready(Err(no_data())))
    }
}

fn no_data() -> StoreError {
    StoreError("this session store keeps no session data".into())
}

/// One session's data in a [`MemorySessionStore`]: key -> (JSON, version).
type SessionValues = HashMap<String, (String, u64)>;

/// How many bus messages wait for their instance to take them; more are dropped (each is
/// a client's answer or a cancellation: a slow instance misses some rather than grow).
pub const BUS_QUEUE: usize = 1024;

/// One session's tasks in a [`MemorySessionStore`], oldest first, with their expiry.
type SessionTasks = indexmap::IndexMap<String, (TaskRecord, Instant)>;

/// A [`SessionStore`] in this process's memory: routers built with the same store share
/// their sessions as instances sharing Redis do (each adopts the others' sessions).
/// Expired records are dropped when next looked at, and swept on every create.
#[derive(Debug)]
pub struct MemorySessionStore {
    records: Mutex<HashMap<String, (SessionRecord, Instant)>>,
    bus: broadcast::Sender<BusMessage>,
    streams: Mutex<HashMap<(String, u64), (StreamLog, Instant)>>,
    instances: Mutex<HashMap<String, Instant>>,
    /// Each session's tasks, oldest first, with their expiry.
    tasks: Mutex<HashMap<String, SessionTasks>>,
    /// Each session's application data (dropped with its record).
    data: Mutex<HashMap<String, SessionValues>>,
}

impl Default for MemorySessionStore {
    fn default() -> Self {
        MemorySessionStore {
            records: Mutex::default(),
            bus: broadcast::channel(BUS_QUEUE).0,
            streams: Mutex::default(),
            instances: Mutex::default(),
            tasks: Mutex::default(),
            data: Mutex::default(),
        }
    }
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records are live (expired ones not counted).
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.map()
            .values()
            .filter(|(_, until)| *until > now)
            .count()
    }

    /// Whether no record is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRecord, Instant)>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tasks of every session, expired ones dropped.
    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionTasks>> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        tasks.retain(|_, session| {
            session.retain(|_, (_, until)| *until > now);
            !session.is_empty()
        });
        tasks
    }

    /// The live record of `id`, with its expiry; an expired one is dropped.
    fn live<'m>(
        map: &'m mut HashMap<String, (SessionRecord, Instant)>,
        id: &str,
    ) -> Option<&'m mut (SessionRecord, Instant)> {
        if map
            .get(id)
            .is_some_and(|(_, until)| *until <= Instant::now())
        {
            map.remove(id);
        }
        map.get_mut(id)
    }
}

impl SessionStore for MemorySessionStore {
    fn create<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = Instant::now();
        let mut map = self.map();
        map.retain(|_, (_, until)| *until > now);
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|id, _| map.contains_key(id));
        map.insert(record.id.clone(), (record.clone(), now + ttl));
        Box::pin(std::future::ready(Ok(())))
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        let record = Self::live(&mut self.map(), id).map(|(record, _)| record.clone());
        Box::pin(std::future::ready(Ok(record)))
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let found = Self::live(&mut self.map(), id).map(|(record, until)| {
            *until = Instant::now() + ttl;
            record.version
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a RecordChange,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let version = Self::live(&mut self.map(), id).map(|(record, _)| {
            apply(record, change);
            record.version += 1;
            record.version
        });
        Box::pin(std::future::ready(Ok(version)))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.map().remove(id);
        self.tasks().remove(id);
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        Box::pin(std::future::ready(Ok(())))
    }

    fn publish<'a>(&'a self, message: &'a BusMessage) -> BoxFuture<'a, Result<(), StoreError>> {
        // No receiver is no error: no instance listens yet.
        let _ = self.bus.send(message.clone());
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe<'a>(
        &'a self,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<BusMessage>, StoreError>> {
        let mut messages = self.bus.subscribe();
        let (tx, rx) = mpsc::channel(BUS_QUEUE);
        let instance = instance.to_owned();
        tokio::spawn(async move {
            loop {
                let message = match messages.recv().await {
                    Ok(message) => message,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!("the session bus dropped {missed} messages for {instance}");
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if message.to.as_ref().is_some_and(|to| *to != instance) {
                    continue;
                }
                if tx.send(message).await.is_err() {
                    return;
                }
            }
        });
        Box::pin(std::future::ready(Ok(rx)))
    }

    fn append_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        entries: &'a [StreamEntry],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = Instant::now();
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        streams.retain(|_, (_, until)| *until > now);
        let (log, until) = streams
            .entry((session.to_owned(), stream))
            .or_insert_with(|| (StreamLog::default(), now));
        for entry in entries {
            log.add(entry);
        }
        *until = now + ttl;
        Box::pin(std::future::ready(Ok(())))
    }

    fn stream_log<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<Option<StreamLog>, StoreError>> {
        let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let log = streams
            .get(&(session.to_owned(), stream))
            .filter(|(_, until)| *until > Instant::now())
            .map(|(log, _)| log.clone());
        Box::pin(std::future::ready(Ok(log)))
    }

    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut instances = self.instances.lock().unwrap_or_else(|e| e.into_inner());
        instances.insert(instance.to_owned(), Instant::now() + ttl);
        Box::pin(std::future::ready(Ok(())))
    }

    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let instances = self.instances.lock().unwrap_or_else(|e| e.into_inner());
        let alive = instances
            .get(instance)
            .is_some_and(|until| *until > Instant::now());
        Box::pin(std::future::ready(Ok(alive)))
    }

    fn save_task<'a>(
        &'a self,
        session: &'a str,
        task: &'a TaskRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let mut tasks = self.tasks();
        let kept = match tasks.get_mut(session).and_then(|s| s.get_mut(&task.id)) {
            Some((kept, _)) if kept.ended => Some(kept.clone()),
            Some((kept, _)) => {
                *kept = task.clone();
                Some(kept.clone())
            }
            None if task.ended => None,
            None => {
                let session = tasks.entry(session.to_owned()).or_default();
                session.insert(task.id.clone(), (task.clone(), Instant::now() + ttl));
                let over = session.len().saturating_sub(MAX_SHARED_TASKS);
                session.drain(..over);
                Some(task.clone())
            }
        };
        Box::pin(std::future::ready(Ok(kept)))
    }

    fn load_task<'a>(
        &'a self,
        session: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let tasks = self.tasks();
        let kept = tasks
            .get(session)
            .and_then(|s| s.get(id))
            .map(|(task, _)| task.clone());
        Box::pin(std::future::ready(Ok(kept)))
    }

    fn list_tasks<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        let tasks = self.tasks();
        let listed = tasks
            .get(session)
            .map(|s| {
                s.values()
                    .map(|(task, _)| TaskRecord {
                        outcome: None,
                        ..task.clone()
                    })
                    .collect()
            })
            .unwrap_or_default();
        Box::pin(std::future::ready(Ok(listed)))
    }

    fn load_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<DataEntry>, StoreError>> {
        let live = Self::live(&mut self.map(), session).is_some();
        let mut data = self.data.lock().unwrap_or_else(|e| e.into_inner());
        let entry = if live {
            let kept = data.get(session).and_then(|values| values.get(key));
            Some(
                kept.map_or_else(DataEntry::default, |(json, version)| DataEntry {
                    json: Some(json.clone()),
                    version: *version,
                }),
            )
        } else {
            data.remove(session);
            None
        };
        Box::pin(std::future::ready(Ok(entry)))
    }

    fn save_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        version: u64,
        json: &'a str,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<DataSaved>, StoreError>> {
        let live = Self::live(&mut self.map(), session).is_some();
        let mut data = self.data.lock().unwrap_or_else(|e| e.into_inner());
        if !live {
            data.remove(session);
            return Box::pin(std::future::ready(Ok(None)));
        }
        let values = data.entry(session.to_owned()).or_default();
        let current = values.get(key).map_or(0, |(_, v)| *v);
        let others: usize = values
            .iter()
            .filter(|(k, _)| k.as_str() != key)
            .map(|(k, (j, _))| k.len() + j.len())
            .sum();
        let saved = if current != version {
            DataSaved::Conflict
        } else if others + key.len() + json.len() > max_bytes {
            DataSaved::TooLarge
        } else {
            values.insert(key.to_owned(), (json.to_owned(), version + 1));
            DataSaved::Saved(version + 1)
        };
        Box::pin(std::future::ready(Ok(Some(saved))))
    }
}

/// Whether `id` can name an instance ([`HttpConfig::instance_id`](super::HttpConfig::instance_id)):
/// 1 to 64 letters, digits, `-` and `_`.
///
/// ```
/// assert!(ferry::http::store::valid_instance_id("eu-1"));
/// assert!(!ferry::http::store::valid_instance_id("a:b"));
/// ```
pub fn valid_instance_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A new random instance id: 16 hex digits.
pub(crate) fn random_instance_id() -> std::sync::Arc<str> {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore;
    format!("{:016x}", OsRng.next_u64()).into()
}

/// Apply `change` to `record`, within the record's bounds.
pub(crate) fn apply(record: &mut SessionRecord, change: &RecordChange) {
    match change {
        RecordChange::LogLevel(level) => record.log_level = Some(level.clone()),
        RecordChange::Subscribe(uri) => {
            if recordable(uri)
                && record.subscriptions.len() < MAX_RECORDED_SUBSCRIPTIONS
                && !record.subscriptions.contains(uri)
            {
                record.subscriptions.push(uri.clone());
            }
        }
        RecordChange::Unsubscribe(uri) => record.subscriptions.retain(|u| u != uri),
    }
}

/// Whether a subscribed URI is short enough to be carried in a record.
pub(crate) fn recordable(uri: &str) -> bool {
    uri.len() <= MAX_RECORDED_URI_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            revision: "2025-06-18".into(),
            initialize: "{}".into(),
            owner: None,
            log_level: None,
            subscriptions: Vec::new(),
            version: 0,
            instance: None,
        }
    }

    #[tokio::test]
    async fn a_memory_record_lives_until_its_expiry_and_touch_extends_it() {
        let store = MemorySessionStore::new();
        store
            .create(&record("a"), Duration::from_millis(60))
            .await
            .unwrap();
        assert!(store.load("a").await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(
            store.touch("a", Duration::from_millis(60)).await.unwrap(),
            Some(0)
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(store.load("a").await.unwrap().is_some(), "touched");
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(store.load("a").await.unwrap().is_none(), "expired");
        assert_eq!(
            store.touch("a", Duration::from_secs(1)).await.unwrap(),
            None
        );
        assert!(store.is_empty());
    }

    #[tokio::test]
    async fn changes_are_applied_within_bounds() {
        let store = MemorySessionStore::new();
        store
            .create(&record("a"), Duration::from_secs(60))
            .await
            .unwrap();
        let change = |c: RecordChange| {
            let store = &store;
            async move { store.update("a", &c).await.unwrap() }
        };
        change(RecordChange::LogLevel("debug".into())).await;
        change(RecordChange::Subscribe("file:///a".into())).await;
        change(RecordChange::Subscribe("file:///a".into())).await;
        change(RecordChange::Subscribe("file:///b".into())).await;
        change(RecordChange::Subscribe(
            "x".repeat(MAX_RECORDED_URI_BYTES + 1),
        ))
        .await;
        change(RecordChange::Unsubscribe("file:///a".into())).await;
        let got = store.load("a").await.unwrap().unwrap();
        assert_eq!(got.log_level.as_deref(), Some("debug"));
        assert_eq!(got.subscriptions, vec!["file:///b".to_owned()]);
        assert_eq!(got.version, 6, "every change counted");
        assert_eq!(
            store.touch("a", Duration::from_secs(60)).await.unwrap(),
            Some(6)
        );
        for i in 0..MAX_RECORDED_SUBSCRIPTIONS + 10 {
            change(RecordChange::Subscribe(format!("file:///{i}"))).await;
        }
        let got = store.load("a").await.unwrap().unwrap();
        assert_eq!(got.subscriptions.len(), MAX_RECORDED_SUBSCRIPTIONS);
        store.remove("a").await.unwrap();
        assert!(store.load("a").await.unwrap().is_none());
    }
}
