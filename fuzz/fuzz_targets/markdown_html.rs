//! Spec prose to HTML on arbitrary text: never a panic, never a script, an event
//! handler on a real tag, or a link/image outside the policy (`make fuzz`;
//! `tests/properties_io.rs` checks the same property on seeded mutations in `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(md) = std::str::from_utf8(data) {
        let h = dpclaims::report::html::render_markdown(md).to_ascii_lowercase();
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("href=\"javascript:") && !h.contains("href=\"data:"), "{h}");
        assert!(!h.contains("src=\"http") && !h.contains("src=\"//"), "{h}");
    }
});
