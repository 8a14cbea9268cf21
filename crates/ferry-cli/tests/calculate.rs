//! `calculate` and `get_timestamp` (seed 001) through `ferry serve` on stdio.

mod support;

use serde_json::json;
use support::{Client, is_error, text};

#[test]
fn calculate_evaluates_a_table_of_expressions() {
    let mut client = Client::start();
    let table: &[(&str, &str)] = &[
        ("2 + 3 * 4", "14"), // the seed's example and answer
        ("(2 + 3) * 4", "20"),
        ("10 - 4 - 3", "3"),
        ("2 ^ 3 ^ 2", "512"),
        ("-2 ^ 2", "-4"),
        ("(-2) ^ 2", "4"),
        ("2 ^ -1", "0.5"),
        ("-(3 - 5) * +2", "4"),
        ("7 % 4", "3"),
        ("-7 % 4", "-3"),
        ("1.5e3 / 2", "750"),
        ("0.1 + 0.2", "0.30000000000000004"),
        ("1e21", "1e+21"),
        ("  1 /\t8  ", "0.125"),
    ];
    for (id, (expression, expected)) in table.iter().enumerate() {
        let result = client.call_result(id, "calculate", json!({"expression": expression}));
        assert!(!is_error(&result), "{expression}: {result}");
        assert_eq!(text(&result), *expected, "{expression}");
    }
    assert!(client.finish(), "exits 0 on EOF");
}

#[test]
fn calculate_failures_are_tool_errors_with_positions() {
    let mut client = Client::start();
    let table: &[(&str, &str)] = &[
        ("", "Error: expression is required"),
        ("1 / 0", "Error: division by zero at position 3"),
        ("5 % 0", "Error: modulo by zero at position 3"),
        (
            "2 +",
            "Error: expected a number or '(', found end of expression at position 4",
        ),
        (
            "(1 + 2",
            "Error: expected ')' to close the '(' at position 1, found end of expression at position 7",
        ),
        ("1 + 2)", "Error: unmatched ')' at position 6"),
        (
            "2 3",
            "Error: unexpected number 3 after a complete expression at position 3",
        ),
        (
            "process.exit()",
            "Error: unexpected character 'p' at position 1",
        ),
        (
            "1e308 * 10",
            "Error: overflow: the result is not a finite number at position 7",
        ),
        (
            "(-1) ^ 0.5",
            "Error: the result is not a real number at position 6",
        ),
    ];
    for (id, (expression, expected)) in table.iter().enumerate() {
        let result = client.call_result(id, "calculate", json!({"expression": expression}));
        assert!(is_error(&result), "{expression}: {result}");
        assert_eq!(text(&result), *expected, "{expression}");
    }
    let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
    let result = client.call_result("deep", "calculate", json!({"expression": deep}));
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Error: expression nested too deeply (limit 256) at position 257"
    );
    // A missing argument is a protocol error in 2025-06-18.
    client.call("missing", "calculate", json!({}));
    assert_eq!(client.reply("missing")["error"]["code"], -32602);
}

#[test]
fn tools_are_listed_with_the_seed_schema() {
    let mut client = Client::start();
    client.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let tools = client.reply(1)["result"]["tools"].clone();
    let tool = |name: &str| {
        tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed: {tools}"))
    };
    let calculate = tool("calculate");
    assert_eq!(calculate["inputSchema"]["required"], json!(["expression"]));
    assert_eq!(
        calculate["inputSchema"]["properties"]["expression"]["type"],
        "string"
    );
    assert_eq!(tool("get_timestamp")["inputSchema"]["type"], "object");
}

#[test]
fn get_timestamp_is_iso_8601_utc_with_milliseconds() {
    let mut client = Client::start();
    let result = client.call_result(1, "get_timestamp", json!({}));
    assert!(!is_error(&result), "{result}");
    let stamp = text(&result);
    // 2025-06-18T09:05:03.042Z
    assert_eq!(stamp.len(), 24, "{stamp}");
    for (i, c) in stamp.char_indices() {
        let expected = match i {
            4 | 7 => c == '-',
            10 => c == 'T',
            13 | 16 => c == ':',
            19 => c == '.',
            23 => c == 'Z',
            _ => c.is_ascii_digit(),
        };
        assert!(expected, "{stamp}: character {i}");
    }
    assert!(stamp >= "2025", "{stamp}");
    // No arguments needed at all.
    client.send(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_timestamp"}}),
    );
    assert!(!is_error(&client.reply(2)["result"]));
}
