//! The fuzz corpus of the spec loader (`fuzz/corpus/spec_load/`, grown by `make fuzz`)
//! replayed through the loader in `make test`: every input gives a claim or an error
//! naming the file, never a panic — what the fuzz target checks, without the fuzzer's
//! nightly-only instrumentation.
use dpclaims::spec::claim_from_bytes;
use std::path::Path;

#[test]
fn the_spec_loader_survives_the_fuzz_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/spec_load");
    let mut n = 0;
    let mut ok = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        match claim_from_bytes(Path::new("fuzz.yaml"), &bytes) {
            Ok(_) => ok += 1,
            Err(e) => assert!(e.to_string().starts_with("fuzz.yaml: "), "{path:?}: {e}"),
        }
        n += 1;
    }
    assert!(n >= 10, "only {n} corpus inputs in {dir:?}");
    assert!(ok >= 1, "no valid spec among the {n} corpus inputs");
}
