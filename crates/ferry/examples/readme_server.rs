//! The README's first server: two tools and a resource written with the macros, served
//! on stdio. (`crates/ferry/tests/readme.rs` checks that the README shows this file.)

use std::sync::Mutex;

use ferry::server::Server;
use ferry::{tool, tools};

/// Add two numbers.
#[tool(read_only, idempotent)]
async fn add(
    /// The first term.
    a: f64,
    /// The second term.
    b: f64,
) -> f64 {
    a + b
}

/// Notes kept while the server runs.
#[derive(Default)]
struct Notes(Mutex<Vec<String>>);

#[tools]
impl Notes {
    /// Keep a note.
    #[tool]
    async fn note(
        &self,
        /** What to remember. */
        text: String,
    ) -> String {
        let mut notes = self.0.lock().unwrap();
        notes.push(text);
        format!("{} notes", notes.len())
    }

    /// Every note, one per line.
    #[resource("notes://all", mime_type = "text/plain")]
    async fn all(&self) -> String {
        self.0.lock().unwrap().join("\n")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    Server::builder("notes", "1.0.0")
        .with(add_tool())
        .with(Notes::default())
        .build()
        .serve_stdio()
        .await
}
