#![deny(warnings)]
// `Self` in an argument's type and `#[server]` (the alias of `#[tools]`): the arguments
// struct is an item of its own, where the macro writes the impl's type for `Self`.
use ferry::server::Server;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: f64,
}

impl Point {
    fn norm(&self) -> f64 {
        self.x.abs()
    }
}

#[ferry::server]
impl Point {
    /// Distance to another point.
    #[tool]
    async fn distance(&self, other: Self) -> String {
        (self.x - other.x).abs().to_string()
    }

    /// Norm of a list of points.
    #[tool]
    async fn norms(points: Vec<Self>) -> String {
        points.iter().map(Self::norm).sum::<f64>().to_string()
    }
}

fn main() {
    let server = Server::builder("points", "1")
        .with(Point { x: 0.0 })
        .build();
    assert_eq!(server.tool_names(), ["distance", "norms"]);
}
