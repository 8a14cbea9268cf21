//! [`SessionStore`] in Redis (feature `redis`): one hash per session, expiring with the
//! session's idle timeout.
//!
//! Keys (every one under the configured prefix, default `ferry:`):
//!
//! | key | type | holds | expiry |
//! |---|---|---|---|
//! | `{prefix}session:{id}` | hash | `record` (the record's JSON without level and subscriptions), `version` (changes so far), `level`, one `sub:{uri}` field per subscription | the session idle timeout, pushed back by every request |
//!
//! | `{prefix}stream:{session}:{stream}:meta` | string | the instance running a POST stream's requests and their ids (JSON) | 5 minutes after the stream's last event |
//! | `{prefix}stream:{session}:{stream}:events` | list | the stream's last 1,000 events (JSON) | the same |
//! | `{prefix}instance:{id}` | string | that the instance is alive | 5 s, renewed every second |
//! | `{prefix}task:{session}:{task}` | hash | a task (2025-11-25): `id`, `ended`, `task` (JSON), `outcome` (JSON), `instance` | the task's retention (its `ttl`, at most an hour), from its creation |
//! | `{prefix}tasks:{session}` | sorted set | the session's task ids, oldest first (at most 1,024) | the longest retention of its tasks; deleted with the session |
//!
//! The instances' bus is Redis pub/sub: channel `{prefix}bus:{instance}` for one instance,
//! `{prefix}bus` for all; a payload is a [`BusMessage`] as JSON. Instances trust what
//! comes from Redis: anyone who can publish there can also rewrite the session records,
//! so signing payloads would protect nothing more (protect Redis itself: a password,
//! TLS, a private network).
//!
//! Every call is one round trip (scripts check and change in one step, so a change never
//! recreates a record another instance deleted), bounded by the response timeout.

use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script};

use tokio::sync::mpsc;

use crate::engine::{DataEntry, DataSaved};

use super::{
    BUS_QUEUE, BusMessage, MAX_RECORDED_SUBSCRIPTIONS, MAX_SHARED_STREAM_EVENTS, MAX_SHARED_TASKS,
    RecordChange, SessionRecord, SessionStore, StoreError, StreamEntry, StreamLog, TaskRecord,
    recordable,
};

/// Where Redis is and how long to wait for it.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://host:port/db` (or `rediss://` where the client was built with TLS).
    pub url: String,
    /// Put before every key, so several servers (or tests) can share one Redis.
    /// Default: `ferry:`.
    pub prefix: String,
    /// How long one command may take before it fails (the request then gets 503).
    /// Default: 2 s.
    pub response_timeout: Duration,
    /// How long one connection attempt may take. Default: 2 s.
    pub connection_timeout: Duration,
}

impl RedisConfig {
    /// The defaults for the Redis at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        RedisConfig {
            url: url.into(),
            prefix: "ferry:".into(),
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(2),
        }
    }

    /// Put `prefix` before every key.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }
}

/// Session records in Redis (see the module docs). Reconnects by itself: while Redis is
/// unreachable every call fails within the timeouts, and the next call after it is back
/// succeeds.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use ferry::http::HttpConfig;
/// use ferry::http::store::{RedisConfig, RedisSessionStore};
///
/// let store = RedisSessionStore::new(RedisConfig::new("redis://127.0.0.1:6379/0"))?;
/// let config = HttpConfig::default().session_store(Arc::new(store));
/// # drop(config);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisSessionStore {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// The record's fields that never change, as stored in the `record` field.
#[derive(serde::Serialize, serde::Deserialize)]
struct Fixed {
    revision: String,
    initialize: String,
    owner: Option<String>,
    #[serde(default)]
    instance: Option<String>,
}

/// Push the expiry back (ARGV[1] ms) and return the version, or -1 without a record.
const TOUCH: &str = r"
if redis.call('pexpire', KEYS[1], ARGV[1]) == 1 then
  return tonumber(redis.call('hget', KEYS[1], 'version') or '0')
end
return -1";

/// Set `level` (ARGV[1]) if the record exists; the new version, or -1.
const SET_LEVEL: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
redis.call('hset', KEYS[1], 'level', ARGV[1])
return redis.call('hincrby', KEYS[1], 'version', 1)";

