//! Zero-sized markers for constant string members such as `"type": "object"`.

macro_rules! const_str {
    ($(#[$doc:meta])* $name:ident = $value:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The constant's wire value.
            pub const VALUE: &'static str = $value;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected {:?}, found {:?}",
                        $value, s
                    )))
                }
            }
        }
    };
}

const_str!(
    /// `"object"`.
    ObjectType = "object"
);
const_str!(
    /// `"string"`.
    StringType = "string"
);
const_str!(
    /// `"boolean"`.
    BooleanType = "boolean"
);
const_str!(
    /// `"array"`.
    ArrayType = "array"
);
const_str!(
    /// `"form"`: the elicitation mode.
    FormMode = "form"
);
const_str!(
    /// `"url"`: the elicitation mode.
    UrlMode = "url"
);
