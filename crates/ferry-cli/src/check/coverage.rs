//! What `ferry check` covers: every requirement of the test-oriented spec (seed 004,
//! revision 2025-03-26) that binds a server, with the check that tests it — or why no
//! check can — then the checks beyond it (later revisions, the HTTP transport). The test
//! below keeps this table and the code in step: every id named here exists, and every
//! requirement the checker has is named here.
//!
//! # Seed 004, requirement by requirement
//!
//! | § | Requirement (server side) | Checked by |
//! |---|---|---|
//! | 1.1.1 | requests follow JSON-RPC 2.0; a string or integer id, not null; a method string | `jsonrpc.invalid-request`, `jsonrpc.null-id`, `jsonrpc.params-not-structured`, `jsonrpc.parse-error` |
//! | 1.1.1 | ids unique within a session | client side (the checker's own ids are unique) |
//! | 1.1.2 | a response has the request's id, a result or an error (not both), an error has a code and message | `jsonrpc.response-shape`, `jsonrpc.string-id`, `jsonrpc.method-not-found`, `jsonrpc.one-response-per-request` |
//! | 1.1.3 | notifications have no id, have a method | `jsonrpc.notification-no-id`, `shapes.notifications`; the server never answers one: `jsonrpc.notification-unanswered`, `jsonrpc.response-unanswered` |
//! | 1.1.4 | batches received (MUST, 2025-03-26) | `jsonrpc.batch-supported`; other revisions refuse them: `jsonrpc.batch-refused` |
//! | 1.2.1 | stdio: newline-delimited messages without embedded newlines, nothing else on stdout | `stdio.stdout-only-messages` (a message with an embedded newline arrives as lines that are not JSON), `stdio.stays-up` |
//! | 1.2.1 | stderr may carry logs; the client launches the server and writes only messages | not a server requirement (the checker does so) |
//! | 1.2.2 | one endpoint for POST and GET; GET answers an SSE stream or 405 | `http.reachable`, `http.get-sse-or-405`, `http.get-accept-406` |
//! | 1.2.2 | Accept lists both types (client); a server refuses one that does not | `http.post-accept-406` |
//! | 1.2.2 | only responses/notifications POSTed: 202 without a body | `http.notification-202` |
//! | 1.2.2 | a POSTed request: Content-Type application/json or text/event-stream; one response per request on the stream | `http.request-content-type`, `jsonrpc.one-response-per-request` |
//! | 1.2.2 | no response on the GET stream unless resuming; each message on only one stream | `http.resume-same-stream` where a stream is resumed; otherwise not checkable: nothing makes a server write on its standalone stream |
//! | 1.2.3 | session id of visible ASCII | `http.session-id-visible-ascii` |
//! | 1.2.3 | session id globally unique and cryptographically secure (SHOULD) | not checkable: randomness cannot be judged from a few samples |
//! | 1.2.3 | 400 without the session id; 404 once it ended; DELETE ends it | `http.missing-session-400`, `http.unknown-session-404`, `http.delete-ends-session` |
//! | 1.3 | authorization: 401 when required, OAuth 2.1, metadata discovery, bearer tokens | not checked: the checker authorizes as the client commands do (`--header`, OAuth) to reach a server that requires it, but does not judge the server's side of it (without credentials, `lifecycle.initialize-answered` fails with the 401 as evidence); the official conformance suite's auth scenarios cover it |
//! | 1.4.1 | initialize answered with protocol version, capabilities, server info | `lifecycle.initialize-answered`, `lifecycle.initialize-result-shape` |
//! | 1.4.1 | requests before initialize (SHOULD NOT) | `lifecycle.request-before-initialize`; a second initialize: `lifecycle.second-initialize` |
//! | 1.4.1 | the server sends no request but ping and logging before `initialized` (SHOULD NOT) | not checkable: the checker sends `initialized` at once, and a server request is answered whenever it comes |
//! | 1.4.2 | the requested version if supported, else another supported one | `lifecycle.initialize-answered`, `lifecycle.unsupported-version-counter-offer`, `lifecycle.counter-offer-served`, `lifecycle.same-version-again` |
//! | 1.4.3 | capabilities declared and respected | `capabilities.declared-is-served`, `capabilities.undeclared-is-not-served`, `capabilities.undeclared-method-not-found`, `capabilities.client-capabilities-respected`, `lifecycle.same-capabilities-again` |
//! | 1.4.4 | shutdown by closing stdin / the HTTP connection | not a server requirement (the checker shuts down so) |
//! | 2.1.1, 2.2.1, 2.3.1 | a server with resources, prompts, tools declares the capability | `capabilities.undeclared-is-not-served`, `capabilities.declared-is-served` |
//! | 2.1.2, 2.1.4, 2.2.2, 2.3.2 | lists carry their arrays; items their required fields | `shapes.list-results` (the revision's schema); paging: `pagination.follow-cursor` |
//! | 2.1.3 | read: contents with uri and text or blob | `shapes.read-resource`; mimeType (SHOULD): `shapes.read-mime-type`; an unknown uri: `shapes.unknown-resource` |
//! | 2.1.5 | subscribe needs the subscribe capability | `capabilities.subscribe-honest` (2026-07-28: `stateless.listen-acknowledged`) |
//! | 2.1.5 | notifications/resources/updated when a subscribed resource changes | not checkable: the checker cannot change a resource; one sent without subscribe declared fails `capabilities.list-changed-declared` |
//! | 2.1.6, 2.2.4, 2.3.4 | list_changed needs listChanged declared | `capabilities.list-changed-declared` |
//! | 2.1.6, 2.2.4, 2.3.4 | list_changed sent when a list changes (SHOULD) | not checkable: the checker cannot change a list |
//! | 2.2.3 | get prompt: messages with role and content of the known types | `shapes.get-prompt`; an unknown prompt: `shapes.unknown-prompt` |
//! | 2.3.3 | call tool: content array of the known types, isError | `shapes.call-tool`, `shapes.structured-content`; an unknown tool: `shapes.unknown-tool` |
//! | 3.1, 3.2 | roots and sampling: client features | not a server requirement, except that the server asks only a client that declared them: `capabilities.client-capabilities-respected` |
//! | 4.1 | ping answered promptly with an empty result | `ping.answered-empty` |
//! | 4.2 | cancellation: stop processing (SHOULD); unknown ids may be ignored | `cancellation.no-response-after-cancel`, `cancellation.unknown-request-ignored` |
//! | 4.2 | requestId given, only issued requests, never initialize | client side |
//! | 4.3 | progress: token and value; the value increases; only tokens of active requests | `shapes.notifications`, `progress.increases`, `progress.known-token` (tokens the client sent; whether the request was still active is not tracked) |
//! | 4.4 | logging declared when log messages are sent | `logging.capability-declared` |
//! | 4.4 | setLevel: a minimum level of the RFC 5424 levels | `logging.level-honoured`, `logging.level-filters-a-logging-tool`, `logging.invalid-level`; message shape: `shapes.notifications` |
//! | 4.5 | completions declared; values in the result, at most 100 | `capabilities.declared-is-served`, `shapes.other-results`, `capabilities.completion-at-most-100` |
//! | 4.6 | pagination: nextCursor followed to the end; cursors opaque | `pagination.follow-cursor`, `pagination.invalid-cursor` |
//! | errors | -32002 resource not found, -32602 invalid params, -32601 method not found | `shapes.unknown-resource`, `shapes.unknown-tool`, `shapes.unknown-prompt`, `jsonrpc.method-not-found` |
//!
//! # Beyond seed 004
//!
//! | Revision / part | Checked by |
//! |---|---|
//! | JSON-RPC robustness | `jsonrpc.survives-malformed-input` |
//! | stateless era (2026-07-28): discovery, `_meta`, results | `stateless.discover`, `stateless.unsupported-version`, `stateless.missing-required-meta`, `stateless.result-type`, `stateless.server-info`, `lifecycle.supported-versions-honest` |
//! | stateless era logging | `logging.no-level-no-messages` |
//! | Streamable HTTP, session era | `http.invalid-protocol-version-400` (2025-06-18), `http.resumability`, `http.origin-403`, `http.https-unless-loopback` |
//! | Streamable HTTP, 2026-07-28 | `http.header-mismatch-400`, `http.mcp-method-mismatch-400`, `http.mcp-method-missing-400`, `http.mcp-name-mismatch-400`, `http.unsupported-version-400`, `http.unknown-method-404`, `http.get-delete-405` |

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The ids in backticks in this file's table rows.
    fn table_ids() -> BTreeSet<String> {
        include_str!("coverage.rs")
            .lines()
            .filter(|l| l.starts_with("//! |"))
            .flat_map(|l| l.split('`').skip(1).step_by(2).map(str::to_owned))
            .filter(|id| id.contains('.') && !id.contains(' '))
            .collect()
    }

    /// The ids of every `requirement!` in the checker's sources.
    fn code_ids() -> BTreeSet<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/check");
        let mut ids = BTreeSet::new();
        for entry in std::fs::read_dir(dir).expect("src/check") {
            let path = entry.expect("an entry").path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("coverage.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            for block in text.split("requirement!(").skip(1) {
                // The second argument: the id literal.
                // (The macro's own definition and docs name no dotted id.)
                let id = block.split('"').nth(1).unwrap_or_default();
                if id.contains('.') {
                    ids.insert(id.to_owned());
                }
            }
        }
        ids
    }

    #[test]
    fn the_table_names_every_requirement_and_nothing_else() {
        let table = table_ids();
        let code = code_ids();
        let unknown: Vec<_> = table.difference(&code).collect();
        let missing: Vec<_> = code.difference(&table).collect();
        assert!(
            unknown.is_empty(),
            "named in the table, no such check: {unknown:?}"
        );
        assert!(
            missing.is_empty(),
            "checks missing from the table: {missing:?}"
        );
        assert!(code.len() > 80, "{code:?}");
    }
}
