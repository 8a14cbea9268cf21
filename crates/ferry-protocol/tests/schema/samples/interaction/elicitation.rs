//! Samples: elicitation (`elicitation/create`, from 2025-06-18): form mode with every field
//! schema (string formats, numbers, booleans, single and multi-select enums, titled and
//! untitled, the legacy `enumNames` form), URL mode (from 2025-11-25), every action, the
//! completion notification and the URL-elicitation-required error (2025-11-25 only).

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorResponse;
use ferry_protocol::methods::{ServerNotification, ServerRequest};
use ferry_protocol::types::*;
use ferry_protocol::{ErrorObject, RequestId};
use indexmap::IndexMap;
use serde_json::json;

use crate::schema::Sample;
use crate::schema::samples::support::{
    ErrorReply, client_result, input_request, input_response, notification_with_meta, object,
    progress_meta, request_with_meta, result_meta, server_notification, server_request,
};

/// A titled choice.
fn option(value: &str, title: &str) -> TitledOption {
    TitledOption {
        value: value.into(),
        title: title.into(),
    }
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

fn string_full(format: StringFormat) -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::String(StringSchema {
        title: Some("Contact".into()),
        description: Some("How to reach you".into()),
        min_length: Some(3),
        max_length: Some(80),
        format: Some(format),
        default: Some("someone@example.com".into()),
        ..Default::default()
    })
}

fn number_full(kind: NumberKind) -> PrimitiveSchemaDefinition {
    let (title, unit) = match kind {
        NumberKind::Integer => ("Age", "In years"),
        NumberKind::Number => ("Height", "In meters"),
    };
    PrimitiveSchemaDefinition::Number(NumberSchema {
        kind,
        title: Some(title.into()),
        description: Some(unit.into()),
        minimum: Some(0.into()),
        maximum: Some(150.into()),
        default: Some(30.into()),
    })
}

fn boolean_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::Boolean(BooleanSchema {
        title: Some("Subscribe".into()),
        description: Some("Receive the newsletter".into()),
        default: Some(false),
        ..Default::default()
    })
}

fn untitled_single_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
        title: Some("Color".into()),
        description: Some("Favorite color".into()),
        values: strings(&["red", "green", "blue"]),
        default: Some("green".into()),
        ..Default::default()
    })
}

fn titled_single_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::TitledSingleSelect(TitledSingleSelectEnumSchema {
        title: Some("Plan".into()),
        description: Some("Subscription plan".into()),
        one_of: vec![option("free", "Free"), option("pro", "Professional")],
        default: Some("free".into()),
        ..Default::default()
    })
}

fn untitled_multi_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
        title: Some("Colors".into()),
        description: Some("Pick some".into()),
        min_items: Some(1),
        max_items: Some(2),
        items: UntitledItems {
            values: strings(&["red", "green", "blue"]),
            ..Default::default()
        },
        default: Some(strings(&["red"])),
        ..Default::default()
    })
}

fn titled_multi_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::TitledMultiSelect(TitledMultiSelectEnumSchema {
        title: Some("Toppings".into()),
        description: Some("Pick any".into()),
        min_items: Some(0),
        max_items: Some(3),
        items: TitledItems {
            any_of: vec![option("ham", "Ham"), option("olive", "Olives")],
        },
        default: Some(strings(&["olive"])),
        ..Default::default()
    })
}

fn legacy_full() -> PrimitiveSchemaDefinition {
    PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
        title: Some("Size".into()),
        description: Some("Shirt size".into()),
        values: strings(&["s", "m", "l"]),
        enum_names: Some(strings(&["Small", "Medium", "Large"])),
        default: Some("m".into()),
        ..Default::default()
    })
}

