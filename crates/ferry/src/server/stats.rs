//! Live counters of a server, for health endpoints and `server://info`-style resources.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a server's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStats {
    /// Connections being served now.
    pub connections_open: u64,
    /// Connections served since the server was built.
    pub connections_total: u64,
    /// Requests answered since the server was built, over every connection (pings the
    /// engine answers itself are not counted).
    pub requests_served: u64,
}

/// The counters behind [`ServerStats`]: relaxed atomics, one increment per event, no lock.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    open: AtomicU64,
    total: AtomicU64,
    requests: AtomicU64,
}

impl Counters {
    pub(crate) fn connected(&self) {
        self.open.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn disconnected(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ServerStats {
        ServerStats {
            connections_open: self.open.load(Ordering::Relaxed),
            connections_total: self.total.load(Ordering::Relaxed),
            requests_served: self.requests.load(Ordering::Relaxed),
        }
    }
}
