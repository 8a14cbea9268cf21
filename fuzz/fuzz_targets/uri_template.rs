#![no_main]
//! See fuzz/checks/uri_template.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::uri_template::check(data));