/// Add subscription field ARGV[1] if the record exists and has fewer than ARGV[2]
/// subscriptions (counted in `subs`: the hash holds the session's data too); the new
/// version, or -1.
const SUBSCRIBE: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
if redis.call('hexists', KEYS[1], ARGV[1]) == 0
  and tonumber(redis.call('hget', KEYS[1], 'subs') or '0') < tonumber(ARGV[2]) then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  redis.call('hincrby', KEYS[1], 'subs', 1)
end
return redis.call('hincrby', KEYS[1], 'version', 1)";

/// Remove subscription field ARGV[1] if the record exists; the new version, or -1.
const UNSUBSCRIBE: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
if redis.call('hdel', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], 'subs', -1)
end
return redis.call('hincrby', KEYS[1], 'version', 1)";

/// Value ARGV[1] of the session's data (fields `data:KEY`, `datav:KEY` of the record's
/// hash, so it expires and goes with the record): `{json, version}`, or -1 without a
/// record.
const LOAD_DATA: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
return redis.call('hmget', KEYS[1], 'data:' .. ARGV[1], 'datav:' .. ARGV[1])";

/// Save ARGV[3] as value ARGV[1] if its version is still ARGV[2] and the session's data
/// (`databytes`: keys and JSON) stays within ARGV[4] bytes: the new version, -1 without a
/// record, -2 on a conflict, -3 when too large.
const SAVE_DATA: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
local field = 'data:' .. ARGV[1]
local version = tonumber(redis.call('hget', KEYS[1], 'datav:' .. ARGV[1]) or '0')
if version ~= tonumber(ARGV[2]) then return -2 end
local old = redis.call('hstrlen', KEYS[1], field)
if old > 0 then old = old + string.len(ARGV[1]) end
local total = tonumber(redis.call('hget', KEYS[1], 'databytes') or '0') - old
  + string.len(ARGV[1]) + string.len(ARGV[3])
if total > tonumber(ARGV[4]) then return -3 end
redis.call('hset', KEYS[1], field, ARGV[3], 'datav:' .. ARGV[1], version + 1, 'databytes', total)
return version + 1";

/// Save a task (KEYS[1] its hash, KEYS[2] the session's index) unless the kept one ended
/// or an ended one comes for a task no longer kept. ARGV: id, ended (0/1), task JSON,
/// outcome JSON ('' for none), instance, retention ms, index score (microseconds), the
/// most tasks kept, the prefix of the session's task keys. The hash as kept, or nothing.
const SAVE_TASK: &str = r"
local exists = redis.call('exists', KEYS[1]) == 1
if exists and redis.call('hget', KEYS[1], 'ended') == '1' then
  return redis.call('hgetall', KEYS[1])
end
if not exists and ARGV[2] == '1' then return {} end
redis.call('hset', KEYS[1], 'id', ARGV[1], 'ended', ARGV[2], 'task', ARGV[3],
  'outcome', ARGV[4], 'instance', ARGV[5])
if not exists then
  redis.call('pexpire', KEYS[1], ARGV[6])
  redis.call('zadd', KEYS[2], ARGV[7], ARGV[1])
  local over = redis.call('zcard', KEYS[2]) - tonumber(ARGV[8])
  if over > 0 then
    for _, old in ipairs(redis.call('zrange', KEYS[2], 0, over - 1)) do
      redis.call('del', ARGV[9] .. old)
    end
    redis.call('zremrangebyrank', KEYS[2], 0, over - 1)
  end
  if redis.call('pttl', KEYS[2]) < tonumber(ARGV[6]) then
    redis.call('pexpire', KEYS[2], ARGV[6])
  end
end
return redis.call('hgetall', KEYS[1])";

/// The session's tasks (KEYS[1] its index, ARGV[1] the prefix of its task keys), oldest
/// first, as `id, ended, task, instance` runs; ids whose task expired are dropped.
const LIST_TASKS: &str = r"
local out = {}
for _, id in ipairs(redis.call('zrange', KEYS[1], 0, -1)) do
  local v = redis.call('hmget', ARGV[1] .. id, 'ended', 'task', 'instance')
  if v[2] then
    table.insert(out, id)
    table.insert(out, v[1] or '0')
    table.insert(out, v[2])
    table.insert(out, v[3] or '')
  else
    redis.call('zrem', KEYS[1], id)
  end
