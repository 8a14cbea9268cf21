//! `key=value` arguments: split on the first `=`; a value is JSON when it parses as JSON
//! (numbers, `true`, objects...) and a string otherwise, unless the tool's input schema says
//! the property is a string, which keeps `text=42` the string `"42"`.

use std::collections::BTreeMap;

use ferry::protocol::types::JsonObject;
use serde_json::Value;

/// Split `key=value` items; an item without `=` or with an empty key is a usage error.
pub(crate) fn pairs(items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
            _ => Err(format!("expected KEY=VALUE, got {item:?}")),
        })
        .collect()
}

/// String arguments (prompts, completion context): values are kept as typed.
pub(crate) fn strings(items: &[String]) -> Result<BTreeMap<String, String>, String> {
    Ok(pairs(items)?.into_iter().collect())
}

/// An HTTP header given as `Name: value` (`--header`).
pub(crate) fn header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected 'Name: value', got {text:?}")),
    }
}

/// A JSON object given on the command line (`--args`, `--elicit-reply`).
pub(crate) fn json_object(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!("expected a JSON object, got {other}")),
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

/// A tool's arguments from `key=value` pairs, typed by its input schema when known.
pub(crate) fn tool_arguments(pairs: &[(String, String)], schema: Option<&JsonObject>) -> Value {
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let object = pairs
        .iter()
        .map(|(key, raw)| {
            let property = properties.and_then(|p| p.get(key));
            (key.clone(), typed(raw, property))
        })
        .collect();
    Value::Object(object)
}

/// One value: a string if the property's schema allows only strings (besides `null`),
/// otherwise JSON if it parses, otherwise a string (the server then says what it expected).
fn typed(raw: &str, property: Option<&Value>) -> Value {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let non_null: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    if non_null == ["string"] {
        return Value::String(raw.to_owned());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema(value: Value) -> JsonObject {
        match value {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    #[test]
    fn values_are_json_unless_the_schema_says_string() {
        let pairs = pairs(&[
            "text=42".into(),
            "n=42".into(),
            "flag=true".into(),
            "obj={\"a\":1}".into(),
            "word=hello".into(),
            "maybe=7".into(),
            "eq=a=b".into(),
        ])
        .unwrap();
        let schema = schema(json!({"properties": {
            "text": {"type": "string"},
            "maybe": {"type": ["string", "null"]},
            "n": {"type": "integer"},
        }}));
        assert_eq!(
            tool_arguments(&pairs, Some(&schema)),
            json!({"text": "42", "n": 42, "flag": true, "obj": {"a": 1}, "word": "hello",
                   "maybe": "7", "eq": "a=b"})
        );
        assert_eq!(
            tool_arguments(&pairs[..1], None),
            json!({"text": 42}),
            "no schema: JSON when it parses"
        );
    }

    #[test]
    fn usage_errors() {
        assert!(pairs(&["novalue".into()]).is_err());
        assert!(pairs(&["=v".into()]).is_err());
        assert!(pairs(&["k=".into()]).is_ok());
        assert!(json_object("[1]").is_err());
        assert!(json_object("{").is_err());
        assert!(json_object("{\"a\":1}").is_ok());
        assert_eq!(
            header("Authorization: Bearer a:b").unwrap(),
            ("Authorization".into(), "Bearer a:b".into())
        );
        assert!(header("no colon").is_err());
        assert!(header(": v").is_err());
    }
}
