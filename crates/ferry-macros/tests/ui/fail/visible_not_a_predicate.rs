use ferry::server::Context;
use ferry::tool;

fn staff(cx: &Context, role: &str) -> bool {
    cx.session_key() == role
}

/// A predicate with one argument too many.
#[tool(visible = staff)]
async fn refund() -> String {
    "refunded".into()
}

fn main() {}
