#![no_main]
//! See fuzz/checks/classify.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::classify::check(data));
