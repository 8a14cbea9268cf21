//! Replays a fuzz target's committed seed corpus through its check, for the stable
//! corpus tests (crates/ferry/tests/fuzz_corpora.rs, crates/ferry-cli/tests/fuzz_corpora.rs),
//! which include this file. Not part of the fuzz crate.

use std::path::Path;

/// Run `check` on every file of fuzz/corpus/`target`, naming the file that fails.
pub fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
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
