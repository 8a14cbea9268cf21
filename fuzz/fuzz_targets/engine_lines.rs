#![no_main]
//! See fuzz/checks/engine_lines.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::engine_lines::check(data));
