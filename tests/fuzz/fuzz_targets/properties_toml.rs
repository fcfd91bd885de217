//! libFuzzer target `properties_toml`: see `avguard_fuzz::TARGETS` and the body it names.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    avguard_fuzz::run("properties_toml", data);
});
