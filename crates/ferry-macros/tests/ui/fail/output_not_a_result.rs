// What a tool returns goes through IntoToolResult.
struct Sum(f64);

#[ferry::tool]
async fn add(a: f64, b: f64) -> Sum {
    Sum(a + b)
}

fn main() {}
