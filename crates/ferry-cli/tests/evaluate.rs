//! `evaluate` (seed 000, in Rhai) through `ferry serve` on stdio: persistent sessions,
//! isolation, the seed's error layout, limits, responsiveness and cancellation.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, is_error, text};

/// A script that would run until the time limit (5 s): each step is one operation that
/// does a lot of work, so the operation limit is far away.
const SLOW: &str = "loop { let a = []; a.pad(100000, 0); }";

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
