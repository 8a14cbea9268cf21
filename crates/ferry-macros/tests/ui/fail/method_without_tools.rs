// A method handler needs #[tools] on its impl block.
use ferry::tool;

struct Calc;

impl Calc {
    #[tool]
    async fn add(&self, a: f64, b: f64) -> String {
        (a + b).to_string()
    }
}

fn main() {}
