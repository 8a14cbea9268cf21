//! `evaluate` (seed 000, in Rhai) through `ferry serve` on stdio: persistent sessions,
//! isolation, the seed's error layout, limits, responsiveness and cancellation; and
//! through `ferry serve --http` (stateless calls, each a session of its own, in a process
//! whose threads and memory the tests read from `/proc`), limits that hold while a script
//! sleeps, calls back from a native function or fills a map.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, is_error, text};

/// A script that would run until the time limit (5 s): each step is one operation that
/// does a lot of work, so the operation limit is far away.
const SLOW: &str = "loop { let a = []; a.pad(100000, 0); }";

/// A script that would run for hours: each call of a function pointer by `map` restarts
/// Rhai's count of operations, so a check on that count alone never came.
const NESTED_MAP: &str = "let a = []; a.pad(100000, 0); \
    a.map(|x| { let b = []; b.pad(100000, 0); b.map(|y| y + 1); x }).len()";

/// How `evaluate` answers a script stopped by the time limit (then `[Position]`).
const TIMED_OUT: &str = "[ERROR] TIMEOUT\nthe script ran longer than the time limit of 5 s\n";

/// Call `evaluate` with `code` as request `id`; the result.
fn eval(client: &mut Client, id: impl Into<Value>, code: &str) -> Value {
    client.call_result(id, "evaluate", json!({"code": code}))
}

#[test]
fn definitions_persist_within_a_session() {
    let mut client = Client::start();
    let defined = eval(&mut client, 1, "let x = 40; fn f(a) { a + 2 }");
    assert!(!is_error(&defined), "{defined}");
    assert_eq!(text(&defined), "=> ()");
    let used = eval(&mut client, 2, "f(x)");
    assert_eq!(text(&used), "=> 42", "{used}");
    assert_eq!(text(&eval(&mut client, 3, "x += 1; f(x)")), "=> 43");
    // A later definition replaces an earlier one.
    eval(&mut client, 4, "fn f(a) { a * 2 }");
    assert_eq!(text(&eval(&mut client, 5, "f(x)")), "=> 82");
    assert!(client.finish(), "exits 0 on EOF");
}

#[test]
fn sessions_are_isolated() {
    let mut first = Client::start();
    let mut second = Client::start();
    eval(&mut first, 1, "let x = 40; fn f(a) { a + 2 }");
    let missing = eval(&mut second, 1, "x");
    assert!(is_error(&missing), "{missing}");
    assert!(
        text(&missing).starts_with("[ERROR] VARIABLE-NOT-FOUND\n"),
        "{missing}"
    );
    let missing = eval(&mut second, 2, "f(1)");
    assert!(
        text(&missing).starts_with("[ERROR] FUNCTION-NOT-FOUND\n"),
        "{missing}"
    );
    // The second session's definitions do not reach the first either.
    eval(&mut second, 3, "let x = 1;");
    assert_eq!(text(&eval(&mut first, 2, "f(x)")), "=> 42");
}

#[test]
fn a_failed_script_leaves_the_session_unchanged() {
    let mut client = Client::start();
    eval(&mut client, 1, "let x = 1; fn f() { 1 }");
    let failed = eval(
        &mut client,
        2,
        "x = 2; let y = 3; fn f() { 2 } throw \"no\"",
    );
    assert!(is_error(&failed));
    assert!(
        text(&failed).starts_with("[ERROR] RUNTIME-ERROR\nRuntime error: no"),
        "{failed}"
    );
    assert_eq!(text(&eval(&mut client, 3, "[x, f()]")), "=> [1, 1]");
    assert!(is_error(&eval(&mut client, 4, "y")));
    // Nor does a parse error, or a script stopped by a limit.
    assert!(is_error(&eval(&mut client, 5, "x = 5; let")));
    assert!(is_error(&eval(&mut client, 6, "x = 6; loop {}")));
    assert_eq!(text(&eval(&mut client, 7, "x")), "=> 1");
}

