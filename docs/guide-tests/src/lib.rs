//! The Ferry user guide, tested.
//!
//! The guide is an mdBook (`docs/book.toml`, chapters in `docs/src/`). Each chapter is
//! included below as the documentation of an empty module, so that `cargo test -p
//! ferry-guide` (and `cargo test --workspace`) compiles and runs every ```` ```rust ````
//! sample of the guide as a doctest: lines starting with `# ` are compiled but shown
//! collapsed (by rustdoc and by mdBook alike), and a sample without `fn main` is wrapped
//! in one. A sample marked `no_run` is compiled only; the text around it says how what it
//! shows is exercised.
//!
//! The test below fails when a chapter exists that is not included here, or is not in
//! `SUMMARY.md`: no chapter can escape the tests.

/// Include each chapter (a file of `docs/src/`) as the docs of a module of its own, and
/// list the files in `CHAPTERS`.
macro_rules! chapters {
    ($($module:ident => $file:literal,)*) => {
        $(
            #[doc = include_str!(concat!("../../src/", $file))]
            pub mod $module {}
        )*

        /// The chapters included above, by file name.
        #[cfg(test)]
        const CHAPTERS: &[&str] = &[$($file),*];
    };
}

chapters! {
    introduction => "introduction.md",
    install => "install.md",
    quickstart => "quickstart.md",
    server_features => "server-features.md",
    eras => "eras.md",
    progress_cancellation_logging => "progress-cancellation-logging.md",
    client_requests => "client-requests.md",
    middleware => "middleware.md",
    http => "http.md",
    several_instances => "several-instances.md",
    limits => "limits.md",
    client => "client.md",
    cli => "cli.md",
    hosts => "hosts.md",
    inspector => "inspector.md",
    examples => "examples.md",
    conformance => "conformance.md",
    performance => "performance.md",
    migrating => "migrating.md",
    versioning => "versioning.md",
    architecture => "architecture.md",
    test_suite => "tests.md",
}

#[cfg(test)]
mod tests {
    use super::CHAPTERS;

    /// Every Markdown file of `docs/src/` but `SUMMARY.md` is a chapter included above, and
    /// every chapter is in `SUMMARY.md` (mdBook renders only what the summary lists).
    #[test]
    fn every_chapter_is_included_and_listed() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
        let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
        let mut files: Vec<String> = std::fs::read_dir(&src)
            .expect("docs/src")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".md") && name != "SUMMARY.md")
            .collect();
        files.sort();
        let mut included: Vec<String> = CHAPTERS.iter().map(|c| (*c).to_owned()).collect();
        included.sort();
        assert_eq!(
            files, included,
            "docs/src/*.md and the chapters of docs/guide-tests/src/lib.rs differ"
        );
        for chapter in CHAPTERS {
            assert!(
                summary.contains(&format!("({chapter})")),
                "{chapter} is not listed in SUMMARY.md"
            );
        }
    }

    /// The quick start's server is `crates/ferry/examples/readme_server.rs`, as its text
    /// says (the README shows the same file: `crates/ferry/tests/readme.rs`).
    #[test]
    fn the_quick_start_server_is_the_readme_example() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let chapter =
            std::fs::read_to_string(root.join("docs/src/quickstart.md")).expect("quickstart.md");
        let example = std::fs::read_to_string(root.join("crates/ferry/examples/readme_server.rs"))
            .expect("the example");
        let sample = chapter
            .split("```rust,no_run\n")
            .nth(1)
            .and_then(|rest| rest.split("\n```").next())
            .expect("the quick start's first no_run sample");
        // The example without its leading `//!` comment.
        let code: Vec<&str> = example
            .lines()
            .skip_while(|line| line.starts_with("//!") || line.is_empty())
            .collect();
        assert_eq!(sample.lines().collect::<Vec<_>>(), code);
    }
}
