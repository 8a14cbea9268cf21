//! Per-session application data: typed values (serde) under string keys, read and updated
//! by handlers through [`SessionData`] (an extractor, and [`Context::session_data`]).
//!
//! Where it lives: with the connection (memory) by default, and in the session store
//! when the transport shares its sessions with other instances (Streamable HTTP with a
//! `SessionStore`: Redis), so a value set on one instance is read on every other. It is
//! gone when the session ends or expires. The stateless era (2026-07-28) has no session:
//! there every call fails with [`DataError::NoSession`].
//!
//! **Concurrency**: [`SessionData::update`] is atomic per key. In memory, updates of one
//! session take turns; shared, an update is a compare-and-set on the value's version,
//! retried on the value another instance saved first (the closure may then run more than
//! once), at most [`MAX_UPDATE_ATTEMPTS`] times. Compare-and-set rather than a lock: a
//! lock held in the store would outlive an instance killed while holding it, and a value
//! updated by one instance at a time (the common case) costs one load and one save.
//!
//! **Bound**: a session's values together take at most
//! [`ServerBuilder::session_data_limit`](super::ServerBuilder::session_data_limit) bytes
//! as JSON ([`DEFAULT_SESSION_DATA_BYTES`] by default); an update beyond it fails with
//! [`DataError::TooLarge`] and changes nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_protocol::jsonrpc::ErrorObject;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::context::Context;
use super::extract::FromContext;
use crate::engine::{DataSaved, DataShare};

/// The bytes a session's data may take (as JSON) unless the builder says otherwise.
pub const DEFAULT_SESSION_DATA_BYTES: usize = 64 * 1024;
/// The attempts of one shared update before it fails with [`DataError::Contended`].
pub const MAX_UPDATE_ATTEMPTS: u32 = 100;

/// Why session data could not be read or updated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The request has no session (the stateless era, 2026-07-28).
    #[error("session data needs a session; a stateless-era (2026-07-28) request has none")]
    NoSession,
    /// The update would make the session's data larger than allowed; nothing changed.
    #[error("the session's data would exceed its limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes of JSON.
        limit: usize,
    },
    /// Other instances kept updating the value: the update gave up.
    #[error("the session value {0:?} kept changing under the update; try again")]
    Contended(String),
    /// The value kept does not read as the type asked for, or the new one does not write.
    #[error("the session value {key:?}: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// What serde said.
        reason: String,
    },
    /// The session store failed (unreachable, the session gone).
    #[error("the session store: {0}")]
    Store(String),
}

impl From<DataError> for ErrorObject {
    fn from(error: DataError) -> ErrorObject {
        ErrorObject::internal_error(error.to_string())
    }
}

/// Where one session's data is kept.
pub(crate) enum DataStore {
    /// With the connection: key -> JSON text.
    Local(Mutex<HashMap<String, String>>),
    /// In the transport's session store.
    Shared(Arc<dyn DataShare>),
}

/// One session's data and its limit.
pub(crate) struct SessionDataStore {
    store: DataStore,
    limit: usize,
}

impl std::fmt::Debug for SessionDataStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = matches!(self.store, DataStore::Shared(_));
        f.debug_struct("SessionDataStore")
            .field("shared", &shared)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl SessionDataStore {
    pub(crate) fn new(share: Option<Arc<dyn DataShare>>, limit: usize) -> Self {
        let store = match share {
            Some(share) => DataStore::Shared(share),
            None => DataStore::Local(Mutex::default()),
        };
        SessionDataStore { store, limit }
    }
}

/// A session's application data: typed values under string keys. Take it as a handler
/// parameter (or from [`Context::session_data`]).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::ProtocolVersion;
/// use ferry::server::{Server, SessionData, TestClient};
///
/// let server = Server::builder("counter", "1.0.0")
///     .tool("count", "Counts this session's calls", |_: (), data: SessionData| async move {
///         let n = data
///             .update("calls", |n: &mut u64| {
///                 *n += 1;
///                 *n
///             })
///             .await
///             .map_err(|e| e.to_string())?;
///         Ok::<_, String>(format!("call {n}"))
///     })
///     .build();
/// // A session-era client: the stateless era (2026-07-28) has no session.
/// let client = TestClient::builder(&server)
///     .version(ProtocolVersion::V2025_11_25)
///     .connect()
///     .await
///     .unwrap();
/// let json = serde_json::json!({});
/// assert_eq!(client.call("count", json.clone()).await.unwrap().text(), "call 1");
/// assert_eq!(client.call("count", json).await.unwrap().text(), "call 2");
/// # });
/// ```
#[derive(Clone)]
pub struct SessionData {
    store: Option<Arc<SessionDataStore>>,
}