#[test]
fn results_and_errors_read_like_the_seed() {
    let mut client = Client::start();
    let table: &[(&str, &str)] = &[
        ("1 + 2 + 3", "=> 6"),
        ("\"hi\"", "=> \"hi\""),
        ("[1, 2.5, #{a: 1}]", "=> [1, 2.5, #{\"a\": 1}]"),
        ("print(\"hello\"); print(2); 6", "hello\n2\n=> 6"),
        (
            "1 / 0",
            "[ERROR] DIVISION-BY-ZERO\nDivision by zero: 1 / 0\n\n[Position]\nline 1, position 3",
        ),
        (
            "let a = 1;\nlet b = ;",
            "[ERROR] PARSE-ERROR\nSyntax error: Unexpected ';'\n\n[Position]\nline 2, position 9",
        ),
        (
            "nope",
            "[ERROR] VARIABLE-NOT-FOUND\nVariable not found: nope\n\n[Position]\nline 1, position 1",
        ),
        (
            "fn r(n) { r(n + 1) } r(0)",
            "[ERROR] STACK-OVERFLOW\nfunction calls nested deeper than 32 levels\n\n[Position]\nline 1, position 22",
        ),
        (
            "fn g(n) { if n == 0 { 1 / 0 } else { g(n - 1) } }\ng(3)",
            "[ERROR] DIVISION-BY-ZERO\nDivision by zero: 1 / 0 (line 1, position 25)\nin call to function 'g' (4 nested calls)\n\n[Position]\nline 2, position 1",
        ),
    ];
    for (id, (code, expected)) in table.iter().enumerate() {
        let result = eval(&mut client, id, code);
        assert_eq!(
            is_error(&result),
            expected.starts_with("[ERROR]"),
            "{code}: {result}"
        );
        assert_eq!(text(&result), *expected, "{code}");
    }
    // Output printed before a failure follows the error in a second block.
    let failed = eval(&mut client, "printed", "print(\"before\"); throw 1");
    assert_eq!(failed["content"][1]["text"], "[Output]\nbefore\n");
}

#[test]
fn the_sandbox_refuses_eval_import_and_oversized_data() {
    let mut client = Client::start();
    let table: &[(&str, &str)] = &[
        ("eval(\"1\")", "[ERROR] PARSE-ERROR\n"),
        ("import \"file\" as f;", "[ERROR] PARSE-ERROR\n"),
        (
            "let s = \"x\"; loop { s += s; }",
            "[ERROR] DATA-TOO-LARGE\n",
        ),
        ("let a = []; a.pad(1000000, 0);", "[ERROR] DATA-TOO-LARGE\n"),
        (
            "let a = [1]; for i in 0..200 { a = [a]; }",
            "[ERROR] VALUE-TOO-DEEP\n",
        ),
    ];
    for (id, (code, kind)) in table.iter().enumerate() {
        let result = eval(&mut client, id, code);
        assert!(is_error(&result), "{code}: {result}");
        assert!(text(&result).starts_with(kind), "{code}: {result}");
    }
    assert_eq!(text(&eval(&mut client, "alive", "1")), "=> 1");
}

#[test]
fn an_infinite_loop_is_stopped_while_the_server_keeps_answering() {
    let mut client = Client::start();
    client.call(1, "evaluate", json!({"code": "loop {}"}));
    client.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    client.call(3, "calculate", json!({"expression": "2 + 3 * 4"}));
    let first = client.next();
    assert_eq!(first["id"], 2, "the ping is answered first: {first}");
    assert_eq!(first["result"], json!({}));
    let second = client.next();
    assert_eq!(second["id"], 3, "the other tool call too: {second}");
    assert_eq!(text(&second["result"]), "14");
    let looped = client.reply(1)["result"].clone();
    assert!(is_error(&looped), "{looped}");
    assert!(
        text(&looped).starts_with("[ERROR] TOO-MANY-OPERATIONS\n")
            || text(&looped).starts_with("[ERROR] TIMEOUT\n"),
        "{looped}"
    );
}

