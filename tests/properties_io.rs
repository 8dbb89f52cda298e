//! Property tests of the parsers of files the tool reads back and of the Markdown it
//! renders (issue 32, item 7), replayed in `make test` without a fuzzer: each starts
//! from a valid input and applies seeded random mutations (byte flips, truncations,
//! deletions, duplications, splices of hostile fragments), so the same cases run every
//! time. `fuzz/` holds the same properties as cargo-fuzz targets for open-ended runs.
//!
//! * partial files: never a panic; an error names the file; a mutated file that still
//!   parses holds the same units as the original (the checksum catches every change
//!   that matters);
//! * stability records: never a panic; rows read back are rows of the record;
//! * external answers: never a panic; an accepted answer is the unit asked's, with every
//!   wanted metric finite, and is refused for any other unit;
//! * Markdown to HTML: never a script, a `javascript:`/`data:` link, a remote or
//!   out-of-set image.
use dpclaims::execute::shard::Partial;
use dpclaims::report::html::render_markdown;
use dpclaims::report::stability::record::{self, Header, Row, FORMAT};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

const FRAGMENTS: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "NaN",
    "1e999",
    "-0",
    "\n",
    "\u{0}",
    "\u{feff}",
    "é",
    "\"checksum\":\"00\"",
    "[x](javascript:alert(1))",
    "![i](https://e/p.png)",
    "<script>",
    "](",
    "<",
    ">",
    "(",
    ")",
    "!",
    "#",
    "`",
    "../",
    "//",
    "data:",
    "&#x6a;",
];

