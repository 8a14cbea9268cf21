//! `oauth_parse`: what the OAuth client reads from servers never makes it panic:
//! `WWW-Authenticate` headers (`BearerChallenge::find`), Protected Resource Metadata and
//! authorization server metadata (as discovery reads them), JWKS documents (as the
//! resource server's verifier reads them), and the URL checks on what they hold.
//!
//! Properties besides: a `Bearer` challenge written with quoted parameters (after another
//! scheme's challenge) reads back as written; endpoints accepted strictly (HTTPS or
//! loopback) are accepted when plain HTTP is allowed; a secure-enough URL parses; the
//! metadata locations of an issuer are on its origin; an `http(s)` server's canonical URI
//! is a resource it matches. The loopback authorizer's listener takes a request as the
//! redirect only for `GET /callback` with the expected `state`, and reads back a redirect
//! query written with any code and state; a resource's canonical URI is stable, and a
//! token whose audience is that URI (or the URL itself) names the resource.

use ferry::http::auth::fuzzing::{canonical_and_path, jwks_keys, same_resource};
use ferry::http_client::oauth::BearerChallenge;
use ferry::http_client::oauth::fuzzing as discovery;

/// Check every property on `data`.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // Each line a header value.
    let headers: Vec<String> = text.lines().map(str::to_owned).collect();
    let _ = BearerChallenge::find(&headers);
    challenge_round_trip(&text);
    // The whole input as each JSON document.
    let _ = discovery::resource_metadata(data);
    if let Ok((_, _, strict, lax)) = discovery::server_metadata(data) {
        assert!(!strict || lax, "{text:?}");
    }
    let _ = jwks_keys(data);
    loopback(&text);
    // Each line as a URL, and pairs of lines as (resource, server).
    for (i, line) in headers.iter().enumerate().take(8) {
        if discovery::secure_enough(line) {
            assert!(url_parses(line), "{line:?}");
        }
        if let Some((locations, origin, canonical)) = discovery::locations(line) {
            for location in &locations {
                assert!(location.starts_with(&origin), "{location:?} of {line:?}");
            }
            let plain = line.split_once(':').is_some_and(|(s, _)| {
                s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https")
            });
            if plain && !canonical.contains('#') {
                assert_eq!(
                    discovery::resource_matches(&canonical, line),
                    Some(true),
                    "{line:?}"
                );
            }
        }
        if let Some(next) = headers.get(i + 1) {
            let _ = discovery::resource_matches(line, next);
            let _ = same_resource(line, next);
        }
        if let Some((canonical, path)) = canonical_and_path(line) {
            assert!(
                path.starts_with("/.well-known/oauth-protected-resource"),
                "{line:?}"
            );
            // A token whose audience is the canonical URI itself names the resource.
            let web = line
                .get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("http:"))
                || line
                    .get(..6)
                    .is_some_and(|s| s.eq_ignore_ascii_case("https:"));
            if web {
                assert!(
                    same_resource(&canonical, &canonical),
                    "{line:?} -> {canonical:?}"
                );
            }
        }
    }
}

/// The loopback listener: the whole input as a request head (its state the first line's
/// last word), then a redirect query built from two of the input's lines.
fn loopback(text: &str) {
    let state = text.split_whitespace().last().unwrap_or("s");
    if let Ok(response) = discovery::loopback_judge(text, state) {
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("GET /callback"), "{text:?}");
        assert_eq!(response.state.as_deref(), Some(state), "{text:?}");
    }
    let mut lines = text.lines();
    let (Some(code), Some(state)) = (lines.next(), lines.next()) else {
        return;
    };
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("code", code)
        .append_pair("state", state)
        .finish();
    let head = format!("GET /callback?{query} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    let response =
        discovery::loopback_judge(&head, state).unwrap_or_else(|s| panic!("{s} {head:?}"));
    assert_eq!(response.code(), Some(code), "{head:?}");
}

fn url_parses(text: &str) -> bool {
    discovery::locations(text).is_some()
}

/// `Basic realm="…", Bearer resource_metadata="…", scope="…", error="…"` reads back.
fn challenge_round_trip(text: &str) {
    let mut parts = text.split('\u{1}');
    let (Some(a), Some(b), Some(c)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    // Header values hold visible characters, spaces and tabs only.
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect()
    };
    let (a, b, c) = (clean(a), clean(b), clean(c));
    let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let header = format!(
        "Basic realm=\"{}\", Bearer resource_metadata=\"{}\", scope=\"{}\", error=\"{}\"",
        quote(&c),
        quote(&a),
        quote(&b),
        quote(&c)
    );
    let found = BearerChallenge::find(std::slice::from_ref(&header))
        .unwrap_or_else(|| panic!("{header:?}"));
    assert_eq!(
        found.resource_metadata.as_deref(),
        Some(a.as_str()),
        "{header:?}"
    );
    assert_eq!(found.scope.as_deref(), Some(b.as_str()), "{header:?}");
    assert_eq!(found.error.as_deref(), Some(c.as_str()), "{header:?}");
}
