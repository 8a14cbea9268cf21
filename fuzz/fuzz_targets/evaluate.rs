#![no_main]
//! See fuzz/checks/evaluate.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::evaluate::check(data));
