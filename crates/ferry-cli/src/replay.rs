//! `ferry replay FILE`: play the client's side of a recording (the wire export of `ferry
//! inspect`, JSON lines) against a server, and report for each request whether the answer
//! matches the recorded one.
//!
//! The messages go out raw, as recorded: the same requests with the same ids and `_meta`,
//! so the recording's revision and era are replayed too (a session-era recording's
//! `initialize` and `notifications/initialized`, a stateless one's `server/discover` and
//! per-request `_meta`). A session-era recording whose `initialize` is missing (the wire
//! was cleared after connecting) gets one made from its connection line, not compared.
//! Each connection of the recording, and each reconnection, is replayed on a fresh
//! connection to the target (a fresh child, a fresh in-process server), one after another.
//!
//! The recording's order is kept: a message is sent once every answer received before it
//! in the recording has come, and as many progress notifications of each token (so a
//! cancellation still follows the progress it followed); with `--realtime`, also no sooner
//! after the connection began than it was sent in the recording (for servers whose answers
//! depend on time: a count that rises a moment after a cancellation). The server's requests (sampling,
//! elicitation, roots) are answered with the recorded answers, matched by method and
//! params. The opaque tokens a server hands out and the client sends back (`requestState`,
//! `nextCursor`, `taskId`) are swapped for the ones this server handed out.
//!
//! An answer matches when its `result` (or `error`) equals the recorded one, except for the
//! `id`, the values of those tokens, timestamps (RFC 3339 on both sides) and what
//! `--ignore` names; a string holding a JSON object or array is compared as JSON.
//!
//! Exit codes: 0 every recorded answer matched; 1 an answer differed or did not come, the
//! server asked something the recording has no answer to, or the server could not be
//! reached; 2 a usage error (no such file, not a recording, an unknown `--conn`); 3 refused
//! for want of authorization; 130 interrupted.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use ferry::client::ClientError;
use ferry::engine::{Transport, TransportEvent};
use ferry::protocol::ProtocolVersion;
use ferry::protocol::jsonrpc::read_head;
use serde_json::{Map, Value, json};

use crate::client::Common;
use crate::client::target::{self, Target};
use crate::stderr::note;
use crate::target::starting::Waited;

/// How long each answer is waited for when `--timeout` is not given (the client commands'
/// default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a recorded progress notification is waited for before the next message goes
/// anyway (a server that reports less progress is not an error of its answers).
const PROGRESS_WAIT: Duration = Duration::from_secs(5);

/// Values the server makes up and the client sends back: compared only for presence, and
/// the recorded ones replaced by the live ones in what is sent after.
const OPAQUE: &[&str] = &["requestState", "nextCursor", "taskId"];

/// The most differences listed for one answer.
const MAX_DIFFERENCES: usize = 20;

/// The id of the `initialize` made for a recording that lacks its own.
const MADE_INITIALIZE: &str = "ferry-replay-initialize";

/// `ferry replay`.
#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The recording: the wire export of `ferry inspect` (JSON lines); `-` reads it from
    /// stdin.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Keep the recording's pace: each message the client sent goes no sooner after the
    /// connection began than it went in the recording.
    #[arg(long)]
    realtime: bool,
    /// Replay only this connection of the recording (the `conn` of its lines).
    #[arg(long, value_name = "N")]
    conn: Option<u64>,
    /// Leave this out of the comparison: an object key anywhere (`uptime_seconds`), or a
    /// JSON pointer into the answer, `*` standing for any one step
    /// (`/result/content/*/text`). Repeatable.
    #[arg(long = "ignore", value_name = "KEY|POINTER")]
    ignore: Vec<String>,
    #[command(flatten)]
    common: Common,
}

/// Run `ferry replay`.
pub(crate) async fn run(args: ReplayArgs) -> ExitCode {
    // `--json` is the client options' flag, read through the list of those given.
    let as_json = args.common.one_shot_options().contains(&"--json");
    let segments = match read_recording(&args.file) {
        Ok(segments) => segments,
        Err(why) => return usage(&why),
    };
    let segments: Vec<Segment> = match args.conn {
        None => segments,
        Some(conn) => {
            let mut known: Vec<u64> = segments.iter().map(|s| s.conn).collect();
            known.sort_unstable();
            known.dedup();
            let chosen: Vec<Segment> = segments.into_iter().filter(|s| s.conn == conn).collect();
            if chosen.is_empty() {
                let known: Vec<String> = known.iter().map(u64::to_string).collect();
                return usage(&format!(
                    "--conn {conn}: the recording has connections {}",
                    known.join(", ")
                ));
            }
            chosen
        }
    };
    let rules = Rules::new(&args.ignore);
    let timeout = args.common.timeout().unwrap_or(DEFAULT_TIMEOUT);
    let started = Instant::now();
    let mut reports = Vec::new();
    let mut unauthorized = None;
    let mut unreachable = None;
    let mut interrupted = false;
    // A named server's entry, read once for every connection replayed.
    let resolved = args.common.target.resolve(false);
    for segment in &segments {
        let started = match &resolved {
            Ok(resolved) => target::start(&args.common, resolved),
            Err(e) => Err(e.clone()),
        };
        let (target, transport) = match started {
            Ok(started) => started,
            Err(e) => {
                unreachable = Some(e);
                break;
            }
        };
        let interrupt = async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        let mut replay = Replay::new(transport, segment, &rules, timeout, &target);
        replay.realtime = args.realtime;
        if let Ok(resolved) = &resolved {
            replay.connect_timeout = resolved.connect_timeout(timeout);
        }
        let report = tokio::select! {
            report = replay.run() => Some(report),
            () = interrupt => None,
        };
        target.close(report.is_none()).await;
        match report {
            Some(report) if report.unstarted.is_some() => {
                unreachable = report.unstarted;
                break;
            }
            Some(report) => {
                if unauthorized.is_none() {
                    unauthorized.clone_from(&report.unauthorized);
                }
                reports.push(report);
            }
            None => {
                interrupted = true;
                break;
            }
        }
    }
    let elapsed = started.elapsed();
    let summary = Summary::of(&reports, elapsed);
    let target = match &resolved {
        Ok(resolved) => resolved.describe(),
        Err(_) => args.common.target.describe(),
    };
    // When nothing was replayed (no server to talk to), the reason alone is said, below.
    if !reports.is_empty() && as_json {
        let report = json!({
            "file": args.file.display().to_string(),
            "target": target,
            "connections": reports.iter().map(ConnReport::to_json).collect::<Vec<_>>(),
            "summary": summary.to_json(),
        });
        out(&serde_json::to_string_pretty(&report).unwrap_or_default());
    } else if !reports.is_empty() {
        out(&human(&args.file, &target, &reports, &summary));
    }
    if interrupted {
        note!("ferry replay: interrupted");
        return ExitCode::from(130);
    }
    if let Some(why) = unreachable {
        note!("ferry replay: {why}");
        return ExitCode::FAILURE;
    }
    if let Some(why) = unauthorized {
        note!("ferry replay: authorization failed: {why}");
        return ExitCode::from(3);
    }
    if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(why: &str) -> ExitCode {
    note!("error: {why}\n\nFor more information, try '--help'.");
    ExitCode::from(2)
}

/// Text on stdout; a closed pipe is not an error.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", text.trim_end()).and_then(|()| stdout.flush());
}

