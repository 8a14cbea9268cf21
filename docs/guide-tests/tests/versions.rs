//! One version everywhere: wherever the README, the guide (`docs/src/*.md`), the crates'
//! READMEs and the CHANGELOG name a version of Ferry, it is the workspace's
//! (`[workspace.package] version` in `Cargo.toml`), which every package inherits.
//!
//! What names a version of Ferry:
//! - a dependency on one of its packages: `ferry-mcp = "X"`, `ferry-mcp-protocol = { version =
//!   "X", .. }` (also `ferry = {..}` and `cargo add ferry-mcp@X`): the requirement must admit
//!   the workspace's version;
//! - "Ferry X.Y" or "Ferry X.Y.Z" (also `ferry-mcp X.Y.Z`, `ferry 0.3.0` as `--version`
//!   prints it): X.Y.Z must be the version, X.Y its major and minor;
//! - `"ferry":"X"` in the header of the inspector's wire export: the version;
//! - the CHANGELOG's newest heading that names a version, `## [X] - date`: the version.
//!
//! MCP revisions (2025-06-18), other crates' versions and the examples' own server versions
//! (`Server::builder("notes", "1.0.0")`) are not Ferry's and are left alone.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use semver::{Version, VersionReq};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `[workspace.package] version` of the workspace's `Cargo.toml`.
fn workspace_version() -> Version {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let manifest: toml::Table = toml::from_str(&text).expect("Cargo.toml parses");
    let version = manifest["workspace"]["package"]["version"]
        .as_str()
        .expect("Cargo.toml: [workspace.package] version");
    Version::parse(version).expect("Cargo.toml: the workspace's version is semver")
}

