//! Both session stores meet the same contract: `MemorySessionStore`, and
//! `RedisSessionStore` against a real `redis-server` (Debian's; `.ci/run` installs it)
//! that this test starts on a free loopback port (with the feature `peers`: `scripts/test`).

#[cfg(feature = "peers")]
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry::engine::{DataEntry, DataSaved};
use ferry::http::store::{
    BusMessage, MAX_SHARED_TASKS, MemorySessionStore, RecordChange, RedisConfig, RedisSessionStore,
    SessionRecord, SessionStore, TaskRecord,
};

/// A `redis-server` of this test's own, killed when dropped.
#[cfg(feature = "peers")]
struct Redis {
    port: u16,
    child: Child,
}

#[cfg(feature = "peers")]
impl Redis {
    fn start() -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is installed (Debian: apt-get install redis-server)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { port, child }
    }
}

#[cfg(feature = "peers")]
impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn record(id: &str) -> SessionRecord {
    serde_json::from_value(serde_json::json!({
        "id": id, "revision": "2025-06-18", "initialize": "{\"jsonrpc\":\"2.0\"}",
        "owner": "alice", "log_level": null, "subscriptions": []
    }))
    .expect("a record")
}

/// The next bus message's frame.
async fn next(rx: &mut tokio::sync::mpsc::Receiver<BusMessage>) -> String {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a message in time")
        .expect("the bus is open")
        .frame
}

/// The contract, on any store.
async fn contract(store: Arc<dyn SessionStore>) {
    let ttl = Duration::from_millis(400);
    assert_eq!(store.load("none").await.unwrap(), None);
    assert_eq!(store.touch("none", ttl).await.unwrap(), None);
    assert_eq!(
        store
            .update("none", &RecordChange::LogLevel("info".into()))
            .await
            .unwrap(),
        None,
        "a change never recreates a record"
    );
    assert_eq!(store.load("none").await.unwrap(), None);

    store.create(&record("s1"), ttl).await.unwrap();
    let got = store.load("s1").await.unwrap().expect("created");
    assert_eq!(got, record("s1"));
    assert_eq!(store.touch("s1", ttl).await.unwrap(), Some(0));
    let changes = [
        RecordChange::LogLevel("debug".into()),
        RecordChange::Subscribe("file:///a".into()),
        RecordChange::Subscribe("file:///b".into()),
        RecordChange::Unsubscribe("file:///a".into()),
    ];
    for (n, change) in changes.iter().enumerate() {
        let version = store.update("s1", change).await.unwrap();
        assert_eq!(version, Some(n as u64 + 1), "{change:?}");
    }
    let got = store.load("s1").await.unwrap().unwrap();
    assert_eq!(got.log_level.as_deref(), Some("debug"));
    assert_eq!(got.subscriptions, vec!["file:///b".to_owned()]);
    assert_eq!(got.version, 4);
    assert_eq!(store.touch("s1", ttl).await.unwrap(), Some(4));

    // Touched, it outlives its first expiry; untouched, it goes.
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store.touch("s1", ttl).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store.load("s1").await.unwrap().is_some(), "touched in time");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(store.load("s1").await.unwrap(), None, "expired");

    store
        .create(&record("s2"), Duration::from_secs(60))
        .await
        .unwrap();
    store.remove("s2").await.unwrap();
    assert_eq!(store.load("s2").await.unwrap(), None, "removed");

    // The bus: to one instance, and to all.
    let mut one = store.subscribe("one").await.unwrap();
    let mut two = store.subscribe("two").await.unwrap();
    let message = |to: Option<&str>, frame: &str| {
        serde_json::from_value::<BusMessage>(serde_json::json!({
            "to": to, "session": "s", "frame": frame, "from": "three"}))
        .unwrap()
    };
    store
        .publish(&message(Some("two"), "for two"))
        .await
        .unwrap();
    store.publish(&message(None, "for all")).await.unwrap();
    assert_eq!(next(&mut two).await, "for two");
    assert_eq!(next(&mut two).await, "for all");
    assert_eq!(next(&mut one).await, "for all", "not another's message");
}

