//! Tampered partial files: `merge` refuses each (exit 2, naming the file) and writes no
//! report — a flipped bit, a truncated file, a shard of another seed or another build, a
//! duplicated shard, shards of two shardings that overlap.
use crate::sharding::{code, run_shard, text, three_shards, workdir};
use crate::util::dpclaims_in;
use dpclaims::execute::shard::Partial;
use std::path::Path;

/// Merges `inputs`, expects exit 2 with every word of `words` on stderr, and no reports.
fn refused(dir: &Path, inputs: &[&str], words: &[&str]) {
    let mut args = vec!["merge"];
    args.extend_from_slice(inputs);
    args.extend(["--out", "merged"]);
    let out = dpclaims_in(dir, &args);
    let err = text(&out.stderr);
    assert_eq!(code(&out), 2, "{inputs:?}: {err}");
    for w in words {
        assert!(err.contains(w), "{inputs:?}: `{w}` not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !dir.join("merged").exists(),
        "no reports from refused inputs"
    );
}

/// A copy of `shards/` as `name/`, with `shard-1-of-3.json` replaced by `bytes`.
fn copy_with(dir: &Path, name: &str, bytes: &[u8]) {
    let to = dir.join(name);
    std::fs::create_dir(&to).unwrap();
    for i in 0..3 {
        let f = format!("shard-{i}-of-3.json");
        std::fs::copy(dir.join("shards").join(&f), to.join(&f)).unwrap();
    }
    std::fs::write(to.join("shard-1-of-3.json"), bytes).unwrap();
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

#[test]
fn merge_refuses_tampered_partials_naming_the_file() {
    let w = workdir();
    let dir = w.path();
    three_shards(dir);
    let ok = dpclaims_in(dir, &["merge", "shards", "--no-reports"]);
    assert_eq!(code(&ok), 0, "{}", text(&ok.stderr));
    let good = std::fs::read(dir.join("shards/shard-1-of-3.json")).unwrap();

    // Single flipped bits, spread over the file: in values (checksum), in hex letters
    // (`a` → `A` parses to the same value: the byte comparison), in the structure (JSON).
    let positions: Vec<usize> = (0..24).map(|i| (2 * i + 1) * good.len() / 48).collect();
    for (i, &pos) in positions.iter().enumerate() {
        let mut bytes = good.clone();
        bytes[pos] ^= 1 << (i % 7);
        copy_with(dir, &format!("flip{i}"), &bytes);
        refused(dir, &[&format!("flip{i}")], &["shard-1-of-3.json"]);
    }
    // In a metric value (the manifest's hashes are hex too, but covered by the checksum).
    let values = find(&good, b"\"metrics\"");
    let hex_letter = values
        + good[values..]
            .windows(3)
            .position(|w| w[0].is_ascii_hexdigit() && w[1] == b'a' && w[2].is_ascii_hexdigit())
            .unwrap()
        + 1;
    let mut upper = good.clone();
    upper[hex_letter] ^= 0x20;
    copy_with(dir, "upper", &upper);
    refused(dir, &["upper"], &["shard-1-of-3.json", "byte for byte"]);
    let digit = values
        + good[values..]
            .windows(2)
            .position(|w| w[0] == b'"' && w[1].is_ascii_digit())
            .unwrap()
        + 1;
    let mut value = good.clone();
    value[digit] ^= 1;
    copy_with(dir, "value", &value);
    refused(dir, &["value"], &["shard-1-of-3.json", "checksum mismatch"]);

    // Truncated.
    copy_with(dir, "cut", &good[..good.len() / 2]);
    refused(dir, &["cut"], &["shard-1-of-3.json", "truncated"]);

    // A shard of another seed.
    let seed = dir.join("seed");
    std::fs::create_dir(&seed).unwrap();
    run_shard(dir, 1, 3, "seed", &["--seed", "9"]);
    for i in [0, 2] {
        let f = format!("shard-{i}-of-3.json");
        std::fs::copy(dir.join("shards").join(&f), seed.join(&f)).unwrap();
    }
    refused(
        dir,
        &["seed"],
        &["shard-1-of-3.json has seed 9", "has seed 0"],
    );

    // A shard of another build: the engine hash differs (sealed with a valid checksum).
    let mut p = Partial::read(&dir.join("shards/shard-1-of-3.json")).unwrap();
    p.manifest.engine_hash = "0".repeat(64);
    p.manifest.git_commit = "feedc0de".into();
    copy_with(dir, "build", p.to_json().as_bytes());
    refused(
        dir,
        &["build"],
        &[
            "build/shard-1-of-3.json",
            "another build",
            "engine hash 000000000000 (commit feedc0de)",
        ],
    );

    // A duplicated shard.
    std::fs::create_dir(dir.join("dup")).unwrap();
    std::fs::write(dir.join("dup/shard-1-of-3.json"), &good).unwrap();
    refused(
        dir,
        &["shards", "dup"],
        &[
            "dup/shard-1-of-3.json",
            "shards/shard-1-of-3.json",
            "duplicated shard",
        ],
    );
    refused(
        dir,
        &["shards/shard-0-of-3.json", "shards/shard-0-of-3.json"],
        &["duplicated shard"],
    );

    // Overlapping shardings: shard 0 of 2 with the shards of 3.
    run_shard(dir, 0, 2, "two", &[]);
    refused(
        dir,
        &["shards", "two"],
        &["two/shard-0-of-2.json", "different numbers of shards"],
    );
}