// ----- the recording -----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Sent,
    Received,
}

/// A message of the recording: the JSON-RPC message, or its text when it is not one (cut
/// short by the inspector, which keeps 256 KiB of each message).
struct Line {
    dir: Dir,
    /// When it passed, in milliseconds since the Unix epoch, if the line says.
    time: Option<f64>,
    message: Result<Value, String>,
}

/// One connection of the recording, from its beginning (a connection line) to the next.
struct Segment {
    conn: u64,
    /// When it began (the connection line's time, else its first message's).
    began: Option<f64>,
    /// What the connection line says: target, revision, era, server, client capabilities.
    connection: Option<Value>,
    lines: Vec<Line>,
}

fn read_recording(file: &std::path::Path) -> Result<Vec<Segment>, String> {
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("cannot read stdin: {e}"))?
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?
    };
    parse_recording(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Split the export into connections. Lines of another kind are skipped; a line that is not
/// a JSON object is an error (the file is not a recording).
fn parse_recording(text: &str) -> Result<Vec<Segment>, String> {
    let mut segments: Vec<Segment> = Vec::new();
    // The segment each connection's messages go to now.
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut messages = 0;
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {}: not JSON ({e}); expected the wire export of ferry inspect",
                number + 1
            )
        })?;
        let Value::Object(object) = value else {
            return Err(format!("line {}: not a JSON object", number + 1));
        };
        let conn = object.get("conn").and_then(Value::as_u64).unwrap_or(0);
        let time = object
            .get("time")
            .and_then(Value::as_str)
            .and_then(epoch_ms);
        if let Some(connection) = object.get("connection") {
            open.insert(conn, segments.len());
            segments.push(Segment {
                conn,
                began: time,
                connection: Some(connection.clone()),
                lines: Vec::new(),
            });
            continue;
        }
        let dir = match object.get("direction").and_then(Value::as_str) {
            Some("sent") => Dir::Sent,
            Some("received") => Dir::Received,
            _ => continue,
        };
        let message = match object.get("message") {
            Some(Value::String(text)) => Err(text.clone()),
            Some(_) if object.get("truncated") == Some(&Value::Bool(true)) => Err(String::new()),
            Some(message) => Ok(message.clone()),
            None => {
                return Err(format!(
                    "line {}: a message line without its message",
                    number + 1
                ));
            }
        };
        let index = *open.entry(conn).or_insert_with(|| {
            segments.push(Segment {
                conn,
                began: time,
                connection: None,
                lines: Vec::new(),
            });
            segments.len() - 1
        });
        segments[index].lines.push(Line { dir, time, message });
        messages += 1;
    }
    if messages == 0 {
        return Err("no messages: expected the wire export of ferry inspect (JSON lines)".into());
    }
    segments.retain(|s| !s.lines.is_empty());
    Ok(segments)
}

/// The JSON text of an id, as a map key.
fn key(id: &Value) -> String {
    id.to_string()
}

/// What a request is about, for the report: the tool, prompt or resource it names.
fn subject(method: &str, params: Option<&Value>) -> Option<String> {
    let params = params?;
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        "logging/setLevel" => "level",
        "completion/complete" => {
            let reference = params.get("ref")?;
            let of = reference.get("name").or_else(|| reference.get("uri"))?;
            let argument = params.pointer("/argument/name")?;
            return Some(format!("{} {}", of.as_str()?, argument.as_str()?));
        }
        _ => return None,
    };
    params.get(field)?.as_str().map(str::to_owned)
}

// ----- comparing -----

/// What `--ignore` leaves out.
struct Rules {
    keys: Vec<String>,
    pointers: Vec<Vec<String>>,
}

