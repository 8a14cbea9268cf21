//! The parts of the reference server that change while it serves, so that every change
//! notification can be seen: `change_tools` and `change_prompts` add or remove the tool
//! and the prompt `surprise` (→ `notifications/tools/list_changed`,
//! `notifications/prompts/list_changed`), and `ferry://clock` (the current time) is
//! updated on demand by `tick_clock` and every [`CLOCK_PERIOD`] by `ferry serve`
//! (→ `notifications/resources/updated` to its subscribers).
//!
//! Several instances sharing their sessions (`ferry serve --http --redis`) stay alike: an
//! instance that adds or removes `surprise` tells the others, which do the same
//! (`Server::tell_instances`), and a subscriber hears the clock once per tick whichever
//! instance it is connected to (each instance ticks for its own clients only).

use std::time::{Duration, SystemTime};

use ferry::protocol::types::{PromptMessage, Resource, ResourceContents};
use ferry::server::{Context, Server, ServerBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

/// The URI of the clock resource.
pub(crate) const CLOCK: &str = "ferry://clock";
/// How often `ferry serve` tells the clock's subscribers it changed.
pub(crate) const CLOCK_PERIOD: Duration = Duration::from_secs(10);
/// The topics of the messages between instances.
const TOOLS_TOPIC: &str = "ferry/tools";
const PROMPTS_TOPIC: &str = "ferry/prompts";

/// Add or remove.
#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Action {
    /// Add it (nothing happens if it is there).
    Add,
    /// Remove it (nothing happens if it is not there).
    Remove,
}

/// The arguments of `change_tools` and `change_prompts`.
#[derive(Deserialize, JsonSchema)]
struct Change {
    /// `add` or `remove`.
    action: Action,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Add or remove the tool `surprise` here: whether the list changed.
fn change_tool(server: &Server, action: Action) -> bool {
    let listed = server.tool_names().iter().any(|n| n == "surprise");
    match (action, listed) {
        (Action::Add, false) => {
            server.add_tool(
                "surprise",
                "A tool that `change_tools` adds and removes.",
                |_: NoArgs, _cx: Context| async move { "Surprise!" },
            );
            true
        }
        (Action::Remove, true) => server.remove_tool("surprise"),
        _ => false,
    }
}

/// Add or remove the prompt `surprise` here: whether the list changed.
fn change_prompt(server: &Server, action: Action) -> bool {
    match action {
        Action::Add => {
            let had = server.remove_prompt("surprise");
            server.add_prompt(
                "surprise",
                "A prompt that `change_prompts` adds and removes.",
                |_: NoArgs, _cx: Context| async move { vec![PromptMessage::user("Surprise me.")] },
            );
            !had
        }
        Action::Remove => server.remove_prompt("surprise"),
    }
}

impl Action {
    /// As sent to the other instances (and as the arguments spell it).
    fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Remove => "remove",
        }
    }

    fn parse(payload: &str) -> Option<Action> {
        [Action::Add, Action::Remove]
            .into_iter()
            .find(|a| a.as_str() == payload)
    }
}

fn said(what: &str, action: Action, changed: bool) -> String {
    let done = match (action, changed) {
        (Action::Add, true) => "added",
        (Action::Remove, true) => "removed",
        (Action::Add, false) => "already there",
        (Action::Remove, false) => "not there",
    };
    format!("{what} `surprise`: {done}")
}

/// Register the changing tools, the clock, and the hook that applies the other
/// instances' changes.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    let clock = Resource {
        description: Some("The current time (UTC), updated every 10 s and by `tick_clock`.".into()),
        mime_type: Some("text/plain".into()),
        ..Resource::new(CLOCK, "clock")
    };
    builder
        .tool(
            "change_tools",
            "Add or remove the tool `surprise` (the server then sends tools/list_changed).",
            |args: Change, cx: Context| async move {
                let changed = change_tool(cx.server(), args.action);
                cx.server()
                    .tell_instances(TOOLS_TOPIC, args.action.as_str());
                said("the tool", args.action, changed)
            },
        )
        .tool(
            "change_prompts",
            "Add or remove the prompt `surprise` (the server then sends prompts/list_changed).",
            |args: Change, cx: Context| async move {
                let changed = change_prompt(cx.server(), args.action);
                cx.server()
                    .tell_instances(PROMPTS_TOPIC, args.action.as_str());
                said("the prompt", args.action, changed)
            },
        )
        .tool(
            "tick_clock",
            "Tell the subscribers of ferry://clock that it changed (resources/updated).",
            |_: NoArgs, cx: Context| async move {
                cx.server().notify_resource_updated(CLOCK);
                format!("{CLOCK} updated")
            },
        )
        .resource(clock, |_cx: Context| async move {
            let now = super::calculate::iso_timestamp(SystemTime::now());
            vec![ResourceContents::text(CLOCK, "text/plain", now)]
        })
        .on_instance_message(|server, topic, payload| {
            let Some(action) = Action::parse(payload) else {
                return;
            };
            match topic {
                TOOLS_TOPIC => drop(change_tool(server, action)),
                PROMPTS_TOPIC => drop(change_prompt(server, action)),
                _ => {}
            }
        })
}

/// Tell the clock's subscribers every [`CLOCK_PERIOD`] that it changed, this instance's
/// only (every instance ticks), for as long as the process runs.
pub(crate) fn tick(server: Server) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(CLOCK_PERIOD);
        every.tick().await;
        loop {
            every.tick().await;
            server.notify_resource_updated_here(CLOCK);
        }
    });
}
