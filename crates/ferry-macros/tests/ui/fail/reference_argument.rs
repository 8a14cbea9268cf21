// Arguments are deserialized into owned values.
#[ferry::tool]
async fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}