impl Rules {
    fn new(ignore: &[String]) -> Rules {
        let mut keys = Vec::new();
        let mut pointers = Vec::new();
        for item in ignore {
            match item.strip_prefix('/') {
                Some(pointer) => pointers.push(
                    pointer
                        .split('/')
                        .map(|s| s.replace("~1", "/").replace("~0", "~"))
                        .collect(),
                ),
                None => keys.push(item.clone()),
            }
        }
        Rules { keys, pointers }
    }

    fn ignores(&self, path: &[String]) -> bool {
        if path.last().is_some_and(|k| self.keys.contains(k)) {
            return true;
        }
        self.pointers.iter().any(|pattern| {
            pattern.len() == path.len() && pattern.iter().zip(path).all(|(p, s)| p == "*" || p == s)
        })
    }
}

/// One difference between the recorded answer and the live one (`None`: absent).
struct Difference {
    path: Vec<String>,
    recorded: Option<Value>,
    got: Option<Value>,
}

impl Difference {
    fn pointer(&self) -> String {
        if self.path.is_empty() {
            return "/".into();
        }
        self.path
            .iter()
            .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
            .collect()
    }
}

/// The part of an answer that is compared: `result` or `error` (not `id`, not `jsonrpc`).
fn outcome(answer: &Value) -> Value {
    let mut kept = Map::new();
    if let Value::Object(object) = answer {
        for (k, v) in object {
            if k != "id" && k != "jsonrpc" {
                kept.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(kept)
}

fn differences(recorded: &Value, got: &Value, rules: &Rules) -> Vec<Difference> {
    let mut found = Vec::new();
    compare(
        &outcome(recorded),
        &outcome(got),
        &mut Vec::new(),
        rules,
        &mut found,
    );
    found
}

fn compare(
    recorded: &Value,
    got: &Value,
    path: &mut Vec<String>,
    rules: &Rules,
    found: &mut Vec<Difference>,
) {
    if rules.ignores(path) {
        return;
    }
    let differ =
        |found: &mut Vec<Difference>, path: &[String], a: Option<&Value>, b: Option<&Value>| {
            found.push(Difference {
                path: path.to_vec(),
                recorded: a.cloned(),
                got: b.cloned(),
            });
        };
    match (recorded, got) {
        (Value::Object(a), Value::Object(b)) => {
            let extra = b.keys().filter(|k| !a.contains_key(*k));
            for k in a.keys().chain(extra) {
                path.push(k.clone());
                match (a.get(k), b.get(k)) {
                    _ if rules.ignores(path) => {}
                    (Some(_), Some(_)) if OPAQUE.contains(&k.as_str()) => {}
                    (Some(x), Some(y)) => compare(x, y, path, rules, found),
                    (x, y) => differ(found, path, x, y),
                }
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                path.push(i.to_string());
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => compare(x, y, path, rules, found),
                    (x, y) if !rules.ignores(path) => differ(found, path, x, y),
                    _ => {}
                }
                path.pop();
            }
        }
        (Value::String(a), Value::String(b)) => {
            if a == b || (is_timestamp(a) && is_timestamp(b)) {
                return;
            }
            match (json_in(a), json_in(b)) {
                (Some(x), Some(y)) => compare(&x, &y, path, rules, found),
                _ => differ(found, path, Some(recorded), Some(got)),
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            if a != b && a.as_f64() != b.as_f64() {
                differ(found, path, Some(recorded), Some(got));
            }
        }
        (a, b) => {
            if a != b {
                differ(found, path, Some(a), Some(b));
            }
        }
    }
}

/// A string holding a JSON object or array (a resource's JSON text, say), parsed.
fn json_in(text: &str) -> Option<Value> {
    let start = text.trim_start().as_bytes().first()?;
    if *start != b'{' && *start != b'[' {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Milliseconds since the Unix epoch of an RFC 3339 time in UTC (`Z`), as the export
/// writes them.
fn epoch_ms(text: &str) -> Option<f64> {
    if !is_timestamp(text) || !text.ends_with(['Z', 'z']) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    // The fraction, to the millisecond.
    let fraction = text.get(20..text.len() - 1).unwrap_or_default();
    let millis: i64 = format!("{fraction:0<3}").get(..3)?.parse().ok()?;
    // Days from 1970-01-01 to the date (H. Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second;
    Some((seconds * 1000 + millis) as f64)
}

/// Whether `text` is an RFC 3339 date and time: `2025-06-18T09:05:03.042Z`, `...+02:00`.
fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    if b.len() < 20
        || !(digits(0..4) && digits(5..7) && digits(8..10) && digits(11..13))
        || !(digits(14..16) && digits(17..19))
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return false;
    }
    let mut rest = &b[19..];
    if let Some((b'.', fraction)) = rest.split_first() {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// The recorded opaque tokens of `recorded` that `got` holds other values for, at the same
/// places: recorded value -> live value.
fn collect_swaps(recorded: &Value, got: &Value, swaps: &mut HashMap<String, String>) {
    match (recorded, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                let Some(y) = b.get(k) else { continue };
                match (x, y) {
                    (Value::String(x), Value::String(y)) if OPAQUE.contains(&k.as_str()) => {
                        if x != y {
                            swaps.insert(x.clone(), y.clone());
                        }
                    }
                    _ => collect_swaps(x, y, swaps),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (x, y) in a.iter().zip(b) {
                collect_swaps(x, y, swaps);
            }
        }
        _ => {}
    }
}

/// `message` with every string of its params that is a recorded token replaced by its live
/// counterpart.
fn with_live_tokens(message: &Value, swaps: &HashMap<String, String>) -> Value {
    let mut message = message.clone();
    if let Some(params) = message.get_mut("params") {
        *params = swapped(params, swaps);
    }
    message
}

/// `value` with every recorded token that appears inside one of its strings replaced by
/// its live counterpart (tokens of 8 characters or more, so that short values never match
/// by chance).
fn quoted_swapped(value: &Value, swaps: &HashMap<String, String>) -> Value {
    match value {
        Value::String(s) => {
            let mut text = s.clone();
            for (recorded, live) in swaps {
                if recorded.len() >= 8 && text.contains(recorded.as_str()) {
                    text = text.replace(recorded.as_str(), live);
                }
            }
            Value::String(text)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| quoted_swapped(v, swaps)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), quoted_swapped(v, swaps)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `value` with every string that is a recorded token replaced by its live counterpart.
fn swapped(value: &Value, swaps: &HashMap<String, String>) -> Value {
    match value {
        Value::String(s) => match swaps.get(s) {
            Some(live) => Value::String(live.clone()),
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| swapped(v, swaps)).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| (k.clone(), swapped(v, swaps)))
                .collect(),
        ),
        other => other.clone(),
    }
}

// ----- the report -----

enum Status {
    Match,
    Differ(Vec<Difference>),
    /// A recorded answer, and none from the server (why).
    Unanswered(String),
    /// Nothing to compare with (why).
    NotCompared(String),
}

struct Entry {
    id: Value,
    method: String,
    subject: Option<String>,
    status: Status,
}

impl Entry {
    fn label(&self) -> String {
        let id = match &self.id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match &self.subject {
            Some(subject) => format!("#{id} {} {subject}", self.method),
            None => format!("#{id} {}", self.method),
        }
    }
}

#[derive(Default)]
struct ConnReport {
    conn: u64,
    connection: Option<Value>,
    /// `recorded`: the recording's own handshake was replayed; `made`: one was made from
    /// the connection line; `none`: stateless, none needed.
    handshake: &'static str,
    requests: Vec<Entry>,
    /// The server's requests answered from the recording.
    answered: usize,
    /// The server's requests the recording has no answer to, by method.
    unexpected: Vec<String>,
    notes: Vec<String>,
    /// Why authorization failed, if it did.
    unauthorized: Option<String>,
    /// Why the server never answered: a child that exited first, or did not answer within
    /// the connect timeout.
    unstarted: Option<String>,
}

impl ConnReport {
    fn to_json(&self) -> Value {
        let requests: Vec<Value> = self
            .requests
            .iter()
            .map(|e| {
                let mut entry = json!({"id": e.id, "method": e.method});
                if let Some(subject) = &e.subject {
                    entry["subject"] = json!(subject);
                }
                let (status, detail) = match &e.status {
                    Status::Match => ("match", None),
                    Status::Differ(found) => {
                        let found: Vec<Value> = found
                            .iter()
                            .map(|d| {
                                let mut one = json!({"path": d.pointer()});
                                if let Some(v) = &d.recorded {
                                    one["recorded"] = v.clone();
                                }
                                if let Some(v) = &d.got {
                                    one["got"] = v.clone();
                                }
                                one
                            })
                            .collect();
                        entry["differences"] = json!(found);
                        ("differ", None)
                    }
                    Status::Unanswered(why) => ("unanswered", Some(why)),
                    Status::NotCompared(why) => ("not-compared", Some(why)),
                };
                entry["status"] = json!(status);
                if let Some(why) = detail {
                    entry["why"] = json!(why);
                }
                entry
            })
            .collect();
        json!({
            "conn": self.conn,
            "recorded": self.connection,
            "handshake": self.handshake,
            "requests": requests,
            "serverRequests": {"answered": self.answered, "unexpected": self.unexpected},
            "notes": self.notes,
        })
    }
}

struct Summary {
    requests: usize,
    matched: usize,
    differed: usize,
    unanswered: usize,
    not_compared: usize,
    unexpected: usize,
    elapsed: Duration,
}

impl Summary {
    fn of(reports: &[ConnReport], elapsed: Duration) -> Summary {
        let mut summary = Summary {
            requests: 0,
            matched: 0,
            differed: 0,
            unanswered: 0,
            not_compared: 0,
            unexpected: 0,
            elapsed,
        };
        for report in reports {
            summary.unexpected += report.unexpected.len();
            for entry in &report.requests {
                summary.requests += 1;
                match entry.status {
                    Status::Match => summary.matched += 1,
                    Status::Differ(_) => summary.differed += 1,
                    Status::Unanswered(_) => summary.unanswered += 1,
                    Status::NotCompared(_) => summary.not_compared += 1,
                }
            }
        }
        summary
    }

    fn failed(&self) -> bool {
        self.differed + self.unanswered + self.unexpected > 0
    }

    fn to_json(&self) -> Value {
        json!({
            "requests": self.requests,
            "matched": self.matched,
            "differed": self.differed,
            "unanswered": self.unanswered,
            "notCompared": self.not_compared,
            "unexpectedServerRequests": self.unexpected,
            "ms": self.elapsed.as_millis() as u64,
        })
    }
}

/// A value for a line of the report: compact JSON, cut at 100 characters.
fn short(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".into();
    };
    let text = value.to_string();
    if text.chars().count() <= 100 {
        return text;
    }
    let cut: String = text.chars().take(99).collect();
    format!("{cut}…")
}

fn human(
    file: &std::path::Path,
    target: &Value,
    reports: &[ConnReport],
    summary: &Summary,
) -> String {
    let against = match target["kind"].as_str() {
        Some("http") => target["url"].as_str().unwrap_or_default().to_owned(),
        Some("stdio") => {
            let words: Vec<&str> = target["command"]
                .as_array()
                .map(|c| c.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            words.join(" ")
        }
        _ => "the reference server (in-process)".into(),
    };
    let mut text = format!("replaying {} against {against}\n", file.display());
    for report in reports {
        let recorded = report.connection.as_ref().map(|c| {
            let revision = c["protocolVersion"].as_str().unwrap_or("?");
            let era = c["era"].as_str().unwrap_or("?");
            format!(" (recorded: {revision}, {era} era)")
        });
        let handshake = match report.handshake {
            "made" => "; initialize made from the connection line",
            _ => "",
        };
        text.push_str(&format!(
            "connection {}{}{handshake}\n",
            report.conn,
            recorded.unwrap_or_default()
        ));
        for entry in &report.requests {
            let label = entry.label();
            match &entry.status {
                Status::Match => text.push_str(&format!("  ok    {label}\n")),
                Status::Differ(found) => {
                    text.push_str(&format!("  DIFF  {label}\n"));
                    for d in found.iter().take(5) {
                        text.push_str(&format!(
                            "          {}: recorded {}, got {}\n",
                            d.pointer(),
                            short(d.recorded.as_ref()),
                            short(d.got.as_ref())
                        ));
                    }
                    if found.len() > 5 {
                        text.push_str(&format!("          and {} more\n", found.len() - 5));
                    }
                }
                Status::Unanswered(why) => text.push_str(&format!("  MISS  {label}: {why}\n")),
                Status::NotCompared(why) => text.push_str(&format!("  --    {label}: {why}\n")),
            }
        }
        if report.answered > 0 {
            text.push_str(&format!(
                "  ({} of the server's requests answered from the recording)\n",
                report.answered
            ));
        }
        for method in &report.unexpected {
            text.push_str(&format!(
                "  ASKED {method}: the server asked what the recording has no answer to\n"
            ));
        }
        for line in &report.notes {
            text.push_str(&format!("  note: {line}\n"));
        }
    }
    let asked = match summary.unexpected {
        0 => String::new(),
        n => format!("; {n} of the server's requests without a recorded answer"),
    };
    text.push_str(&format!(
        "{} requests: {} matched, {} differed, {} unanswered, {} not compared{asked} ({:.2} s)\n",
        summary.requests,
        summary.matched,
        summary.differed,
        summary.unanswered,
        summary.not_compared,
        summary.elapsed.as_secs_f64()
    ));
    text
}

// ----- replaying one connection -----

/// An answer from the server, or what came instead.
enum Live {
    Message(Value),
    Failed(ferry::engine::TransportError),
    Oversized(usize),
}

/// A request of the server in the recording, with the client's recorded answer.
struct Ask {
    method: String,
    params: Value,
    answer: Option<Value>,
    used: bool,
}

struct Replay<'a> {
    transport: Transport,
    /// `--realtime`: keep the recording's pace.
    realtime: bool,
    /// When this replay of the connection began.
    started: tokio::time::Instant,
    segment: &'a Segment,
    rules: &'a Rules,
    timeout: Duration,
    /// How long a child is waited for until it first answers.
    connect_timeout: Duration,
    /// Whether the server has sent anything yet.
    heard: bool,
    target: &'a Target,
    /// The server's answers not yet taken, by id.
    answers: HashMap<String, Live>,
    /// Progress notifications received, by token.
    progress: HashMap<String, usize>,
    /// Tokens whose progress stopped coming: not waited for again.
    progress_gone: Vec<String>,
    asks: Vec<Ask>,
    swaps: HashMap<String, String>,
    closed: bool,
    report: ConnReport,
}

impl<'a> Replay<'a> {
    fn new(
        transport: Transport,
        segment: &'a Segment,
        rules: &'a Rules,
        timeout: Duration,
        target: &'a Target,
    ) -> Replay<'a> {
        // The client's recorded answers to the server's requests, by the server's ids.
        let mut replies: HashMap<String, Value> = HashMap::new();
        for line in &segment.lines {
            if let (Dir::Sent, Ok(message)) = (line.dir, &line.message)
                && message.get("method").is_none()
                && let Some(id) = message.get("id")
            {
                replies.insert(key(id), message.clone());
            }
        }
        let asks = segment
            .lines
            .iter()
            .filter(|line| line.dir == Dir::Received)
            .filter_map(|line| {
                let message = line.message.as_ref().ok()?;
                let method = message.get("method")?.as_str()?;
                let id = message.get("id")?;
                Some(Ask {
                    method: method.to_owned(),
                    params: message.get("params").cloned().unwrap_or(Value::Null),
                    answer: replies.get(&key(id)).cloned(),
                    used: false,
                })
            })
            .collect();
        Replay {
            transport,
            realtime: false,
            started: tokio::time::Instant::now(),
            segment,
            rules,
            timeout,
            connect_timeout: timeout,
            heard: false,
            target,
            answers: HashMap::new(),
            progress: HashMap::new(),
            progress_gone: Vec::new(),
            asks,
            swaps: HashMap::new(),
            closed: false,
            report: ConnReport {
                conn: segment.conn,
                connection: segment.connection.clone(),
                ..ConnReport::default()
            },
        }
    }

    async fn run(mut self) -> ConnReport {
        self.started = tokio::time::Instant::now();
        self.handshake().await;
        // Requests sent and not yet answered in the recording: id -> index of their entry.
        let mut pending: HashMap<String, usize> = HashMap::new();
        // Progress notifications seen in the recording, by token.
        let mut progress_seen: HashMap<String, usize> = HashMap::new();
        let mut cut_short = 0;
        for line in &self.segment.lines {
            let message = match &line.message {
                Ok(message) => message,
                Err(text) => {
                    if line.dir == Dir::Sent {
                        cut_short += 1;
                        continue;
                    }
                    // An answer cut short: the order is kept, the comparison cannot be made.
                    let id = read_head(text.as_bytes()).id.map(|id| key(&json!(id)));
                    if let Some(id) = id
                        && let Some(index) = pending.remove(&id)
                    {
                        let _ = self.await_answer(&id).await;
                        self.report.requests[index].status =
                            Status::NotCompared("the recorded answer is cut short".into());
                    }
                    continue;
                }
            };
            let method = message.get("method").and_then(Value::as_str);
            let id = message.get("id");
            if line.dir == Dir::Sent && method.is_some() {
                self.keep_pace(line.time).await;
            }
            match (line.dir, method, id) {
                (Dir::Sent, Some(method), Some(id)) => {
                    let params = message.get("params");
                    pending.insert(key(id), self.report.requests.len());
                    self.report.requests.push(Entry {
                        id: id.clone(),
                        method: method.to_owned(),
                        subject: subject(method, params),
                        status: Status::NotCompared("no answer in the recording".into()),
                    });
                    let message = with_live_tokens(message, &self.swaps);
                    self.send(&message).await;
                }
                (Dir::Sent, Some(_), None) => {
                    let message = with_live_tokens(message, &self.swaps);
                    self.send(&message).await;
                }
                (Dir::Received, None, Some(id)) => {
                    let Some(index) = pending.remove(&key(id)) else {
                        continue;
                    };
                    let live = self.await_answer(&key(id)).await;
                    let status = self.judge(message, live);
                    self.report.requests[index].status = status;
                }
                (Dir::Received, Some("notifications/progress"), None) => {
                    let Some(token) = message.pointer("/params/progressToken") else {
                        continue;
                    };
                    let token = key(token);
                    let seen = progress_seen.entry(token.clone()).or_default();
                    *seen += 1;
                    let seen = *seen;
                    self.await_progress(&token, seen).await;
                }
                _ => {}
            }
        }
        if self.closed {
            let why = self
                .target
                .child_status()
                .unwrap_or_else(|| "the server hung up".into());
            self.report.notes.push(format!(
                "the connection ended before the recording did: {why}"
            ));
        }
        if cut_short > 0 {
            self.report.notes.push(format!(
                "{cut_short} message(s) the client sent are cut short in the recording and \
                 were not sent"
            ));
        }
        self.report
    }

    /// Make the handshake a session-era recording lacks (its wire cleared after connecting).
    async fn handshake(&mut self) {
        let sent_first = self
            .segment
            .lines
            .iter()
            .find_map(|line| match &line.message {
                Ok(message) if line.dir == Dir::Sent => message.get("method")?.as_str(),
                _ => None,
            });
        if matches!(sent_first, Some("initialize" | "server/discover")) {
            self.report.handshake = "recorded";
            return;
        }
        let connection = self.segment.connection.as_ref();
        let stateless_meta = self.segment.lines.iter().any(|line| {
            line.message.as_ref().is_ok_and(|m| {
                m.pointer("/params/_meta")
                    .and_then(|meta| meta.get(ferry::protocol::version::PROTOCOL_VERSION_META_KEY))
                    .is_some()
            })
        });
        let era = connection.and_then(|c| c["era"].as_str());
        if era == Some("stateless") || (era.is_none() && stateless_meta) {
            self.report.handshake = "none";
            return;
        }
        self.report.handshake = "made";
        let revision = connection
            .and_then(|c| c["protocolVersion"].as_str())
            .unwrap_or(ProtocolVersion::LATEST_SESSION.as_str());
        let capabilities = connection
            .and_then(|c| c.get("clientCapabilities"))
            .filter(|c| c.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}));
        self.send(&json!({
            "jsonrpc": "2.0", "id": MADE_INITIALIZE, "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": capabilities,
                "clientInfo": {"name": "ferry-replay", "version": env!("CARGO_PKG_VERSION")},
            },
        }))
        .await;
        let answer = self.await_answer(&key(&json!(MADE_INITIALIZE))).await;
        let failed = match &answer {
            Some(Live::Message(m)) => m.get("error").map(Value::to_string),
            Some(Live::Failed(e)) => Some(e.message.clone()),
            Some(Live::Oversized(bytes)) => Some(format!("an answer of {bytes} bytes")),
            None => Some("no answer".into()),
        };
        if let Some(why) = failed {
            self.report.notes.push(format!(
                "the initialize made for this recording failed: {why}"
            ));
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// `--realtime`: wait (answering the server meanwhile) until as long has passed since
    /// the connection began as had when the message at `time` was sent in the recording.
    async fn keep_pace(&mut self, time: Option<f64>) {
        let (true, Some(began), Some(time)) = (self.realtime, self.segment.began, time) else {
            return;
        };
        let after = Duration::from_secs_f64(((time - began) / 1000.0).max(0.0));
        let wake = self.started + after;
        while tokio::time::Instant::now() < wake && self.pump(wake).await {}
    }

    async fn send(&mut self, message: &Value) {
        if self.closed {
            return;
        }
        let frame = message.to_string().into_bytes();
        if self.transport.outgoing.send(frame).await.is_err() {
            self.closed = true;
        }
    }

    /// Wait for the server's answer to `id` (at most the timeout; a child not heard from yet
    /// is waited for while it runs, up to the connect timeout).
    async fn await_answer(&mut self, id: &str) -> Option<Live> {
        let target: &Target = self.target;
        if !self.heard
            && !self.closed
            && let Some(starting) = target.starting(self.connect_timeout)
        {
            let deadline = tokio::time::Instant::now() + self.connect_timeout;
            let note = |line: &str| note!("ferry replay: {line}");
            let why = match starting.wait(self.answer_by(id, deadline), note).await {
                Waited::Done(Some(live)) => return Some(live),
                Waited::Done(None) if self.heard || !self.closed => return None,
                // Its output ended before it said anything: it is exiting, or has.
                Waited::Done(None) => starting.exit_report().await?,
                Waited::Failed(why) => why,
            };
            self.report.unstarted = Some(why);
            self.closed = true;
            return None;
        }
        self.answer_by(id, tokio::time::Instant::now() + self.timeout)
            .await
    }

    /// Wait for the server's answer to `id` until `deadline`.
    async fn answer_by(&mut self, id: &str, deadline: tokio::time::Instant) -> Option<Live> {
        loop {
            if let Some(live) = self.answers.remove(id) {
                return Some(live);
            }
            if !self.pump(deadline).await {
                return None;
            }
        }
    }

    /// Wait (a little) until the server has sent `count` progress notifications of `token`.
    async fn await_progress(&mut self, token: &str, count: usize) {
        if self.progress_gone.iter().any(|t| t == token) {
            return;
        }
        let deadline = tokio::time::Instant::now() + PROGRESS_WAIT.min(self.timeout);
        while self.progress.get(token).copied().unwrap_or(0) < count {
            if !self.pump(deadline).await {
                self.progress_gone.push(token.to_owned());
                if self.closed {
                    return;
                }
                self.report.notes.push(format!(
                    "the server sent fewer progress notifications for token {token} than \
                     recorded"
                ));
                return;
            }
        }
    }

    /// Take one event from the server; false once the deadline passed or the connection
    /// ended.
    async fn pump(&mut self, deadline: tokio::time::Instant) -> bool {
        if self.closed {
            return false;
        }
        let event = match tokio::time::timeout_at(deadline, self.transport.incoming.recv()).await {
            Err(_) => return false,
            Ok(None) => {
                self.closed = true;
                return false;
            }
            Ok(Some(event)) => event,
        };
        self.heard = true;
        match event.into_frame() {
            Ok(frame) => match serde_json::from_slice::<Value>(&frame) {
                Ok(Value::Array(batch)) => {
                    for message in batch {
                        self.take(message).await;
                    }
                }
                Ok(message) => self.take(message).await,
                Err(_) => self
                    .report
                    .notes
                    .push("the server sent a frame that is not JSON".into()),
            },
            Err(TransportEvent::Failed(failed)) => {
                let (id, error) = *failed;
                if matches!(error.status, Some(401 | 403)) && self.report.unauthorized.is_none() {
                    self.report.unauthorized = self
                        .target
                        .auth_failure(&ClientError::Transport(error.clone()));
                }
                self.answers.insert(key(&json!(id)), Live::Failed(error));
            }
            Err(TransportEvent::Oversized { bytes, head }) => {
                if let Some(id) = read_head(&head).id {
                    self.answers.insert(key(&json!(id)), Live::Oversized(bytes));
                }
            }
            Err(_) => {}
        }
        true
    }

    /// One message from the server.
    async fn take(&mut self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => {
                if let Some(reply) = self.reply(method, message.get("params"), id.clone()) {
                    self.send(&reply).await;
                }
            }
            (Some("notifications/progress"), None) => {
                if let Some(token) = message.pointer("/params/progressToken") {
                    *self.progress.entry(key(token)).or_default() += 1;
                }
            }
            (None, Some(id)) => {
                self.answers.insert(key(id), Live::Message(message));
            }
            _ => {}
        }
    }

    /// The answer to a request of the server: the recorded answer to the same request (the
    /// same method and params, else the same method, in order). `None` for a request the
    /// recording left unanswered (the server withdrew it, or the client never answered):
    /// left unanswered again.
    fn reply(&mut self, method: &str, params: Option<&Value>, id: Value) -> Option<Value> {
        let params = params.cloned().unwrap_or(Value::Null);
        let same = |ask: &Ask| {
            ask.method == method && differences_of(&ask.params, &params, self.rules).is_empty()
        };
        let chosen = self
            .asks
            .iter()
            .position(|a| !a.used && same(a))
            .or_else(|| self.asks.iter().position(|a| !a.used && a.method == method))
            .or_else(|| self.asks.iter().rposition(|a| a.used && same(a)));
        let recorded = chosen.map(|i| {
            self.asks[i].used = true;
            self.asks[i].answer.clone()
        });
        match recorded {
            Some(Some(answer)) => {
                self.report.answered += 1;
                let mut reply = outcome(&answer);
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = id;
                Some(reply)
            }
            Some(None) => None,
            // The engine answers pings itself; one at another moment is answered the same.
            None if method == "ping" => Some(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
            None => {
                self.report.unexpected.push(method.to_owned());
                Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603,
                    "message": "ferry replay: the recording holds no answer to this request",
                }}))
            }
        }
    }

    /// Compare the recorded answer with the live one.
    fn judge(&mut self, recorded: &Value, live: Option<Live>) -> Status {
        match live {
            Some(Live::Message(got)) => {
                collect_swaps(recorded, &got, &mut self.swaps);
                // A recorded token quoted inside a text (an error naming a task) reads as
                // its live counterpart too.
                let recorded = &quoted_swapped(recorded, &self.swaps);
                let found = differences(recorded, &got, self.rules);
                if found.is_empty() {
                    Status::Match
                } else {
                    let mut found = found;
                    found.truncate(MAX_DIFFERENCES);
                    Status::Differ(found)
                }
            }
            Some(Live::Failed(error)) => Status::Unanswered(error.message),
            Some(Live::Oversized(bytes)) => Status::Unanswered(format!(
                "the answer ({bytes} bytes) is over --max-message-bytes"
            )),
            None if self.closed => match self.target.child_status() {
                Some(status) => Status::Unanswered(format!("the connection ended: {status}")),
                None => Status::Unanswered("the server closed the connection first".into()),
            },
            None => Status::Unanswered(format!("no answer within {:?}", self.timeout)),
        }
    }
}

