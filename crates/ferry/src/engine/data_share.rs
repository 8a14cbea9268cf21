//! Per-session application data kept where every instance of a server sees it. A
//! transport that shares its sessions with other instances hands the backend, with the
//! session's [`TaskShare`](super::TaskShare), a [`DataShare`] ([`SessionShare`]), so a
//! value a handler stores on one instance is read on any.

use std::sync::Arc;

use ferry_protocol::jsonrpc::ErrorObject;
use futures_util::future::BoxFuture;

use super::TaskShare;

/// One value of a session's data as kept: its JSON text and its version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataEntry {
    /// The value as JSON text; `None` when the key was never set.
    pub json: Option<String>,
    /// How many times the value was saved (0: never).
    pub version: u64,
}

/// What a [`DataShare::save`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataSaved {
    /// Saved: the value's new version.
    Saved(u64),
    /// Not saved: the value was saved by someone else since it was loaded (its version is
    /// no longer the one given). Load it again and retry.
    Conflict,
    /// Not saved: the session's data would exceed the bytes allowed.
    TooLarge,
}

/// The data of one session, kept where every instance of the server reads it. Saves are
/// compare-and-set on each value's version, so concurrent updates from several instances
/// are never lost: the loser retries on the value the winner saved. Failures (the store
/// is unreachable, the session is gone) are JSON-RPC errors for the request.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
/// use ferry::engine::{DataEntry, DataSaved, DataShare};
/// use ferry::protocol::jsonrpc::ErrorObject;
/// use futures_util::future::BoxFuture;
///
/// /// One process's data: key -> (JSON, version).
/// #[derive(Default)]
/// struct Local(Mutex<HashMap<String, (String, u64)>>);
///
/// impl DataShare for Local {
///     fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<DataEntry, ErrorObject>> {
///         let entry = match self.0.lock().unwrap().get(key) {
///             Some((json, version)) => DataEntry { json: Some(json.clone()), version: *version },
///             None => DataEntry::default(),
///         };
///         Box::pin(std::future::ready(Ok(entry)))
///     }
///     fn save<'a>(
///         &'a self,
///         key: &'a str,
///         version: u64,
///         json: &'a str,
///         max_bytes: usize,
///     ) -> BoxFuture<'a, Result<DataSaved, ErrorObject>> {
///         let mut map = self.0.lock().unwrap();
///         let current = map.get(key).map_or(0, |(_, v)| *v);
///         let others: usize = map.iter().filter(|(k, _)| *k != key).map(|(_, (j, _))| j.len()).sum();
///         let saved = if current != version {
///             DataSaved::Conflict
///         } else if others + json.len() > max_bytes {
///             DataSaved::TooLarge
///         } else {
///             map.insert(key.to_owned(), (json.to_owned(), version + 1));
///             DataSaved::Saved(version + 1)
///         };
///         Box::pin(std::future::ready(Ok(saved)))
///     }
/// }
/// let share: std::sync::Arc<dyn DataShare> = std::sync::Arc::new(Local::default());
/// # drop(share);
/// ```
pub trait DataShare: Send + Sync + 'static {
    /// Value `key` of the session, with its version.
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<DataEntry, ErrorObject>>;

    /// Save `json` as value `key` if its version is still `version`, unless the session's
    /// values (this one's new JSON and the others' as kept) would exceed `max_bytes`.
    fn save<'a>(
        &'a self,
        key: &'a str,
        version: u64,
        json: &'a str,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<DataSaved, ErrorObject>>;
}

/// What a transport that shares its sessions gives the backend for each one
/// ([`Backend::connect_shared`](super::Backend::connect_shared)): where its tasks and its
/// data are kept.
#[derive(Clone)]
pub struct SessionShare {
    /// The session's tasks (2025-11-25 `tasks/*`).
    pub tasks: Arc<dyn TaskShare>,
    /// The session's application data.
    pub data: Arc<dyn DataShare>,
}

impl std::fmt::Debug for SessionShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionShare").finish_non_exhaustive()
    }
}
