#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| herald_testkit::fuzz::otlp_decode(data));
