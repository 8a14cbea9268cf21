//! Harness for the schema-conformance test: loads every revision's `schema.json`, builds a
//! validator per definition (plain, and strict: `additionalProperties: false` on every
//! closed object, and an `allOf` composite closed over the union of its members'
//! properties), and checks samples against them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use ferry_protocol::ProtocolVersion;
use ferry_protocol::conform::{Conform, NotInRevision};
use serde::Serialize;
use serde_json::{Value, json};

pub mod samples;

/// Where the revisions' schemas live: `<revision>.json`, the spec's files byte for byte, one
/// copy in the repository, embedded by `ferry check` too (see its `SOURCE.md`).
pub fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ferry-cli/schemas")
}

/// Base definitions that other definitions extend (TypeScript `extends`): values of the
/// extending types carry more members, so these are validated without strictness.
pub const BASE_DEFS: &[&str] = &[
    "Annotated",
    "BaseMetadata",
    "CacheableResult",
    "Icons",
    "InputResponseRequestParams",
    "Notification",
    "NotificationParams",
    "PaginatedRequest",
    "PaginatedRequestParams",
    "PaginatedResult",
    "Request",
    "RequestParams",
    "ResourceContents",
    "ResourceRequestParams",
    "Result",
    "TaskAugmentedRequestParams",
];

/// One revision's schema and its validators.
pub struct RevisionSchema {
    pub version: ProtocolVersion,
    pub label: &'static str,
    defs_key: &'static str,
    pub defs: BTreeMap<String, Value>,
    plain: BTreeMap<String, jsonschema::Validator>,
    strict: BTreeMap<String, jsonschema::Validator>,
}

/// Suffix of the open form of a definition in the strict schema: strict inside, but its
/// top level not closed, for use as a member of an `allOf` composite.
const OPEN_SUFFIX: &str = ".open";