impl std::fmt::Debug for SessionData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionData")
            .field("has_session", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

fn invalid(key: &str, error: impl std::fmt::Display) -> DataError {
    DataError::Invalid {
        key: key.to_owned(),
        reason: error.to_string(),
    }
}

fn read<T: DeserializeOwned + Default>(key: &str, json: Option<&str>) -> Result<T, DataError> {
    match json {
        Some(json) => serde_json::from_str(json).map_err(|e| invalid(key, e)),
        None => Ok(T::default()),
    }
}

impl SessionData {
    pub(crate) fn of(store: Option<Arc<SessionDataStore>>) -> Self {
        SessionData { store }
    }

    fn store(&self) -> Result<&SessionDataStore, DataError> {
        self.store.as_deref().ok_or(DataError::NoSession)
    }

    /// Whether the values live in a store shared with other instances of the server (a
    /// `SessionStore` such as Redis), rather than with this connection: a handler that
    /// keeps a faster local copy of its state needs to save it only then.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ferry::protocol::ProtocolVersion;
    /// use ferry::server::{Server, SessionData, TestClient};
    ///
    /// let server = Server::builder("where", "1.0.0")
    ///     .tool("where", "Where this session's data lives", |_: (), data: SessionData| async move {
    ///         if data.is_shared() { "shared" } else { "here" }
    ///     })
    ///     .build();
    /// let client = TestClient::builder(&server)
    ///     .version(ProtocolVersion::V2025_11_25)
    ///     .connect()
    ///     .await
    ///     .unwrap();
    /// assert_eq!(client.call("where", serde_json::json!({})).await.unwrap().text(), "here");
    /// # });
    /// ```
    pub fn is_shared(&self) -> bool {
        self.store
            .as_deref()
            .is_some_and(|store| matches!(store.store, DataStore::Shared(_)))
    }

    /// Value `key`, or `T::default()` when it was never set.
    pub async fn get<T: DeserializeOwned + Default>(&self, key: &str) -> Result<T, DataError> {
        match &self.store()?.store {
            DataStore::Local(map) => {
                let map = map.lock().unwrap_or_else(|e| e.into_inner());
                read(key, map.get(key).map(String::as_str))
            }
            DataStore::Shared(share) => {
                let entry = share
                    .load(key)
                    .await
                    .map_err(|e| DataError::Store(e.message))?;
                read(key, entry.json.as_deref())
            }
        }
    }

    /// Set value `key`.
    pub async fn set<T: Serialize + DeserializeOwned + Default>(
        &self,
        key: &str,
        value: T,
    ) -> Result<(), DataError> {
        let mut value = Some(value);
        self.update(key, |kept: &mut T| {
            if let Some(value) = value.take() {
                *kept = value;
            }
        })
        .await
    }

    /// Change value `key` with `change` (starting from `T::default()` when it was never
    /// set) and return what `change` returns: atomic per key (see the module's notes; the
    /// closure may run more than once when other instances update the value at the same
    /// time, and only its last run counts).
    pub async fn update<T, R>(
        &self,
        key: &str,
        mut change: impl FnMut(&mut T) -> R,
    ) -> Result<R, DataError>
    where
        T: Serialize + DeserializeOwned + Default,
    {
        let store = self.store()?;
        let limit = store.limit;
        match &store.store {
            DataStore::Local(map) => {
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                let mut value: T = read(key, map.get(key).map(String::as_str))?;
                let out = change(&mut value);
                let json = serde_json::to_string(&value).map_err(|e| invalid(key, e))?;
                let others: usize = map
                    .iter()
                    .filter(|(k, _)| k.as_str() != key)
                    .map(|(k, v)| k.len() + v.len())
                    .sum();
                if others + key.len() + json.len() > limit {
                    return Err(DataError::TooLarge { limit });
                }
                map.insert(key.to_owned(), json);
                Ok(out)
            }
            DataStore::Shared(share) => {
                for attempt in 0..MAX_UPDATE_ATTEMPTS {
                    let entry = share
                        .load(key)
                        .await
                        .map_err(|e| DataError::Store(e.message))?;
                    let mut value: T = read(key, entry.json.as_deref())?;
                    let out = change(&mut value);
                    let json = serde_json::to_string(&value).map_err(|e| invalid(key, e))?;
                    let saved = share
                        .save(key, entry.version, &json, limit)
                        .await
                        .map_err(|e| DataError::Store(e.message))?;
                    match saved {
                        DataSaved::Saved(_) => return Ok(out),
                        DataSaved::TooLarge => return Err(DataError::TooLarge { limit }),
                        DataSaved::Conflict => tokio::time::sleep(backoff(attempt)).await,
                    }
                }
                Err(DataError::Contended(key.to_owned()))
            }
        }
    }
}

/// The pause before attempt `attempt + 1` of a contended update: growing, with jitter so
/// that the contenders spread out.
fn backoff(attempt: u32) -> Duration {
    let ceiling_us = 200u64 << attempt.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    Duration::from_micros(nanos % ceiling_us)
}

impl FromContext for SessionData {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(cx.session_data())
    }
}
