//! `tools/call` params parsed once: the tool's `arguments` stay raw JSON text and are
//! parsed straight into the tool's argument type, without a `serde_json::Map` in between.
//!
//! The general path (`ClientRequest::parse`, arguments as a map) stays the reference: the
//! fast path is taken only where it cannot answer differently, and any failure on it goes
//! back to the general path, which produces the error messages.

use ferry_protocol::jsonrpc::Request;
use ferry_protocol::types::{InputResponses, JsonObject, RequestMeta};
use serde::Deserialize;
use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};

use super::input::Salient;
use super::members::{self, Span};

/// The arguments of a `tools/call`, as they arrived.
pub(crate) enum Arguments<'a> {
    /// The raw text of a JSON object that parses into a map (see `fast`).
    Raw(&'a str),
    /// A parsed map (the general path), or none.
    Object(Option<JsonObject>),
}

impl Arguments<'_> {
    /// The arguments as a map (empty when there are none).
    pub(crate) fn into_object(self) -> JsonObject {
        match self {
            // A `Raw` is a valid object that the map parser accepts (see `fast`).
            Arguments::Raw(raw) => serde_json::from_str(raw).unwrap_or_default(),
            Arguments::Object(object) => object.unwrap_or_default(),
        }
    }

    /// The arguments as a salient part of the request (see `input::Binding`): raw text
    /// kept as it is, read into a value only if a digest is made.
    pub(crate) fn to_salient(&self) -> Salient {
        match self {
            Arguments::Raw(raw) => Salient::Json((*raw).to_owned()),
            Arguments::Object(_) => Salient::Value(self.to_value()),
        }
    }

    /// The arguments as a JSON value (an empty object when there are none).
    pub(crate) fn to_value(&self) -> serde_json::Value {
        match self {
            Arguments::Raw(raw) => serde_json::from_str(raw).unwrap_or_default(),
            Arguments::Object(object) => {
                serde_json::Value::Object(object.clone().unwrap_or_default())
            }
        }
    }

    /// The tool's typed arguments, or the message naming what did not fit.
    ///
    /// Raw text is parsed directly; if that fails, the map path runs to produce the error
    /// (with the argument's path, as before), or the value if the map path accepts it
    /// (a key given twice: the map keeps the last, as it always did).
    ///
    /// `()` is the type of a tool without arguments: it accepts only an empty object (its
    /// schema is `{"type":"object","additionalProperties":false}`, see `tools::schema_of_args`).
    pub(crate) fn parse<T: DeserializeOwned + 'static>(self) -> Result<T, String> {
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<()>() {
            return self.parse_nothing();
        }
        if let Arguments::Raw(raw) = &self
            && let Ok(args) = serde_json::from_str(raw)
        {
            return Ok(args);
        }
        self.parse_as_map()
    }

    /// [`parse`](Self::parse) of `()`: no argument may be given.
    #[cold]
    fn parse_nothing<T: DeserializeOwned>(self) -> Result<T, String> {
        if let Some(name) = self.into_object().keys().next() {
            return Err(format!(
                "invalid argument `{name}`: this tool takes no arguments"
            ));
        }
        serde_json::from_value(serde_json::Value::Null).map_err(|e| e.to_string())
    }

    /// [`parse`](Self::parse) through the map: out of line, so that the code every call
    /// runs is not spread over the rare path's.
    #[cold]
    #[inline(never)]
    fn parse_as_map<T: DeserializeOwned>(self) -> Result<T, String> {
        let arguments = serde_json::Value::Object(self.into_object());
        serde_path_to_error::deserialize::<_, T>(arguments).map_err(|e| describe(&e))
    }
}

fn describe(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    if path == "." {
        format!("invalid arguments: {}", e.inner())
    } else {
        format!("invalid argument `{path}`: {}", e.inner())
    }
}

