//! `tools/call` params parsed once: the tool's `arguments` stay raw JSON text and are
//! parsed straight into the tool's argument type, without a `serde_json::Map` in between.
//!
//! The general path (`ClientRequest::parse`, arguments as a map) stays the reference: the
//! fast path (the params read by [`ferry_protocol::read::tool_call`]) is taken only where
//! it cannot answer differently, and any failure on it goes back to the general path,
//! which produces the error messages.

use ferry_protocol::types::JsonObject;
use serde::de::DeserializeOwned;

use super::input::Salient;

/// The arguments of a `tools/call`, as they arrived.
pub(crate) enum Arguments<'a> {
    /// The raw text of a JSON object that parses into a map (see `read::tool_call`).
    Raw(&'a str),
    /// A parsed map (the general path), or none.
    Object(Option<JsonObject>),
}

impl Arguments<'_> {
    /// The arguments as a map (empty when there are none).
    pub(crate) fn into_object(self) -> JsonObject {
        match self {
            // A `Raw` is a valid object that the map parser accepts (see `read::tool_call`).
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
