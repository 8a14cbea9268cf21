//! `scripts/peers`, the install step of the README's test command (`scripts/test`): on a
//! machine without the outside peers it names each one it would install. The install
//! itself runs for real wherever a peer is missing: in CI on a fresh machine, `.ci/run`
//! prints this plan, then `scripts/test` installs.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory holding only the programs the script itself needs, so that none of the
/// peers is found on its `PATH`.
fn bare_path() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-peers-path-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for tool in ["bash", "dirname", "cmp", "id"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is installed"));
        std::os::unix::fs::symlink(found, dir.join(tool)).expect("link");
    }
    dir
}

#[test]
fn on_a_bare_machine_the_plan_names_every_debian_peer() {
    let path = bare_path();
    let output = Command::new(path.join("bash"))
        .arg(root().join("scripts/peers"))
        .arg("--plan")
        .env_clear()
        .env("PATH", &path)
        .output()
        .expect("scripts/peers runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    let plan = said
        .lines()
        .find_map(|line| line.strip_prefix("peers: would run: apt-get install -y "))
        .unwrap_or_else(|| panic!("no install planned:\n{said}"));
    let packages: Vec<&str> = plan.split_whitespace().collect();
    // The ones found by name on PATH only (nginx, chromium and Firefox are also looked
    // for where Debian puts them, which this machine may have).
    for package in [
        "redis-server",
        "redis-tools",
        "git",
        "nodejs",
        "npm",
        "python3",
    ] {
        assert!(packages.contains(&package), "{package} not in {packages:?}");
    }
    assert!(
        said.contains("peers: missing: Debian packages: redis-server"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&path);
}

#[test]
fn an_unknown_option_is_a_usage_error() {
    let output = Command::new(root().join("scripts/peers"))
        .arg("--everything")
        .output()
        .expect("scripts/peers runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown option --everything"));
}
