//! The parts of `ferry serve` that change while it serves, over stdio: `change_tools` and
//! `change_prompts` add and remove `surprise` (each change announced with a list_changed
//! notification, the lists following), and `ferry://clock` is announced to its subscriber
//! by `tick_clock` and by the server's own timer. (`serve_redis` shows the same across
//! instances.)

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, text};

/// Read until a message with `method` arrives (others are dropped), within `wait`.
fn notified(client: &mut Client, method: &str, wait: Duration) -> Value {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = client
            .next_within(left)
            .unwrap_or_else(|| panic!("no {method} within {wait:?}"));
        if message["method"] == method {
            return message;
        }
    }
}

fn request(client: &mut Client, id: u64, method: &str, params: Value) -> Value {
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    client.reply(id)
}

fn names(listed: &Value, key: &str) -> Vec<String> {
    listed["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tools_prompts_and_the_clock_change_while_serving() {
    let mut client = Client::start();
    let wait = Duration::from_secs(10);

    let added = client.call_result(1, "change_tools", json!({"action": "add"}));
    assert_eq!(text(&added), "the tool `surprise`: added");
    notified(&mut client, "notifications/tools/list_changed", wait);
    let listed = request(&mut client, 2, "tools/list", json!({}));
    assert!(
        names(&listed, "tools").contains(&"surprise".to_owned()),
        "{listed}"
    );
    assert_eq!(
        text(&client.call_result(3, "surprise", json!({}))),
        "Surprise!"
    );
    let again = client.call_result(4, "change_tools", json!({"action": "add"}));
    assert_eq!(text(&again), "the tool `surprise`: already there");
    let removed = client.call_result(5, "change_tools", json!({"action": "remove"}));
    assert_eq!(text(&removed), "the tool `surprise`: removed");
    notified(&mut client, "notifications/tools/list_changed", wait);
    let listed = request(&mut client, 6, "tools/list", json!({}));
    assert!(!names(&listed, "tools").contains(&"surprise".to_owned()));

    let added = client.call_result(7, "change_prompts", json!({"action": "add"}));
    assert_eq!(text(&added), "the prompt `surprise`: added");
    notified(&mut client, "notifications/prompts/list_changed", wait);
    let got = request(&mut client, 8, "prompts/get", json!({"name": "surprise"}));
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Surprise me.",
        "{got}"
    );
    client.call_result(9, "change_prompts", json!({"action": "remove"}));
    notified(&mut client, "notifications/prompts/list_changed", wait);
    let listed = request(&mut client, 10, "prompts/list", json!({}));
    assert!(!names(&listed, "prompts").contains(&"surprise".to_owned()));

    // The clock: on demand, then by the timer (every 10 s), to its subscriber only.
    let read = request(
        &mut client,
        11,
        "resources/read",
        json!({"uri": "ferry://clock"}),
    );
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with('Z'),
        "{read}"
    );
    let ticked = client.call_result(12, "tick_clock", json!({}));
    assert_eq!(text(&ticked), "ferry://clock updated");
    assert!(
        client.next_within(Duration::from_millis(300)).is_none(),
        "nothing for a client that did not subscribe"
    );
    request(
        &mut client,
        13,
        "resources/subscribe",
        json!({"uri": "ferry://clock"}),
    );
    client.call_result(14, "tick_clock", json!({}));
    let updated = notified(&mut client, "notifications/resources/updated", wait);
    assert_eq!(updated["params"]["uri"], "ferry://clock");
    let updated = notified(
        &mut client,
        "notifications/resources/updated",
        Duration::from_secs(25),
    );
    assert_eq!(updated["params"]["uri"], "ferry://clock");
    assert!(client.finish());
}