#[test]
fn the_time_limit_stops_a_slow_script() {
    let mut client = Client::start();
    let started = Instant::now();
    let result = eval(&mut client, 1, SLOW);
    assert!(
        text(&result).starts_with(
            "[ERROR] TIMEOUT\nthe script ran longer than the time limit of 5 s\n\n[Position]\n"
        ),
        "{result}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn cancellation_stops_a_running_script() {
    let mut client = Client::start();
    client.call(1, "evaluate", json!({"code": SLOW}));
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    client.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId": 1, "reason": "test"}}));
    // The next call of the session waits for the session: it is answered quickly only if
    // the cancelled script has really stopped (left alone it would run for 5 s).
    client.call(2, "evaluate", json!({"code": "1 + 1"}));
    let next = client.next();
    assert_eq!(
        next["id"], 2,
        "no response to the cancelled request: {next}"
    );
    assert_eq!(text(&next["result"]), "=> 2");
    assert!(
        cancelled.elapsed() < Duration::from_millis(2500),
        "the script stopped when cancelled ({:?})",
        cancelled.elapsed()
    );
    client.send(json!({"jsonrpc":"2.0","id":3,"method":"ping"}));
    assert_eq!(client.next()["id"], 3, "still serving");
    // Nothing for request 1, even after it would have hit the time limit.
    let late = client.next_within(Duration::from_secs(6).saturating_sub(cancelled.elapsed()));
    assert!(late.is_none(), "a reply to the cancelled request: {late:?}");
}

#[test]
fn deeply_nested_values_do_not_crash_the_server() {
    // 2,000 levels overflowed a 2 MiB stack: Rhai clones, compares and drops arrays
    // recursively. (`take` moves instead of cloning, so building the value is quick.)
    let mut client = Client::start();
    let build = "let a = [1]; for i in 0..2500 { a = [take(a)]; }";
    let kept = eval(&mut client, 1, &format!("{build} a.len()"));
    assert!(
        text(&kept).starts_with("[ERROR] VALUE-TOO-DEEP\n"),
        "{kept}"
    );
    let dropped = eval(
        &mut client,
        2,
        &format!("{build} let n = a.len(); a = (); n"),
    );
    assert_eq!(text(&dropped), "=> 1");
    let shown = eval(&mut client, 3, &format!("{{ {build} print(a == a); a }}"));
    assert_eq!(
        text(&shown),
        "true\n=> <array nested more than 128 levels deep>"
    );
    assert_eq!(text(&eval(&mut client, 4, "1 + 1")), "=> 2");
    assert!(client.finish(), "exits 0 on EOF");
}

#[test]
fn sleep_is_stopped_by_the_time_limit_and_the_session_goes_on() {
    let mut client = Client::start();
    eval(&mut client, 1, "let x = 1;");
    let started = Instant::now();
    let slept = eval(&mut client, 2, "sleep(100000)");
    assert!(text(&slept).starts_with(TIMED_OUT), "{slept}");
    // The 5 s limit, with room for a loaded machine.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(text(&eval(&mut client, 3, "x + 1")), "=> 2");
    assert!(client.finish(), "exits 0 on EOF");
}

#[test]
fn cancellation_stops_a_sleep_and_a_callback() {
    let mut client = Client::start();
    for (id, code) in [(1, "sleep(100000)"), (3, NESTED_MAP)] {
        client.call(id, "evaluate", json!({"code": code}));
        std::thread::sleep(Duration::from_millis(300));
        let cancelled = Instant::now();
        client.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId": id, "reason": "test"}}));
        // Answered only once the cancelled script has stopped and freed the session.
        client.call(id + 1, "evaluate", json!({"code": "1 + 1"}));
        let next = client.next();
        assert_eq!(next["id"], id + 1, "{code}: {next}");
        assert_eq!(text(&next["result"]), "=> 2");
        assert!(
            cancelled.elapsed() < Duration::from_millis(2500),
            "{code}: stopped {:?} after the cancellation",
            cancelled.elapsed()
        );
    }
}

#[test]
fn timed_out_calls_leave_no_thread_behind() {
    let server = HttpServer::start();
    let idle = server.threads();
    assert_eq!(text(&server.eval("1")), "=> 1");
    // Stateless calls: sessions of their own, so only the server-wide limit holds them back.
    let mut codes = vec!["sleep(100000)"; 26];
    codes.extend(["sleep(1e9)", "sleep(100000.0)", NESTED_MAP, NESTED_MAP]);
    let started = Instant::now();
    let calls: Vec<_> = codes
        .into_iter()
        .map(|code| {
            let addr = server.addr.clone();
            std::thread::spawn(move || (code, http_eval(&addr, code)))
        })
        .collect();
    let mut timed_out = 0;
    for call in calls {
        let (code, result) = call.join().expect("the call's thread");
        let text = text(&result);
        if text.starts_with(TIMED_OUT) {
            timed_out += 1;
        } else {
            assert!(text.starts_with(BUSY), "{code}: {result}");
        }
    }
    // Each of the six slots ran a script to its time limit at least once; the rest waited
    // for one as long as a script may run, then were told the server is busy.
    assert!(timed_out >= 6, "{timed_out} of 30 timed out");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // Each script's thread ends with it (a thread left per call had a 256 MiB stack).
    let deadline = Instant::now() + Duration::from_secs(3);
    while server.threads() > idle + 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = server.threads();
    assert!(
        left <= idle + 2,
        "{left} threads after 30 calls, {idle} before"
    );
    assert_eq!(text(&server.eval("2")), "=> 2", "still serving");
}

/// Thirty clients each start a script that holds about 48 MB for seconds, most of them
/// hanging up at once: at most six scripts run at a time, so the process stays far under
/// 512 MiB in all (it reached 1.4 GB when nothing bounded the scripts together), and it
/// still answers afterwards.
#[test]
fn memory_hungry_scripts_are_bounded_together() {
    // 30 arrays of 100,000 numbers (16 bytes each in Rhai): about 48 MB, each within the
    // size limits, held for 3 s (in a block: the session keeps none of it).
    let hold: String = ["{ ".to_owned()]
        .into_iter()
        .chain((0..30).map(|n| format!("let v{n} = []; v{n}.pad(100000, {n}); ")))
        .chain(["sleep(3); v29.len() }".to_owned()])
        .collect();
    let server = HttpServer::start();
    let calls: Vec<_> = (0..30)
        .map(|n| {
            let addr = server.addr.clone();
            let hold = hold.clone();
            std::thread::spawn(move || {
                if n % 3 == 0 {
                    // Waits for its answer: a result, or the busy error.
                    let result = http_eval(&addr, &hold);
                    let text = text(&result);
                    assert!(text == "=> 100000" || text.starts_with(BUSY), "{result}");
                } else {
                    http_send_and_hang_up(&addr, &hold);
                }
            })
        })
        .collect();
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(8);
    while Instant::now() < until {
        peak = peak.max(server.peak_rss_kib());
        std::thread::sleep(Duration::from_millis(100));
    }
    for call in calls {
        call.join().expect("the call's thread");
    }
    peak = peak.max(server.peak_rss_kib());
    eprintln!("30 memory-hungry scripts: the server's RSS peaked at {peak} KiB");
    assert!(peak < 512 << 10, "the server's RSS peaked at {peak} KiB");
    assert_eq!(text(&server.eval("3")), "=> 3", "still serving");
}

#[test]
fn growing_data_is_stopped_by_the_size_and_memory_limits() {
    let server = HttpServer::start();
    let table: &[(&str, &str)] = &[
        // Rhai checks the value of `m[key] = value`, not the map it goes into.
        (
            "let m = #{}; let i = 0; loop { m[`k${i}`] = i; i += 1; }",
            "[ERROR] DATA-TOO-LARGE\nSize of object map too large\n",
        ),
        (
            "let a = []; a.pad(100000, 0); let m = #{}; let i = 0; \
             loop { m[`${i}`] = a; i += 1; }",
            "[ERROR] DATA-TOO-LARGE\nSize of array/BLOB too large\n",
        ),
        // Keys of 100 kB: within the map's 10,000 properties, not counted by Rhai.
        (
            "let k = \"k\"; k.pad(100000, \"k\"); let m = #{}; let i = 0; \
             loop { m[k + i] = i; i += 1; }",
            "[ERROR] MEMORY-LIMIT\nthe script held more than 64 MiB of memory at once\n",
        ),
        // Strings of 1 MiB collected by `map`, out of reach of any variable.
        (
            "let a = []; a.pad(100000, 0); \
             a.map(|x| { let s = \"12345678\"; for j in 0..17 { s += s; } s }).len()",
            "[ERROR] MEMORY-LIMIT\nthe script held more than 64 MiB of memory at once\n",
        ),
        // 20,000 times 20,000 bytes, refused before it is built.
        (
            "let s = \"a\"; s.pad(20000, \"a\"); s.replace(\"a\", s); s.len()",
            "[ERROR] DATA-TOO-LARGE\nLength of string too large\n",
        ),
    ];
    for (code, expected) in table {
        let started = Instant::now();
        let result = server.eval(code);
        assert!(text(&result).starts_with(expected), "{code}: {result}");
        // Stopped by the limit, well before the time limit would have.
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{code}: {:?}",
            started.elapsed()
        );
        let peak = server.peak_rss_kib();
        assert!(
            peak < 200 << 10,
            "{code}: the server's RSS peaked at {peak} KiB"
        );
    }
}

