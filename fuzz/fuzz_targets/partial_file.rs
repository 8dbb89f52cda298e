//! A shard's partial file on arbitrary text: a partial whose checksum holds, or a clean
//! error naming the file, never a panic.
#![no_main]
use dpclaims::execute::shard::Partial;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = Partial::from_json(Path::new("fuzz.json"), text) {
            assert!(e.to_string().contains("fuzz.json"), "{e}");
        }
    }
});