/// A dependency on one of Ferry's packages, with its requirement (`ferry-mcp = "0.3"`,
/// `ferry-mcp-macros = { version = "0.3.0", .. }`).
static DEPENDENCY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^\s*(?:ferry|ferry-mcp(?:-protocol|-macros|-cli)?)\s*=\s*(?:"([^"]*)"|\{[^}]*\bversion\s*=\s*"([^"]*)")"#,
    )
    .expect("regex")
});
/// `cargo add ferry-mcp@0.3`, `cargo install ferry-mcp-cli@0.3.0`.
static AT_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bferry-mcp(?:-protocol|-macros|-cli)?@([0-9][0-9A-Za-z.+^~=<>*-]*)")
        .expect("regex")
});
/// "Ferry 0.3", "Ferry 0.3.0", "ferry-mcp 0.3.0", "ferry v0.3.0".
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bferry(?:-mcp(?:-protocol|-macros|-cli)?)? v?(\d+\.\d+(?:\.\d+(?:-[0-9A-Za-z.]+)?)?)\b")
        .expect("regex")
});
/// The wire export's header: `"ferry":"0.3.0"`.
static EXPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""ferry"\s*:\s*"([^"]*)""#).expect("regex"));
/// A CHANGELOG heading naming a version: `## [0.3.0] - unreleased`.
static RELEASE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^##\s*\[v?(\d+\.\d+\.\d+[^\]]*)\]").expect("regex"));

/// Every place in `text` (the file `name`) naming a version of Ferry that is not `version`,
/// as `name:line: what`.
fn other_versions(name: &str, text: &str, version: &Version) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut report = |line: usize, said: &str, why: &str| {
        wrong.push(format!("{name}:{}: `{said}` {why}", line + 1));
    };
    for (n, line) in text.lines().enumerate() {
        if let Some(found) = DEPENDENCY.captures(line) {
            let req = found.get(1).or(found.get(2)).map_or("", |m| m.as_str());
            if !admits(req, version) {
                report(n, line.trim(), "does not admit the workspace's version");
            }
        }
        for found in AT_VERSION.captures_iter(line) {
            if !admits(&found[1], version) {
                report(n, &found[0], "does not admit the workspace's version");
            }
        }
        for found in NAMED.captures_iter(line) {
            if !names(&found[1], version) {
                report(n, &found[0], "names another version");
            }
        }
        for found in EXPORT.captures_iter(line) {
            if found[1] != version.to_string() {
                report(n, &found[0], "names another version");
            }
        }
    }
    if name.ends_with("CHANGELOG.md") {
        let newest = text
            .lines()
            .enumerate()
            .find_map(|(n, line)| RELEASE.captures(line).map(|found| (n, found)));
        match newest {
            Some((n, found)) if found[1] != version.to_string() => {
                report(
                    n,
                    &found[0],
                    "is the newest release heading, of another version",
                );
            }
            Some(_) => {}
            None => wrong.push(format!(
                "{name}: no heading names a release (`## [{version}] - unreleased`)"
            )),
        }
    }
    wrong
}

/// Whether the dependency requirement `req` admits `version`.
fn admits(req: &str, version: &Version) -> bool {
    VersionReq::parse(req).is_ok_and(|req| req.matches(version))
}

/// Whether "Ferry `said`" names `version`: all of it, or its major and minor.
fn names(said: &str, version: &Version) -> bool {
    match Version::parse(said) {
        Ok(said) => said == *version,
        Err(_) => said == format!("{}.{}", version.major, version.minor),
    }
}

/// The files that may name Ferry's version, relative to the root.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    for dir in ["docs/src", "crates"] {
        for entry in std::fs::read_dir(root.join(dir)).expect(dir) {
            let path = entry.expect("an entry").path();
            let relative = path.strip_prefix(&root).expect("under the root").to_owned();
            if dir == "docs/src" && path.extension().is_some_and(|e| e == "md") {
                files.push(relative);
            } else if dir == "crates" && path.join("README.md").is_file() {
                files.push(relative.join("README.md"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_docs_name_the_workspace_version() {
    let version = workspace_version();
    let files = documents();
    assert!(
        files.len() > 10,
        "the README, the CHANGELOG, the guide's chapters and the crates' READMEs: {files:?}"
    );
    let mut wrong = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(root().join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        wrong.extend(other_versions(&file.display().to_string(), &text, &version));
    }
    assert!(
        wrong.is_empty(),
        "the workspace's version is {version} (Cargo.toml, [workspace.package]); these name \
         another:\n{}",
        wrong.join("\n")
    );
}

/// The scanner finds each kind of mention, and only those.
#[test]
fn each_kind_of_mention_is_found() {
    let version = Version::parse("0.3.0").expect("a version");
    let text = r#"# Changelog
## [Unreleased]
## [0.2.0] - 2026-01-01
Ferry 0.2 is not on crates.io yet; Ferry 0.3 is; ferry-mcp 0.3.1 was never made.
ferry-mcp = "0.2"
ferry-mcp-macros = { version = "0.2.0", path = "crates/ferry-macros" }
ferry-mcp = { path = "../ferry/crates/ferry" }
ferry-mcp-protocol = "0.3"
{"format":"ferry-wire","version":1,"ferry":"0.2.0"}
cargo add ferry-mcp@0.1
tokio = "1.47"
Server::builder("notes", "1.0.0") speaks 2025-06-18; serde_json 1.0.140.
"#;
    let found = other_versions("CHANGELOG.md", text, &version);
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.split(": ").next().expect("a place"))
        .collect();
    assert_eq!(
        lines,
        [
            "CHANGELOG.md:4",  // Ferry 0.2
            "CHANGELOG.md:4",  // ferry-mcp 0.3.1
            "CHANGELOG.md:5",  // ferry-mcp = "0.2"
            "CHANGELOG.md:6",  // ferry-mcp-macros 0.2.0
            "CHANGELOG.md:9",  // "ferry":"0.2.0"
            "CHANGELOG.md:10", // ferry-mcp@0.1
            "CHANGELOG.md:3",  // the newest release heading
        ],
        "{found:#?}"
    );
    let right = "## [0.3.0] - unreleased\nFerry 0.3, ferry 0.3.0, ferry-mcp = \"0.3\"\n";
    assert_eq!(
        other_versions("CHANGELOG.md", right, &version),
        Vec::<String>::new()
    );
}
