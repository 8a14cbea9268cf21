// A parameter after the arguments that is not an extractor.
use ferry::server::Server;

#[derive(serde::Deserialize, ferry::schemars::JsonSchema)]
struct Args {
    text: String,
}

async fn echo(args: Args, times: u32) -> String {
    args.text.repeat(times as usize)
}

fn main() {
    let _ = Server::builder("x", "1").tool("echo", "Echo", echo).build();
}
