//! The README's server and client are `examples/readme_server.rs` and
//! `examples/readme_client.rs`, which CI compiles (and `examples.rs` runs, the client
//! against the server): the README and the examples must not drift apart.

use std::path::Path;

/// Panics unless README.md shows `examples/NAME.rs` (less its leading `//!` comment) as a
/// Rust code block.
fn readme_shows(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let example = std::fs::read_to_string(root.join(format!("examples/{name}.rs")))
        .unwrap_or_else(|e| panic!("examples/{name}.rs: {e}"));
    let code: String = example
        .lines()
        .filter(|line| !line.starts_with("//!"))
        .skip_while(|line| line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        readme.contains(&format!("```rust\n{code}```")),
        "README.md's code block differs from examples/{name}.rs"
    );
}

#[test]
fn readme_shows_the_example_server() {
    readme_shows("readme_server");
}

#[test]
fn readme_shows_the_example_client() {
    readme_shows("readme_client");
}
