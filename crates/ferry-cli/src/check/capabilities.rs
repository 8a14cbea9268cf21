//! Capability honesty: what the server declares it implements, and what it does not
//! declare it does not serve. Lists are fetched whole here (pagination included) for the
//! other checks.

use ferry::protocol::Feature;
use serde_json::{Value, json};

use super::model::{Outcome, requirement};
use super::pagination::{self, ListMethod, Listing};
use super::probe::Probe;
use super::shapes;
use super::target::Reply;

requirement!(
    DECLARED_SERVED,
    "capabilities.declared-is-served",
    Capabilities,
    Must,
    "a declared capability's methods answer with results",
    "basic/lifecycle#capability-negotiation"
);
requirement!(
    UNDECLARED_NOT_SERVED,
    "capabilities.undeclared-is-not-served",
    Capabilities,
    Must,
    "a feature the server serves is declared (an undeclared one's methods do not answer with results)",
    "basic/lifecycle#capability-negotiation"
);
requirement!(
    UNDECLARED_METHOD_NOT_FOUND,
    "capabilities.undeclared-method-not-found",
    Capabilities,
    Should,
    "an undeclared feature's methods are answered with error -32601",
    "basic/lifecycle#capability-negotiation"
);
requirement!(
    CLIENT_CAPABILITIES_RESPECTED,
    "capabilities.client-capabilities-respected",
    Capabilities,
    Should,
    "the server sends no request needing a client capability the client did not declare",
    "basic/lifecycle#capability-negotiation"
);

requirement!(
    LIST_CHANGED_DECLARED,
    "capabilities.list-changed-declared",
    Capabilities,
    Must,
    "list_changed notifications come only for a feature declaring listChanged, resources/updated only with subscribe declared",
    "server/tools#list-changed-notification"
);
requirement!(
    NOTIFICATION_NO_ID,
    "jsonrpc.notification-no-id",
    JsonRpc,
    Must,
    "the server's notifications carry no id",
    "basic#notifications"
);
requirement!(
    COMPLETION_MAX,
    "capabilities.completion-at-most-100",
    Capabilities,
    Must,
    "a completion result carries at most 100 values",
    "server/utilities/completion"
);

const TOOLS: ListMethod = ListMethod {
    method: "tools/list",
    field: "tools",
    def: "ListToolsResult",
};
const RESOURCES: ListMethod = ListMethod {
    method: "resources/list",
    field: "resources",
    def: "ListResourcesResult",
};
const TEMPLATES: ListMethod = ListMethod {
    method: "resources/templates/list",
    field: "resourceTemplates",
    def: "ListResourceTemplatesResult",
};
const PROMPTS: ListMethod = ListMethod {
    method: "prompts/list",
    field: "prompts",
    def: "ListPromptsResult",
};

/// What the server offers, as listed.
#[derive(Default)]
pub(crate) struct Inventory {
    pub(crate) tools: Vec<Value>,
    pub(crate) resources: Vec<Value>,
    pub(crate) templates: Vec<Value>,
    pub(crate) prompts: Vec<Value>,
}

/// Check every capability both ways and list what the declared ones offer.
pub(crate) async fn check(probe: &mut Probe<'_>) -> Inventory {
    let mut inventory = Inventory::default();
    let mut any_list = None;
    for (capability, list) in [
        ("tools", TOOLS),
        ("resources", RESOURCES),
        ("resources", TEMPLATES),
        ("prompts", PROMPTS),
    ] {
        if probe.declares(capability) {
            match pagination::list_all(probe, list, &shapes::LIST_SHAPE).await {
                Listing::Items(items) => {
                    probe.record(&DECLARED_SERVED, Outcome::Pass);
                    any_list.get_or_insert(list);
                    match list.field {
                        "tools" => inventory.tools = items,
                        "resources" => inventory.resources = items,
                        "resourceTemplates" => inventory.templates = items,
                        _ => inventory.prompts = items,
                    }
                }
                Listing::Refused(reply) => probe.record(
                    &DECLARED_SERVED,
                    Outcome::Fail(format!(
                        "{capability} is declared; {} got {}",
                        list.method,
                        reply.describe()
                    )),
                ),
            }
        } else {
            let reply = probe.call(list.method, json!({})).await;
            undeclared(probe, capability, list.method, &reply);
        }
    }
    if let Some(list) = any_list {
        pagination::invalid_cursor(probe, list).await;
    }
    pagination::finish(probe);
    completions(probe, &inventory).await;
    inventory
}

/// The outcome for a method of an undeclared capability.
fn undeclared(probe: &mut Probe<'_>, capability: &str, method: &str, reply: &Reply) {
    let served = matches!(reply, Reply::Result(_));
    probe.expect(&UNDECLARED_NOT_SERVED, !served, || {
        format!(
            "{capability} is not declared, yet {method} got {}",
            reply.describe()
        )
    });
    if !served {
        probe.expect(
            &UNDECLARED_METHOD_NOT_FOUND,
            reply.code() == Some(-32601),
            || {
                format!(
                    "{capability} is not declared; {method} got {}",
                    reply.describe()
                )
            },
        );
    }
}

