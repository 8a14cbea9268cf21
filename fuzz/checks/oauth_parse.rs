//! `oauth_parse`: what the OAuth client reads from servers never makes it panic:
//! `WWW-Authenticate` headers (`BearerChallenge::find`), Protected Resource Metadata and
//! authorization server metadata (as discovery reads them), JWKS documents (as the
//! resource server's verifier reads them), and the URL checks on what they hold.
//!
//! Properties besides: a `Bearer` challenge written with quoted parameters (after another
//! scheme's challenge) reads back as written; endpoints accepted strictly (HTTPS or
//! loopback) are accepted when plain HTTP is allowed; a secure-enough URL parses; the
//! metadata locations of an issuer are on its origin; an `http(s)` server's canonical URI
//! is a resource it matches.

use ferry::http::auth::fuzzing::jwks_keys;
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
        }
    }
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
