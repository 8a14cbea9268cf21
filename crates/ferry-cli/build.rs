//! Link options of the binaries: on Linux with glibc, relative relocations packed (DT_RELR)
//! when the linker and the C library take them. The dynamic loader then applies the
//! binary's tens of thousands of relative relocations from a compact bitmap instead of
//! reading a table of 24-byte entries at every start: less start-up work and memory for
//! every `ferry serve` a host launches.
//!
//! A probe decides: a small C program with one relative relocation is linked with the
//! option and run; only if it runs correctly is the option used. Cross builds are left as
//! they are (the probe cannot run there).

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target == host && target.ends_with("-linux-gnu") && packs_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a program linked with `-z pack-relative-relocs` by this build's linker runs.
fn packs_relocations() -> bool {
    let Some(dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = dir.join("relr_probe.c");
    let program = dir.join("relr_probe");
    let text = "static int seven = 7;\nint *pointer = &seven;\n\
                int main(void) { return *pointer == 7 ? 0 : 1; }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    // The linker rustc uses for this target (`cc` unless configured otherwise).
    let linker = std::env::var_os("RUSTC_LINKER").unwrap_or_else(|| "cc".into());
    let linked = Command::new(linker)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
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