/// `logging/setLevel warning` (session era): served when declared, not otherwise.
pub(crate) async fn logging(probe: &mut Probe<'_>) {
    if !probe.revision.has(Feature::SetLevel) {
        return;
    }
    let reply = probe
        .call("logging/setLevel", json!({"level": "warning"}))
        .await;
    if probe.declares("logging") {
        let ok = matches!(reply, Reply::Result(_));
        probe.expect(&DECLARED_SERVED, ok, || {
            format!(
                "logging is declared; logging/setLevel got {}",
                reply.describe()
            )
        });
        if let Reply::Result(result) = &reply {
            probe.level_set_at = Some(probe.conn.notifications.len());
            probe.check_shape(
                &shapes::RESULT_SHAPE,
                "EmptyResult",
                "the logging/setLevel result",
                result,
            );
        }
    } else {
        undeclared(probe, "logging", "logging/setLevel", &reply);
    }
}

/// `completion/complete`: declared (from 2025-03-26) → answers for a prompt argument or a
/// template variable the server lists; undeclared → not served.
async fn completions(probe: &mut Probe<'_>, inventory: &Inventory) {
    if !probe.revision.has(Feature::CompletionsCapability) {
        return;
    }
    let target = inventory
        .prompts
        .iter()
        .find_map(|p| {
            let argument = p.get("arguments")?.as_array()?.first()?.get("name")?.as_str()?;
            Some(json!({"ref": {"type": "ref/prompt", "name": p.get("name")?}, "argument": {"name": argument, "value": ""}}))
        })
        .or_else(|| {
            inventory.templates.iter().find_map(|t| {
                let template = t.get("uriTemplate")?.as_str()?;
                let start = template.find('{')?;
                let end = template[start..].find('}')? + start;
                let variable = template[start + 1..end].trim_start_matches(['+', '#', '/', '?', '&', ';', '.']);
                let variable = variable.split([',', '*', ':']).next()?;
                Some(json!({"ref": {"type": "ref/resource", "uri": template}, "argument": {"name": variable, "value": ""}}))
            })
        });
    if !probe.declares("completions") {
        let params = target.unwrap_or_else(|| json!({"ref": {"type": "ref/prompt", "name": "ferry-check"}, "argument": {"name": "x", "value": ""}}));
        let reply = probe.call("completion/complete", params).await;
        undeclared(probe, "completions", "completion/complete", &reply);
        return;
    }
    let Some(params) = target else {
        return; // nothing to complete: no prompt argument, no template variable
    };
    let reply = probe.call("completion/complete", params.clone()).await;
    match &reply {
        Reply::Result(result) => {
            probe.record(&DECLARED_SERVED, Outcome::Pass);
            probe.check_shape(
                &shapes::RESULT_SHAPE,
                "CompleteResult",
                "the completion/complete result",
                result,
            );
            let values = result
                .pointer("/completion/values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            probe.expect(&COMPLETION_MAX, values <= 100, || {
                format!("completion/complete {params} got {values} values")
            });
        }
        other => probe.record(
            &DECLARED_SERVED,
            Outcome::Fail(format!(
                "completions is declared; completion/complete {params} got {}",
                other.describe()
            )),
        ),
    }
}

/// Requests the server sent although the checker declared no client capability.
pub(crate) fn client_capabilities(probe: &mut Probe<'_>) {
    let sent = std::mem::take(&mut probe.conn.server_requests);
    let needs_capability = |m: &String| {
        matches!(
            m.as_str(),
            "sampling/createMessage" | "roots/list" | "elicitation/create"
        )
    };
    let notifications: Vec<&String> = sent
        .iter()
        .filter(|m| m.starts_with("notifications/"))
        .collect();
    probe.expect(&NOTIFICATION_NO_ID, notifications.is_empty(), || {
        format!("sent with an id (as requests): {notifications:?}")
    });
    let bad: Vec<String> = sent.into_iter().filter(needs_capability).collect();
    probe.expect(&CLIENT_CAPABILITIES_RESPECTED, bad.is_empty(), || {
        format!(
            "the server sent {} to a client that declared no capabilities",
            bad.join(", ")
        )
    });
}

/// Change notifications received, against the capabilities that allow them.
pub(crate) fn list_changed(probe: &mut Probe<'_>) {
    let allowed = [
        ("notifications/tools/list_changed", "/tools/listChanged"),
        ("notifications/prompts/list_changed", "/prompts/listChanged"),
        (
            "notifications/resources/list_changed",
            "/resources/listChanged",
        ),
        ("notifications/resources/updated", "/resources/subscribe"),
    ];
    let mut seen = false;
    let methods: Vec<String> = probe
        .conn
        .notifications
        .iter()
        .filter_map(|n| n.get("method").and_then(Value::as_str).map(str::to_owned))
        .collect();
    for method in methods {
        let Some((_, capability)) = allowed.iter().find(|(m, _)| *m == method) else {
            continue;
        };
        seen = true;
        let declared = probe.capabilities.pointer(capability) == Some(&json!(true));
        probe.expect(&LIST_CHANGED_DECLARED, declared, || {
            format!("{method} was sent, {} is not declared", &capability[1..])
        });
    }
    if seen {
        probe.record(&LIST_CHANGED_DECLARED, Outcome::Pass);
    } else {
        let reason = "no list_changed or resources/updated notification was sent";
        probe.record(&LIST_CHANGED_DECLARED, Outcome::Skip(reason.into()));
    }
}
