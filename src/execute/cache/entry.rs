//! What a cache entry is: the key of a unit (a SHA-256 of everything that decides its
//! numbers) and the bytes of an entry file (the metric values as exact f64 bit patterns,
//! closed by a checksum).
//!
//! The key hashes, each field length-prefixed so that the encoding is injective (as the
//! seed derivation of [`crate::rng`] does):
//!
//! ```text
//! "dpclaims/cache/v2", build (the engine hash), machine (the kernels that round),
//! recipe identity, profile, system name,
//! "spec", the judged content of the claim's spec (every field not declared prose),
//! parameters (name, f64 bits)*, options (name, value)*, data (input, target and its
//! coefficients' bits, label noise bits), metrics requested*, seed path (master, labels*),
//! ["core", an external core's identity (the hash of every file of the core, its program
//! included, its command and version)]
//! ```
//!
//! — the unit as the system sees it ([`UnitInput`]) *and* the judged content of the spec
//! it came from ([`crate::spec::Claim::key_hash`]): the key is not derived from a
//! hand-kept list of the fields that decide a value (issue 58: an audit's `trials`,
//! `estimator` and `confidence` were missing from such a list, and a changed audit was
//! served the old one's values). Every field of the spec is in the key unless it is
//! declared prose in the one list [`crate::spec::judged::PROSE_KEYS`] (a discussion, a
//! title, a statement, a note, a quote, ...): editing prose re-runs nothing; editing
//! anything else (a tolerance, a replicate count, an axis) re-runs the claim's units.
//!
//! An entry file is text, one field a line:
//!
//! ```text
//! dpclaims-cache/1
//! key <64 hex digits>
//! metric <name> <16 hex digits: the f64's bit pattern>
//! ...
//! sha256 <64 hex digits: SHA-256 of every byte above this line>
//! ```
//!
//! Anything else — a wrong checksum, a truncated file, another key — is not an entry.
use crate::data::InputDist;
use crate::spec::{DataSpec, Profile, TargetSpec};
use crate::systems::UnitInput;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// First line of an entry file (bump when the entry or key format changes).
pub const FORMAT: &str = "dpclaims-cache/1";
/// Domain-separation tag of the key.
const KEY_TAG: &str = "dpclaims/cache/v2";

/// A unit's cache key: SHA-256 of its identity (module docs), as 64 hex digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheKey(pub String);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Length-prefixed writes into a SHA-256, so that field boundaries are part of the hash.
struct KeyHasher(Sha256);

