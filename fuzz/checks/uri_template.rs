//! `uri_template`: RFC 6570 templates parsed and matched without a panic, and matching
//! inverts expansion where the template's form makes it unambiguous.
//!
//! - any template, any URI: parsing and matching end (the matcher is bounded), a parsed
//!   template keeps its text, and a match binds only the template's variables;
//! - round trip: a template of one expression with one variable (any operator but the
//!   explode and prefix modifiers) between two literals, expanded as RFC 6570 expands it,
//!   matches with the variable's value. An empty value expands as if undefined for the
//!   operators that write no name (`{x}`, `{+x}`, `{#x}`, `{.x}`, `{/x}`), so it matches
//!   with no variable. Left out, as the RFC allows no inversion or the matcher documents:
//!   `{+x}` values with `?` or `#` (the matcher stops a reserved expansion there) and
//!   `{+x}`/`{#x}` values holding a `%XX` triplet (reserved expansion passes it unchanged).

use ferry::server::UriTemplate;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986's unreserved characters is encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// Reserved expansion (`+`, `#`): unreserved and reserved characters pass; `%` is encoded.
const RESERVED: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'#')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Check every property on `data`.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // Any template, any URI: the first line and the rest.
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(parsed) = UriTemplate::parse(template) {
        assert_eq!(parsed.as_str(), template);
        let names: Vec<&str> = parsed.variables().collect();
        for candidate in [uri, template] {
            if let Some(vars) = parsed.matches(candidate) {
                for name in vars.keys() {
                    assert!(
                        names.contains(&name.as_str()),
                        "{name} of {template:?} on {candidate:?}"
                    );
                }
            }
        }
    }
    round_trip(&text);
}

fn round_trip(text: &str) {
    let mut parts = text.split('\u{1}');
    let (Some(head), Some(value)) = (parts.next(), parts.next()) else {
        return;
    };
    let suffix = parts.next().unwrap_or("");
    let Some(op) = head.chars().next() else {
        return;
    };
    let prefix: String = head
        .chars()
        .skip(1)
        .filter(|c| !matches!(c, '{' | '}'))
        .collect();
    let suffix: String = suffix.chars().filter(|c| !matches!(c, '{' | '}')).collect();
    let op = ["", "+", "#", ".", "/", ";", "?", "&"][op as usize % 8];
    let name = "v_1";
    let triplet = value
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit());
    if (op == "+" && value.contains(['?', '#'])) || (matches!(op, "+" | "#") && triplet) {
        return;
    }
    let set = if matches!(op, "+" | "#") {
        RESERVED
    } else {
        UNRESERVED
    };
    let encoded = utf8_percent_encode(value, set).to_string();
    let expansion = match op {
        ";" if value.is_empty() => format!(";{name}"),
        ";" => format!(";{name}={encoded}"),
        "?" | "&" => format!("{op}{name}={encoded}"),
        "" | "+" => encoded,
        _ => format!("{op}{encoded}"),
    };
    let template = format!("{prefix}{{{op}{name}}}{suffix}");
    let uri = format!("{prefix}{expansion}{suffix}");
    let parsed = UriTemplate::parse(&template).unwrap_or_else(|e| panic!("{template:?}: {e}"));
    let vars = parsed
        .matches(&uri)
        .unwrap_or_else(|| panic!("{template:?} does not match its expansion {uri:?}"));
    let expected: Vec<(String, String)> = if value.is_empty() && !matches!(op, ";" | "?" | "&") {
        Vec::new()
    } else {
        vec![(name.to_owned(), value.to_owned())]
    };
    let got: Vec<(String, String)> = vars.into_iter().collect();
    assert_eq!(got, expected, "{template:?} on {uri:?}");
}