/// A running `ferry serve --http 127.0.0.1:0`, killed when dropped.
struct HttpServer {
    child: Child,
    /// The address it listens on.
    addr: String,
}

impl HttpServer {
    /// Start it and read the address from its banner; the rest of stderr is drained.
    fn start() -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ferry serve --http");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut banner = String::new();
        stderr.read_line(&mut banner).expect("banner");
        let addr = banner
            .trim()
            .strip_prefix("ferry serve: MCP on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("banner {banner:?}"))
            .to_owned();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServer { child, addr }
    }

    /// A stateless `evaluate` of `code`; the result.
    fn eval(&self, code: &str) -> Value {
        http_eval(&self.addr, code)
    }

    /// The threads of the process.
    fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.child.id()))
            .expect("/proc/PID/task")
            .count()
    }

    /// The peak resident memory of the process, in KiB (`VmHWM`).
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
            .unwrap_or_else(|| panic!("no VmHWM in {status}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The beginning of the busy error.
const BUSY: &str = "[ERROR] SERVER-BUSY\n";

/// POST a stateless `tools/call` of `evaluate` with `code` to `addr`, and close the
/// connection without reading the answer.
fn http_send_and_hang_up(addr: &str, code: &str) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(eval_request(addr, code).as_bytes())
        .expect("send");
}

/// The HTTP request of a stateless `tools/call` of `evaluate` with `code`.
fn eval_request(addr: &str, code: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "evaluate", "arguments": {"code": code},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: evaluate\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// POST a stateless `tools/call` of `evaluate` with `code` to `addr`; the result.
fn http_eval(addr: &str, code: &str) -> Value {
    let request = eval_request(addr, code);
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(support::WAIT))
        .expect("read timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("no response to {code:?}: {e}"));
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{response}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    // A JSON body, or the `data:` line of an event stream.
    let json = body
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .find(|line| line.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON in {response}"));
    let reply: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    reply
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("not a result: {reply}"))
}
