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

    /// Apply `edit` and publish the result; returns `edit`'s answer. The entries are
    /// copied only while a snapshot of them is held (`Arc::make_mut`): a builder adding
    /// tools one by one edits in place (copying on every edit made building a server of
    /// n tools O(n²)).
    pub(crate) fn edit<R>(&self, edit: impl FnOnce(&mut Entries<T>) -> R) -> R {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        let answer = edit(Arc::make_mut(&mut current.entries));
        current.generation += 1;
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
/// 64 changes: the ring is allocated and written whole when the server is built, so a
/// larger one would be fresh pages at every start for changes most servers never make.
pub(crate) fn change_feed() -> broadcast::Sender<Change> {
    broadcast::channel(64).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(snapshot: &Snapshot<u32>) -> Vec<&str> {
        snapshot.entries.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_snapshot_keeps_what_it_saw_and_an_edit_copies_only_then() {
        let registry = Registry::new(Entries::default());
        registry.edit(|m| m.insert("a".to_owned(), 1));
        let before = registry.snapshot();
        registry.edit(|m| {
            m.insert("b".to_owned(), 2);
            m.shift_remove("a");
        });
        let after = registry.snapshot();
        assert_eq!(names(&before), ["a"]);
        assert_eq!(names(&after), ["b"]);
        assert!(after.generation > before.generation);

        // No snapshot held: edited in place, not copied.
        drop((before, after));
        let at = registry.read(std::ptr::from_ref);
        registry.edit(|m| m.insert("c".to_owned(), 3));
        assert_eq!(registry.read(std::ptr::from_ref), at);
        assert_eq!(names(&registry.snapshot()), ["b", "c"]);
    }
}
