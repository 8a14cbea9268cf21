//! Whether a type deserializes from a JSON object, asked of its `Deserialize` impl with no
//! input at all: the first thing the impl asks its deserializer for tells. A tool's
//! arguments must be an object; for the usual arguments (a struct, a map) this says so
//! without deriving the input schema, so deriving it can wait for the first `tools/list`
//! instead of slowing every server's start.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// What a type's `Deserialize` impl asked for first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A struct or a map: a JSON object.
    Object,
    /// Something else: a string, a number, a sequence, an option...
    Other,
    /// It did not say (it takes any value, or an enum): derive the schema to know.
    Unknown,
}

/// The shape `T` deserializes from.
pub(crate) fn shape_of<T: DeserializeOwned>() -> Shape {
    let seen = Cell::new(Shape::Unknown);
    let _ = T::deserialize(Probe(&seen));
    seen.get()
}

/// A deserializer that records the first request and refuses it.
#[derive(Clone, Copy)]
struct Probe<'a>(&'a Cell<Shape>);

impl Probe<'_> {
    fn saw<T>(self, shape: Shape) -> Result<T, Stop> {
        self.0.set(shape);
        Err(Stop)
    }
}

/// The probe's refusal.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probed")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// Methods of one kind: each records `$shape`.
macro_rules! record {
    ($shape:expr => $($method:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            self.saw($shape)
        })*
    };
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    record!(Shape::Unknown => deserialize_any, deserialize_ignored_any);
    record!(Shape::Other =>
        deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64,
        deserialize_i128, deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64,
        deserialize_u128, deserialize_f32, deserialize_f64, deserialize_char, deserialize_str,
        deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_option,
        deserialize_unit, deserialize_seq, deserialize_identifier,
    );
    record!(Shape::Object => deserialize_map);

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Stop> {
        self.saw(Shape::Other)
    }

    /// A newtype is what it wraps: follow it.
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Stop> {
        self.saw(Shape::Other)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Stop> {
        self.saw(Shape::Other)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.saw(Shape::Object)
    }

    /// An enum's schema depends on its variants (a string, or alternatives): unknown.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.saw(Shape::Unknown)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::{Shape, shape_of};

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct Named {
        a: u32,
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct Wrapper(Named);

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct Pair(u32, u32);

    #[allow(dead_code)]
    #[derive(Deserialize)]
    #[serde(transparent)]
    struct Text(String);

    #[allow(dead_code)]
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        A(Named),
        B(String),
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    enum Mode {
        Fast,
        Slow,
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct Flattened {
        #[serde(flatten)]
        inner: Named,
    }

    #[test]
    fn structs_and_maps_are_objects() {
        assert_eq!(shape_of::<Named>(), Shape::Object);
        assert_eq!(shape_of::<Wrapper>(), Shape::Object);
        assert_eq!(shape_of::<Flattened>(), Shape::Object);
        assert_eq!(shape_of::<BTreeMap<String, u32>>(), Shape::Object);
        assert_eq!(
            shape_of::<serde_json::Map<String, serde_json::Value>>(),
            Shape::Object
        );
    }

    #[test]
    fn the_rest_is_other_or_unknown() {
        assert_eq!(shape_of::<String>(), Shape::Other);
        assert_eq!(shape_of::<Text>(), Shape::Other);
        assert_eq!(shape_of::<u64>(), Shape::Other);
        assert_eq!(shape_of::<Vec<Named>>(), Shape::Other);
        assert_eq!(shape_of::<Option<Named>>(), Shape::Other);
        assert_eq!(shape_of::<Pair>(), Shape::Other);
        assert_eq!(shape_of::<()>(), Shape::Other);
        assert_eq!(shape_of::<Mode>(), Shape::Unknown);
        assert_eq!(shape_of::<Either>(), Shape::Unknown);
        assert_eq!(shape_of::<serde_json::Value>(), Shape::Unknown);
    }
}
