#![deny(warnings, missing_docs, unreachable_pub)]
//! `pub` handlers in a module, used from outside: the registration function has the
//! function's visibility (and docs, for `missing_docs`); handlers declared inside a
//! function body; computed doc comments; raw identifiers.

/// The tools.
pub mod tools {
    /// Repeat a word.
    #[ferry::tool]
    pub async fn repeat(r#word: String, times: u8) -> String {
        r#word.repeat(times.into())
    }

    #[doc = concat!("Made by ", "a macro.")]
    #[ferry::tool]
    pub(crate) async fn computed() -> String {
        String::new()
    }
}

fn main() {
    /// Declared in a function: its registration is a local function too.
    #[ferry::prompt]
    async fn local(topic: String) -> String {
        topic
    }

    let server = ferry::server::Server::builder("visibility", "1")
        .with(tools::repeat_tool())
        .with(tools::computed_tool())
        .with(local_prompt())
        .build();
    assert_eq!(server.tool_names(), ["repeat", "computed"]);
}
