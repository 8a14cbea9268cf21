//! `WWW-Authenticate` parsing (RFC 9110 section 11.6.1, RFC 6750 section 3): the
//! `Bearer` challenge's `resource_metadata` (RFC 9728), `scope` and `error`.

/// The parameters of a `Bearer` challenge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// RFC 9728: the URL of the Protected Resource Metadata.
    pub resource_metadata: Option<String>,
    /// The scope the request needs (space-separated).
    pub scope: Option<String>,
    /// The error code (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
    /// The error description.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge among `headers` (each a `WWW-Authenticate` value, possibly
    /// with several challenges); `None` when there is none.
    pub fn find(headers: &[String]) -> Option<BearerChallenge> {
        headers.iter().find_map(|h| parse_bearer(h))
    }
}

/// The `Bearer` challenge of one header value.
fn parse_bearer(header: &str) -> Option<BearerChallenge> {
    let mut rest = header;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return None;
        }
        let scheme_end = rest.find([' ', '\t', ',']).unwrap_or(rest.len());
        let scheme = &rest[..scheme_end];
        rest = &rest[scheme_end..];
        let (params, after) = parse_params(rest);
        if scheme.eq_ignore_ascii_case("bearer") {
            let mut challenge = BearerChallenge::default();
            for (name, value) in params {
                let slot = match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => &mut challenge.resource_metadata,
                    "scope" => &mut challenge.scope,
                    "error" => &mut challenge.error,
                    "error_description" => &mut challenge.error_description,
                    _ => continue,
                };
                slot.get_or_insert(value);
            }
            return Some(challenge);
        }
        rest = after;
    }
}

/// `name=value` pairs (tokens or quoted strings) up to the next challenge; returns them
/// and the rest of the header.
fn parse_params(mut rest: &str) -> (Vec<(String, String)>, &str) {
    let mut params = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', ',']);
        let name_end = trimmed
            .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
            .unwrap_or(trimmed.len());
        let name = &trimmed[..name_end];
        let after_name = trimmed[name_end..].trim_start_matches([' ', '\t']);
        let Some(value_text) = after_name.strip_prefix('=') else {
            // Not a parameter: the next challenge's scheme (or the end, or token68 junk).
            return (params, trimmed);
        };
        if name.is_empty() {
            return (params, "");
        }
        let value_text = value_text.trim_start_matches([' ', '\t']);
        let (value, after) = if let Some(quoted) = value_text.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let end = value_text
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(value_text.len());
            (value_text[..end].to_owned(), &value_text[end..])
        };
        params.push((name.to_owned(), value));
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(header: &str) -> Option<BearerChallenge> {
        BearerChallenge::find(&[header.to_owned()])
    }

    #[test]
    fn quoted_and_token_parameters() {
        let c = parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="say \"hi\"""#,
        )
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.error_description.as_deref(), Some(r#"say "hi""#));
        let c = parse("bearer error=invalid_token").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn bearer_after_another_scheme_and_bare_bearer() {
        let c = parse(r#"Basic realm="x", Bearer scope="s""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        assert_eq!(parse("Bearer").unwrap(), BearerChallenge::default());
        assert_eq!(parse(r#"Basic realm="x""#), None);
        assert_eq!(parse(""), None);
        // Malformed input never panics.
        for junk in [
            "Bearer =",
            "Bearer a=\"unterminated",
            "Bearer ,,,=,",
            "Bearer a=b=c",
        ] {
            let _ = parse(junk);
        }
    }
}
