// A prompt's output goes through IntoPromptResult.
#[ferry::prompt]
async fn greet(name: String) -> u32 {
    name.len() as u32
}

fn main() {}
