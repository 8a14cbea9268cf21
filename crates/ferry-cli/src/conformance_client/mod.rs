//! `ferry conformance-client URL`: Ferry's client as the official MCP conformance suite's
//! client scenarios run it (`conformance client --command 'ferry conformance-client'`): once
//! per scenario, with the scenario's name in `MCP_CONFORMANCE_SCENARIO` and the URL of the
//! suite's mock server as the last argument. It connects over Streamable HTTP with
//! `ferry::http_client`, does what the scenario asks of a client, and exits 0 (1 on any
//! error, described on stderr).
//!
//! | scenario | what it does |
//! |---|---|
//! | `initialize` | connects (initialize, initialized) and closes |
//! | `tools_call` | lists the tools, calls `add_numbers` with two numbers |
//! | `elicitation-sep1034-client-defaults` | calls `test_client_elicitation_defaults`; accepts its form with every field's default |
//! | `sse-retry` | calls `test_reconnection`, whose stream the server closes: the client resumes it after the `retry` delay |
//! | `auth/*` | connects with Ferry's OAuth client (see `auth.rs`), lists the tools and calls each one |
//!
//! Every scenario also answers elicitation (accept, defaults) and sampling (a fixed text).

mod auth;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ferry::client::{Client, ElicitationModes};
use ferry::http_client::HttpClientConfig;
use ferry::protocol::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, JsonObject, Role,
    SamplingContents,
};
use serde_json::{Value, json};

/// `ferry conformance-client`.
#[derive(clap::Args)]
pub(crate) struct ConformanceClientArgs {
    /// The suite's arguments: the URL of its mock server comes last.
    #[arg(required = true, value_name = "URL")]
    args: Vec<String>,
}

/// Run the scenario named by `MCP_CONFORMANCE_SCENARIO` against the URL.
pub(crate) async fn run_scenario(args: ConformanceClientArgs) -> ExitCode {
    let url = args.args.last().cloned().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry conformance-client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}

/// What the scenario asks of a client.
async fn run(scenario: &str, url: &str) -> Result<(), String> {
    let mut config = HttpClientConfig::default();
    let mut oauth = None;
    let call: Option<(&str, Value)> = match scenario {
        auth if auth.starts_with("auth/") => {
            let client = auth::oauth_client(scenario, url).await?;
            config = config.auth(Arc::new(client.clone()));
            oauth = Some(client);
            None
        }
        "initialize" => None,
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        other => return Err(format!("unknown scenario {other:?}")),
    };
    let (client, connection) =
        Client::builder("ferry-conformance-client", env!("CARGO_PKG_VERSION"))
            .timeout(Duration::from_secs(20))
            .on_elicitation_with(ElicitationModes::Form, |params| async move {
                Ok(accept_defaults(&params))
            })
            .on_sampling(|_params| async move {
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContents::text("ferry-conformance-client"),
                    model: "ferry-conformance-client".into(),
                    stop_reason: Some("endTurn".into()),
                    meta: None,
                })
            })
            .connect_http(url, config)
            .await
            .map_err(|e| with_oauth_error(format!("connect: {e}"), oauth.as_ref()))?;
    let outcome = async {
        if oauth.is_some() {
            // Every tool the server lists, called with no arguments (a step-up server
            // asks for more scope on tools/call than on tools/list).
            let tools = client
                .list_all_tools()
                .await
                .map_err(|e| format!("tools/list: {e}"))?;
            for tool in tools {
                client
                    .call_tool(&tool.name, json!({}))
                    .await
                    .map_err(|e| format!("tools/call {}: {e}", tool.name))?;
            }
        }
        if let Some((name, arguments)) = call {
            let tools = client
                .list_all_tools()
                .await
                .map_err(|e| format!("tools/list: {e}"))?;
            if !tools.iter().any(|t| t.name == name) {
                return Err(format!("the server lists no tool {name:?}"));
            }
            let result = client
                .call_tool(name, arguments)
                .await
                .map_err(|e| format!("tools/call {name}: {e}"))?;
            if result.is_error == Some(true) {
                return Err(format!("tools/call {name} failed: {:?}", result.content));
            }
        }
        Ok(())
    }
    .await;
    drop(client);
    connection.close().await;
    outcome.map_err(|e| with_oauth_error(e, oauth.as_ref()))
}

/// `error`, with what the OAuth client last failed at (if it did).
fn with_oauth_error(
    error: String,
    oauth: Option<&ferry::http_client::oauth::OAuthClient>,
) -> String {
    match oauth.and_then(|o| o.last_error()) {
        Some(cause) => format!("{error} ({cause})"),
        None => error,
    }
}

/// Accept a form with every field's `default` (SEP-1034); a URL elicitation is declined.
fn accept_defaults(params: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::Form(form) = params else {
        return ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        };
    };
    let content: JsonObject = form
        .requested_schema
        .properties
        .iter()
        .filter_map(|(name, field)| {
            let default = serde_json::to_value(field).ok()?.get("default")?.clone();
            Some((name.clone(), default))
        })
        .collect();
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
        meta: None,
    }
}
