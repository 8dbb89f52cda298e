//! The spec loader on arbitrary bytes: a claim or a clean `SpecError` naming the file,
//! never a panic (`make fuzz`; `tests/fuzz_corpus.rs` replays the corpus in `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = dpclaims::spec::claim_from_bytes(Path::new("fuzz.yaml"), data) {
        assert!(e.to_string().contains("fuzz.yaml"), "{e}");
    }
});
