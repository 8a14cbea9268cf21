//! `calculate`: the reference server's expression parser never panics, and its answer is
//! deterministic, finite, and read back from its own text: the number it writes
//! (JavaScript's `String(number)`) evaluates to the same number.

use crate::reference::calculate::{format_number, fuzz_evaluate};

/// Check every property on `data` (as text, invalid UTF-8 replaced).
pub fn check(data: &[u8]) {
    let expression = String::from_utf8_lossy(data);
    let first = fuzz_evaluate(&expression);
    let second = fuzz_evaluate(&expression);
    match (&first, &second) {
        (Ok(a), Ok(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{expression:?}"),
        _ => assert_eq!(first, second, "{expression:?}"),
    }
    match first {
        Ok(value) => {
            assert!(value.is_finite(), "{expression:?} = {value}");
            let text = format_number(value);
            let again = fuzz_evaluate(&text)
                .unwrap_or_else(|e| panic!("{expression:?} = {text:?}, which reads as {e}"));
            assert!(
                again == value,
                "{expression:?} = {value:e}, written {text:?}, read {again:e}"
            );
        }
        Err(message) => {
            assert!(!message.is_empty(), "{expression:?}");
            // A position, when named, is within the expression (1-based characters).
            if let Some((_, at)) = message.rsplit_once(" at position ") {
                let at: usize = at.parse().unwrap_or_else(|_| panic!("{message:?}"));
                assert!(
                    at >= 1 && at <= expression.chars().count() + 1,
                    "{message:?} in {expression:?}"
                );
            }
        }
    }
}
