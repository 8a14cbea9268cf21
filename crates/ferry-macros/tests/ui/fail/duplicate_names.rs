// Two handlers of one kind cannot share a name.
struct Calc;

#[ferry::tools]
impl Calc {
    #[tool]
    async fn add(&self, a: f64, b: f64) -> String {
        (a + b).to_string()
    }

    #[tool(name = "add")]
    async fn plus(&self, a: f64, b: f64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
