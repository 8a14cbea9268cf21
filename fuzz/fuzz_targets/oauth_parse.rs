#![no_main]
//! See fuzz/checks/oauth_parse.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::oauth_parse::check(data));
