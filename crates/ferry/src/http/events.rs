//! Resumability for session-era SSE streams: event ids that name their stream, and the
//! event store that replays what a disconnected client missed.
//!
//! An event id is `{stream}-{seq}`: `stream` is the stream's number within its session (0
//! is the standalone GET stream, POST streams count from 1), `seq` counts that stream's
//! events from 1. A `Last-Event-ID` therefore names the stream to resume and the cursor in
//! it, and replay never crosses streams.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;

/// Where a message is kept: its session and its stream within the session.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// The session id.
    pub session: String,
    /// The stream's number in the session (0: the standalone GET stream).
    pub stream: u64,
}

/// Why a replay cannot give exactly the missed events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// The store never saw the stream (or forgot it entirely).
    UnknownStream,
    /// Some events after the cursor were evicted (the per-stream bounds or their age).
    Evicted,
}

/// Keeps every event sent on a session-era SSE stream, for replay after a disconnection.
///
/// Calls are made with the session's routing lock held, so they must not block on I/O; a
/// store backed by something remote should buffer locally and write behind.
pub trait EventStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep `message` as the next event of `key`'s stream and return its sequence number
    /// (1, 2, ...).
    fn append(&self, key: &StreamKey, message: Bytes) -> u64;
    /// The sequence number of the stream's last event (0 when it has none).
    fn last(&self, key: &StreamKey) -> u64;
    /// Every event of the stream after `after`, in order.
    fn replay(&self, key: &StreamKey, after: u64) -> Result<Vec<(u64, Bytes)>, ReplayError>;
    /// Forget a session's streams (the session ended).
    fn forget_session(&self, session: &str);
    /// The backstop against events kept for a session that has ended: an event appended
    /// just as its session closed can land after [`forget_session`](Self::forget_session).
    /// Called now and then (by the session sweeper) with `live`, which tells whether a
    /// session still exists; a store should drop the events of a session that does not
    /// once they have expired. Default: nothing (a store whose entries expire by
    /// themselves, a TTL in Redis say, needs nothing more).
    fn sweep(&self, live: &dyn Fn(&str) -> bool) {
        let _ = live;
    }
}

/// The default [`EventStore`]: in memory, at most `max_events` and
/// [`max_bytes`](MemoryEventStore::max_bytes) per stream (4 MiB unless set; the newest
/// event is kept whatever its size), each kept at most `ttl`.
///
/// Streams are grouped by session (forgetting a session is one removal) in 16 shards chosen
/// by the session id, so sessions rarely contend for a lock.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events: usize,
    max_bytes: usize,
    ttl: Duration,
    shards: Box<[Mutex<HashMap<String, SessionLogs>>]>,
}

const SHARDS: usize = 16;

/// One session's streams, by number.
type SessionLogs = HashMap<u64, Log>;

#[derive(Debug, Default)]
struct Log {
    /// The sequence number of the last event ever appended.
    last: u64,
    events: VecDeque<(u64, Instant, Bytes)>,
    /// The bytes of `events`' messages.
    bytes: usize,
}

impl Log {
    fn prune(&mut self, max: usize, max_bytes: usize, ttl: Duration, now: Instant) {
        while self.events.len() > max || (self.bytes > max_bytes && self.events.len() > 1) {
            self.pop();
        }
        while self
            .events
            .front()
            .is_some_and(|(_, at, _)| now.duration_since(*at) > ttl)
        {
            self.pop();
        }
    }

    fn pop(&mut self) {
        if let Some((_, _, message)) = self.events.pop_front() {
            self.bytes -= message.len();
        }
    }
}

/// The bytes a [`MemoryEventStore`] keeps per stream unless told otherwise.
const DEFAULT_MAX_BYTES: usize = 4 * 1024 * 1024;