fn form(
    fields: Vec<(&str, PrimitiveSchemaDefinition)>,
    required: Option<&[&str]>,
) -> ElicitRequestFormParams {
    ElicitRequestFormParams {
        message: "Please provide your details".into(),
        requested_schema: ElicitationSchema {
            properties: fields
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<IndexMap<_, _>>(),
            required: required.map(strings),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn form_minimal() -> ElicitRequestParams {
    ElicitRequestParams::Form(form(
        vec![(
            "name",
            PrimitiveSchemaDefinition::String(StringSchema::default()),
        )],
        None,
    ))
}

/// Every field kind 2025-06-18 has, with every member: each revision keeps what it has.
fn form_full() -> ElicitRequestParams {
    let mut form = form(
        vec![
            ("email", string_full(StringFormat::Email)),
            ("website", string_full(StringFormat::Uri)),
            ("birthday", string_full(StringFormat::Date)),
            ("meeting", string_full(StringFormat::DateTime)),
            ("age", number_full(NumberKind::Integer)),
            ("height", number_full(NumberKind::Number)),
            ("subscribe", boolean_full()),
            ("color", untitled_single_full()),
            ("plan", titled_single_full()),
            ("size", legacy_full()),
        ],
        Some(&["email", "age"]),
    );
    form.mode = Some(FormMode);
    form.requested_schema.schema = Some("https://json-schema.org/draft/2020-12/schema".into());
    form.task = Some(TaskMetadata { ttl: Some(300_000) });
    ElicitRequestParams::Form(form)
}

fn form_multi_select() -> ElicitRequestParams {
    ElicitRequestParams::Form(form(
        vec![
            ("colors", untitled_multi_full()),
            ("toppings", titled_multi_full()),
        ],
        Some(&["colors"]),
    ))
}

fn url(elicitation_id: Option<&str>) -> ElicitRequestUrlParams {
    ElicitRequestUrlParams {
        mode: UrlMode,
        message: "Please authorize access to your calendar".into(),
        url: "https://example.com/oauth/authorize?state=abc".into(),
        elicitation_id: elicitation_id.map(Into::into),
        ..Default::default()
    }
}

fn accepted() -> ElicitResult {
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(object(
            json!({"email": "someone@example.com", "age": 30, "subscribe": true}),
        )),
        meta: None,
    }
}

fn action(action: ElicitAction) -> ElicitResult {
    ElicitResult {
        action,
        content: None,
        meta: None,
    }
}

pub fn samples() -> Vec<Sample> {
    let mut all = fields();
    all.extend(requests());
    all.extend(results());
    all.extend(url_completion());
    all
}

fn fields() -> Vec<Sample> {
    let string: &[&str] = &["StringSchema", "PrimitiveSchemaDefinition"];
    let number: &[&str] = &["NumberSchema", "PrimitiveSchemaDefinition"];
    let boolean: &[&str] = &["BooleanSchema", "PrimitiveSchemaDefinition"];
    let enum_defs = |def| vec![def, "EnumSchema", "PrimitiveSchemaDefinition"];
    let single = |def| [enum_defs(def), vec!["SingleSelectEnumSchema"]].concat();
    let multi = |def| [enum_defs(def), vec!["MultiSelectEnumSchema"]].concat();
    let untitled_single = single("UntitledSingleSelectEnumSchema");
    let titled_single = single("TitledSingleSelectEnumSchema");
    let untitled_multi = multi("UntitledMultiSelectEnumSchema");
    let titled_multi = multi("TitledMultiSelectEnumSchema");
    let legacy = enum_defs("LegacyTitledEnumSchema");
    let multi_since = |s: Sample| s.revisions(V2025_11_25, V2026_07_28);
    vec![
        Sample::object(
            "string field, minimal",
            string,
            PrimitiveSchemaDefinition::String(StringSchema::default()),
        ),
        Sample::object(
            "string field, email",
            string,
            string_full(StringFormat::Email),
        ),
        Sample::object("string field, uri", string, string_full(StringFormat::Uri)),
        Sample::object(
            "string field, date",
            string,
            string_full(StringFormat::Date),
        ),
        Sample::object(
            "string field, date-time",
            string,
            string_full(StringFormat::DateTime),
        ),
        Sample::object(
            "number field, minimal",
            number,
            PrimitiveSchemaDefinition::Number(NumberSchema::default()),
        ),
        Sample::object(
            "number field, integer, full",
            number,
            number_full(NumberKind::Integer),
        ),
        Sample::object(
            "number field, number, full",
            number,
            PrimitiveSchemaDefinition::Number(NumberSchema {
                minimum: Some(serde_json::Number::from_f64(0.5).expect("finite")),
                default: Some(serde_json::Number::from_f64(1.75).expect("finite")),
                ..NumberSchema::default()
            }),
        ),
        Sample::object(
            "boolean field, minimal",
            boolean,
            PrimitiveSchemaDefinition::Boolean(BooleanSchema::default()),
        ),
        Sample::object("boolean field, full", boolean, boolean_full()),
        Sample::object(
            "untitled single select, minimal",
            &untitled_single,
            PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                values: strings(&["a", "b"]),
                ..Default::default()
            }),
        ),
        Sample::object(
            "untitled single select, full",
            &untitled_single,
            untitled_single_full(),
        ),
        // 2025-06-18 gets the equivalent `enum` + `enumNames`.
        Sample::object(
            "titled single select, minimal",
            &titled_single,
            PrimitiveSchemaDefinition::TitledSingleSelect(TitledSingleSelectEnumSchema {
                one_of: vec![option("a", "A")],
                ..Default::default()
            }),
        ),
        Sample::object(
            "titled single select, full",
            &titled_single,
            titled_single_full(),
        ),
        multi_since(Sample::object(
            "untitled multi select, minimal",
            &untitled_multi,
            PrimitiveSchemaDefinition::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                items: UntitledItems {
                    values: strings(&["a", "b"]),
                    ..Default::default()
                },
                ..Default::default()
            }),
        )),
        multi_since(Sample::object(
            "untitled multi select, full",
            &untitled_multi,
            untitled_multi_full(),
        )),
        multi_since(Sample::object(
            "titled multi select, minimal",
            &titled_multi,
            PrimitiveSchemaDefinition::TitledMultiSelect(TitledMultiSelectEnumSchema {
                items: TitledItems {
                    any_of: vec![option("a", "A")],
                },
                ..Default::default()
            }),
        )),
        multi_since(Sample::object(
            "titled multi select, full",
            &titled_multi,
            titled_multi_full(),
        )),
        Sample::object(
            "legacy titled enum, minimal",
            &legacy,
            PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
                values: strings(&["a"]),
                ..Default::default()
            }),
        ),
        Sample::object("legacy titled enum, full", &legacy, legacy_full()),
    ]
}

