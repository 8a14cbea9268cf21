// A URI template that does not parse, and a resource without a URI.
use ferry::server::ReadResult;

#[ferry::resource("notes://{id")]
async fn note(id: String) -> ReadResult {
    let _ = id;
    Ok(vec![])
}

#[ferry::resource(name = "config")]
async fn config() -> ReadResult {
    Ok(vec![])
}

fn main() {}
