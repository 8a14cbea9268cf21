// #[tool] goes on an async fn.
#[ferry::tool]
struct Add {
    a: f64,
}

fn main() {}
