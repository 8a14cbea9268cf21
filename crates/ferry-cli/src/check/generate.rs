//! Arguments the checker can make up for a tool from its input schema: only the required
//! properties, each the simplest value of its declared type (the first `enum` value, the
//! `default`, the minimum...). A schema it does not understand (combinators, `$ref`,
//! patterns, formats) yields nothing, and the tool is not called.

use serde_json::{Map, Value, json};

/// Arguments satisfying `schema` (an object schema), if the checker can make them.
pub(crate) fn arguments(schema: &Value) -> Option<Value> {
    value(schema, 0)
}

fn value(schema: &Value, depth: usize) -> Option<Value> {
    if depth > 8 {
        return None;
    }
    let schema = schema.as_object()?;
    if let Some(constant) = schema.get("const") {
        return Some(constant.clone());
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(default) = schema.get("default") {
        return Some(default.clone());
    }
    for hard in ["anyOf", "oneOf", "allOf", "not", "$ref", "pattern", "if"] {
        if schema.contains_key(hard) {
            return None;
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")?,
        // An empty schema (`{}`) takes anything.
        None if schema.is_empty() => return Some(Value::Null),
        None if schema.contains_key("properties") => "object",
        _ => return None,
    };
    match kind {
        "string" => {
            if let Some(format) = schema.get("format") {
                return match format.as_str()? {
                    "uri" | "url" | "iri" => Some(json!("https://example.com/ferry-check")),
                    "email" => Some(json!("ferry-check@example.com")),
                    "date-time" => Some(json!("2026-01-01T00:00:00Z")),
                    "date" => Some(json!("2026-01-01")),
                    _ => None,
                };
            }
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .map(|m| m as usize);
            let mut text = "ferry check".to_owned();
            while text.len() < min {
                text.push('x');
            }
            if let Some(max) = max {
                text.truncate(max);
            }
            Some(json!(text))
        }
        "integer" | "number" => {
            // 1, moved into [minimum, maximum] (exclusive bounds as the next integer).
            let mut n = 1.0_f64;
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                n = n.max(min.ceil());
            }
            if let Some(min) = schema.get("exclusiveMinimum").and_then(Value::as_f64) {
                n = n.max(min.floor() + 1.0);
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
                n = n.min(max.floor());
            }
            if let Some(max) = schema.get("exclusiveMaximum").and_then(Value::as_f64) {
                n = n.min(max.ceil() - 1.0);
            }
            Some(json!(n as i64))
        }
        "boolean" => Some(json!(false)),
        "null" => Some(Value::Null),
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            if min == 0 {
                return Some(json!([]));
            }
            let item = value(schema.get("items")?, depth + 1)?;
            Some(Value::Array(vec![item; min as usize]))
        }
        "object" => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let mut object = Map::new();
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = name.as_str()?;
                let property = properties.and_then(|p| p.get(name))?;
                object.insert(name.to_owned(), value(property, depth + 1)?);
            }
            Some(Value::Object(object))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_simple_values_and_hard_schemas_none() {
        let schema = json!({"type": "object", "properties": {
            "text": {"type": "string"}, "n": {"type": "integer", "minimum": 3},
            "mode": {"enum": ["b", "a"]}, "optional": {"type": "string"}},
            "required": ["text", "n", "mode"]});
        assert_eq!(
            arguments(&schema),
            Some(json!({"text": "ferry check", "n": 3, "mode": "b"}))
        );
        let hard = json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}]}}, "required": ["x"]});
        assert_eq!(arguments(&hard), None);
        assert_eq!(arguments(&json!({"type": "object"})), Some(json!({})));
    }
}