end
return out";

/// Delete a session (KEYS[1] its hash, KEYS[2] its task index; ARGV[1] the prefix of its
/// task keys) with its tasks.
const REMOVE: &str = r"
for _, id in ipairs(redis.call('zrange', KEYS[2], 0, -1)) do
  redis.call('del', ARGV[1] .. id)
end
return redis.call('del', KEYS[1], KEYS[2])";

/// A task read back from its hash's fields.
fn task_record(fields: Vec<(String, String)>) -> Option<TaskRecord> {
    let mut record = TaskRecord {
        id: String::new(),
        ended: false,
        task: String::new(),
        outcome: None,
        instance: String::new(),
    };
    for (field, value) in fields {
        match field.as_str() {
            "id" => record.id = value,
            "ended" => record.ended = value == "1",
            "task" => record.task = value,
            "outcome" if !value.is_empty() => record.outcome = Some(value),
            "instance" => record.instance = value,
            _ => {}
        }
    }
    (!record.task.is_empty()).then_some(record)
}

impl RedisSessionStore {
    /// A store for the Redis `config` names. Connects on first use (a server starts while
    /// Redis is down, and answers 503 until it is up); fails only on a malformed URL.
    pub fn new(config: RedisConfig) -> Result<Self, StoreError> {
        let client = redis::Client::open(config.url.as_str())
            .map_err(|e| StoreError(format!("invalid Redis URL {:?}: {e}", config.url)))?;
        let manager = ConnectionManagerConfig::new()
            .set_response_timeout(Some(config.response_timeout))
            .set_connection_timeout(Some(config.connection_timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), manager)
            .map_err(|e| StoreError(format!("cannot set up the Redis connection: {e}")))?;
        Ok(RedisSessionStore {
            client,
            connection,
            prefix: config.prefix,
            // A command's whole bound: a reconnection attempt and the command itself.
            timeout: config.connection_timeout + config.response_timeout,
        })
    }

    /// The bus channel of `instance`, or of every instance.
    fn channel(&self, instance: Option<&str>) -> String {
        match instance {
            Some(instance) => format!("{}bus:{instance}", self.prefix),
            None => format!("{}bus", self.prefix),
        }
    }