/// One random mutation of `s` (at a char boundary).
fn mutate(s: &str, rng: &mut ChaCha8Rng) -> String {
    let cut = |rng: &mut ChaCha8Rng, s: &str| {
        let mut i = rng.random_range(0..=s.len());
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut out = s.to_string();
    for _ in 0..rng.random_range(1..4) {
        let i = cut(rng, &out);
        match rng.random_range(0..5) {
            0 => out.truncate(i),
            1 => {
                let j = cut(rng, &out[i..]) + i;
                out.replace_range(i..j, "");
            }
            2 => {
                let f = FRAGMENTS[rng.random_range(0..FRAGMENTS.len())];
                out.insert_str(i, f);
            }
            3 => {
                let j = cut(rng, &out[i..]) + i;
                let dup = out[i..j].to_string();
                out.insert_str(j, &dup);
            }
            _ => {
                // Flip an ASCII digit or letter to another.
                if let Some(c) = out[i..].chars().next().filter(char::is_ascii_alphanumeric) {
                    let to = if c.is_ascii_digit() { 'z' } else { '7' };
                    out.replace_range(i..i + 1, &to.to_string());
                }
            }
        }
    }
    out
}

fn tiny_partial_text() -> String {
    let t = tempfile::tempdir().unwrap();
    let spec = t.path().join("c.yaml");
    std::fs::write(&spec, crate::util::tiny_rf_claim_named("c")).unwrap();
    let out = crate::util::dpclaims_in(
        t.path(),
        &["run", "c.yaml", "--shard", "0/1", "--partial-out", "parts"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let part = std::fs::read_dir(t.path().join("parts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a partial file");
    std::fs::read_to_string(part).unwrap()
}

#[test]
fn partial_files_survive_mutations_and_the_checksum_catches_every_change() {
    let text = tiny_partial_text();
    let file = Path::new("p.json");
    let original = Partial::from_json(file, &text).expect("the valid partial parses");
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    let (mut refused, mut parsed) = (0, 0);
    for _ in 0..1500 {
        let m = mutate(&text, &mut rng);
        match Partial::from_json(file, &m) {
            Err(e) => {
                assert!(e.to_string().contains("p.json"), "{e}");
                refused += 1;
            }
            Ok(p) => {
                // Only changes of no consequence (whitespace, key order) may pass.
                assert_eq!(
                    p.to_json(),
                    original.to_json(),
                    "a changed partial was accepted"
                );
                parsed += 1;
            }
        }
    }
    assert!(refused > 1000, "{refused} refused, {parsed} parsed");
}

#[test]
fn stability_records_survive_mutations() {
    let header = Header {
        format: FORMAT.into(),
        seed: 3,
        profile: "quick".into(),
        verdict_build: "ab".repeat(32),
        claims: [("c".to_string(), "cd".repeat(32))].into_iter().collect(),
    };
    let row = |v: &str, x: f64| Row {
        seed: 3,
        claim: "c".into(),
        prediction: "p".into(),
        variant: v.into(),
        kind: "exponent".into(),
        verdict: dpclaims::fit::Verdict::Holds,
        negative_control: false,
        caught: None,
        estimate: Some(x),
        ci_lo: Some(x - 0.1),
        ci_hi: Some(x + 0.1),
        predicted: Some(-1.0),
        tolerance: Some(0.2),
        problem: None,
    };
    let rows = vec![row("a", -0.9), row("b", f64::NAN), row("c", 1e-300)];
    let text = record::to_text(&header, &rows);
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    let mut ok = 0;
    for _ in 0..1500 {
        let m = mutate(&text, &mut rng);
        if let Ok(reuse) = record::parse(&m, &header) {
            ok += 1;
            for r in reuse.kept.values().flatten() {
                assert_eq!(r.seed, 3);
                assert_eq!(r.claim, "c");
                dpclaims::spec::names::name(&r.variant).unwrap();
            }
        }
    }
    assert!(ok < 1500, "no mutation was refused");
}

#[test]
fn markdown_never_renders_scripts_or_links_outside_the_policy() {
    let seeds = [
        "see [the paper](https://e/p) and [claim](c.md), ![plot](c.svg), `code` <u, mu>",
        "| a | b |\n|---|---|\n| [x](y.md) | ![p](p.svg) |\n\n> quote [r][ref]\n\n[ref]: z.md",
        "* item <b>bold</b> [a](#sec)\n* ![alt [nested](x.md)](p.svg)",
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(34);
    for seed in seeds {
        for _ in 0..700 {
            let m = mutate(seed, &mut rng);
            let h = render_markdown(&m).to_ascii_lowercase();
            assert!(!h.contains("<script"), "{m:?} -> {h}");
            for bad in [
                "href=\"javascript:",
                "href=\"data:",
                "href=\"//",
                "href=\"../",
            ] {
                assert!(!h.contains(bad), "{m:?} -> {h}");
            }
            for bad in [
                "src=\"http",
                "src=\"//",
                "src=\"data:",
                "src=\"../",
                "src=\"javascript:",
            ] {
                assert!(!h.contains(bad), "{m:?} -> {h}");
            }
            // No raw tag from the source survives: every '<' that opens a tag is one the
            // renderer wrote.
            for tag in ["<img src=x", "<b>", "<iframe", "<svg", "<object"] {
                assert!(!h.contains(tag), "{m:?} -> {h}");
            }
        }
    }
}

/// The external protocol's answer reader (issue 32, item 7): on mutated answers, never a
/// panic; an accepted answer is for the unit asked and holds every wanted metric, finite;
/// an answer naming another unit is never accepted.
#[test]
fn external_answers_survive_mutations_and_never_pair_with_another_unit() {
    use dpclaims::systems::external::protocol::read_answer;
    let unit = "c/main/s/x=1/0";
    let valid = [
        r#"{"unit": "c/main/s/x=1/0", "metrics": {"m": 1.5, "k": -2e-3}}"#,
        r#"{"unit": "c/main/s/x=1/0", "error": null, "metrics": {"m": 0, "k": 1}}"#,
        r#"{"unit": "c/main/s/x=1/0", "error": "p must exceed n"}"#,
        r#"{"error": "malformed request"}"#,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..4000 {
        let mut s = valid[i % valid.len()].to_string();
        for _ in 0..rng.random_range(1..4) {
            s = mutate(&s, &mut rng);
        }
        match read_answer(&s, unit, &["m", "k"]) {
            Ok(m) => {
                accepted += 1;
                assert!(m.len() == 2 && m.values().all(|v| v.is_finite()), "{s}");
                let v: serde_json::Value = serde_json::from_str(&s).expect("accepted is JSON");
                assert_eq!(v["unit"], unit, "accepted an answer of another unit: {s}");
                // The same answer is never accepted for another unit.
                assert!(read_answer(&s, "c/main/s/x=2/0", &["m"]).is_err(), "{s}");
            }
            Err(e) => {
                refused += 1;
                assert!(!e.what.is_empty() && e.what.len() < 2000, "{s}: {e:?}");
            }
        }
    }
    assert!(
        accepted > 50 && refused > 1000,
        "{accepted} accepted, {refused} refused"
    );
}