impl MemoryEventStore {
    /// A store keeping at most `max_events` per stream, each for at most `ttl`.
    pub fn new(max_events: usize, ttl: Duration) -> Self {
        MemoryEventStore {
            max_events: max_events.max(1),
            max_bytes: DEFAULT_MAX_BYTES,
            ttl,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// Keep at most `bytes` of messages per stream (default 4 MiB), the oldest evicted
    /// first; the newest event is kept whatever its size, so that a client that missed
    /// only it can still resume.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ferry::http::{HttpConfig, MemoryEventStore};
    ///
    /// let store = MemoryEventStore::new(1000, Duration::from_secs(300)).max_bytes(1 << 20);
    /// let config = HttpConfig {
    ///     event_store: Some(std::sync::Arc::new(store)),
    ///     ..HttpConfig::default()
    /// };
    /// # let _ = config;
    /// ```
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The shard holding `session`'s streams.
    fn shard(&self, session: &str) -> std::sync::MutexGuard<'_, HashMap<String, SessionLogs>> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(session);
        self.shards[hash as usize % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for MemoryEventStore {
    /// 1,000 events and 4 MiB per stream, 5 minutes each.
    fn default() -> Self {
        MemoryEventStore::new(1000, Duration::from_secs(300))
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, key: &StreamKey, message: Bytes) -> u64 {
        let now = Instant::now();
        let mut shard = self.shard(&key.session);
        let session = match shard.get_mut(&key.session) {
            Some(session) => session,
            None => shard.entry(key.session.clone()).or_default(),
        };
        let log = session.entry(key.stream).or_default();
        log.last += 1;
        log.bytes += message.len();
        log.events.push_back((log.last, now, message));
        log.prune(self.max_events, self.max_bytes, self.ttl, now);
        log.last
    }

    fn last(&self, key: &StreamKey) -> u64 {
        self.shard(&key.session)
            .get(&key.session)
            .and_then(|session| session.get(&key.stream))
            .map_or(0, |log| log.last)
    }

    fn replay(&self, key: &StreamKey, after: u64) -> Result<Vec<(u64, Bytes)>, ReplayError> {
        let mut shard = self.shard(&key.session);
        let log = shard
            .get_mut(&key.session)
            .and_then(|session| session.get_mut(&key.stream));
        let Some(log) = log else {
            // A stream that has sent nothing but its priming event.
            return if after == 0 {
                Ok(Vec::new())
            } else {
                Err(ReplayError::UnknownStream)
            };
        };
        log.prune(self.max_events, self.max_bytes, self.ttl, Instant::now());
        if after > log.last {
            return Err(ReplayError::UnknownStream);
        }
        // The first event still kept must be the one right after the cursor (or none is
        // missed at all).
        let first_kept = log.events.front().map_or(log.last + 1, |(seq, _, _)| *seq);
        if after < log.last && first_kept > after + 1 {
            return Err(ReplayError::Evicted);
        }
        Ok(log
            .events
            .iter()
            .filter(|(seq, _, _)| *seq > after)
            .map(|(seq, _, message)| (*seq, message.clone()))
            .collect())
    }

    fn forget_session(&self, session: &str) {
        self.shard(session).remove(session);
    }

    /// Drops every expired event, and every session that `live` says has ended once none
    /// of its events is left (a live session's streams stay, so that their sequence
    /// numbers go on). Takes one shard's lock at a time, and none while asking `live`.
    fn sweep(&self, live: &dyn Fn(&str) -> bool) {
        let now = Instant::now();
        for shard in &self.shards {
            let empty: Vec<String> = {
                let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
                shard
                    .iter_mut()
                    .filter_map(|(id, logs)| {
                        for log in logs.values_mut() {
                            log.prune(self.max_events, self.max_bytes, self.ttl, now);
                        }
                        logs.values()
                            .all(|log| log.events.is_empty())
                            .then(|| id.clone())
                    })
                    .collect()
            };
            let gone: Vec<String> = empty.into_iter().filter(|id| !live(id)).collect();
            if gone.is_empty() {
                continue;
            }
            let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            for id in gone {
                // Unless an event came meanwhile (then a later sweep takes it).
                if shard
                    .get(&id)
                    .is_some_and(|logs| logs.values().all(|log| log.events.is_empty()))
                {
                    shard.remove(&id);
                }
            }
        }
    }
}

/// Parse a `Last-Event-ID` (`{stream}-{seq}`).
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// One SSE event with an id carrying a JSON-RPC message.
pub(crate) fn event(stream: u64, seq: u64, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 64);
    write_event(&mut out, stream, seq, data);
    Bytes::from(out)
}

/// Append [`event`]'s bytes to `out`.
pub(crate) fn write_event(out: &mut Vec<u8>, stream: u64, seq: u64, data: &[u8]) {
    write_id(out, stream, seq);
    super::sse::write_event(out, data);
}

/// `id: {stream}-{seq}` and a newline. Numbers with `itoa`, not `write!`: the formatting
/// machinery was a visible share of each SSE answer.
fn write_id(out: &mut Vec<u8>, stream: u64, seq: u64) {
    let mut number = itoa::Buffer::new();
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(number.format(stream).as_bytes());
    out.push(b'-');
    out.extend_from_slice(number.format(seq).as_bytes());
    out.push(b'\n');
}

/// The priming event (2025-11-25): an id to resume from, an empty `data`, and the
/// reconnection delay.
pub(crate) fn priming(stream: u64, seq: u64, retry: Duration) -> Bytes {
    let mut out = Vec::with_capacity(48);
    write_priming(&mut out, stream, seq, retry);
    Bytes::from(out)
}

/// Append [`priming`]'s bytes to `out`.
pub(crate) fn write_priming(out: &mut Vec<u8>, stream: u64, seq: u64, retry: Duration) {
    write_id(out, stream, seq);
    out.extend_from_slice(b"retry: ");
    out.extend_from_slice(itoa::Buffer::new().format(retry.as_millis()).as_bytes());
    out.extend_from_slice(b"\ndata: \n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(stream: u64) -> StreamKey {
        StreamKey {
            session: "s".into(),
            stream,
        }
    }

    #[test]
    fn replays_exactly_the_missed_events() {
        let store = MemoryEventStore::new(3, Duration::from_secs(60));
        for i in 1..=3 {
            assert_eq!(store.append(&key(0), Bytes::from(format!("{i}"))), i);
        }
        store.append(&key(1), Bytes::from_static(b"other"));
        let replay = store.replay(&key(0), 1).unwrap();
        assert_eq!(
            replay.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(store.replay(&key(0), 3).unwrap(), vec![]);
        assert_eq!(store.append(&key(0), Bytes::from_static(b"4")), 4);
        assert_eq!(store.replay(&key(0), 0), Err(ReplayError::Evicted));
        assert_eq!(store.replay(&key(0), 9), Err(ReplayError::UnknownStream));
        assert_eq!(store.replay(&key(7), 0), Ok(vec![]));
        assert_eq!(store.replay(&key(7), 1), Err(ReplayError::UnknownStream));
        store.forget_session("s");
        assert_eq!(store.last(&key(0)), 0);
    }

    #[test]
    fn a_stream_keeps_at_most_its_bytes_and_always_its_newest_event() {
        let store = MemoryEventStore::new(1000, Duration::from_secs(60)).max_bytes(1000);
        for i in 1..=10 {
            store.append(&key(0), Bytes::from(vec![b'x'; 300]));
            assert_eq!(store.last(&key(0)), i);
        }
        let kept = |store: &MemoryEventStore| {
            let shard = store.shard("s");
            let log = &shard["s"][&0];
            assert_eq!(
                log.bytes,
                log.events.iter().map(|(_, _, m)| m.len()).sum::<usize>()
            );
            (log.events.len(), log.bytes)
        };
        assert_eq!(kept(&store), (3, 900));
        assert_eq!(store.replay(&key(0), 6), Err(ReplayError::Evicted));
        assert_eq!(store.replay(&key(0), 7).unwrap().len(), 3);
        // One event over the bound is kept alone.
        store.append(&key(0), Bytes::from(vec![b'y'; 5000]));
        assert_eq!(kept(&store), (1, 5000));
        assert_eq!(store.replay(&key(0), 10).unwrap()[0].0, 11);
        store.append(&key(0), Bytes::from_static(b"z"));
        assert_eq!(kept(&store), (1, 1));
    }

    #[test]
    fn a_sweep_drops_an_ended_session_once_its_events_expired() {
        let store = MemoryEventStore::new(10, Duration::from_millis(30));
        let ghost = StreamKey {
            session: "ghost".into(),
            stream: 1,
        };
        store.append(&key(0), Bytes::from_static(b"live"));
        store.append(&ghost, Bytes::from_static(b"late"));
        let live = |id: &str| id == "s";
        // Not expired yet: nothing goes.
        store.sweep(&live);
        assert_eq!(store.last(&ghost), 1);
        std::thread::sleep(Duration::from_millis(60));
        store.sweep(&live);
        assert_eq!(store.last(&ghost), 0, "the ended session's events are gone");
        assert!(!store.shard("ghost").contains_key("ghost"));
        // The live session's stream stays (its events expired), its numbers going on.
        assert_eq!(store.last(&key(0)), 1);
        assert_eq!(store.replay(&key(0), 0), Err(ReplayError::Evicted));
        assert_eq!(store.append(&key(0), Bytes::from_static(b"next")), 2);
    }

    #[test]
    fn event_ids() {
        assert_eq!(parse_event_id("3-14"), Some((3, 14)));
        assert_eq!(parse_event_id("x"), None);
        assert_eq!(
            &priming(1, 0, Duration::from_millis(250))[..],
            b"id: 1-0\nretry: 250\ndata: \n\n"
        );
        assert_eq!(
            &event(18_446_744_073_709_551_615, 10, b"{}")[..],
            b"id: 18446744073709551615-10\nevent: message\ndata: {}\n\n"
        );
        assert_eq!(
            &event(2, 5, b"{}")[..],
            b"id: 2-5\nevent: message\ndata: {}\n\n"
        );
    }
}
