#![no_main]
//! See fuzz/checks/sse_reader.rs for the properties checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry_fuzz::sse_reader::check(data));
