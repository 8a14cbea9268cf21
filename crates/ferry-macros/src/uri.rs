//! The variables of an RFC 6570 URI template, read at compile time so that a resource
//! function's parameters can be matched to them (and a malformed template pointed at).

use syn::LitStr;

/// The variables of `uri`, in order; `None` when it has no expression (a static
/// resource's URI). The full grammar is checked again when the server is built: this
/// reads what the parameters need and reports the mistakes it can see.
pub(crate) fn variables(uri: &LitStr) -> syn::Result<Option<Vec<String>>> {
    let text = uri.value();
    if !text.contains(['{', '}']) {
        return Ok(None);
    }
    let error = |message: String| syn::Error::new(uri.span(), message);
    let mut variables = Vec::new();
    let mut rest = text.as_str();
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(error(format!(
                "`}}` without `{{` in the URI template {text:?}"
            )));
        }
        let body_start = open + 1;
        let Some(close) = rest[body_start..].find(['{', '}']) else {
            return Err(error(format!("unclosed `{{` in the URI template {text:?}")));
        };
        let body = &rest[body_start..body_start + close];
        if rest[body_start + close..].starts_with('{') {
            return Err(error(format!(
                "`{{` inside an expression of the URI template {text:?}"
            )));
        }
        let specs = match body.chars().next() {
            Some('+' | '#' | '.' | '/' | ';' | '?' | '&') => &body[1..],
            Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
                return Err(error(format!(
                    "`{c}` is a reserved operator of RFC 6570, not supported (in {text:?})"
                )));
            }
            _ => body,
        };
        for spec in specs.split(',') {
            let name = spec
                .strip_suffix('*')
                .or_else(|| spec.split_once(':').map(|(name, _)| name))
                .unwrap_or(spec);
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'));
            if !valid {
                return Err(error(format!(
                    "{{{body}}} in {text:?}: {spec:?} is not a variable name (letters, digits, `_`)"
                )));
            }
            variables.push(name.to_owned());
        }
        rest = &rest[body_start + close + 1..];
    }
    Ok(Some(variables))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(uri: &str) -> syn::Result<Option<Vec<String>>> {
        variables(&LitStr::new(uri, proc_macro2::Span::call_site()))
    }

    #[test]
    fn a_uri_without_expressions_is_static() {
        assert!(vars("config://app").unwrap().is_none());
    }

    #[test]
    fn every_variable_of_every_operator_is_read() {
        let found = vars("files://{+root}/{name}{.ext}{/seg*}{;v:3}{?q,page}{&x}{#frag}").unwrap();
        assert_eq!(
            found.unwrap(),
            ["root", "name", "ext", "seg", "v", "q", "page", "x", "frag"]
        );
    }

    #[test]
    fn malformed_templates_are_refused() {
        for uri in [
            "notes://{id",
            "notes://id}",
            "notes://{a{b}}",
            "notes://{}",
            "x://{=a}",
            "x://{a b}",
        ] {
            assert!(vars(uri).is_err(), "{uri}");
        }
    }
}