impl KeyHasher {
    fn str(&mut self, s: &str) {
        self.0.update((s.len() as u64).to_le_bytes());
        self.0.update(s.as_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.update(v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
}

/// What identifies a unit's result besides its input: the build, the formulas and the
/// profile.
#[derive(Clone, Copy, Debug)]
pub struct KeyContext<'a> {
    /// The engine hash of the build ([`crate::build_id::ENGINE_HASH`]).
    pub build: &'a str,
    /// The kernels whose rounding reaches the bits ([`super::machine_identity`]).
    pub machine: &'a str,
    /// The identity of the [`crate::train::Recipe`] (`paper` for the papers' formulas).
    pub recipe: &'a str,
    pub profile: Profile,
    /// The system's registry name.
    pub system: &'a str,
    /// The judged content of the claim's spec ([`crate::spec::Claim::key_hash`]).
    pub spec: &'a str,
    /// What else decides the unit's bits (an external core's identity, the hash of its
    /// declared files and version, [`crate::systems::System::cache_identity`]); empty for
    /// a built-in system, whose keys then stay what they were.
    pub core: &'a str,
}

/// The key of the unit `input` in `ctx` (module docs).
pub fn key(ctx: &KeyContext<'_>, input: &UnitInput<'_>) -> CacheKey {
    let mut h = KeyHasher(Sha256::new());
    h.str(KEY_TAG);
    h.str(ctx.build);
    h.str(ctx.machine);
    h.str(ctx.recipe);
    h.str(&ctx.profile.to_string());
    h.str(ctx.system);
    h.str("spec");
    h.str(ctx.spec);
    h.u64(input.vars.len() as u64);
    for (name, v) in input.vars {
        h.str(name);
        h.f64(*v);
    }
    h.u64(input.options.len() as u64);
    for (name, v) in input.options {
        h.str(name);
        h.str(v);
    }
    data(&mut h, input.data);
    h.u64(input.metrics.len() as u64);
    for m in input.metrics {
        h.str(m);
    }
    h.u64(input.seeds.master());
    h.u64(input.seeds.labels().len() as u64);
    for l in input.seeds.labels() {
        h.str(l);
    }
    // After the length-prefixed seed labels, so a key with a core identity never equals
    // one without.
    if !ctx.core.is_empty() {
        h.str("core");
        h.str(ctx.core);
    }
    CacheKey(hex(&h.0.finalize()))
}

/// Domain-separation tag of a function value's key ([`function_key`]).
const FUNCTION_TAG: &str = "dpclaims/cache/function/v1";

/// The key of the value of an expression's function `name(args)` (an accountant or a
/// calibration, [`crate::spec::expr::memo`]) for the build `build` on the machine
/// `machine`: the function is the build's code and its rounding the machine's kernels',
/// nothing else decides its bits. Its own tag: never equal to a unit's key.
pub fn function_key(build: &str, machine: &str, name: &str, args: &[f64]) -> CacheKey {
    let mut h = KeyHasher(Sha256::new());
    h.str(FUNCTION_TAG);
    h.str(build);
    h.str(machine);
    h.str(name);
    h.u64(args.len() as u64);
    for a in args {
        h.f64(*a);
    }
    CacheKey(hex(&h.0.finalize()))
}

/// The data settings, destructured without `..`: a field added to [`DataSpec`] does not
/// compile until the key covers it (a result must never be served to a unit that
/// differs in it).
fn data(h: &mut KeyHasher, d: &DataSpec) {
    let DataSpec {
        input,
        target,
        label_noise,
    } = d;
    h.str(match input {
        InputDist::Gaussian => "gaussian",
        InputDist::Sphere => "sphere",
    });
    match target {
        TargetSpec::Sign => h.str("sign"),
        TargetSpec::SingleIndex(coefs) => {
            h.str("single_index");
            h.u64(coefs.len() as u64);
            for c in coefs {
                h.f64(*c);
            }
        }
        TargetSpec::None => h.str("none"),
    }
    h.f64(*label_noise);
}

/// The bytes of the entry of `key` holding `metrics`, or `None` when a metric name could
/// not be written on one line (such a unit is not cached).
pub fn encode(key: &CacheKey, metrics: &BTreeMap<String, f64>) -> Option<Vec<u8>> {
    let mut s = format!("{FORMAT}\nkey {}\n", key.0);
    for (name, v) in metrics {
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        s.push_str(&format!("metric {name} {:016x}\n", v.to_bits()));
    }
    let sum = hex(&Sha256::digest(s.as_bytes()));
    s.push_str(&format!("sha256 {sum}\n"));
    Some(s.into_bytes())
}

/// The metric values of an entry of `key`, or `None` when `bytes` are not one (corrupt,
/// truncated, another format or another key): never trusted, never an error.
pub fn decode(key: &CacheKey, bytes: &[u8]) -> Option<BTreeMap<String, f64>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let body_end = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let (body, last) = text.split_at(body_end);
    let sum = last.strip_prefix("sha256 ")?.strip_suffix('\n')?;
    if sum != hex(&Sha256::digest(body.as_bytes())) {
        return None;
    }
    let mut lines = body.lines();
    if lines.next()? != FORMAT || lines.next()?.strip_prefix("key ")? != key.0 {
        return None;
    }
    let mut metrics = BTreeMap::new();
    for line in lines {
        let mut parts = line.strip_prefix("metric ")?.split(' ');
        let (name, bits) = (parts.next()?, parts.next()?);
        if parts.next().is_some() || bits.len() != 16 {
            return None;
        }
        let v = f64::from_bits(u64::from_str_radix(bits, 16).ok()?);
        if metrics.insert(name.to_string(), v).is_some() {
            return None;
        }
    }
    Some(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key0() -> CacheKey {
        CacheKey("ab".repeat(32))
    }

    #[test]
    fn an_entry_round_trips_exact_bits() {
        let m: BTreeMap<String, f64> = [
            ("a".to_string(), 0.1 + 0.2),
            ("b".to_string(), -0.0),
            ("c".to_string(), f64::MIN_POSITIVE / 3.0),
        ]
        .into();
        let bytes = encode(&key0(), &m).unwrap();
        let back = decode(&key0(), &bytes).unwrap();
        assert_eq!(m.len(), back.len());
        for (k, v) in &m {
            assert_eq!(v.to_bits(), back[k].to_bits());
        }
    }

    #[test]
    fn damaged_entries_are_not_entries() {
        let m: BTreeMap<String, f64> = [("loss".to_string(), 1.5)].into();
        let bytes = encode(&key0(), &m).unwrap();
        for cut in 0..bytes.len() {
            assert!(
                decode(&key0(), &bytes[..cut]).is_none(),
                "truncated at {cut}"
            );
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(decode(&key0(), &b).is_none(), "bit flipped at {i}");
        }
        assert!(decode(&CacheKey("cd".repeat(32)), &bytes).is_none());
        assert!(encode(&key0(), &[("two words".to_string(), 1.0)].into()).is_none());
    }
}