/// Differences between two values compared whole (params of the server's requests).
fn differences_of(a: &Value, b: &Value, rules: &Rules) -> Vec<Difference> {
    let mut found = Vec::new();
    compare(a, b, &mut Vec::new(), rules, &mut found);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_tokens_inside_texts_read_as_live_ones() {
        let swaps = HashMap::from([
            ("ead315277ca0".to_owned(), "6ceb57dcc339".to_owned()),
            ("ab".to_owned(), "cd".to_owned()),
        ]);
        let recorded =
            json!({"error": {"message": "task \"ead315277ca0\" was cancelled", "data": ["about"]}});
        assert_eq!(
            quoted_swapped(&recorded, &swaps),
            json!({"error": {"message": "task \"6ceb57dcc339\" was cancelled", "data": ["about"]}})
        );
    }

    #[test]
    fn export_times() {
        assert_eq!(epoch_ms("1970-01-01T00:00:00.000Z"), Some(0.0));
        assert_eq!(epoch_ms("2000-03-01T00:00:01.5Z"), Some(951_868_801_500.0));
        assert_eq!(
            epoch_ms("2026-12-05T13:36:10.607Z"),
            Some(1_796_477_770_607.0)
        );
        assert_eq!(epoch_ms("2026-12-05T13:36:10+01:00"), None);
    }

    #[test]
    fn timestamps() {
        for ok in [
            "2025-06-18T09:05:03.042Z",
            "2025-06-18T09:05:03Z",
            "2025-06-18T09:05:03+02:00",
            "2025-06-18 09:05:03.1-05:30",
        ] {
            assert!(is_timestamp(ok), "{ok}");
        }
        for no in [
            "2025-06-18",
            "2025-06-18T09:05:03",
            "2025-06-18T09:05:03.Z",
            "hello, 2025-06-18T09:05:03Z",
            "2025-06-18T09:05:03Zx",
        ] {
            assert!(!is_timestamp(no), "{no}");
        }
    }

    #[test]
    fn comparison_ignores_what_it_should_and_nothing_else() {
        let rules = Rules::new(&["uptime".into(), "/result/content/*/skip".into()]);
        let recorded = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "{\"uptime\": 1, \"n\": 2}", "skip": 1}],
            "nextCursor": "a", "at": "2025-06-18T09:05:03.042Z"}});
        let same = json!({"jsonrpc": "2.0", "id": 9, "result": {
            "content": [{"type": "text", "text": "{\"uptime\": 7, \"n\": 2.0}", "skip": 2}],
            "nextCursor": "b", "at": "2026-01-01T00:00:00Z"}});
        assert!(differences(&recorded, &same, &rules).is_empty());
        let other = json!({"id": 1, "result": {
            "content": [{"type": "text", "text": "{\"uptime\": 1, \"n\": 3}"}, {"type": "text"}],
            "at": "now"}});
        let mut found: Vec<String> = differences(&recorded, &other, &rules)
            .iter()
            .map(Difference::pointer)
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "/result/at",
                "/result/content/0/text/n",
                "/result/content/1",
                "/result/nextCursor",
            ]
        );
    }

    #[test]
    fn tokens_are_swapped_for_the_live_ones() {
        let mut swaps = HashMap::new();
        collect_swaps(
            &json!({"result": {"requestState": "old", "x": [{"nextCursor": "c1"}]}}),
            &json!({"result": {"requestState": "new", "x": [{"nextCursor": "c2"}]}}),
            &mut swaps,
        );
        let retry =
            json!({"id": "c1", "params": {"requestState": "old", "cursor": "c1", "text": "old!"}});
        assert_eq!(
            with_live_tokens(&retry, &swaps),
            json!({"id": "c1", "params": {"requestState": "new", "cursor": "c2", "text": "old!"}})
        );
    }

    #[test]
    fn recordings_split_by_connection() {
        let text = [
            r#"{"format":"ferry-wire","version":1}"#,
            r#"{"conn":1,"connection":{"era":"session"}}"#,
            r#"{"conn":1,"direction":"sent","message":{"id":1,"method":"ping"}}"#,
            r#"{"conn":2,"direction":"sent","message":{"id":1,"method":"ping"}}"#,
            r#"{"conn":1,"connection":{"era":"session"}}"#,
            r#"{"conn":1,"direction":"received","message":"{\"id\":1,\"res","truncated":true}"#,
        ]
        .join("\n");
        let segments = parse_recording(&text).unwrap();
        let shape: Vec<(u64, bool, usize)> = segments
            .iter()
            .map(|s| (s.conn, s.connection.is_some(), s.lines.len()))
            .collect();
        assert_eq!(shape, [(1, true, 1), (2, false, 1), (1, true, 1)]);
        assert!(segments[2].lines[0].message.is_err());
        assert!(parse_recording("").is_err());
        assert!(parse_recording("[1]").is_err());
        assert!(parse_recording("not json").is_err());
    }
}
