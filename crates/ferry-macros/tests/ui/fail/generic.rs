// A handler's arguments and schema are one type.
#[ferry::tool]
async fn echo<T: serde::de::DeserializeOwned>(value: T) -> String {
    let _ = value;
    "echo".into()
}

fn main() {}
