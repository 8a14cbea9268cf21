// A parameter marked #[inject] must be an extractor (FromContext).
#[ferry::tool]
async fn hello(#[inject] name: String) -> String {
    name
}

fn main() {}
