//! The README's first server is `examples/readme_server.rs`, which CI compiles: the two
//! must not drift apart.

#[test]
fn readme_shows_the_example_server() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let example =
        std::fs::read_to_string(root.join("examples/readme_server.rs")).expect("the example");
    let code: String = example
        .lines()
        .filter(|line| !line.starts_with("//!"))
        .skip_while(|line| line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        readme.contains(&format!("```rust\n{code}```")),
        "README.md's first server differs from examples/readme_server.rs"
    );
}
