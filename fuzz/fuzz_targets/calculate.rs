#![no_main]
//! See fuzz/checks/calculate.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::calculate::check(data));
