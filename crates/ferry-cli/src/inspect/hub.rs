//! What flows to the page: one ordered stream of events (wire messages, progress, the
//! server's requests, connection changes), kept in a bounded backlog so that a page opened
//! or reloaded later sees what happened before it, and the server's requests waiting for
//! the person's answer.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};

/// The most events the backlog keeps, and the most bytes they may take (wire events carry
/// whole messages: images, files).
const BACKLOG_EVENTS: usize = 20_000;
const BACKLOG_BYTES: usize = 64 << 20;

/// Events a slow page may fall behind before it is told it missed some.
const LIVE_EVENTS: usize = 4096;

/// One event, serialized once, with its sequence number (the SSE event id).
pub(crate) type Event = (u64, Arc<str>);

/// Locks a mutex, ignoring poisoning: every critical section here leaves its data valid.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Milliseconds since the Unix epoch, as the page's clock counts.
pub(crate) fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

struct Backlog {
    seq: u64,
    events: VecDeque<Event>,
    bytes: usize,
}

/// The event stream.
pub(crate) struct Hub {
    backlog: Mutex<Backlog>,
    live: broadcast::Sender<Event>,
}

impl Hub {
    pub(crate) fn new() -> Hub {
        Hub {
            backlog: Mutex::new(Backlog {
                seq: 0,
                events: VecDeque::new(),
                bytes: 0,
            }),
            live: broadcast::channel(LIVE_EVENTS).0,
        }
    }

    /// Number, keep and send an event (a JSON object; its `seq` is added here).
    pub(crate) fn emit(&self, mut event: Value) {
        let mut backlog = lock(&self.backlog);
        backlog.seq += 1;
        let seq = backlog.seq;
        if let Value::Object(object) = &mut event {
            object.insert("seq".into(), seq.into());
        }
        let text: Arc<str> = event.to_string().into();
        backlog.bytes += text.len();
        backlog.events.push_back((seq, text.clone()));
        while backlog.events.len() > BACKLOG_EVENTS || backlog.bytes > BACKLOG_BYTES {
            match backlog.events.pop_front() {
                Some((_, old)) => backlog.bytes -= old.len(),
                None => break,
            }
        }
        // Nobody listening is fine: the backlog has it.
        let _ = self.live.send((seq, text));
    }

    /// The kept events after `after`, and the live ones from then on (taken under the same
    /// lock, so none is missed or repeated).
    pub(crate) fn subscribe(&self, after: u64) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let backlog = lock(&self.backlog);
        let kept = backlog
            .events
            .iter()
            .filter(|(seq, _)| *seq > after)
            .cloned()
            .collect();
        (kept, self.live.subscribe())
    }
}

/// What the person answered: a result for the server, or a refusal with a message.
pub(crate) type Reply = Result<Value, String>;

struct Waiting {
    /// The request as the page is shown it.
    shown: Value,
    reply: oneshot::Sender<Reply>,
}

/// Ends an ask however it ends (answered, timed out, or dropped while waiting): the entry
/// removed and the page told how.
struct Done<'a> {
    asks: &'a Asks,
    hub: &'a Hub,
    id: u64,
    conn: u64,
    outcome: &'static str,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        lock(&self.asks.waiting).remove(&self.id);
        self.hub.emit(json!({
            "type": "request-done", "id": self.id, "conn": self.conn, "outcome": self.outcome,
        }));
    }
}

/// The server's requests waiting for the person.
pub(crate) struct Asks {
    next: AtomicU64,
    waiting: Mutex<BTreeMap<u64, Waiting>>,
    /// How long the person has to answer.
    pub(crate) timeout: Duration,
}

/// How an ask ended.
pub(crate) enum Asked {
    Answered(Reply),
    TimedOut,
}

impl Asks {
    pub(crate) fn new(timeout: Duration) -> Asks {
        Asks {
            next: AtomicU64::new(1),
            waiting: Mutex::new(BTreeMap::new()),
            timeout,
        }
    }

