//! What the command answers when the server asks: sampling (`--sampling-reply TEXT`, else
//! declined with an error naming the flag), elicitation (`--elicit-reply JSON`, else
//! declined) and roots (`--root`). What the server asked is printed on stderr.

use ferry::client::{ClientBuilder, ElicitationModes};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, JsonObject, Role, Root, SamplingContent, SamplingContents,
};
use serde_json::Value;

use super::output;

/// The model name in sampling answers.
const MODEL: &str = "ferry-cli";

/// The code of a declined sampling request (the spec's "user rejected" example).
const DECLINED: i64 = -1;

/// Register the handlers on `builder`.
pub(crate) fn register(
    builder: ClientBuilder,
    sampling: Option<String>,
    elicit: Option<JsonObject>,
    roots: &[String],
) -> ClientBuilder {
    let builder = builder
        .on_sampling(move |params| {
            let reply = sampling.clone();
            async move { sample(&params, reply) }
        })
        .on_elicitation_with(ElicitationModes::FormAndUrl, move |params| {
            let reply = elicit.clone();
            async move { Ok(elicitation(&params, reply)) }
        });
    if roots.is_empty() {
        return builder;
    }
    builder.roots(roots.iter().map(|r| root(r)).collect())
}

fn sample(
    params: &CreateMessageRequestParams,
    reply: Option<String>,
) -> Result<CreateMessageResult, ErrorObject> {
    let asked: Vec<&str> = params
        .messages
        .iter()
        .flat_map(|m| m.content.blocks())
        .filter_map(|b| match b {
            SamplingContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    output::note(&format!(
        "ferry: the server asks for a completion (sampling): {}",
        asked.join(" / ")
    ));
    let Some(text) = reply else {
        output::note("ferry: declined (pass --sampling-reply TEXT to answer sampling requests)");
        return Err(ErrorObject::new(
            DECLINED,
            "sampling declined: this client answers sampling only when run with \
             --sampling-reply TEXT",
        ));
    };
    output::note(&format!("ferry: answered with --sampling-reply {text:?}"));
    Ok(CreateMessageResult {
        role: Role::Assistant,
        content: SamplingContents::text(text),
        model: MODEL.into(),
        stop_reason: Some("endTurn".into()),
        meta: None,
    })
}

fn elicitation(params: &ElicitRequestParams, reply: Option<JsonObject>) -> ElicitResult {
    output::note(&format!(
        "ferry: the server asks (elicitation): {}",
        params.message()
    ));
    let url = match params {
        ElicitRequestParams::Form(form) => {
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
            describe_fields(&schema);
            false
        }
        ElicitRequestParams::Url(u) => {
            output::note(&format!("ferry:   open {}", u.url));
            true
        }
    };
    let Some(content) = reply else {
        output::note("ferry: declined (pass --elicit-reply JSON to accept)");
        return ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        };
    };
    output::note(&format!(
        "ferry: accepted with --elicit-reply {}",
        Value::Object(content.clone())
    ));
    ElicitResult {
        action: ElicitAction::Accept,
        // URL mode carries no content.
        content: (!url).then_some(content),
        meta: None,
    }
}

fn describe_fields(schema: &Value) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, field) in properties {
        let kind = field.get("type").and_then(Value::as_str).unwrap_or("?");
        let title = field
            .get("title")
            .or_else(|| field.get("description"))
            .and_then(Value::as_str)
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        let required = if required.contains(&name.as_str()) {
            ", required"
        } else {
            ""
        };
        output::note(&format!("ferry:   {name} ({kind}{required}){title}"));
    }
}

/// A root from `--root`: a URI as given, or a path made into a `file://` URI.
pub(crate) fn root(given: &str) -> Root {
    let uri = if given.contains("://") {
        given.to_owned()
    } else {
        let path = std::path::absolute(given).unwrap_or_else(|_| given.into());
        format!("file://{}", path.display())
    };
    Root {
        uri,
        name: None,
        meta: None,
    }
}