fn requests() -> Vec<Sample> {
    let form_defs: &[&str] = &["ElicitRequestParams", "ElicitRequestFormParams"];
    let form_task: &[&str] = &[
        "ElicitRequestParams",
        "ElicitRequestFormParams",
        "TaskAugmentedRequestParams",
    ];
    let url_defs: &[&str] = &[
        "ElicitRequestParams",
        "ElicitRequestURLParams",
        "TaskAugmentedRequestParams",
    ];
    let request: &[&str] = &["ElicitRequest"];
    let session = |since, s: Sample| s.revisions(since, V2025_11_25);
    let elicit = ServerRequest::Elicit;
    let input = |name: &str, defs, params: ElicitRequestParams| {
        input_request("elicitation/create", name, defs, "ElicitRequest", params)
    };
    let form_with_meta = || match form_minimal() {
        ElicitRequestParams::Form(f) => ElicitRequestParams::Form(ElicitRequestFormParams {
            meta: Some(progress_meta("elicit-1")),
            ..f
        }),
        _ => unreachable!("a form"),
    };
    let url_full = ElicitRequestUrlParams {
        task: Some(TaskMetadata::default()),
        meta: Some(progress_meta("elicit-2")),
        ..url(Some("550e8400-e29b-41d4-a716-446655440000"))
    };
    vec![
        session(
            V2025_06_18,
            server_request("form, minimal", form_defs, request, elicit(form_minimal())),
        ),
        session(
            V2025_06_18,
            server_request("form, every field", form_task, request, elicit(form_full())),
        ),
        session(
            V2025_06_18,
            request_with_meta("form, with _meta", form_defs, elicit(form_with_meta())),
        ),
        session(
            V2025_11_25,
            server_request(
                "form, multi-select",
                form_defs,
                request,
                elicit(form_multi_select()),
            ),
        ),
        session(
            V2025_11_25,
            server_request(
                "url, minimal",
                url_defs,
                request,
                elicit(ElicitRequestParams::Url(url(Some("elicit-1")))),
            ),
        ),
        session(
            V2025_11_25,
            server_request(
                "url, full",
                url_defs,
                request,
                elicit(ElicitRequestParams::Url(url_full.clone())),
            ),
        ),
        input("form input, minimal", form_defs, form_minimal()),
        input("form input, every field", form_defs, form_full()),
        input("form input, with _meta", form_defs, form_with_meta()),
        input("form input, multi-select", form_defs, form_multi_select()),
        // 2026-07-28 has no `elicitationId` (servers keep their own in `requestState`).
        input(
            "url input, minimal",
            url_defs,
            ElicitRequestParams::Url(url(None)),
        ),
        input(
            "url input, full",
            url_defs,
            ElicitRequestParams::Url(url_full),
        ),
    ]
}

