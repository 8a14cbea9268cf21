// A tool returning a type of its own, not wrapped in `Json`: the note says how.
use ferry::server::Server;

struct Count {
    value: u32,
}

async fn count() -> Count {
    Count { value: 3 }
}

fn main() {
    let _ = Server::builder("x", "1").tool("count", "Count", count).build();
}
