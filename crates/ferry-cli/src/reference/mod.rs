//! The reference server of `ferry serve`: every feature Ferry implements so far.
//!
//! Today: the lifecycle of both eras and the tools `echo` and `add`. The Server issue grows
//! it to every feature (the seed servers' tools, resources, prompts, sampling...).

use ferry::server::{Json, Server, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: f64,
}

/// The reference server.
pub(crate) fn server() -> Server {
    Server::builder("ferry", env!("CARGO_PKG_VERSION"))
        .title("Ferry reference server")
        .instructions("The Ferry reference server: `echo` sends text back, `add` adds two numbers.")
        .tool(
            "echo",
            "Send the text back unchanged.",
            |args: EchoArgs, _cx: ToolContext| async move { args.text },
        )
        .tool(
            "add",
            "Add two numbers.",
            |args: AddArgs, _cx: ToolContext| async move {
                Json(Sum {
                    sum: args.a + args.b,
                })
            },
        )
        .build()
}