fn results() -> Vec<Sample> {
    let result: &[&str] = &["ElicitResult"];
    let since = |since, s: Sample| s.revisions(since, V2025_11_25);
    let multi = ElicitResult {
        content: Some(object(json!({"colors": ["red", "blue"], "name": "Ada"}))),
        ..accepted()
    };
    let with_meta = ElicitResult {
        meta: Some(result_meta()),
        ..accepted()
    };
    vec![
        since(
            V2025_06_18,
            client_result("elicit result, accept", result, accepted()),
        ),
        since(
            V2025_06_18,
            client_result(
                "elicit result, accept, with _meta",
                result,
                with_meta.clone(),
            ),
        ),
        since(
            V2025_06_18,
            client_result(
                "elicit result, accept, empty content",
                result,
                ElicitResult {
                    content: Some(JsonObject::new()),
                    ..accepted()
                },
            ),
        ),
        since(
            V2025_06_18,
            client_result(
                "elicit result, accept without content (URL mode)",
                result,
                action(ElicitAction::Accept),
            ),
        ),
        since(
            V2025_06_18,
            client_result(
                "elicit result, decline",
                result,
                action(ElicitAction::Decline),
            ),
        ),
        since(
            V2025_06_18,
            client_result(
                "elicit result, cancel",
                result,
                action(ElicitAction::Cancel),
            ),
        ),
        since(
            V2025_11_25,
            client_result("elicit result, multi-select", result, multi.clone()),
        ),
        input_response("elicit answer, accept", result, accepted()),
        input_response("elicit answer, accept, with _meta", result, with_meta),
        input_response("elicit answer, multi-select", result, multi),
        input_response(
            "elicit answer, decline",
            result,
            action(ElicitAction::Decline),
        ),
        input_response(
            "elicit answer, cancel",
            result,
            action(ElicitAction::Cancel),
        ),
    ]
}

/// 2025-11-25 only: the end of an out-of-band URL elicitation, and the error that asks for
/// one.
fn url_completion() -> Vec<Sample> {
    let only = |s: Sample| s.revisions(V2025_11_25, V2025_11_25);
    let complete = |meta| {
        ServerNotification::ElicitationComplete(ElicitationCompleteNotificationParams {
            elicitation_id: "550e8400-e29b-41d4-a716-446655440000".into(),
            meta,
        })
    };
    let required = |elicitations| ErrorReply {
        response: ErrorResponse::new(
            Some(RequestId::Number(2)),
            ErrorObject::new(
                error_codes::URL_ELICITATION_REQUIRED,
                "This request requires more information.",
            ),
        ),
        data: Some(UrlElicitationRequiredData { elicitations }),
    };
    let error: &[&str] = &[
        "URLElicitationRequiredError",
        "JSONRPCErrorResponse",
        "JSONRPCResponse",
        "JSONRPCMessage",
    ];
    vec![
        only(server_notification(
            "elicitation complete",
            &[],
            &["ElicitationCompleteNotification"],
            complete(None),
        )),
        only(notification_with_meta(
            "elicitation complete, with _meta",
            &["NotificationParams"],
            complete(Some(NotificationMeta {
                other: object(json!({"example.com/key": "value"})),
                ..Default::default()
            })),
        )),
        only(Sample::object(
            "URL elicitation required error",
            error,
            required(vec![url(Some("elicit-1")), url(Some("elicit-2"))]),
        )),
        only(Sample::object(
            "URL elicitation required error, none listed",
            error,
            required(Vec::new()),
        )),
    ]
}