    /// Show the page the server's request `method` with `params` (from connection `conn`)
    /// and wait for the person's answer, at most [`Asks::timeout`]. If the wait is dropped
    /// first (the server cancelled its request, or the connection ended), the request is
    /// withdrawn from the page as `cancelled`.
    pub(crate) async fn ask(&self, hub: &Hub, conn: u64, method: &str, params: Value) -> Asked {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let shown = json!({
            "type": "request", "id": id, "conn": conn, "method": method, "params": params,
            "time": now_ms(), "timeoutMs": self.timeout.as_millis() as u64,
        });
        let (reply, answer) = oneshot::channel();
        lock(&self.waiting).insert(
            id,
            Waiting {
                shown: shown.clone(),
                reply,
            },
        );
        hub.emit(shown);
        let mut done = Done {
            asks: self,
            hub,
            id,
            conn,
            outcome: "cancelled",
        };
        let outcome = match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(reply)) => Asked::Answered(reply),
            // The sender went with the entry, which only `answer` removes: not reached.
            Ok(Err(_)) | Err(_) => Asked::TimedOut,
        };
        done.outcome = match &outcome {
            Asked::Answered(Ok(_)) => "answered",
            Asked::Answered(Err(_)) => "declined",
            Asked::TimedOut => "timed out",
        };
        outcome
    }

    /// The method of the waiting request `id`, if it is waiting.
    pub(crate) fn method(&self, id: u64) -> Option<String> {
        lock(&self.waiting)
            .get(&id)
            .and_then(|w| w.shown.get("method")?.as_str().map(str::to_owned))
    }

    /// Hand the person's answer to the waiting request `id`; false if it is not waiting
    /// (answered already, or timed out).
    pub(crate) fn answer(&self, id: u64, reply: Reply) -> bool {
        match lock(&self.waiting).remove(&id) {
            Some(waiting) => waiting.reply.send(reply).is_ok(),
            None => false,
        }
    }

    /// The requests waiting now, as shown to the page.
    pub(crate) fn pending(&self) -> Vec<Value> {
        lock(&self.waiting)
            .values()
            .map(|w| w.shown.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_subscriber_gets_the_backlog_then_the_live_events() {
        let hub = Hub::new();
        hub.emit(json!({"type": "a"}));
        hub.emit(json!({"type": "b"}));
        let (kept, mut live) = hub.subscribe(1);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].0, 2);
        assert!(kept[0].1.contains(r#""seq":2"#));
        hub.emit(json!({"type": "c"}));
        let (seq, text) = live.try_recv().expect("live event");
        assert_eq!(seq, 3);
        assert!(text.contains(r#""type":"c""#));
    }

    #[test]
    fn the_backlog_is_bounded() {
        let hub = Hub::new();
        for _ in 0..BACKLOG_EVENTS + 10 {
            hub.emit(json!({}));
        }
        let (kept, _) = hub.subscribe(0);
        assert_eq!(kept.len(), BACKLOG_EVENTS);
        assert_eq!(kept[0].0, 11);
    }

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_request_once() {
        let hub = Hub::new();
        let asks = Arc::new(Asks::new(Duration::from_secs(5)));
        let waiting = asks.clone();
        let hub = Arc::new(hub);
        let shown = hub.clone();
        let task = tokio::spawn(async move {
            waiting
                .ask(&shown, 1, "elicitation/create", json!({"message": "?"}))
                .await
        });
        while asks.pending().is_empty() {
            tokio::task::yield_now().await;
        }
        let id = asks.pending()[0]["id"].as_u64().expect("id");
        assert_eq!(asks.method(id).as_deref(), Some("elicitation/create"));
        assert!(asks.answer(id, Ok(json!({"action": "decline"}))));
        assert!(!asks.answer(id, Ok(json!({"action": "accept"}))));
        match task.await.expect("ask") {
            Asked::Answered(Ok(value)) => assert_eq!(value["action"], "decline"),
            _ => panic!("expected the answer"),
        }
        assert!(asks.pending().is_empty());
    }

    #[tokio::test]
    async fn a_request_the_server_gives_up_is_withdrawn() {
        let hub = Arc::new(Hub::new());
        let asks = Arc::new(Asks::new(Duration::from_secs(60)));
        let (waiting, shown) = (asks.clone(), hub.clone());
        let task = tokio::spawn(async move {
            waiting
                .ask(&shown, 1, "elicitation/create", json!({"message": "?"}))
                .await
        });
        while asks.pending().is_empty() {
            tokio::task::yield_now().await;
        }
        task.abort();
        let _ = task.await;
        assert!(asks.pending().is_empty());
        let (events, _) = hub.subscribe(0);
        let last = &events.last().expect("events").1;
        assert!(last.contains(r#""type":"request-done""#), "{last}");
        assert!(last.contains(r#""outcome":"cancelled""#), "{last}");
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out() {
        let hub = Hub::new();
        let asks = Asks::new(Duration::from_millis(20));
        let outcome = asks.ask(&hub, 1, "sampling/createMessage", json!({})).await;
        assert!(matches!(outcome, Asked::TimedOut));
        let (events, _) = hub.subscribe(0);
        assert!(events[1].1.contains("timed out"));
    }
}
