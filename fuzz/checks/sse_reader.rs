//! `sse_reader`: the HTTP client's SSE reading (`http_client::sse::events`, then
//! `message_data` and `response_id` on each event) never panics, and a body cut into
//! chunks anywhere gives the same events as the body in one piece, and no body breaks the
//! stream (lines the SSE standard ignores are ignored). With a limit smaller
//! than the body, reading ends (events, then at most one error) without a panic.

use std::sync::OnceLock;

use ferry::http_client::fuzzing::{Event, events};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// Cut `body` into chunks of 1 to 16 bytes, the lengths drawn from `seed`.
fn chunks(body: &[u8], seed: u8) -> Vec<Vec<u8>> {
    let mut state = u32::from(seed) | 1;
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let len = ((state >> 16) as usize % 16 + 1).min(rest.len());
        out.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
    out
}

/// Check every property on `data`: its first byte chooses the cuts, the rest is the body.
pub fn check(data: &[u8]) {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let rt = runtime();
    let whole = rt.block_on(events(vec![body.to_vec()], usize::MAX));
    let cut = rt.block_on(events(chunks(body, seed), usize::MAX));
    let bytes = rt.block_on(events(body.iter().map(|&b| vec![b]).collect(), usize::MAX));
    // Whatever the body, the reader takes it: lines it cannot use are dropped, as the
    // SSE standard says, and never break the stream.
    assert!(whole.iter().all(Result::is_ok), "{whole:?}: {body:?}");
    assert_eq!(cut, whole, "cut with seed {seed}: {body:?}");
    assert_eq!(bytes, whole, "byte by byte: {body:?}");
    for event in whole.iter().flatten() {
        check_event(event);
    }
    // Limited: at most one error, last.
    let limited = rt.block_on(events(chunks(body, seed), body.len() / 2));
    if let Some(i) = limited.iter().position(Result::is_err) {
        assert_eq!(i + 1, limited.len(), "{limited:?}");
    }
}

fn check_event(event: &Event) {
    if let Some(message) = &event.message {
        assert!(
            matches!(event.event.as_deref(), None | Some("message")),
            "{event:?}"
        );
        assert_eq!(
            Some(message.as_slice()),
            event.data.as_deref().map(str::as_bytes)
        );
        assert!(
            !String::from_utf8_lossy(message).trim().is_empty(),
            "{event:?}"
        );
    } else {
        assert!(
            event.event.as_deref().is_some_and(|e| e != "message")
                || event.data.as_deref().is_none_or(|d| d.trim().is_empty()),
            "{event:?}"
        );
    }
    if let Some(id) = &event.response_id {
        // The probe for the id reads the members as serde's skim does (other values raw,
        // so a lone surrogate in them passes, as in the engine's classification): so does
        // this reference.
        let message = event.message.as_deref().expect("a message");
        let text = std::str::from_utf8(message).expect("UTF-8");
        let members: indexmap::IndexMap<String, &serde_json::value::RawValue> =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{event:?}: {e}"));
        assert!(!members.contains_key("method"), "{event:?}");
        let raw = members.get("id").unwrap_or_else(|| panic!("{event:?}"));
        assert_eq!(
            serde_json::from_str::<ferry_protocol::RequestId>(raw.get())
                .ok()
                .as_ref(),
            Some(id),
            "{event:?}"
        );
    }
}
