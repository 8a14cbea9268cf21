// #[tools] registers the methods of an inherent impl block that has some.
struct Calc;

#[ferry::tools]
impl Default for Calc {
    fn default() -> Self {
        Calc
    }
}

struct Empty;

#[ferry::tools]
impl Empty {
    fn helper(&self) {}
}

fn main() {}
