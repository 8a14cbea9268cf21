//! `evaluate`: the reference server's Rhai sandbox never panics and every script ends
//! within its time limit (with a margin for the check), answering either a value
//! (`=> ...`) or an `isError` result in seed 000's layout (`[ERROR] KIND`). The input is up
//! to three scripts separated by NUL bytes, run one after another in one session, so that
//! what a script keeps is what the next one starts from — written as a session shared
//! between instances writes it and read back, which never fails.

use std::time::{Duration, Instant};

use crate::reference::evaluate::{TIME_LIMIT, fuzz_evaluate};

/// Check every property on `data` (as text, invalid UTF-8 replaced).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let scripts: Vec<String> = text.splitn(3, '\0').map(str::to_owned).collect();
    let count = scripts.len();
    let started = Instant::now();
    let results = fuzz_evaluate(scripts);
    let elapsed = started.elapsed();
    assert_eq!(results.len(), count);
    // Each script stops at its deadline; the margin covers starting and stopping it.
    let bound = (TIME_LIMIT + Duration::from_secs(2)) * count as u32;
    assert!(elapsed < bound, "{text:?} took {elapsed:?}");
    for result in results {
        let value = serde_json::to_value(&result).expect("a result writes");
        let first = value["content"][0]["text"].as_str().expect("a text block");
        if result.is_error == Some(true) {
            assert!(first.starts_with("[ERROR] "), "{first:?} for {text:?}");
            assert!(
                !first.starts_with("[ERROR] SESSION-UNREADABLE"),
                "{first:?} for {text:?}"
            );
        } else {
            assert!(first.contains("=> "), "{first:?} for {text:?}");
        }
    }
}
