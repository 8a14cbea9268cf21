// A resource reader returns contents (a String, bytes, Json<T>, a ReadResult...), not a
// number: the message names the return type, the note what would do.
#[ferry::resource("config://app")]
async fn config() -> u32 {
    3
}

// The same from a template whose variables are parsed first.
#[ferry::resource("config://{section}")]
async fn section(section: String) -> u32 {
    section.len() as u32
}

fn main() {}
