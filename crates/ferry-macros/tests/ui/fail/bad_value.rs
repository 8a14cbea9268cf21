// Each key takes a value of its own type.
#[ferry::tool(read_only = "yes")]
async fn now() -> String {
    "noon".into()
}

#[ferry::tool(task_support = "sometimes")]
async fn later() -> String {
    "later".into()
}

#[ferry::tool(name = "a", name = "b")]
async fn twice() -> String {
    "twice".into()
}

fn main() {}
