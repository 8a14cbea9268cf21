//! The forms the elicitation tools ask the user to fill: `test_elicitation`'s two strings,
//! SEP-1034's defaults for every primitive type, SEP-1330's five enum shapes.

use ferry::protocol::types::{
    BooleanSchema, ElicitationSchema, LegacyTitledEnumSchema, NumberKind, NumberSchema,
    PrimitiveSchemaDefinition, StringSchema, TitledItems, TitledMultiSelectEnumSchema,
    TitledOption, TitledSingleSelectEnumSchema, UntitledItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};

/// `test_elicitation`: a username and an email address, both required.
pub(super) fn contact_form() -> ElicitationSchema {
    ElicitationSchema {
        required: Some(vec!["username".into(), "email".into()]),
        ..form([
            ("username", string("User's response", None)),
            ("email", string("User's email address", None)),
        ])
    }
}

/// A form of `fields`, in order, none required.
fn form<const N: usize>(fields: [(&str, PrimitiveSchemaDefinition); N]) -> ElicitationSchema {
    ElicitationSchema {
        properties: fields
            .into_iter()
            .map(|(name, field)| (name.to_owned(), field))
            .collect(),
        required: Some(Vec::new()),
        ..Default::default()
    }
}

/// A string field.
fn string(description: &str, default: Option<&str>) -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::String(StringSchema {
        description: Some(description.into()),
        default: default.map(str::to_owned),
        ..Default::default()
    })
}

/// A number field of `kind` with a default.
fn number(
    kind: NumberKind,
    description: &str,
    default: serde_json::Number,
) -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::Number(NumberSchema {
        kind,
        description: Some(description.into()),
        default: Some(default),
        ..Default::default()
    })
}

/// `(value, title)` pairs as titled options.
fn titled(options: [(&str, &str); 3]) -> Vec<TitledOption> {
    options
        .into_iter()
        .map(|(value, title)| TitledOption {
            value: value.into(),
            title: title.into(),
        })
        .collect()
}

/// Strings.
fn strings(values: [&str; 3]) -> Vec<String> {
    values.into_iter().map(str::to_owned).collect()
}

/// SEP-1034: a default for every primitive type.
pub(super) fn defaults_form() -> ElicitationSchema {
    let score = serde_json::Number::from_f64(95.5).unwrap_or_else(|| 95.into());
    form([
        ("name", string("User name", Some("John Doe"))),
        ("age", number(NumberKind::Integer, "User age", 30.into())),
        ("score", number(NumberKind::Number, "User score", score)),
        (
            "status",
            PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                description: Some("User status".into()),
                values: strings(["active", "inactive", "pending"]),
                default: Some("active".into()),
                ..Default::default()
            }),
        ),
        (
            "verified",
            PrimitiveSchemaDefinition::Boolean(BooleanSchema {
                description: Some("Verification status".into()),
                default: Some(true),
                ..Default::default()
            }),
        ),
    ])
}

/// SEP-1330: the five enum shapes.
pub(super) fn enums_form() -> ElicitationSchema {
    form([
        (
            "untitledSingle",
            PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                description: Some("Select one option".into()),
                values: strings(["option1", "option2", "option3"]),
                ..Default::default()
            }),
        ),
        (
            "titledSingle",
            PrimitiveSchemaDefinition::TitledSingleSelect(TitledSingleSelectEnumSchema {
                description: Some("Select one option with titles".into()),
                one_of: titled([
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ]),
                ..Default::default()
            }),
        ),
        (
            "legacyEnum",
            PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
                description: Some("Select one option (legacy)".into()),
                values: strings(["opt1", "opt2", "opt3"]),
                enum_names: Some(strings(["Option One", "Option Two", "Option Three"])),
                ..Default::default()
            }),
        ),
        (
            "untitledMulti",
            PrimitiveSchemaDefinition::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                description: Some("Select multiple options".into()),
                min_items: Some(1),
                max_items: Some(3),
                items: UntitledItems {
                    values: strings(["option1", "option2", "option3"]),
                    ..Default::default()
                },
                ..Default::default()
            }),
        ),
        (
            "titledMulti",
            PrimitiveSchemaDefinition::TitledMultiSelect(TitledMultiSelectEnumSchema {
                description: Some("Select multiple options with titles".into()),
                min_items: Some(1),
                max_items: Some(3),
                items: TitledItems {
                    any_of: titled([
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    ]),
                },
                ..Default::default()
            }),
        ),
    ])
}
