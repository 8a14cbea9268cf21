//! One reading of a server process: from `/proc` (resident memory, descriptors, threads)
//! and from its `server://info` resource (sessions open, runtime tasks alive).

use serde_json::{Value, json};

/// The figures of a reading whose flatness the soak judges. Runtime tasks are judged per
/// live session (see [`figure`]): each session holds a few tasks for as long as it lives,
/// so the raw count follows how many sessions the traffic happens to hold open, and says
/// nothing of a leak.
pub(crate) const FIGURES: [&str; 4] = ["rss_kib", "fds", "threads", "tasks_per_session"];

/// A figure of a (median) reading: one it holds, or `tasks_per_session`, its runtime
/// tasks divided by its live sessions (at least one).
pub(crate) fn figure(reading: &Value, name: &str) -> Option<f64> {
    if name == "tasks_per_session" {
        let tasks = reading["tasks"].as_f64()?;
        let sessions = reading["sessions"].as_f64()?.max(1.0);
        return Some(tasks / sessions);
    }
    reading[name].as_f64()
}

/// A reading of process `pid`; `info` is its `server://info` text when it could be read.
pub(crate) fn read(pid: u32, info: Option<Value>) -> Value {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .ok();
    let info = info.unwrap_or_default();
    json!({
        "rss_kib": field("VmRSS:"),
        "fds": fds,
        "threads": field("Threads:"),
        "tasks": info["tasks_alive"],
        "sessions": info["sessions"],
        "requests_served": info["requests_served"],
    })
}

/// The median of several readings per figure (a reading under load catches whatever is in
/// flight at that instant; the median of a few is steadier).
pub(crate) fn median(readings: &[Value]) -> Value {
    let mut out = serde_json::Map::new();
    let Some(first) = readings.first().and_then(Value::as_object) else {
        return Value::Null;
    };
    for key in first.keys() {
        let mut values: Vec<f64> = readings.iter().filter_map(|r| r[key].as_f64()).collect();
        if values.is_empty() {
            out.insert(key.clone(), Value::Null);
            continue;
        }
        values.sort_by(f64::total_cmp);
        out.insert(key.clone(), json!(values[values.len() / 2] as u64));
    }
    Value::Object(out)
}
