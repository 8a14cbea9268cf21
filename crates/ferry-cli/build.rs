//! Link options of the binaries on Linux with glibc, each used only when a probe program
//! linked with it by this build's linker runs correctly (cross builds are left as they
//! are: the probe cannot run there).
//!
//! - **Position-dependent** (`-no-pie`) by default. A position-independent `ferry` carries
//!   some 52,000 relative relocations (vtables, string slices, the GOT) over about 200
//!   pages, which the dynamic loader writes at every start: about 190 copy-on-write page
//!   faults, a third of the start-up of every `ferry serve` a host launches. Linked at a
//!   fixed address it has none. The price: the executable's own code and data are not
//!   placed at random (ASLR still moves the libraries, heap and stacks). Setting
//!   `FERRY_PIE=1` when building keeps a position-independent executable.
//! - With `FERRY_PIE=1`: relative relocations packed (DT_RELR), so the loader applies them
//!   from a compact bitmap instead of a table of 24-byte entries.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=FERRY_PIE");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    let pie = std::env::var_os("FERRY_PIE").is_some_and(|v| v == "1");
    if !pie && links_and_runs("no_pie", &["-no-pie"]) {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    } else if links_and_runs("relr", &["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs"]) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a small program with a pointer in its data, linked with `flags` by the linker
/// rustc uses for this target, runs correctly.
fn links_and_runs(name: &str, flags: &[&str]) -> bool {
    let Some(dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = dir.join(format!("{name}_probe.c"));
    let program = dir.join(format!("{name}_probe"));
    let text = "static int seven = 7;\nint *pointer = &seven;\n\
                int main(void) { return *pointer == 7 ? 0 : 1; }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    // `cc` unless configured otherwise.
    let linker = std::env::var_os("RUSTC_LINKER").unwrap_or_else(|| "cc".into());
    let linked = Command::new(linker)
        .args(flags)
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    linked
        && Command::new(&program)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
}
