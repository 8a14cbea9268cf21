//! The README's client: runs the stdio server named on its command line as a child, lists
//! its tools, calls one and reads a resource, then shuts the child down.
//! (`crates/ferry/tests/readme.rs` checks that the README shows this file;
//! `crates/ferry/tests/examples.rs` runs it against `readme_server`.)

use ferry::client::Client;
use ferry::engine::ChildCommand;
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server: `-- cargo run -q -p ferry-mcp --example readme_server`, say.
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: readme_client SERVER [ARGS...]")?;
    let command = ChildCommand::new(program).args(args);
    let (client, child) = Client::builder("notes-client", "1.0.0")
        .spawn(&command)
        .await?;

    println!("speaking {}", client.version().as_str());
    for tool in client.list_all_tools().await? {
        println!("tool {}", tool.name);
    }
    let sum = client.call_tool("add", json!({"a": 1, "b": 2})).await?;
    println!("1 + 2 = {}", sum.content[0].as_text().unwrap_or("?"));
    client
        .call_tool("note", json!({"text": "buy milk"}))
        .await?;
    let notes = client.read_resource("notes://all").await?;
    println!("notes: {}", notes.contents[0].as_text().unwrap_or(""));

    drop(client); // closes the connection
    child.shutdown(Default::default()).await?; // close stdin, then SIGTERM, then SIGKILL
    Ok(())
}
