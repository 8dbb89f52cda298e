//! `replicates:` of a sweep profile: a fixed count, or a sequential schedule
//! `{min, max}` looked at after `min`, `2 min`, … and `max` replicates a point
//! ([`crate::judge::sequential`]; docs/design/sequential-verdicts.md).
use serde::Deserialize;

/// `replicates: 24` (a fixed count) or `replicates: {min: 8, max: 96}` (sequential: a
/// row draws replicates in batches from `min` and stops when decided, at most `max`).
#[derive(Debug, Clone, Copy, schemars::JsonSchema)]
#[schemars(untagged)]
pub enum RawReplicates {
    Fixed(usize),
    Sequential(RawReplicateRange),
}

/// By hand rather than `#[serde(untagged)]`, whose only error is "data did not match any
/// variant": a wrong key or type is named.
impl<'de> Deserialize<'de> for RawReplicates {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawReplicates;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a count of replicates (`24`) or a sequential range (`{min: 8, max: 96}`)",
                )
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawReplicates, E> {
                usize::try_from(v)
                    .map(RawReplicates::Fixed)
                    .map_err(|_| E::custom(format!("{v} replicates is too many")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawReplicates, E> {
                Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawReplicates, A::Error> {
                RawReplicateRange::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawReplicates::Sequential)
            }
        }
        d.deserialize_any(V)
    }
}

/// `{min, max}`: replicates a point at the first look and at the last.
#[derive(Deserialize, Debug, Clone, Copy, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReplicateRange {
    pub min: usize,
    pub max: usize,
}

impl RawReplicates {
    /// (min, max); a fixed count is both.
    pub fn range(self) -> (usize, usize) {
        match self {
            RawReplicates::Fixed(n) => (n, n),
            RawReplicates::Sequential(r) => (r.min, r.max),
        }
    }
}

/// Replicates of one sweep at one profile: a fixed count (`min == max`) or a sequential
/// schedule. Sequential rows are looked at after `min`, `2 min`, `4 min`, ... replicates
/// and at `max` ([`Replicates::looks`]); every look's intervals are at level
/// `1 - (1 - confidence) / looks` (Bonferroni over the looks, so that the chance that
/// any look's interval misses is at most the row's `1 - confidence`, whatever the
/// stopping rule: [`crate::judge::sequential`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicates {
    pub min: usize,
    pub max: usize,
}

impl Replicates {
    /// A fixed count.
    pub fn fixed(n: usize) -> Replicates {
        Replicates { min: n, max: n }
    }

    /// The replicate counts at which a row is looked at: `min`, doubling, capped at and
    /// ending with `max` (one look for a fixed count).
    pub fn looks(&self) -> Vec<usize> {
        let mut v = vec![self.min];
        let mut n = self.min;
        while n < self.max {
            n = n.saturating_mul(2).min(self.max);
            v.push(n);
        }
        v
    }

    /// The look after `n` replicates (`None` at or past `max`).
    pub fn next_look(&self, n: usize) -> Option<usize> {
        self.looks().into_iter().find(|&l| l > n)
    }
}

impl std::fmt::Display for Replicates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.max)
        } else {
            write!(f, "{} to {} (sequential)", self.min, self.max)
        }
    }
}
