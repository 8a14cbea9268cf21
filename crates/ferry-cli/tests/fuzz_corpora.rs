//! The `calculate` and `evaluate` fuzz targets' committed seed corpora
//! (fuzz/corpus/<target>/) replayed through the targets' own checks
//! (fuzz/checks/<target>.rs), on stable, as ordinary tests. The tools' sources are
//! included as modules of this test (the command has no library); their `fuzz_evaluate`
//! entry points exist under `cfg(test)`. The other targets are replayed by
//! crates/ferry/tests/fuzz_corpora.rs.

/// The reference server's tools, as the fuzz crate includes them (fuzz/src/lib.rs).
#[path = "../src/reference"]
#[allow(dead_code, unreachable_pub)]
mod reference {
    pub(crate) mod calculate;
    pub(crate) mod evaluate;
}

#[path = "../../../fuzz/checks/calculate.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod calculate;
#[path = "../../../fuzz/checks/evaluate.rs"]
#[allow(unreachable_pub)] // `pub` for the fuzz crate
mod evaluate;

/// Run `check` on every file of fuzz/corpus/`target`, naming the file that fails.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for file in files {
        let data = std::fs::read(&file).expect("readable");
        if let Err(panic) = std::panic::catch_unwind(|| check(&data)) {
            eprintln!(
                "fuzz/corpus/{target}/{} fails",
                file.file_name().unwrap().to_string_lossy()
            );
            std::panic::resume_unwind(panic);
        }
    }
}

#[test]
fn calculate_corpus() {
    replay("calculate", calculate::check);
}

#[test]
fn evaluate_corpus() {
    replay("evaluate", evaluate::check);
}
