//! Elicitation: `elicitation/create`, the server asking the user for input through the
//! client, as a form (from 2025-06-18) or by sending them to a URL (from 2025-11-25).

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};

use super::marker::{ArrayType, BooleanType, FormMode, ObjectType, StringType, UrlMode};
use super::meta::{JsonObject, NotificationMeta, RequestMeta, ResultMeta};
use super::tasks::TaskMetadata;

/// `elicitation/create` params: a form or a URL.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode: structured data, validated against a flat schema.
    Form(ElicitRequestFormParams),
    /// URL mode: an out-of-band interaction at a URL (from 2025-11-25).
    Url(ElicitRequestUrlParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let mode = value.get("mode").and_then(serde_json::Value::as_str);
        match mode {
            None | Some("form") => serde_json::from_value(value)
                .map(ElicitRequestParams::Form)
                .map_err(D::Error::custom),
            Some("url") => serde_json::from_value(value)
                .map(ElicitRequestParams::Url)
                .map_err(D::Error::custom),
            Some(other) => Err(D::Error::custom(format!(
                "unknown elicitation mode {other:?} (expected \"form\" or \"url\")"
            ))),
        }
    }
}

impl ElicitRequestParams {
    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(f) => &f.message,
            ElicitRequestParams::Url(u) => &u.message,
        }
    }
}

/// Form-mode elicitation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`; optional on the wire (absent in 2025-06-18, where form is the only mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to ask.
    pub message: String,
    /// The flat object schema of the answer.
    pub requested_schema: ElicitationSchema,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// URL-mode elicitation (from 2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// `"url"`.
    pub mode: UrlMode,
    /// Why the user should go there.
    pub message: String,
    /// The URL.
    pub url: String,
    /// Correlates `notifications/elicitation/complete` (2025-11-25 only; 2026-07-28
    /// removed it, servers encode their own id in `requestState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The schema of a form: a flat object of primitive properties.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationSchema {
    /// The JSON Schema dialect (from 2025-11-25).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// `"object"`.
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// The fields, in display order.
    pub properties: IndexMap<String, PrimitiveSchemaDefinition>,
    /// Required field names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// The schema of one form field.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// A string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of several strings (`enum`).
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of several strings with display titles (`oneOf` of `const`/`title`).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several of several strings (`items.enum`).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several of several strings with titles (`items.anyOf`).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `enum` with `enumNames` (2025-06-18's enum schema; legacy afterwards).
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::from_value;
        let value = serde_json::Value::deserialize(deserializer)?;
        let has = |key: &str| value.get(key).is_some();
        let kind = value.get("type").and_then(serde_json::Value::as_str);
        let parsed = match kind {
            Some("string") if has("enumNames") => from_value(value).map(Self::LegacyTitledEnum),
            Some("string") if has("enum") => from_value(value).map(Self::UntitledSingleSelect),
            Some("string") if has("oneOf") => from_value(value).map(Self::TitledSingleSelect),
            Some("string") => from_value(value).map(Self::String),
            Some("number" | "integer") => from_value(value).map(Self::Number),
            Some("boolean") => from_value(value).map(Self::Boolean),
            Some("array") => {
                let titled = value.get("items").and_then(|i| i.get("anyOf")).is_some();
                if titled {
                    from_value(value).map(Self::TitledMultiSelect)
                } else {
                    from_value(value).map(Self::UntitledMultiSelect)
                }
            }
            other => {
                return Err(D::Error::custom(format!(
                    "unsupported form field type {other:?}"
                )));
            }
        };
        parsed.map_err(D::Error::custom)
    }
}

/// String formats a form field may require.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// An email address.
    Email,
    /// A URI.
    Uri,
    /// A date.
    Date,
    /// A date and time.
    DateTime,
}

/// A string field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `"number"` or `"integer"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberKind {
    /// Any number.
    #[default]
    Number,
    /// An integer.
    Integer,
}

/// A number field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub kind: NumberKind,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<serde_json::Number>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<serde_json::Number>,
    /// Default value (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Number>,
}

/// A boolean field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// `"boolean"`.
    #[serde(rename = "type")]
    pub kind: BooleanType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A single choice among strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UntitledSingleSelectEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// A choice with a display title.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TitledOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// Its display title.
    pub title: String,
}

/// A single choice among titled strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<TitledOption>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `items` of an untitled multi-select.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UntitledItems {
    /// `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// `items` of a titled multi-select.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TitledItems {
    /// The choices.
    #[serde(rename = "anyOf")]
    pub any_of: Vec<TitledOption>,
}

/// Several choices among strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Several choices among titled strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// `enum` with `enumNames` display names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names, one per choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default choice (from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// What the user did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form) or agreed to go (URL).
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// `elicitation/create` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only): strings, numbers, booleans, and
    /// from 2025-11-25 arrays of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The answers a client's elicitation handler gives.
///
/// ```
/// use ferry_protocol::types::{ElicitAction, ElicitResult};
/// use serde_json::json;
///
/// let submitted = ElicitResult::accept(json!({"name": "Ada", "colour": "green"}));
/// assert_eq!(submitted.action, ElicitAction::Accept);
/// assert_eq!(submitted.content.unwrap()["name"], "Ada");
///
/// assert_eq!(ElicitResult::decline().action, ElicitAction::Decline);
/// assert_eq!(ElicitResult::cancel().action, ElicitAction::Cancel);
/// assert_eq!(ElicitResult::accept_url().content, None);
/// ```
impl ElicitResult {
    /// Form mode: the user submitted these values, a JSON object of the requested
    /// schema's properties. Anything but an object carries no values (the server then
    /// sees an accept without content, which its schema refuses).
    pub fn accept(content: serde_json::Value) -> Self {
        let content = match content {
            serde_json::Value::Object(values) => Some(values),
            _ => None,
        };
        ElicitResult {
            action: ElicitAction::Accept,
            content,
            meta: None,
        }
    }

    /// URL mode: the user agreed to open the URL (no values).
    pub fn accept_url() -> Self {
        Self::answer(ElicitAction::Accept)
    }

    /// The user explicitly declined.
    pub fn decline() -> Self {
        Self::answer(ElicitAction::Decline)
    }

    /// The user dismissed the request without choosing.
    pub fn cancel() -> Self {
        Self::answer(ElicitAction::Cancel)
    }

    fn answer(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            meta: None,
        }
    }
}

/// `notifications/elicitation/complete` params (2025-11-25 only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The id of the URL elicitation that finished.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// `data` of the `-32042` URL-elicitation-required error (2025-11-25 only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations the user must complete first.
    pub elicitations: Vec<ElicitRequestUrlParams>,
}
