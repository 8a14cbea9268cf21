// A prompt's output goes through IntoPromptResult; a resource reader returns a ReadResult.
#[ferry::prompt]
async fn greet(name: String) -> u32 {
    name.len() as u32
}

#[ferry::resource("config://app")]
async fn config() -> String {
    "{}".into()
}

fn main() {}
