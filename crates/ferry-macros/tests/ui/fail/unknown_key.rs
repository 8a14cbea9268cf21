// A misspelled key is pointed at, with the key it most likely meant.
#[ferry::tool(readonly)]
async fn now() -> String {
    "noon".into()
}

#[ferry::prompt(annotations = "x")]
async fn greet(name: String) -> String {
    format!("Greet {name}")
}

fn main() {}
