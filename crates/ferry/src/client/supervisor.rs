//! Supervision of a stdio server (as in seed 002): spawn it, connect, and when the process
//! dies, restart it with exponential backoff and jitter and connect again (a fresh
//! `initialize` or discovery). Calls in flight when it dies fail at once with
//! [`ClientError::ConnectionLost`]; they never hang. Callers take the current connection
//! with [`Supervisor::client`], which waits for a restart in progress.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{Client, ClientBuilder, ClientError};
use crate::engine::{ChildCommand, ChildProcess};

/// When to restart a server that died.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The wait before the first restart. Default: 100 ms.
    pub initial: Duration,
    /// The longest wait. Default: 30 s.
    pub max: Duration,
    /// How much each wait grows. Default: 2.
    pub factor: f64,
    /// Random spread of each wait, as a fraction (0.2: ±20 %). Default: 0.2.
    pub jitter: f64,
    /// A server that stayed up this long starts again from [`Backoff::initial`].
    /// Default: 30 s.
    pub stable_after: Duration,
    /// Restarts before giving up (`None`: never give up). Default: `None`.
    pub max_restarts: Option<u64>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 0.2,
            stable_after: Duration::from_secs(30),
            max_restarts: None,
        }
    }
}

impl Backoff {
    /// The wait before restart number `attempt` (0-based), with jitter.
    pub fn delay(&self, attempt: u32) -> Duration {
        let base = self.initial.as_secs_f64() * self.factor.powi(attempt.min(64) as i32);
        let base = base.min(self.max.as_secs_f64());
        // Jitter needs no cryptographic quality: std's randomly keyed hasher suffices
        // (each `RandomState` has fresh keys), so no RNG crate is pulled in for it.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let unit = (random >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
        let spread = 1.0 + self.jitter * (2.0 * unit - 1.0);
        Duration::from_secs_f64((base * spread).clamp(0.0, self.max.as_secs_f64()))
    }
}

/// A supervised stdio server and its current connection.
pub struct Supervisor {
    current: watch::Receiver<State>,
    restarts: Arc<AtomicU64>,
    pid: Arc<AtomicU32>,
    task: JoinHandle<()>,
}

#[derive(Clone)]
enum State {
    Starting,
    Up(Client),
    GaveUp(ClientError),
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("restarts", &self.restarts())
            .finish_non_exhaustive()
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Dropping the task drops the child's handle, which kills it.
        self.task.abort();
    }
}

impl Supervisor {
    /// Start `command` and keep it running. `builder` makes the client of each connection
    /// (it is called again for every restart). Fails if the first start fails.
    pub async fn start<F>(
        command: ChildCommand,
        builder: F,
        backoff: Backoff,
    ) -> Result<Supervisor, ClientError>
    where
        F: Fn() -> ClientBuilder + Send + Sync + 'static,
    {
        let (first_client, first_child) = launch(&command, &builder).await?;
        let (tx, current) = watch::channel(State::Up(first_client));
        let restarts = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&restarts);
        let pid = Arc::new(AtomicU32::new(first_child.id()));
        let current_pid = Arc::clone(&pid);
        let task = tokio::spawn(async move {
            let mut child = first_child;
            let mut attempt: u32 = 0;
            loop {
                let started = tokio::time::Instant::now();
                let status = child.exited().await;
                tracing::warn!(program = child.program(), ?status, "the server exited");
                let _ = tx.send(State::Starting);
                if started.elapsed() >= backoff.stable_after {
                    attempt = 0;
                }
                loop {
                    if backoff
                        .max_restarts
                        .is_some_and(|max| counter.load(Ordering::Relaxed) >= max)
                    {
                        let _ = tx.send(State::GaveUp(ClientError::ConnectionLost));
                        return;
                    }
                    tokio::time::sleep(backoff.delay(attempt)).await;
                    attempt = attempt.saturating_add(1);
                    counter.fetch_add(1, Ordering::Relaxed);
                    match launch(&command, &builder).await {
                        Ok((client, new_child)) => {
                            current_pid.store(new_child.id(), Ordering::Relaxed);
                            child = new_child;
                            let _ = tx.send(State::Up(client));
                            break;
                        }
                        Err(e) => tracing::warn!("restarting the server failed: {e}"),
                    }
                }
            }
        });
        Ok(Supervisor {
            current,
            restarts,
            pid,
            task,
        })
    }

    /// The current connection, waiting (at most `timeout`) while the server restarts.
    pub async fn client(&self, timeout: Duration) -> Result<Client, ClientError> {
        let mut current = self.current.clone();
        // A connection whose server just died is skipped: the restart replaces it.
        let ready = current.wait_for(|s| match s {
            State::Starting => false,
            State::Up(client) => client.is_connected(),
            State::GaveUp(_) => true,
        });
        let state = tokio::time::timeout(timeout, ready)
            .await
            .map_err(|_| ClientError::Timeout(timeout))?
            .map_err(|_| ClientError::ConnectionLost)?
            .clone();
        match state {
            State::Up(client) => Ok(client),
            State::GaveUp(error) => Err(error),
            State::Starting => Err(ClientError::ConnectionLost),
        }
    }

    /// The process id of the server last started.
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// How many times the server was restarted.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }
}

async fn launch<F>(
    command: &ChildCommand,
    builder: &F,
) -> Result<(Client, ChildProcess), ClientError>
where
    F: Fn() -> ClientBuilder,
{
    builder().spawn(command).await
}
