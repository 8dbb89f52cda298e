//! A stability record's parser on arbitrary text: rows or a clean reason, never a panic.
#![no_main]
use dpclaims::report::stability::record::{parse, Header, FORMAT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let want = Header {
            format: FORMAT.into(),
            seed: 3,
            profile: "quick".into(),
            verdict_build: "ab".repeat(32),
            claims: [("c".to_string(), "cd".repeat(32))].into_iter().collect(),
        };
        let _ = parse(text, &want);
    }
});
