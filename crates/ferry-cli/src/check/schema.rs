//! The revisions' JSON schemas, embedded (see `schemas/README.md`), and validation of a
//! value against one of their definitions. Validators are built on first use and kept.

use std::collections::HashMap;

use ferry::protocol::ProtocolVersion;
use serde_json::{Value, json};

/// The schema text of `revision`.
fn text(revision: ProtocolVersion) -> &'static str {
    match revision {
        ProtocolVersion::V2024_11_05 => include_str!("../../schemas/2024-11-05.json"),
        ProtocolVersion::V2025_03_26 => include_str!("../../schemas/2025-03-26.json"),
        ProtocolVersion::V2025_06_18 => include_str!("../../schemas/2025-06-18.json"),
        ProtocolVersion::V2025_11_25 => include_str!("../../schemas/2025-11-25.json"),
        _ => include_str!("../../schemas/2026-07-28.json"),
    }
}

/// One revision's schema.
pub(crate) struct Schema {
    defs_key: &'static str,
    draft: jsonschema::Draft,
    root: Value,
    validators: HashMap<&'static str, jsonschema::Validator>,
}

impl Schema {
    /// The schema of `revision`.
    pub(crate) fn of(revision: ProtocolVersion) -> Schema {
        // The embedded texts are the spec's files: they parse (a test checks every one).
        let root: Value = serde_json::from_str(text(revision)).unwrap_or(Value::Null);
        let (defs_key, draft) = if root.get("$defs").is_some() {
            ("$defs", jsonschema::Draft::Draft202012)
        } else {
            ("definitions", jsonschema::Draft::Draft7)
        };
        Schema {
            defs_key,
            draft,
            root,
            validators: HashMap::new(),
        }
    }

    /// Whether the revision defines `def`.
    pub(crate) fn has(&self, def: &str) -> bool {
        self.root[self.defs_key].get(def).is_some()
    }

    /// The problems of `value` as a `def` (empty when valid; one entry when the revision
    /// has no such definition).
    pub(crate) fn problems(&mut self, def: &'static str, value: &Value) -> Vec<String> {
        if !self.has(def) {
            return vec![format!("the schema defines no {def}")];
        }
        if !self.validators.contains_key(def) {
            let doc = json!({
                self.defs_key: self.root[self.defs_key],
                "allOf": [{"$ref": format!("#/{}/{def}", self.defs_key)}],
            });
            match jsonschema::options().with_draft(self.draft).build(&doc) {
                Ok(validator) => {
                    self.validators.insert(def, validator);
                }
                Err(e) => return vec![format!("the schema's {def} does not compile: {e}")],
            }
        }
        self.validators[def]
            .iter_errors(value)
            .take(1)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                // The message starts with the whole instance: say what it is instead.
                let instance = e.instance().to_string();
                let message = e.to_string();
                let message = message
                    .strip_prefix(instance.as_str())
                    .unwrap_or(&message)
                    .trim_start();
                let what = match e.instance().get("type").and_then(Value::as_str) {
                    Some(kind) => format!(" (type {kind:?})"),
                    None => String::new(),
                };
                format!("at {at}{what}: {}", super::target::shorten(message, 160))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_parses_and_defines_the_results() {
        for revision in ProtocolVersion::ALL {
            let mut schema = Schema::of(revision);
            assert!(schema.has("ListToolsResult"), "{revision}");
            assert!(
                schema
                    .problems("ListToolsResult", &json!({"tools": []}))
                    .is_empty()
                    || revision == ProtocolVersion::V2026_07_28
            );
            assert!(!schema.problems("ListToolsResult", &json!({})).is_empty());
        }
    }
}
