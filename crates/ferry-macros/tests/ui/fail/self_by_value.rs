// Handlers share the value behind an Arc: `self` by value cannot be given to each call.
struct Calc;

#[ferry::tools]
impl Calc {
    #[tool]
    async fn add(self, a: f64, b: f64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
