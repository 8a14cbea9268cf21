// A resource's parameters are its template's variables, extractors, or #[uri].
use ferry::server::ReadResult;

#[ferry::resource("notes://{id}")]
async fn note(id: String, page: u32) -> ReadResult {
    let _ = (id, page);
    Ok(vec![])
}

#[ferry::resource("config://app")]
async fn config(id: String) -> ReadResult {
    let _ = id;
    Ok(vec![])
}

fn main() {}