/// An optional member's value parsed as a `T`: `None` when absent or `null`; `Err` when it
/// does not parse. The check inline, the parse out of line: most calls have none of these
/// members, and the parse inlined at its three uses would spread every call's hot code over
/// more cache lines (measured: bench/results/profile.md#rare-call-members-parsed-out-of-line).
#[inline(always)]
fn parse_present<T: DeserializeOwned>(span: Option<Span<'_>>) -> Result<Option<T>, ()> {
    match present(span) {
        None => Ok(None),
        Some(span) => parse_member(span.text).map(Some),
    }
}

#[inline(never)]
fn parse_member<T: DeserializeOwned>(text: &str) -> Result<T, ()> {
    serde_json::from_str(text).map_err(drop)
}

/// An optional member's value: `None` when absent or `null` (as serde reads an `Option`).
fn present(span: Option<Span<'_>>) -> Option<Span<'_>> {
    span.filter(|span| span.text != "null")
}

/// Not more opening brackets than this cannot reach serde_json's nesting limit (128), which
/// the general path applies to the arguments and a skipped raw value does not.
const SHALLOW: usize = 100;

/// Whether `text` is shallow enough that no nesting limit applies.
fn shallow(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Nesting takes two bytes a level: short text cannot be deep.
    bytes.len() < 2 * SHALLOW
        || crate::engine::scan::count_either(b'{', b'[', bytes, SHALLOW) <= SHALLOW
}

/// Any JSON value, parsed (not skimmed) and dropped: numbers out of range and strings with
/// lone surrogates fail as they do when parsed into a map; a member the tool's type ignores
/// would only be skimmed by the direct parse.
struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Valid)
    }
}

impl<'de> Visitor<'de> for Valid {
    type Value = Valid;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_unit<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_key::<Valid>()?.is_some() {
            map.next_value::<Valid>()?;
        }
        Ok(Valid)
    }
}

/// Whether parsing `arguments` (valid JSON: the classification skimmed it) into a map
/// could fail: only a number out of `f64`'s range (an exponent, or more than 308 digits)
/// or a lone surrogate (an escape) can. Most arguments have neither (the scan that found
/// them noted both), and are spared the [`Valid`] parse.
fn may_be_refused(arguments: Span<'_>) -> bool {
    arguments.text.len() > 308 || !arguments.plain
}

/// A `tools/call` read by [`fast`]: its name (borrowed), its raw arguments, and the rest
/// of its params.
pub(crate) struct FastCall<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a str>,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
    pub(crate) meta: Option<RequestMeta>,
}

/// The params of a `tools/call` request with its arguments raw, when the general parse
/// would accept them and the call is not run as a task; `None` means: take the general path.
///
/// The params were validated by the classification: their members are found by a scan
/// ([`members`]), not parsed again; only the members most calls lack are parsed, when
/// present. Whatever the scan or these checks decline goes the general way (fields as in
/// [`CallToolRequestParams`](ferry_protocol::types::CallToolRequestParams)).
pub(crate) fn fast(request: &Request) -> Option<FastCall<'_>> {
    if request.method != "tools/call" {
        return None;
    }
    let text = request.params.as_deref()?.get();
    if !shallow(text) {
        return None;
    }
    let [name, arguments, task, input_responses, request_state, meta] = members::find(
        text,
        [
            "name",
            "arguments",
            "task",
            "inputResponses",
            "requestState",
            "_meta",
        ],
    )?;
    let name = members::plain_string(name?)?;
    let arguments = present(arguments);
    if present(task).is_some()
        || arguments.is_some_and(|a| {
            !a.text.starts_with('{')
                || (may_be_refused(a) && serde_json::from_str::<Valid>(a.text).is_err())
        })
    {
        return None;
    }
    Some(FastCall {
        name,
        arguments: arguments.map(|a| a.text),
        input_responses: parse_present(input_responses).ok()?,
        request_state: parse_present(request_state).ok()?,
        meta: parse_present(meta).ok()?,
    })
}