    /// A connection subscribed to `channels`, within the bound.
    async fn subscribed(&self, channels: &[String; 2]) -> Result<redis::aio::PubSub, String> {
        let subscribed = async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(channels).await?;
            redis::RedisResult::Ok(pubsub)
        };
        match tokio::time::timeout(self.timeout, subscribed).await {
            Ok(Ok(pubsub)) => Ok(pubsub),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no answer".to_owned()),
        }
    }

    /// Listen on `channels` (through `first` to begin with, if it is there) until `tx`
    /// is dropped, connecting again after a failure.
    async fn listen(
        self,
        channels: [String; 2],
        mut first: Option<redis::aio::PubSub>,
        tx: mpsc::Sender<BusMessage>,
    ) {
        use futures_util::StreamExt as _;
        let mut delay = Duration::from_millis(100);
        while !tx.is_closed() {
            let pubsub = match first.take() {
                Some(pubsub) => pubsub,
                None => match self.subscribed(&channels).await {
                    Ok(pubsub) => pubsub,
                    Err(why) => {
                        tracing::warn!(
                            "cannot listen to the session bus: {why}; again in {delay:?}"
                        );
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(Duration::from_secs(5));
                        continue;
                    }
                },
            };
            delay = Duration::from_millis(100);
            let mut messages = pubsub.into_on_message();
            loop {
                tokio::select! {
                    message = messages.next() => {
                        let Some(message) = message else { break };
                        let Ok(payload) = message.get_payload::<String>() else { continue };
                        match serde_json::from_str::<BusMessage>(&payload) {
                            // Full: dropped, as a message to an instance not listening.
                            Ok(message) => drop(tx.try_send(message)),
                            Err(e) => tracing::debug!("a bus message that is none dropped: {e}"),
                        }
                    }
                    () = tx.closed() => return,
                }
            }
            tracing::warn!("the session bus connection ended; listening again");
        }
    }

    /// A 32-byte secret every instance sharing this Redis (and prefix) gets the same:
    /// the first to ask makes it (`SET NX`), the others read it. Key
    /// `{prefix}secret:{name}`, kept without expiry (one small key per name). For keys the
    /// instances must agree on, such as the server's request-state key
    /// (`ServerBuilder::request_state_key`), so a 2026-07-28 `input_required` retry may
    /// land on any instance.
    pub async fn shared_secret(&self, name: &str) -> Result<[u8; 32], StoreError> {
        use chacha20poly1305::aead::OsRng;
        use chacha20poly1305::aead::rand_core::RngCore;
        let key = format!("{}secret:{name}", self.prefix);
        let mut fresh = [0u8; 32];
        OsRng.fill_bytes(&mut fresh);
        let fresh: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
        let mut pipe = redis::pipe();
        pipe.cmd("SET").arg(&key).arg(&fresh).arg("NX").ignore();
        pipe.get(&key);
        let (stored,): (String,) = self
            .run("share a secret", async |c| pipe.query_async(c).await)
            .await?;
        let bytes: Vec<u8> = (0..stored.len())
            .step_by(2)
            .filter_map(|i| stored.get(i..i + 2))
            .filter_map(|h| u8::from_str_radix(h, 16).ok())
            .collect();
        bytes
            .try_into()
            .map_err(|_| StoreError(format!("the shared secret at {key} is not 64 hex digits")))
    }

    /// The key of session `id`'s hash.
    pub fn session_key(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }

    /// The prefix of session `session`'s task keys, and the key of its task index.
    fn task_keys(&self, session: &str) -> (String, String) {
        (
            format!("{}task:{session}:", self.prefix),
            format!("{}tasks:{session}", self.prefix),
        )
    }

    /// Run `command` on a clone of the connection (a cheap handle) within the bound.
    async fn run<T>(
        &self,
        what: &str,
        command: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        match tokio::time::timeout(self.timeout, command(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(StoreError(format!("Redis failed to {what}: {e}"))),
            Err(_) => Err(StoreError(format!(
                "Redis did not answer within {:?} to {what}",
                self.timeout
            ))),
        }
    }
}

