#![no_main]
//! See fuzz/checks/http_router.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::http_router::check(data));