fn task(id: &str, ended: bool, outcome: Option<&str>) -> TaskRecord {
    TaskRecord {
        id: id.into(),
        ended,
        task: format!("{{\"taskId\":\"{id}\",\"ended\":{ended}}}"),
        outcome: outcome.map(str::to_owned),
        instance: "one".into(),
    }
}

/// The tasks' contract, on any store.
async fn task_contract(store: Arc<dyn SessionStore>) {
    let ttl = Duration::from_millis(500);
    assert_eq!(store.load_task("s", "t1").await.unwrap(), None);
    assert!(store.list_tasks("s").await.unwrap().is_empty());
    assert_eq!(
        store
            .save_task("s", &task("t0", true, Some("{}")), ttl)
            .await
            .unwrap(),
        None,
        "an end never makes a task"
    );

    let working = task("t1", false, None);
    assert_eq!(
        store.save_task("s", &working, ttl).await.unwrap(),
        Some(working.clone())
    );
    let done = task("t1", true, Some(r#"{"result":{"content":[]}}"#));
    assert_eq!(
        store.save_task("s", &done, ttl).await.unwrap(),
        Some(done.clone())
    );
    assert_eq!(
        store.save_task("s", &working, ttl).await.unwrap(),
        Some(done.clone()),
        "an ended task stays ended"
    );
    assert_eq!(
        store.load_task("s", "t1").await.unwrap(),
        Some(done.clone())
    );
    assert_eq!(store.load_task("other", "t1").await.unwrap(), None);
    store
        .save_task("s", &task("t2", false, None), Duration::from_secs(60))
        .await
        .unwrap();
    let listed: Vec<(String, bool, Option<String>)> = store
        .list_tasks("s")
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.id, t.ended, t.outcome))
        .collect();
    assert_eq!(
        listed,
        vec![("t1".into(), true, None), ("t2".into(), false, None)],
        "oldest first, without outcomes"
    );
    // Retention counts from creation: t1 goes, t2 stays.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(store.load_task("s", "t1").await.unwrap(), None, "expired");
    let listed = store.list_tasks("s").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "t2");

    // Bounded per session: the oldest go.
    for i in 0..MAX_SHARED_TASKS + 5 {
        store
            .save_task(
                "many",
                &task(&format!("m{i}"), false, None),
                Duration::from_secs(60),
            )
            .await
            .unwrap();
    }
    let listed = store.list_tasks("many").await.unwrap();
    assert_eq!(listed.len(), MAX_SHARED_TASKS);
    assert_eq!(listed[0].id, "m5");
    assert_eq!(store.load_task("many", "m0").await.unwrap(), None);

    // A session's end takes its tasks.
    store
        .create(&record("s"), Duration::from_secs(60))
        .await
        .unwrap();
    store.remove("s").await.unwrap();
    assert_eq!(store.load_task("s", "t2").await.unwrap(), None);
    assert!(store.list_tasks("s").await.unwrap().is_empty());
}

