// One `#[args]` struct, or plain arguments: not both.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[ferry::tool]
async fn add(#[args] pair: Pair, scale: f64) -> String {
    ((pair.a + pair.b) * scale).to_string()
}

fn main() {}
