// An arguments type without `JsonSchema` (or deriving another schemars version's): the
// message says it is not a handler and names the schemars cause.
use ferry::server::Server;

#[derive(serde::Deserialize)]
struct Args {
    text: String,
}

async fn echo(args: Args) -> String {
    args.text
}

fn main() {
    let _ = Server::builder("x", "1").tool("echo", "Echo", echo).build();
}
