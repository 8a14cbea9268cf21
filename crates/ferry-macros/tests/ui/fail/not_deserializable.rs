// A parameter that is not an extractor is an argument: its type must deserialize and
// have a schema.
struct Clock;

#[ferry::tool]
async fn tick(clock: Clock) -> String {
    let _ = clock;
    "tick".into()
}

fn main() {}
