//! `ferry new NAME` end to end: the crate it writes builds against this checkout, its own
//! test passes under `cargo test`, and the server it builds passes `ferry check` and
//! answers `ferry call` on stdio and with `--http`. The crate's build goes to a target
//! directory kept under this one (`CARGO_TARGET_TMPDIR/ferry-new-target`), so only the
//! first run compiles its dependencies.

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

#[track_caller]
fn ferry_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(FERRY)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run ferry")
}

#[test]
fn a_new_server_crate_passes_its_test_and_ferry_check() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let root = tmp.join(format!("new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();

    let made = ferry_in(&root, &["new", "demo-server"]);
    assert!(made.status.success(), "{}", text(&made));
    let dir = root.join("demo-server");
    for file in ["Cargo.toml", "src/main.rs", "src/lib.rs", "tests/server.rs"] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let ferry = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ferry")
        .canonicalize()
        .unwrap();
    assert!(
        manifest.contains(&format!("path = \"{}\"", ferry.display())),
        "{manifest}"
    );
    // Not over a directory that holds something.
    let again = ferry_in(&root, &["new", "demo-server"]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));

    // Its own test, with cargo.
    let target = tmp.join("ferry-new-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tested = Command::new(cargo)
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
    assert!(report.contains("test greet_greets ... ok"), "{report}");
    let binary: PathBuf = target
        .join("debug")
        .join(format!("demo-server{}", std::env::consts::EXE_SUFFIX));

    // `ferry check` on the server it built: no requirement failed.
    let binary_arg = binary.to_string_lossy();
    let checked = ferry_in(&root, &["check", "--", &binary_arg]);
    assert!(checked.status.success(), "{}", text(&checked));
    let summary = String::from_utf8_lossy(&checked.stdout);
    assert!(summary.contains(" 0 failed"), "{summary}");

    // Its tool, on stdio and over HTTP.
    let called = ferry_in(&root, &["call", "greet", "name=Ada", "--", &binary_arg]);
    assert!(called.status.success(), "{}", text(&called));
    assert_eq!(String::from_utf8_lossy(&called.stdout), "Hello, Ada!\n");
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
