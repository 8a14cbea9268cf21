//! The server's registries of tools, resources, templates and prompts, and the change
//! feed that turns edits into `list_changed` notifications.

use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use tokio::sync::broadcast;

/// A registry's entries by name, in registration order. Hashed with foldhash rather than
/// std's SipHash: every `tools/call`, `prompts/get` and `resources/read` looks a name up
/// (names are the server's own; a client's lookups cannot fill the table with collisions).
pub(crate) type Entries<T> = IndexMap<String, T, foldhash::fast::RandomState>;

/// A snapshot of one registry: the entries in registration order and a generation number
/// that changes with every edit (it keys pagination cursors).
pub(crate) struct Snapshot<T> {
    pub(crate) entries: Arc<Entries<T>>,
    pub(crate) generation: u64,
}

impl<T> Clone for Snapshot<T> {
    fn clone(&self) -> Self {
        Snapshot {
            entries: Arc::clone(&self.entries),
            generation: self.generation,
        }
    }
}

/// Entries keyed by name, replaced whole on edit (copy on write): a request takes a
/// snapshot under a read lock held for one `Arc` clone, so readers never wait for long
/// and no lock is held across a handler.
pub(crate) struct Registry<T> {
    current: RwLock<Snapshot<T>>,
}

impl<T: Clone> Registry<T> {
    pub(crate) fn new(entries: Entries<T>) -> Self {
        Registry {
            current: RwLock::new(Snapshot {
                entries: Arc::new(entries),
                generation: 0,
            }),
        }
    }

    pub(crate) fn snapshot(&self) -> Snapshot<T> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the registry has no entries (no snapshot taken).
    pub(crate) fn is_empty(&self) -> bool {
        self.read(IndexMap::is_empty)
    }

    /// Look at the current entries under the read lock (no snapshot taken): `look` must be
    /// quick.
    pub(crate) fn read<R>(&self, look: impl FnOnce(&Entries<T>) -> R) -> R {
        look(
            &self
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .entries,
        )
    }

    /// Apply `edit` to a copy and publish it; returns `edit`'s answer.
    pub(crate) fn edit<R>(&self, edit: impl FnOnce(&mut Entries<T>) -> R) -> R {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        let mut entries = (*current.entries).clone();
        let answer = edit(&mut entries);
        *current = Snapshot {
            entries: Arc::new(entries),
            generation: current.generation + 1,
        };
        answer
    }
}

/// What changed on the server, as sessions hear it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// The tool list changed.
    Tools,
    /// The resource or template list changed.
    Resources,
    /// The prompt list changed.
    Prompts,
    /// The contents of a resource changed.
    ResourceUpdated(Arc<str>),
}

/// The feed of changes: every connection subscribes; a slow connection that falls
/// behind by more than the capacity skips to the newest changes (and is told the lists
/// changed, which is always a safe thing to hear).
///
/// 64 changes: the ring is allocated and written whole when the server is built (256 were
/// 12 KiB, three fresh pages at every start for changes most servers never make).
pub(crate) fn change_feed() -> broadcast::Sender<Change> {
    broadcast::channel(64).0
}
