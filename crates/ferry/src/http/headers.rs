//! The request metadata headers of 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-{Name}`): decoding (plain visible ASCII, or the
//! `=?base64?...?=` sentinel form) and validation against the body. Every failure is a
//! `HeaderMismatch` (`-32020`), answered with HTTP 400.

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use ferry_protocol::error_codes::HEADER_MISMATCH;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::JsonObject;
use serde_json::Value;

// Names as `HeaderName` constants: a `&str` name is parsed and validated at every lookup.
/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Method`.
pub(crate) const METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
pub(crate) const NAME: HeaderName = HeaderName::from_static("mcp-name");
/// The prefix of `Mcp-Param-{Name}`.
pub(crate) const PARAM_PREFIX: &str = "mcp-param-";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// A `-32020` error.
pub(crate) fn mismatch(message: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// A header value as text: visible ASCII, space and tab only (RFC 9110), the base64
/// sentinel form decoded when `encoded` allows it (`Mcp-Name`, `Mcp-Param-*`). Borrowed
/// unless decoded.
pub(crate) fn decode<'a>(
    name: &str,
    value: &'a HeaderValue,
    encoded: bool,
) -> Result<Cow<'a, str>, ErrorObject> {
    let bytes = value.as_bytes();
    if !bytes
        .iter()
        .all(|&b| b == b'\t' || (0x20..=0x7e).contains(&b))
    {
        return Err(mismatch(format!(
            "{name} header contains invalid characters"
        )));
    }
    // Checked above: visible ASCII, which `to_str` accepts.
    let text = value.to_str().unwrap_or_default();
    if !encoded {
        return Ok(Cow::Borrowed(text));
    }
    let Some(inner) = text
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    else {
        return Ok(Cow::Borrowed(text));
    };
    let raw = STANDARD
        .decode(inner)
        .or_else(|_| STANDARD_NO_PAD.decode(inner))
        .map_err(|_| mismatch(format!("{name} header has invalid base64")))?;
    String::from_utf8(raw)
        .map(Cow::Owned)
        .map_err(|_| mismatch(format!("{name} header is not UTF-8 once decoded")))
}

fn header<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
) -> Result<Option<&'a HeaderValue>, ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(mismatch(format!("{name} header appears more than once")));
    }
    Ok(first)
}

/// The `MCP-Protocol-Version` header, if present.
pub(crate) fn protocol_version(headers: &HeaderMap) -> Result<Option<Cow<'_, str>>, ErrorObject> {
    header(headers, &PROTOCOL_VERSION)?
        .map(|v| decode("MCP-Protocol-Version", v, false))
        .transpose()
}

/// The members of a request's `params` its `Mcp-Name` and `Mcp-Param-*` headers are
/// checked against, however the body was read.
#[derive(Clone, Copy)]
pub(crate) enum Checked<'a> {
    /// `params` read as a `Value` (`None`: no `params`).
    Value(Option<&'a Value>),
    /// The members' text as the params' landmarks found it (see `probe`): each is parsed
    /// only when a header is checked against it.
    Raw {
        /// `name`.
        name: Option<&'a str>,
        /// `uri`.
        uri: Option<&'a str>,
        /// `arguments`.
        arguments: Option<&'a str>,
    },
}

impl<'a> Checked<'a> {
    /// The member `field` (`name` or `uri`) when it is a string.
    pub(crate) fn string(self, field: &str) -> Option<Cow<'a, str>> {
        match self {
            Checked::Value(params) => params?.get(field)?.as_str().map(Cow::Borrowed),
            Checked::Raw { name, uri, .. } => {
                let raw = match field {
                    "name" => name,
                    "uri" => uri,
                    _ => None,
                }?;
                // Borrowed unless it has escapes.
                match serde_json::from_str::<&'a str>(raw) {
                    Ok(plain) => Some(Cow::Borrowed(plain)),
                    Err(_) => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
                }
            }
        }
    }

    /// `arguments` as a `Value` (parsed from its text when it was read raw; `None` as well
    /// when that parse fails, which only a nesting beyond serde_json's limit can make it).
    fn arguments(self) -> Option<Cow<'a, Value>> {
        match self {
            Checked::Value(params) => params?.get("arguments").map(Cow::Borrowed),
            Checked::Raw { arguments, .. } => serde_json::from_str(arguments?).ok().map(Cow::Owned),
        }
    }
}

/// Check `Mcp-Method`, `Mcp-Name` and (for `tools/call`, against the tool's
/// `x-mcp-header` annotations in `input_schema`) `Mcp-Param-*` against the request body.
pub(crate) fn validate(
    headers: &HeaderMap,
    method: &str,
    params: Checked<'_>,
    input_schema: Option<&JsonObject>,
) -> Result<(), ErrorObject> {
    let Some(header_method) = header(headers, &METHOD)? else {
        return Err(mismatch("the Mcp-Method header is required"));
    };
    let header_method = decode("Mcp-Method", header_method, false)?;
    if header_method != method {
        return Err(mismatch(format!(
            "Mcp-Method header value {header_method:?} does not match body value {method:?}"
        )));
    }
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body = params.string(field);
        let Some(value) = header(headers, &NAME)? else {
            return Err(mismatch(format!(
                "the Mcp-Name header is required for {method}"
            )));
        };
        let value = decode("Mcp-Name", value, true)?;
        if body.as_deref() != Some(&*value) {
            return Err(mismatch(format!(
                "Mcp-Name header value {value:?} does not match body value {}",
                body.map_or_else(|| "(absent)".to_owned(), |b| format!("{b:?}"))
            )));
        }
    }
    if method == "tools/call"
        && let Some(schema) = input_schema
    {
        let mut annotated = Vec::new();
        annotations(schema, None, &mut annotated);
        if !annotated.is_empty() {
            let arguments = params.arguments();
            for (param, path) in annotated {
                check_param(headers, param, &path, arguments.as_deref())?;
            }
        }
    }
    Ok(())
}

/// Every `x-mcp-header` reachable from the schema root through `properties` only, with
/// its property path (borrowed from the schema, the path so far kept on the stack: a tool
/// without annotations costs a walk, no allocation).
fn annotations<'s>(
    schema: &'s JsonObject,
    parent: Option<&Step<'_, 's>>,
    out: &mut Vec<(&'s str, Vec<&'s str>)>,
) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (key, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        let step = Step { key, parent };
        if let Some(Value::String(name)) = property.get("x-mcp-header") {
            out.push((name, step.path()));
        }
        annotations(property, Some(&step), out);
    }
}

/// One property on the way down a schema.
struct Step<'p, 's> {
    key: &'s str,
    parent: Option<&'p Step<'p, 's>>,
}

impl<'s> Step<'_, 's> {
    /// The keys from the root to this one.
    fn path(&self) -> Vec<&'s str> {
        let mut path = Vec::new();
        let mut step = Some(self);
        while let Some(s) = step {
            path.push(s.key);
            step = s.parent;
        }
        path.reverse();
        path
    }
}

fn check_param(
    headers: &HeaderMap,
    param: &str,
    path: &[&str],
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    let display = format!("Mcp-Param-{param}");
    // An annotation that makes no valid header name is an invalid tool definition; a
    // client rejects the tool, so no request can mirror it.
    let Ok(name) = HeaderName::try_from(format!("{PARAM_PREFIX}{param}").to_ascii_lowercase())
    else {
        return Ok(());
    };
    let body = path
        .iter()
        .try_fold(arguments, |value, key| Some(value?.get(key)))
        .flatten()
        .filter(|v| !v.is_null());
    let value = header(headers, &name)?
        .map(|v| decode(&display, v, true))
        .transpose()?;
    match (body, value) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(mismatch(format!(
            "the {display} header is required: the body has a value for it"
        ))),
        (None, Some(value)) => Err(mismatch(format!(
            "{display} header value {value:?} has no corresponding body value"
        ))),
        (Some(body), Some(value)) => {
            let matches = match body {
                Value::String(s) => *s == value,
                Value::Bool(b) => value == if *b { "true" } else { "false" },
                Value::Number(n) => match (n.as_f64(), value.trim().parse::<f64>()) {
                    (Some(a), Ok(b)) => a == b,
                    _ => false,
                },
                _ => false,
            };
            if matches {
                Ok(())
            } else {
                Err(mismatch(format!(
                    "{display} header value {value:?} does not match body value {body}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                HeaderName::try_from(*k).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn decodes_the_sentinel_form() {
        let v = HeaderValue::from_static("=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(decode("x", &v, true).unwrap(), "Hello, 世界");
        assert_eq!(
            decode("x", &v, false).unwrap(),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        let v = HeaderValue::from_static("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert_eq!(decode("x", &v, true).unwrap(), "=?base64?literal?=");
        let bad = HeaderValue::from_static("=?base64?***?=");
        assert_eq!(decode("x", &bad, true).unwrap_err().code, HEADER_MISMATCH);
        let control = HeaderValue::from_bytes(b"a\x80b").unwrap();
        assert!(decode("x", &control, true).is_err());
    }

    #[test]
    fn validates_method_name_and_params() {
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "deep": {"type": "object", "properties": {
                    "flag": {"type": "boolean", "x-mcp-header": "Flag"}}}
            }
        }))
        .unwrap();
        let params = json!({"name": "sql", "arguments": {"region": "us-west1", "n": 42,
            "deep": {"flag": true}}});
        let ok = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-name", "sql"),
            ("mcp-param-region", "us-west1"),
            ("mcp-param-n", "42.0"),
            ("mcp-param-flag", "true"),
            ("mcp-param-unknown", "ignored"),
        ]);
        validate(
            &ok,
            "tools/call",
            Checked::Value(Some(&params)),
            Some(&schema),
        )
        .unwrap();
        let missing = headers(&[("mcp-method", "tools/call"), ("mcp-name", "sql")]);
        assert!(
            validate(
                &missing,
                "tools/call",
                Checked::Value(Some(&params)),
                Some(&schema)
            )
            .is_err()
        );
        let wrong = headers(&[("mcp-method", "tools/list")]);
        assert!(validate(&wrong, "tools/call", Checked::Value(Some(&params)), None).is_err());
        let encoded = headers(&[
            ("mcp-method", "prompts/get"),
            ("mcp-name", "=?base64?c3Fs?="),
        ]);
        validate(&encoded, "prompts/get", Checked::Value(Some(&params)), None).unwrap();
        let twice = headers(&[("mcp-method", "tools/list"), ("mcp-method", "tools/list")]);
        assert!(validate(&twice, "tools/list", Checked::Value(None), None).is_err());
    }
}