/// `true` or `{}`: a schema any value satisfies.
fn is_catch_all(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Close every closed object of `value` (see the module docs). `open_refs`: the prefix of
/// definition references (`#/$defs/`) when the schema has open forms of its definitions
/// (JSON Schema 2020-12, whose `unevaluatedProperties` sees through `allOf` and `$ref`).
fn strictify(value: &mut Value, in_all_of: bool, open_refs: Option<&str>) {
    match value {
        Value::Object(map) => {
            let closed = map.contains_key("properties")
                && !map.contains_key("additionalProperties")
                && !in_all_of;
            if closed {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            // An `allOf` composite (`GetTaskResult` = `Result` & `Task`) is closed over the
            // union of its members: the member definitions are referenced in their open
            // form (closing each alone would reject the others' members), and the composite
            // rejects whatever no member evaluates. Inline members are left open below.
            if let (Some(prefix), Some(Value::Array(members))) = (open_refs, map.get_mut("allOf")) {
                for member in members.iter_mut() {
                    if let Some(Value::String(target)) = member.get_mut("$ref")
                        && target.starts_with(prefix)
                    {
                        target.push_str(OPEN_SUFFIX);
                    }
                }
                if !in_all_of
                    && !map.contains_key("additionalProperties")
                    && !map.contains_key("unevaluatedProperties")
                {
                    map.insert("unevaluatedProperties".into(), Value::Bool(false));
                }
            }
            for (key, child) in map.iter_mut() {
                // `properties` maps names to schemas; `_meta` objects are open by design,
                // and so are a tool's JSON Schemas (any keyword may appear: `$schema`,
                // `$defs`, annotations).
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (name, schema) in props.iter_mut() {
                            if !matches!(name.as_str(), "_meta" | "inputSchema" | "outputSchema") {
                                strictify(schema, false, open_refs);
                            }
                        }
                    }
                } else {
                    strictify(child, key == "allOf", open_refs);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| strictify(v, in_all_of, open_refs)),
        _ => {}
    }
}

impl RevisionSchema {
    pub fn load(label: &'static str, version: ProtocolVersion) -> Self {
        let path = schemas_dir().join(format!("{label}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let schema: Value = serde_json::from_str(&text).expect("schema.json parses");
        let (defs_key, draft) = if schema.get("$defs").is_some() {
            ("$defs", jsonschema::Draft::Draft202012)
        } else {
            ("definitions", jsonschema::Draft::Draft7)
        };
        let defs: BTreeMap<String, Value> =
            serde_json::from_value(schema[defs_key].clone()).expect("definitions");
        let mut strict_defs = schema[defs_key].clone();
        let prefix = format!("#/{defs_key}/");
        let open_refs = (draft == jsonschema::Draft::Draft202012).then_some(prefix.as_str());
        if let Value::Object(map) = &mut strict_defs {
            let mut open_forms = Vec::new();
            for (name, def) in map.iter_mut() {
                let open_meta = name.ends_with("MetaObject") || name == "JSONObject";
                if open_refs.is_some() {
                    let mut open = def.clone();
                    if !open_meta {
                        strictify(&mut open, true, open_refs);
                    }
                    // A catch-all (`Result`'s `[key: string]: unknown`) is there for the
                    // extending types' members; in a composite those are the other members.
                    if let Value::Object(m) = &mut open
                        && m.get("additionalProperties").is_some_and(is_catch_all)
                    {
                        m.remove("additionalProperties");
                    }
                    open_forms.push((format!("{name}{OPEN_SUFFIX}"), open));
                }
                if !open_meta {
                    strictify(def, false, open_refs);
                }
            }
            map.extend(open_forms);
        }
        let build = |all: &Value, name: &str| {
            let doc = json!({
                defs_key: all,
                "allOf": [{ "$ref": format!("#/{defs_key}/{name}") }],
            });
            jsonschema::options()
                .with_draft(draft)
                .build(&doc)
                .unwrap_or_else(|e| panic!("{label} {name}: {e}"))
        };
        let plain = defs
            .keys()
            .map(|n| (n.clone(), build(&schema[defs_key], n)))
            .collect();
        let strict = defs
            .keys()
            .map(|n| (n.clone(), build(&strict_defs, n)))
            .collect();
        RevisionSchema {
            version,
            label,
            defs_key,
            defs,
            plain,
            strict,
        }
    }

    /// Validation errors of `value` against definition `def`, plain then (for concrete
    /// definitions) strict.
    pub fn check(&self, def: &str, value: &Value) -> Vec<String> {
        let mut errors = Vec::new();
        let modes: &[_] = if BASE_DEFS.contains(&def) {
            &[("plain", &self.plain)]
        } else {
            &[("plain", &self.plain), ("strict", &self.strict)]
        };
        for &(mode, validators) in modes {
            let validator = &validators[def];
            for e in validator.iter_errors(value) {
                errors.push(format!("[{mode}] at {}: {e}", e.instance_path()));
            }
            if !errors.is_empty() {
                break;
            }
        }
        errors
    }

    /// Whether `def` describes a JSON-RPC envelope (it has a `jsonrpc` member), or is a
    /// union (`anyOf`) of envelopes, such as `JSONRPCMessage` in every revision or
    /// `ClientRequest` / `ServerNotification` from 2025-11-25.
    pub fn is_envelope(&self, def: &str) -> bool {
        let Some(schema) = self.defs.get(def) else {
            return false;
        };
        if schema
            .get("properties")
            .is_some_and(|p| p.get("jsonrpc").is_some())
        {
            return true;
        }
        let prefix = format!("#/{}/", self.defs_key);
        schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|members| {
                members.iter().any(|member| {
                    member
                        .get("$ref")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix(prefix.as_str()))
                        .is_some_and(|name| self.is_envelope(name))
                })
            })
    }

    #[allow(dead_code)]
    pub fn defs_key(&self) -> &'static str {
        self.defs_key
    }
}

/// Every revision's schema, plus `draft` (identical to 2026-07-28).
pub fn all_revisions() -> Vec<RevisionSchema> {
    use ProtocolVersion::*;
    [
        ("2024-11-05", V2024_11_05),
        ("2025-03-26", V2025_03_26),
        ("2025-06-18", V2025_06_18),
        ("2025-11-25", V2025_11_25),
        ("2026-07-28", V2026_07_28),
        ("draft", V2026_07_28),
    ]
    .into_iter()
    .map(|(label, v)| RevisionSchema::load(label, v))
    .collect()
}

type Make = Box<dyn Fn(ProtocolVersion) -> Result<Value, NotInRevision>>;

/// How a sample is wrapped on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// Validated as is.
    Object,
    /// `params` of a request with this method: also validated as a whole request.
    Request(&'static str),
    /// `params` of a notification with this method.
    Notification(&'static str),
    /// A result: also validated inside a result response.
    Result,
}

/// One representative value, the definitions it must satisfy, and where it exists.
pub struct Sample {
    pub name: String,
    pub defs: Vec<&'static str>,
    /// Definitions the wrapped message (request, notification, response) must satisfy.
    pub message_defs: Vec<&'static str>,
    pub wrap: Wrap,
    pub make: Make,
    /// The revisions the value can be expressed in; outside them `conform` must refuse it.
    pub since: ProtocolVersion,
    pub until: ProtocolVersion,
}

impl Sample {
    fn new<T>(name: &str, wrap: Wrap, defs: &[&'static str], value: T) -> Self
    where
        T: Conform + Serialize + Clone + 'static,
    {
        Sample {
            name: name.to_owned(),
            defs: defs.to_vec(),
            message_defs: Vec::new(),
            wrap,
            make: Box::new(move |v| {
                let mut value = value.clone();
                value.conform(v)?;
                Ok(serde_json::to_value(&value).expect("serializes"))
            }),
            since: ProtocolVersion::V2024_11_05,
            until: ProtocolVersion::LATEST,
        }
    }

    /// A plain value (content, tool, capability...).
    pub fn object<T>(name: &str, defs: &[&'static str], value: T) -> Self
    where
        T: Conform + Serialize + Clone + 'static,
    {
        Sample::new(name, Wrap::Object, defs, value)
    }

    /// A value that needs no conforming (ids, enums, raw JSON).
    pub fn raw(name: &str, defs: &[&'static str], value: Value) -> Self {
        Sample::new(name, Wrap::Object, defs, value)
    }

    /// Request params; `message_defs` are checked against the whole request.
    pub fn request<T>(
        method: &'static str,
        name: &str,
        defs: &[&'static str],
        message_defs: &[&'static str],
        params: T,
    ) -> Self
    where
        T: Conform + Serialize + Clone + 'static,
    {
        let mut s = Sample::new(name, Wrap::Request(method), defs, params);
        s.message_defs = message_defs.to_vec();
        s
    }

    /// Notification params; `message_defs` are checked against the whole notification.
    pub fn notification<T>(
        method: &'static str,
        name: &str,
        defs: &[&'static str],
        message_defs: &[&'static str],
        params: T,
    ) -> Self
    where
        T: Conform + Serialize + Clone + 'static,
    {
        let mut s = Sample::new(name, Wrap::Notification(method), defs, params);
        s.message_defs = message_defs.to_vec();
        s
    }

    /// A result; `message_defs` are checked against the result response.
    pub fn result<T>(
        name: &str,
        defs: &[&'static str],
        message_defs: &[&'static str],
        value: T,
    ) -> Self
    where
        T: Conform + Serialize + Clone + 'static,
    {
        let mut s = Sample::new(name, Wrap::Result, defs, value);
        s.message_defs = message_defs.to_vec();
        s
    }

    /// Restrict the revisions this value can be expressed in.
    pub fn revisions(mut self, since: ProtocolVersion, until: ProtocolVersion) -> Self {
        self.since = since;
        self.until = until;
        self
    }
}

/// Stateless-era client requests must carry version and capabilities in `_meta`; the
/// engine adds them, so the harness does too.
fn add_stateless_meta(params: &mut Value, schema: &RevisionSchema) {
    if schema.version.era() != ferry_protocol::Era::Stateless {
        return;
    }
    let Value::Object(map) = params else { return };
    let meta = map.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.entry("io.modelcontextprotocol/protocolVersion")
            .or_insert_with(|| json!(schema.version.as_str()));
        meta.entry("io.modelcontextprotocol/clientCapabilities")
            .or_insert_with(|| json!({}));
    }
}

/// The outcome of checking every sample against one revision.
#[derive(Default)]
pub struct Report {
    pub failures: Vec<String>,
    pub covered: BTreeSet<String>,
    pub checks: usize,
}

pub fn check_revision(schema: &RevisionSchema, samples: &[Sample]) -> Report {
    let mut report = Report::default();
    let v = schema.version;
    for (i, sample) in samples.iter().enumerate() {
        let expressible = v >= sample.since && v <= sample.until;
        let value = match ((sample.make)(v), expressible) {
            (Ok(value), true) => value,
            (Err(_), false) => continue,
            (Ok(_), false) => {
                report.failures.push(format!(
                    "{} #{i} {}: conform accepted a value {} cannot express",
                    schema.label, sample.name, schema.label
                ));
                continue;
            }
            (Err(e), true) => {
                report.failures.push(format!(
                    "{} #{i} {}: conform refused: {e}",
                    schema.label, sample.name
                ));
                continue;
            }
        };
        let mut value = value;
        let client_request = matches!(sample.wrap, Wrap::Request(m)
            if ferry_protocol::methods::method_info(m).is_some_and(|info|
                info.direction != ferry_protocol::methods::Direction::ServerToClient));
        if client_request {
            add_stateless_meta(&mut value, schema);
        }
        let mut validate = |def: &str, instance: &Value| {
            if !schema.defs.contains_key(def) {
                return;
            }
            report.checks += 1;
            let errors = schema.check(def, instance);
            if errors.is_empty() {
                report.covered.insert(def.to_owned());
            } else {
                report.failures.push(format!(
                    "{} #{i} {} as {def}: {}\n    value: {}",
                    schema.label,
                    sample.name,
                    errors.join("; "),
                    instance
                ));
            }
        };
        for def in &sample.defs {
            validate(def, &value);
        }
        let message = match sample.wrap {
            Wrap::Object => None,
            Wrap::Request(method) => Some(json!({
                "jsonrpc": "2.0", "id": i, "method": method, "params": value,
            })),
            Wrap::Notification(method) => Some(json!({
                "jsonrpc": "2.0", "method": method, "params": value,
            })),
            Wrap::Result => Some(json!({ "jsonrpc": "2.0", "id": i, "result": value })),
        };
        if let Some(message) = message {
            for def in &sample.message_defs {
                if !schema.defs.contains_key(*def) {
                    continue;
                }
                // 2026-07-28 input requests (sampling, roots, elicitation) are bare
                // `{ method, params }` objects inside an `input_required` result.
                let instance = if schema.is_envelope(def) || message.get("method").is_none() {
                    message.clone()
                } else {
                    json!({ "method": message["method"], "params": message["params"] })
                };
                validate(def, &instance);
            }
        }
    }
    report
}