/// A session's application data (`SessionData`): compare-and-set on each value's version,
/// the session's bound over all its values, and gone with the record (removed or expired).
async fn data_contract(store: Arc<dyn SessionStore>) {
    let ttl = Duration::from_millis(400);
    assert_eq!(store.load_data("d", "k").await.unwrap(), None, "no record");
    assert_eq!(store.save_data("d", "k", 0, "1", 100).await.unwrap(), None);
    store.create(&record("d"), ttl).await.unwrap();
    assert_eq!(
        store.load_data("d", "k").await.unwrap(),
        Some(DataEntry::default())
    );
    assert_eq!(
        store.save_data("d", "k", 0, "1", 100).await.unwrap(),
        Some(DataSaved::Saved(1))
    );
    // Saved from a stale version: a conflict, and nothing changes.
    assert_eq!(
        store.save_data("d", "k", 0, "2", 100).await.unwrap(),
        Some(DataSaved::Conflict)
    );
    assert_eq!(
        store.save_data("d", "k", 1, "\"two\"", 100).await.unwrap(),
        Some(DataSaved::Saved(2))
    );
    let kept = store.load_data("d", "k").await.unwrap().unwrap();
    assert_eq!((kept.json.as_deref(), kept.version), (Some("\"two\""), 2));
    // The bound counts every key and value of the session: k (1 + 5 bytes) and j.
    let big = format!("\"{}\"", "x".repeat(95));
    assert_eq!(
        store.save_data("d", "j", 0, &big, 100).await.unwrap(),
        Some(DataSaved::TooLarge)
    );
    assert_eq!(
        store.load_data("d", "j").await.unwrap(),
        Some(DataEntry::default())
    );
    assert_eq!(
        store.save_data("d", "j", 0, "[1,2]", 100).await.unwrap(),
        Some(DataSaved::Saved(1))
    );
    // Replacing a value frees its old size.
    assert_eq!(
        store
            .save_data("d", "k", 2, &format!("\"{}\"", "y".repeat(80)), 100)
            .await
            .unwrap(),
        Some(DataSaved::Saved(3))
    );
    // The data does not touch the record (its version counts the client's changes).
    assert_eq!(store.touch("d", ttl).await.unwrap(), Some(0));
    assert_eq!(store.load("d").await.unwrap(), Some(record("d")));
    store.remove("d").await.unwrap();
    assert_eq!(store.load_data("d", "k").await.unwrap(), None);
    // A record that expires takes its data with it.
    store.create(&record("e"), ttl).await.unwrap();
    store.save_data("e", "k", 0, "1", 100).await.unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    assert_eq!(store.load_data("e", "k").await.unwrap(), None);
    store.create(&record("e"), ttl).await.unwrap();
    assert_eq!(
        store.load_data("e", "k").await.unwrap(),
        Some(DataEntry::default())
    );
}

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    contract(Arc::new(MemorySessionStore::new())).await;
    task_contract(Arc::new(MemorySessionStore::new())).await;
    data_contract(Arc::new(MemorySessionStore::new())).await;
}

#[cfg(feature = "peers")]
#[tokio::test]
async fn the_redis_store_keeps_the_contract() {
    let redis = Redis::start();
    let url = format!("redis://127.0.0.1:{}/0", redis.port);
    let store = RedisSessionStore::new(RedisConfig::new(url.as_str()).prefix("t1:")).unwrap();
    contract(Arc::new(store.clone())).await;
    task_contract(Arc::new(store.clone())).await;
    data_contract(Arc::new(store.clone())).await;

    // Every instance gets the same secret; another prefix another one.
    let other = RedisSessionStore::new(RedisConfig::new(url.as_str()).prefix("t1:")).unwrap();
    let secret = store.shared_secret("k").await.unwrap();
    assert_eq!(other.shared_secret("k").await.unwrap(), secret);
    let elsewhere = RedisSessionStore::new(RedisConfig::new(url.as_str()).prefix("t2:")).unwrap();
    assert_ne!(elsewhere.shared_secret("k").await.unwrap(), secret);
}

#[tokio::test]
async fn an_unreachable_redis_fails_each_call_in_bounded_time() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let mut config = RedisConfig::new(format!("redis://127.0.0.1:{port}/0"));
    config.connection_timeout = Duration::from_millis(300);
    config.response_timeout = Duration::from_millis(300);
    let store = RedisSessionStore::new(config).unwrap();
    let started = Instant::now();
    let error = store.load("s").await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(error.to_string().contains("session store"), "{error}");
    assert!(RedisSessionStore::new(RedisConfig::new("not a url")).is_err());
}
