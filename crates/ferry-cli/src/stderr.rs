//! Writing to stderr without ever failing: messages are best effort. A stderr that is
//! gone (its reader hung up, so every write fails with EPIPE: `ferry serve --http ... 2>&1 |
//! head -1`) must not panic the writer, as `eprintln!` does, nor end the server it reports
//! on.

/// `eprintln!` that never panics: the line is dropped if stderr cannot take it.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) use note;
