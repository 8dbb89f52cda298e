//! The external protocol's answer reader on arbitrary text: the metrics of the unit
//! asked, each finite, or an error — never a panic, never another unit's answer.
#![no_main]
use dpclaims::systems::external::protocol::read_answer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(m) = read_answer(text, "c/main/s/x=1/0", &["m"]) {
            assert!(m["m"].is_finite());
            // An answer accepted for one unit is refused for any other.
            assert!(read_answer(text, "c/main/s/x=2/0", &["m"]).is_err());
        }
    }
});
