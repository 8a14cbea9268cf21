//! `ferry serve --conformance` against the server scenarios of the official MCP conformance
//! suite (`@modelcontextprotocol/conformance` 0.1.16), replayed over stdio.
//!
//! The suite itself drives a server over Streamable HTTP only (`conformance server --url
//! <url> [--scenario <name>]`): `tests/conformance_suite/` runs it against `ferry serve
//! --conformance --http`. Here each scenario is replayed over stdio as the suite plays it: a fresh session per scenario (a new process), the suite client's
//! capabilities (`sampling` and `elicitation`), the same requests with the same arguments,
//! the same answers to the server's requests, and at least the same assertions (usually
//! stricter: exact texts, MIME types and data). Each scenario runs at every revision it
//! lists (`specVersions`) that the suite's client can negotiate.
//!
//! [`SUITE`] lists every server scenario of the suite with how it is covered.

mod client;
mod elicitation;
mod resources;
mod tools;

use std::time::Duration;

use serde_json::json;

use client::{block, replay, text};

/// Both session-era revisions the suite's scenarios are written for.
const BOTH: &[&str] = &["2025-06-18", "2025-11-25"];

/// Scenarios the suite runs at 2025-11-25 only.
const LATEST: &[&str] = &["2025-11-25"];

/// How long to wait for one message from the server.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// How a scenario of the suite is covered here.
#[derive(Debug, PartialEq)]
pub(crate) enum Coverage {
    /// Replayed over stdio in full.
    Replayed,
    /// Its fixture is replayed; the rest checks the Streamable HTTP transport.
    FixtureOnly(&'static str),
    /// Checks only the Streamable HTTP transport: nothing to replay over stdio.
    HttpOnly(&'static str),
}

/// Every server scenario of the suite (`conformance list --server`, 0.1.16), in the
/// suite's order, with its `specVersions` and coverage. `json-schema-2020-12` and
/// `server-sse-polling` are in the suite's `pending` set, the rest in `active`.
pub(crate) const SUITE: &[(&str, &[&str], Coverage)] = &[
    ("server-initialize", BOTH, Coverage::Replayed),
    ("logging-set-level", BOTH, Coverage::Replayed),
    ("ping", BOTH, Coverage::Replayed),
    ("completion-complete", BOTH, Coverage::Replayed),
    ("tools-list", BOTH, Coverage::Replayed),
    ("tools-call-simple-text", BOTH, Coverage::Replayed),
    ("tools-call-image", BOTH, Coverage::Replayed),
    ("tools-call-audio", BOTH, Coverage::Replayed),
    ("tools-call-embedded-resource", BOTH, Coverage::Replayed),
    ("tools-call-mixed-content", BOTH, Coverage::Replayed),
    ("tools-call-with-logging", BOTH, Coverage::Replayed),
    ("tools-call-error", BOTH, Coverage::Replayed),
    ("tools-call-with-progress", BOTH, Coverage::Replayed),
    ("tools-call-sampling", BOTH, Coverage::Replayed),
    ("tools-call-elicitation", BOTH, Coverage::Replayed),
    ("json-schema-2020-12", LATEST, Coverage::Replayed),
    ("elicitation-sep1034-defaults", LATEST, Coverage::Replayed),
    (
        "server-sse-polling",
        LATEST,
        Coverage::FixtureOnly(
            "test_reconnection answers; closing the POST SSE stream mid-call, the priming \
             event, `retry` and resuming with Last-Event-ID need the HTTP transport",
        ),
    ),
    (
        "server-sse-multiple-streams",
        LATEST,
        Coverage::FixtureOnly(
            "three concurrent tools/list are answered; that each comes on its own POST (SSE \
             or JSON) needs the HTTP transport",
        ),
    ),
    ("elicitation-sep1330-enums", LATEST, Coverage::Replayed),
    ("resources-list", BOTH, Coverage::Replayed),
    ("resources-read-text", BOTH, Coverage::Replayed),
    ("resources-read-binary", BOTH, Coverage::Replayed),
    ("resources-templates-read", BOTH, Coverage::Replayed),
    ("resources-subscribe", BOTH, Coverage::Replayed),
    ("resources-unsubscribe", BOTH, Coverage::Replayed),
    ("prompts-list", BOTH, Coverage::Replayed),
    ("prompts-get-simple", BOTH, Coverage::Replayed),
    ("prompts-get-with-args", BOTH, Coverage::Replayed),
    ("prompts-get-embedded-resource", BOTH, Coverage::Replayed),
    ("prompts-get-with-image", BOTH, Coverage::Replayed),
    (
        "dns-rebinding-protection",
        LATEST,
        Coverage::HttpOnly(
            "Host/Origin validation of the HTTP transport (4xx for evil.example.com)",
        ),
    ),
];

/// The suite's client, talking to `ferry serve --conformance` over stdio.
#[test]
fn the_suite_list_is_complete_and_every_scenario_is_accounted_for() {
    assert_eq!(SUITE.len(), 32, "0.1.16 has 32 server scenarios");
    let mut names: Vec<_> = SUITE.iter().map(|(n, _, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), SUITE.len(), "no scenario twice");
    for (name, _, coverage) in SUITE {
        if *coverage != Coverage::Replayed {
            eprintln!("{name}: {coverage:?}");
        }
    }
}

#[test]
fn server_initialize() {
    replay("server-initialize", |c| {
        let result = c.initialized.clone();
        assert_eq!(result["serverInfo"]["name"], "ferry-conformance");
        assert!(result["serverInfo"]["version"].is_string());
        let capabilities = &result["capabilities"];
        for key in ["tools", "resources", "prompts", "logging", "completions"] {
            assert!(capabilities[key].is_object(), "{key}: {result}");
        }
        assert_eq!(capabilities["resources"]["subscribe"], true);
    });
}

#[test]
fn logging_set_level() {
    replay("logging-set-level", |c| {
        assert_eq!(
            c.ok("logging/setLevel", json!({"level": "info"})),
            json!({})
        );
    });
}

#[test]
fn ping() {
    replay("ping", |c| assert_eq!(c.ok("ping", json!({})), json!({})));
}

#[test]
fn completion_complete() {
    replay("completion-complete", |c| {
        let result = c.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "test"}}),
        );
        let values = result["completion"]["values"].as_array().expect("values");
        assert_eq!(values, &[json!("testValue1"), json!("testValue2")]);
        let result = c.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
                   "argument": {"name": "id", "value": "1"}}),
        );
        assert_eq!(result["completion"]["values"], json!(["123"]));
    });
}

#[test]
fn server_sse_polling_fixture() {
    replay("server-sse-polling", |c| {
        let result = c.call_tool("test_reconnection", json!({}));
        assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
        assert!(text(block(&result, "text")).starts_with("Reconnection test completed"));
    });
}

#[test]
fn server_sse_multiple_streams_fixture() {
    replay("server-sse-multiple-streams", |c| {
        let ids: Vec<_> = (0..3).map(|_| c.start("tools/list", json!({}))).collect();
        for id in ids {
            let result = c.wait(id).expect("tools/list");
            assert!(result["tools"].is_array());
        }
    });
}
