#![deny(warnings)]
// `crate = path`: the expansions name Ferry through the path given, for a program that
// reaches Ferry under another name.
use ferry as renamed;

/// Echo.
#[renamed::tool(crate = renamed)]
async fn echo(text: String) -> String {
    text
}

struct Shouter;

#[renamed::tools(crate = "renamed")]
impl Shouter {
    /// Shout.
    #[tool]
    async fn shout(&self, text: String) -> String {
        text.to_uppercase()
    }
}

fn main() {
    let server = renamed::server::Server::builder("renamed", "1")
        .with(echo_tool())
        .with(Shouter)
        .build();
    assert_eq!(server.tool_names(), ["echo", "shout"]);
}
