//! `ferry new NAME` end to end: the crate it writes builds against this checkout, its own
//! tests pass under `cargo test`, it is a git repository of its own (unless made inside
//! one), and the server it builds passes `ferry check` and answers `ferry call` on stdio
//! and with `--http`. The crate's build goes to a target directory kept under this one
//! (`CARGO_TARGET_TMPDIR/ferry-new-target`), so only the first run compiles its
//! dependencies.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn text(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// This run's scratch directories' parent, in this checkout's target directory, which is
/// inside the checkout's own git repository: git looks for a repository no higher than
/// the scratch directories (`GIT_CEILING_DIRECTORIES`).
fn scratch_root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("new-{}", std::process::id()))
}

#[track_caller]
fn ferry_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(FERRY)
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", scratch_root())
        .stdin(Stdio::null())
        .output()
        .expect("run ferry")
}

/// A new empty scratch directory.
fn scratch(name: &str) -> PathBuf {
    let dir = scratch_root().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[track_caller]
fn git(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", scratch_root())
        .stdin(Stdio::null())
        .output()
        .expect("run git (the test needs it)");
    assert!(output.status.success(), "git {args:?}: {}", text(&output));
    output
}

#[test]
fn a_new_server_crate_passes_its_tests_and_ferry_check() {
    let root = scratch("alone");

    let made = ferry_in(&root, &["new", "demo-server"]);
    assert!(made.status.success(), "{}", text(&made));
    let dir = root.join("demo-server");
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        ".gitignore",
        "src/main.rs",
        "src/lib.rs",
        "tests/server.rs",
    ] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let ferry = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ferry")
        .canonicalize()
        .unwrap();
    assert!(
        manifest.contains(&format!("ferry-mcp = {{ path = \"{}\"", ferry.display())),
        "{manifest}"
    );
    // The crates.io form, in this release's version, as a comment.
    let release: Vec<&str> = env!("CARGO_PKG_VERSION").split('.').take(2).collect();
    let published = format!("#     ferry-mcp = {{ version = \"{}\"", release.join("."));
    assert!(manifest.contains(&published), "{manifest}");
    // serde and schemars of its own, in the versions of the lock file it starts from.
    let lock = std::fs::read_to_string(dir.join("Cargo.lock")).unwrap();
    for (package, requirement) in [
        ("serde", "serde = { version = \""),
        ("schemars", "schemars = \""),
    ] {
        let start = manifest
            .find(requirement)
            .unwrap_or_else(|| panic!("{manifest}"));
        let version = manifest[start + requirement.len()..]
            .split('"')
            .next()
            .unwrap();
        assert!(
            lock.contains(&format!("name = \"{package}\"\nversion = \"{version}\"")),
            "{package} {version} is not in the lock file"
        );
    }
    assert!(manifest.contains("features = [\"derive\"]"), "{manifest}");

    // A git repository of its own, as `cargo new` makes.
    assert!(dir.join(".git").is_dir(), "no repository: {}", text(&made));
    let top = git(&dir, &["rev-parse", "--show-toplevel"]);
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    assert_eq!(top.canonicalize().unwrap(), dir.canonicalize().unwrap());
    assert!(
        String::from_utf8_lossy(&made.stderr).contains("initialized a git repository"),
        "{}",
        text(&made)
    );

    // Not over a directory that holds something.
    let again = ferry_in(&root, &["new", "demo-server"]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));

    // Its own tests, with cargo; its code as rustfmt writes it.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ferry-new-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let formatted = Command::new(&cargo)
        .args(["fmt", "--check"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("run cargo fmt");
    assert!(formatted.status.success(), "{}", text(&formatted));
    let tested = Command::new(&cargo)
        .args([
            "test",
            "--config",
            "profile.dev.debug=\"line-tables-only\"",
            "--config",
            "profile.dev.package.\"*\".debug=false",
        ])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .stdin(Stdio::null())
        .output()
        .expect("run cargo test");
    assert!(tested.status.success(), "{}", text(&tested));
    let report = String::from_utf8_lossy(&tested.stdout);
    for test in [
        "greet_greets",
        "notes_are_kept_read_and_summarized",
        "count_reports_progress",
    ] {
        assert!(report.contains(&format!("test {test} ... ok")), "{report}");
    }
    let binary: PathBuf = target
        .join("debug")
        .join(format!("demo-server{}", std::env::consts::EXE_SUFFIX));

    // `ferry check` on the server it built: no requirement failed.
    let binary_arg = binary.to_string_lossy();
    let checked = ferry_in(&root, &["check", "--", &binary_arg]);
    assert!(checked.status.success(), "{}", text(&checked));
    let summary = String::from_utf8_lossy(&checked.stdout);
    assert!(summary.contains(" 0 failed"), "{summary}");

    // Its tools, on stdio and over HTTP.
    let called = ferry_in(&root, &["call", "greet", "name=Ada", "--", &binary_arg]);
    assert!(called.status.success(), "{}", text(&called));
    assert_eq!(String::from_utf8_lossy(&called.stdout), "Hello, Ada!\n");
    // Its resource template: a new server has no notes yet.
    let read = ferry_in(&root, &["read", "notes://0", "--", &binary_arg]);
    let said = text(&read);
    assert!(
        !read.status.success() && said.contains("not found"),
        "{said}"
    );
    let mut http = Command::new(&binary)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the server with --http");
    let mut banner = String::new();
    BufReader::new(http.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let url = banner
        .trim()
        .split_once("MCP on ")
        .map(|(_, url)| url.to_owned());
    let called = url.as_deref().map(|url| {
        ferry_in(
            &root,
            &["call", "greet", "name=Bo", "--url", url, "--no-auth"],
        )
    });
    let _ = http.kill();
    let _ = http.wait();
    let called = called.unwrap_or_else(|| panic!("banner {banner:?}"));
    assert!(called.status.success(), "{}", text(&called));
    assert_eq!(String::from_utf8_lossy(&called.stdout), "Hello, Bo!\n");
    let _ = std::fs::remove_dir_all(&root);
}

/// Inside a git repository the crate is part of it, as with `cargo new`: no repository
/// of its own, nothing said about git, a `.gitignore` all the same.
#[test]
fn a_new_crate_inside_a_repository_gets_none_of_its_own() {
    let root = scratch("inside");
    git(&root, &["init", "--quiet"]);

    let made = ferry_in(&root, &["new", "inner"]);
    assert!(made.status.success(), "{}", text(&made));
    let dir = root.join("inner");
    assert!(dir.join("Cargo.toml").is_file());
    assert!(dir.join(".gitignore").is_file());
    assert!(
        !dir.join(".git").exists(),
        "a repository inside the repository"
    );
    let top = git(&dir, &["rev-parse", "--show-toplevel"]);
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    assert_eq!(top.canonicalize().unwrap(), root.canonicalize().unwrap());
    assert!(
        !String::from_utf8_lossy(&made.stderr).contains("git"),
        "{}",
        text(&made)
    );
    let _ = std::fs::remove_dir_all(&root);
}
