// A handler must be an async fn: the builder registers its future.
#[ferry::tool]
fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

fn main() {}
