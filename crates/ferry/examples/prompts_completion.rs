//! A prompt with arguments, and completion of those arguments: the server suggests values
//! as the user types (`completion/complete`), the client shows the suggestions, then gets
//! the prompt filled in.
//!
//!     cargo run -p ferry-mcp --example prompts_completion

use std::collections::BTreeMap;

use ferry::client::Client;
use ferry::engine::Transport;
use ferry::protocol::types::{PromptMessage, Reference};
use ferry::server::{CompletionRequest, Context, Server};

const CITIES: [&str; 5] = ["Lisbon", "London", "Lyon", "Oslo", "Osaka"];

/// The prompt's arguments: each field is one argument (always a string; `Option` makes
/// it optional). The doc comments become the arguments' descriptions.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    /// Where to go.
    destination: String,
    /// When to go, if it matters.
    month: Option<String>,
}

/// The prompt: the messages a client hands to its model.
async fn plan_trip(trip: Trip) -> Vec<PromptMessage> {
    let when = trip.month.map(|m| format!(" in {m}")).unwrap_or_default();
    vec![
        PromptMessage::user(format!(
            "Plan a three-day trip to {}{when}.",
            trip.destination
        )),
        PromptMessage::assistant("What do you enjoy most: food, museums or walks?"),
    ]
}

/// Completes `destination`: the cities starting with what was typed so far.
async fn cities(request: CompletionRequest, _cx: Context) -> Vec<String> {
    let typed = request.value.to_lowercase();
    CITIES
        .iter()
        .filter(|city| city.to_lowercase().starts_with(&typed))
        .map(|city| city.to_string())
        .collect()
}

/// Completes `month`, using an argument already chosen: the client passes the arguments
/// the user has filled in as context.
async fn months(request: CompletionRequest, _cx: Context) -> Vec<String> {
    let best = match request.context.get("destination").map(String::as_str) {
        Some("Oslo") => vec!["June", "July", "August"],
        Some("Osaka") => vec!["March", "April", "November"],
        _ => vec!["April", "May", "September", "October"],
    };
    best.into_iter()
        .filter(|month| month.starts_with(&request.value))
        .map(str::to_owned)
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server: registering a completer declares the `completions` capability.
    let server = Server::builder("travel", "1.0.0")
        .prompt("plan_trip", "Plan a short trip", plan_trip)
        .complete_prompt_argument("plan_trip", "destination", cities)
        .complete_prompt_argument("plan_trip", "month", months)
        .build();

    // The client, connected in memory (any transport works the same way).
    let (client_side, server_side) = Transport::pair(16);
    let _serving = server.serve(server_side);
    let client = Client::builder("travel-app", "1.0.0")
        .connect(client_side)
        .await?;

    for prompt in client.list_all_prompts().await? {
        println!("prompt: {}", prompt.name);
        for argument in prompt.arguments.unwrap_or_default() {
            let required = if argument.required == Some(true) {
                "required"
            } else {
                "optional"
            };
            println!("  argument: {} ({required})", argument.name);
        }
    }

    // The user types "L" in the destination field, then "O".
    let prompt = Reference::prompt("plan_trip");
    for typed in ["L", "O"] {
        let completed = client
            .complete(prompt.clone(), "destination", typed, None)
            .await?;
        println!(
            "destination {typed:?} -> {}",
            completed.completion.values.join(", ")
        );
    }
    // With the destination chosen, the month's suggestions depend on it.
    let chosen = BTreeMap::from([("destination".to_string(), "Oslo".to_string())]);
    let completed = client
        .complete(prompt.clone(), "month", "J", Some(chosen.clone()))
        .await?;
    println!(
        "month \"J\" for Oslo -> {}",
        completed.completion.values.join(", ")
    );

    let mut arguments = chosen;
    arguments.insert("month".into(), "July".into());
    let filled = client.get_prompt("plan_trip", arguments).await?;
    for message in &filled.messages {
        let text = message.content.as_text().unwrap_or("(not text)");
        println!("{:?}: {text}", message.role);
    }
    Ok(())
}
