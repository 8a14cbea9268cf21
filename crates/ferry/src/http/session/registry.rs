//! Every session of a router: lookup, idle expiry (the sweeper), shutdown, and new ids.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::state::Session;
use crate::http::Shared;
use crate::http::clients::ClientKey;
use crate::http::events::EventStore;

/// Every session of a router.
pub(crate) struct Sessions {
    pub(super) map: Mutex<HashMap<String, Arc<Session>>>,
    pub(super) store: Arc<dyn EventStore>,
    pub(super) shutdown: CancellationToken,
    pub(super) sweeper: std::sync::Once,
    /// Held while a session of another instance is adopted (see `shared::adopt`).
    pub(super) adopting: tokio::sync::Mutex<()>,
    /// Starts the listener of the other instances' messages (see `shared::listen`).
    pub(super) listening: tokio::sync::OnceCell<()>,
    /// With a session store: the events to write behind for other instances (see
    /// `shared::share`), made by the listener.
    pub(super) outbox: std::sync::OnceLock<super::shared::Outbox>,
    /// With a session store: the shared sessions' tasks running here.
    pub(super) running_tasks: Arc<super::task_store::RunningTasks>,
}

impl Sessions {
    pub(crate) fn new(store: Arc<dyn EventStore>) -> Self {
        Sessions {
            map: Mutex::default(),
            store,
            shutdown: CancellationToken::new(),
            sweeper: std::sync::Once::new(),
            adopting: tokio::sync::Mutex::new(()),
            listening: tokio::sync::OnceCell::new(),
            outbox: std::sync::OnceLock::new(),
            running_tasks: Arc::default(),
        }
    }

    pub(super) fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cancelled when the router shuts down (`serve_with_shutdown`'s signal): the
    /// stateless era's exchanges watch it too.
    pub(crate) fn stopping(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// How many sessions are live.
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Refuse new sessions and drain every one (graceful shutdown): each engine's input
    /// closes, requests in flight still answer on their streams (within the engine's
    /// shutdown grace), then the engine ends and with it every stream of the session.
    pub(crate) fn shutdown(&self) {
        for session in self.take_all() {
            session.drain();
        }
    }

    /// Stop the sweeper and take every session out of the table (ended by the caller,
    /// outside the table's lock).
    fn take_all(&self) -> Vec<Arc<Session>> {
        self.shutdown.cancel();
        self.map().drain().map(|(_, s)| s).collect()
    }

    /// The live session `id`; an idle-expired one is ended here.
    pub(super) fn find(&self, id: &str, idle: Duration) -> Option<Arc<Session>> {
        let mut map = self.map();
        let session = map.get(id)?;
        if session.expired(idle) {
            let session = map.remove(id)?;
            drop(map);
            session.close();
            return None;
        }
        Some(Arc::clone(session))
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.map().remove(id)
    }

    /// End the least recently active session `which` picks without a request since
    /// `initialize` and without an open exchange, idle for longer than `grace`, if there
    /// is one.
    pub(super) fn evict_unused(&self, grace: Duration, which: impl Fn(&Session) -> bool) {
        use std::sync::atomic::Ordering;
        let mut map = self.map();
        let oldest = map
            .iter()
            .filter(|(_, s)| {
                !s.used.load(Ordering::Relaxed)
                    && s.busy.load(Ordering::SeqCst) == 0
                    && s.idle_for() > grace
                    && which(s)
            })
            .max_by_key(|(_, s)| s.idle_for())
            .map(|(id, _)| id.clone());
        let Some(session) = oldest.and_then(|id| map.remove(&id)) else {
            return;
        };
        drop(map);
        tracing::debug!(session = %session.id, "evicted: unused while the table was full");
        session.close();
    }

    /// End every idle-expired session.
    pub(super) fn sweep(&self, idle: Duration) {
        for session in self.take(|_, s| s.expired(idle)) {
            tracing::debug!(session = %session.id, "session expired");
            session.close();
        }
    }

    /// Let go of the local engines of shared sessions idle here for `idle` with no task
    /// running here: their records stay in the store, and their next request adopts them
    /// again (here or elsewhere).
    pub(super) fn release_replicas(&self, idle: Duration) {
        let idle_here = |id: &str, s: &Session| {
            s.instance.is_some() && s.expired(idle) && !self.running_tasks.any(id)
        };
        for session in self.take(idle_here) {
            tracing::debug!(session = %session.id, "idle here: local engine released");
            session.close();
        }
    }

    /// Remove from the table every session `which` picks, and hand them over.
    fn take(&self, which: impl Fn(&str, &Session) -> bool) -> Vec<Arc<Session>> {
        self.map()
            .extract_if(|id, s| which(id, s))
            .map(|(_, session)| session)
            .collect()
    }
}

/// At the session limit, end the idle-expired sessions of both eras first (the sweepers
/// pass only every half idle time, at most 30 s): a new session is refused only when live
/// ones fill the limit.
pub(crate) fn make_room(shared: &Shared) {
    let full = || shared.sessions.len() + shared.legacy.len() >= shared.config.max_sessions;
    if full() {
        let idle = shared.config.session_idle_timeout;
        shared.sessions.sweep(idle);
        shared.legacy.sweep(idle);
    }
    // Still full: the oldest session that never made a request after `initialize` goes,
    // once older than the grace (an `initialize` flood cannot hold the table).
    if full() {
        shared
            .sessions
            .evict_unused(shared.config.unused_session_grace, |_| true);
    }
}

/// At `client`'s limit ([`crate::http::HttpConfig::max_sessions_per_client`]), as
/// [`make_room`] does at the table's: idle-expired sessions of both eras end, then the
/// client's own quietest session unused since `initialize`, once older than the grace.
pub(crate) fn make_room_for(shared: &Shared, client: &ClientKey) {
    let idle = shared.config.session_idle_timeout;
    shared.sessions.sweep(idle);
    shared.legacy.sweep(idle);
    shared
        .sessions
        .evict_unused(shared.config.unused_session_grace, |s| s.belongs_to(client));
}

/// A router dropped without a graceful shutdown (an app rebuilding its routes, a test)
/// ends its sessions: each engine waits on its input, which only the table holds, and
/// would otherwise never end.
impl Drop for Sessions {
    fn drop(&mut self) {
        for session in self.take_all() {
            session.close();
        }
    }
}

/// Start the sweeper of idle sessions, once per router (at its first session).
pub(super) fn start_sweeper(shared: &Arc<Shared>) {
    let mut idle = shared.config.session_idle_timeout;
    if shared.config.session_store.is_some() {
        idle = idle.min(shared.config.replica_idle_timeout);
    }
    let weak = Arc::downgrade(shared);
    let stop = shared.sessions.shutdown.clone();
    shared.sessions.sweeper.call_once(|| {
        let every = (idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(sweep(weak, every, stop));
    });
}

/// Every `every`, until the router shuts down or is dropped (`stop`).
async fn sweep(shared: Weak<Shared>, every: Duration, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.sessions.shutdown.is_cancelled() {
            return;
        }
        shared.sessions.sweep(shared.config.session_idle_timeout);
        // Events appended as their session closed (after it forgot them) go too.
        shared
            .sessions
            .store
            .sweep(&|id| shared.sessions.map().contains_key(id));
        if shared.config.session_store.is_some() {
            shared
                .sessions
                .release_replicas(shared.config.replica_idle_timeout);
        }
        super::shared::refresh_busy(&shared).await;
    }
}

/// A session id: 128 bits from the OS CSPRNG, as 32 hex digits.
pub(crate) fn new_session_id() -> String {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore;
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