fn millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn create<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.session_key(&record.id);
            let fixed = serde_json::to_string(&Fixed {
                revision: record.revision.clone(),
                initialize: record.initialize.clone(),
                owner: record.owner.clone(),
                instance: record.instance.clone(),
            })
            .map_err(|e| StoreError(format!("cannot encode a session record: {e}")))?;
            let mut pipe = redis::pipe();
            pipe.atomic().del(&key).ignore();
            pipe.hset(&key, "record", fixed).ignore();
            pipe.hset(&key, "version", record.version).ignore();
            if let Some(level) = &record.log_level {
                pipe.hset(&key, "level", level).ignore();
            }
            for uri in record.subscriptions.iter().filter(|u| recordable(u)) {
                pipe.hset(&key, format!("sub:{uri}"), 1).ignore();
            }
            pipe.pexpire(&key, millis(ttl)).ignore();
            self.run("create a session record", async |c| {
                pipe.query_async::<()>(c).await
            })
            .await
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(async move {
            let key = self.session_key(id);
            let fields: Vec<(String, String)> = self
                .run("read a session record", async |c| c.hgetall(&key).await)
                .await?;
            let mut fixed = None;
            let mut log_level = None;
            let mut subscriptions = Vec::new();
            let mut version = 0;
            for (field, value) in fields {
                match field.as_str() {
                    "record" => fixed = serde_json::from_str::<Fixed>(&value).ok(),
                    "level" => log_level = Some(value),
                    "version" => version = value.parse().unwrap_or(0),
                    other => {
                        if let Some(uri) = other.strip_prefix("sub:") {
                            subscriptions.push(uri.to_owned());
                        }
                    }
                }
            }
            // A hash without a readable `record` is no session (a partial write cannot
            // happen: records are created atomically).
            Ok(fixed.map(|fixed| SessionRecord {
                id: id.to_owned(),
                revision: fixed.revision,
                initialize: fixed.initialize,
                owner: fixed.owner,
                log_level,
                subscriptions,
                version,
                instance: fixed.instance,
            }))
        })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move {
            let key = self.session_key(id);
            let script = Script::new(TOUCH);
            let version: i64 = self
                .run("refresh a session record", async |c| {
                    script.key(&key).arg(millis(ttl)).invoke_async(c).await
                })
                .await?;
            Ok(u64::try_from(version).ok())
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a RecordChange,
    ) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move {
            let key = self.session_key(id);
            let (what, script, field) = match change {
                RecordChange::LogLevel(level) => ("record a log level", SET_LEVEL, level.clone()),
                RecordChange::Subscribe(uri) => {
                    ("record a subscription", SUBSCRIBE, format!("sub:{uri}"))
                }
                RecordChange::Unsubscribe(uri) => {
                    ("drop a subscription", UNSUBSCRIBE, format!("sub:{uri}"))
                }
            };
            // A URI too long to carry is not recorded (the instance that took it serves
            // it alone).
            let limit = match change {
                RecordChange::Subscribe(uri) if !recordable(uri) => 0,
                _ => MAX_RECORDED_SUBSCRIPTIONS,
            };
            let script = Script::new(script);
            let version: i64 = self
                .run(what, async |c| {
                    script.key(&key).arg(field).arg(limit).invoke_async(c).await
                })
                .await?;
            Ok(u64::try_from(version).ok())
        })
    }

    fn publish<'a>(&'a self, message: &'a BusMessage) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let channel = self.channel(message.to.as_deref());
            let payload = serde_json::to_string(message)
                .map_err(|e| StoreError(format!("cannot encode a bus message: {e}")))?;
            self.run("publish on the session bus", async |c| {
                c.publish::<_, _, i64>(&channel, &payload).await
            })
            .await
            .map(drop)
        })
    }

    fn subscribe<'a>(
        &'a self,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<BusMessage>, StoreError>> {
        Box::pin(async move {
            let (tx, rx) = mpsc::channel(BUS_QUEUE);
            let channels = [self.channel(Some(instance)), self.channel(None)];
            // Subscribed before this returns when Redis answers, so no message published
            // after it is missed; otherwise the listener keeps trying.
            let first = match self.subscribed(&channels).await {
                Ok(pubsub) => Some(pubsub),
                Err(why) => {
                    tracing::warn!("cannot listen to the session bus yet: {why}");
                    None
                }
            };
            tokio::spawn(self.clone().listen(channels, first, tx));
            Ok(rx)
        })
    }

    fn append_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        entries: &'a [StreamEntry],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let base = format!("{}stream:{session}:{stream}", self.prefix);
            let (meta, events) = (format!("{base}:meta"), format!("{base}:events"));
            let mut pipe = redis::pipe();
            for entry in entries {
                let json = serde_json::to_string(entry)
                    .map_err(|e| StoreError(format!("cannot encode a stream entry: {e}")))?;
                match entry {
                    StreamEntry::Opened { .. } => pipe.set(&meta, json).ignore(),
                    StreamEntry::Event { .. } => pipe.rpush(&events, json).ignore(),
                };
            }
            let keep = isize::try_from(MAX_SHARED_STREAM_EVENTS).unwrap_or(isize::MAX);
            pipe.ltrim(&events, -keep, -1).ignore();
            pipe.pexpire(&meta, millis(ttl)).ignore();
            pipe.pexpire(&events, millis(ttl)).ignore();
            self.run("keep stream events", async |c| {
                pipe.query_async::<()>(c).await
            })
            .await
        })
    }

    fn stream_log<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<Option<StreamLog>, StoreError>> {
        Box::pin(async move {
            let base = format!("{}stream:{session}:{stream}", self.prefix);
            let mut pipe = redis::pipe();
            pipe.get(format!("{base}:meta"));
            pipe.lrange(format!("{base}:events"), 0, -1);
            let (meta, events): (Option<String>, Vec<String>) = self
                .run("read stream events", async |c| pipe.query_async(c).await)
                .await?;
            if meta.is_none() && events.is_empty() {
                return Ok(None);
            }
            let mut log = StreamLog::default();
            for json in meta.iter().chain(&events) {
                if let Ok(entry) = serde_json::from_str::<StreamEntry>(json) {
                    log.add(&entry);
                }
            }
            Ok(Some(log))
        })
    }

    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = format!("{}instance:{instance}", self.prefix);
            self.run("renew this instance's heartbeat", async |c| {
                c.pset_ex::<_, _, ()>(&key, 1, u64::try_from(millis(ttl)).unwrap_or(1))
                    .await
            })
            .await
        })
    }

    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let key = format!("{}instance:{instance}", self.prefix);
            self.run("read an instance's heartbeat", async |c| {
                c.exists(&key).await
            })
            .await
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.session_key(id);
            let (tasks, index) = self.task_keys(id);
            let script = Script::new(REMOVE);
            self.run("delete a session record", async |c| {
                script
                    .key(&key)
                    .key(&index)
                    .arg(&tasks)
                    .invoke_async::<i64>(c)
                    .await
            })
            .await
            .map(drop)
        })
    }

    fn save_task<'a>(
        &'a self,
        session: &'a str,
        task: &'a TaskRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let (tasks, index) = self.task_keys(session);
            let key = format!("{tasks}{}", task.id);
            let score = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros());
            let script = Script::new(SAVE_TASK);
            let fields: Vec<(String, String)> = self
                .run("keep a task", async |c| {
                    script
                        .key(&key)
                        .key(&index)
                        .arg(&task.id)
                        .arg(u8::from(task.ended))
                        .arg(&task.task)
                        .arg(task.outcome.as_deref().unwrap_or(""))
                        .arg(&task.instance)
                        .arg(millis(ttl))
                        .arg(score.to_string())
                        .arg(MAX_SHARED_TASKS)
                        .arg(&tasks)
                        .invoke_async(c)
                        .await
                })
                .await?;
            Ok(task_record(fields))
        })
    }

    fn load_task<'a>(
        &'a self,
        session: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let key = format!("{}{id}", self.task_keys(session).0);
            let fields: Vec<(String, String)> = self
                .run("read a task", async |c| c.hgetall(&key).await)
                .await?;
            Ok(task_record(fields))
        })
    }

    fn list_tasks<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let (tasks, index) = self.task_keys(session);
            let script = Script::new(LIST_TASKS);
            let flat: Vec<String> = self
                .run("list tasks", async |c| {
                    script.key(&index).arg(&tasks).invoke_async(c).await
                })
                .await?;
            Ok(flat
                .chunks_exact(4)
                .map(|run| TaskRecord {
                    id: run[0].clone(),
                    ended: run[1] == "1",
                    task: run[2].clone(),
                    outcome: None,
                    instance: run[3].clone(),
                })
                .collect())
        })
    }

    fn load_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<DataEntry>, StoreError>> {
        Box::pin(async move {
            let hash = self.session_key(session);
            let script = Script::new(LOAD_DATA);
            let value: redis::Value = self
                .run("read session data", async |c| {
                    script.key(&hash).arg(key).invoke_async(c).await
                })
                .await?;
            let redis::Value::Array(fields) = value else {
                return Ok(None);
            };
            let text = |v: Option<&redis::Value>| match v {
                Some(redis::Value::BulkString(bytes)) => {
                    Some(String::from_utf8_lossy(bytes).into_owned())
                }
                _ => None,
            };
            Ok(Some(DataEntry {
                json: text(fields.first()),
                version: text(fields.get(1))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
            }))
        })
    }

    fn save_data<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        version: u64,
        json: &'a str,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<DataSaved>, StoreError>> {
        Box::pin(async move {
            let hash = self.session_key(session);
            let script = Script::new(SAVE_DATA);
            let saved: i64 = self
                .run("save session data", async |c| {
                    script
                        .key(&hash)
                        .arg(key)
                        .arg(version)
                        .arg(json)
                        .arg(max_bytes)
                        .invoke_async(c)
                        .await
                })
                .await?;
            Ok(match saved {
                -1 => None,
                -2 => Some(DataSaved::Conflict),
                -3 => Some(DataSaved::TooLarge),
                n => Some(DataSaved::Saved(u64::try_from(n).unwrap_or(0))),
            })
        })
    }
}
