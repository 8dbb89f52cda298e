//! YAML read with an alias-expansion budget (issue 32): serde_yaml expands every alias
//! (`*name`) into a copy of its anchor (`&name`), so a few kilobytes of doubling aliases
//! can ask for gigabytes. [`alias_budget`] refuses such a text before it is deserialised;
//! every YAML file the tool is given (claim specs, registries, scorecards) goes through it.
/// Most nodes (scalars, sequences, mappings) a YAML file may have once its aliases are
/// expanded. serde_yaml expands every alias: a 3.9 KB spec whose anchors each alias the
/// previous one twice (a "billion laughs") took 4 GB at depth 14. The largest shipped
/// spec has about 2 000 nodes.
pub const MAX_YAML_NODES: u64 = 1_000_000;

/// Most bytes of scalars a YAML file may have once its aliases are expanded.
pub const MAX_YAML_BYTES: u64 = 64 << 20;

/// The typed error of [`alias_budget`]: the text's aliases expand beyond the budget.
/// Typed (not a marker inside serde's message, which the error-path splitter of
/// `spec::raw` rewrote, so the old check never fired; issue 50, family 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the YAML expands to more than {MAX_YAML_NODES} nodes or {MAX_YAML_BYTES} bytes once its \
     aliases (`*name`) are replaced by their anchors (`&name`): an alias bomb or a runaway \
     chain of aliases; write the values out or use fewer aliases"
)]
pub struct AliasBudgetExceeded;

/// Refuses a YAML text whose alias expansion exceeds [`MAX_YAML_NODES`] or
/// [`MAX_YAML_BYTES`], before it is deserialised. The check walks the document with the
/// same parser, counting nodes as the aliases are replayed and stopping at the budget,
/// so it costs at most the budget however deep the chain (it allocates nothing per node).
/// Whether the budget stopped the walk is recorded in a flag of the walking thread, not
/// read back from the error's text. Any other problem of the text is left to the real
/// parse, which names it.
pub fn aliases_within_budget(text: &str) -> Result<(), AliasBudgetExceeded> {
    budget::OVER_BUDGET.with(|f| f.set(false));
    let r = crate::spec::raw::from_yaml::<budget::Expanded>(text);
    let tripped = budget::OVER_BUDGET.with(|f| f.replace(false));
    match r {
        _ if tripped => Err(AliasBudgetExceeded),
        // serde_yaml's own limit on alias replays fired first.
        Err((p, m)) if p.contains("repetition limit") || m.contains("repetition limit") => {
            Err(AliasBudgetExceeded)
        }
        _ => Ok(()),
    }
}

/// [`aliases_within_budget`] with its error as the message every loader shows.
pub fn alias_budget(text: &str) -> Result<(), String> {
    aliases_within_budget(text).map_err(|e| e.to_string())
}

/// The alias-expansion count of [`yaml_budget`].
mod budget {
    use serde::de::{self, Deserialize, Deserializer, Visitor};

    /// The message of the budget's error (for a reader of serde's error only: the
    /// decision is [`OVER_BUDGET`]).
    const OVER: &str = "alias expansion over budget";

    thread_local! {
        /// Set when the walk of this thread stopped at the budget.
        pub static OVER_BUDGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Nodes and scalar bytes of a (sub)document, aliases expanded.
    #[derive(Default)]
    pub struct Expanded {
        nodes: u64,
        bytes: u64,
    }

    impl Expanded {
        fn add<E: de::Error>(&mut self, o: Expanded) -> Result<(), E> {
            self.nodes = self.nodes.saturating_add(o.nodes);
            self.bytes = self.bytes.saturating_add(o.bytes);
            if self.nodes > super::MAX_YAML_NODES || self.bytes > super::MAX_YAML_BYTES {
                OVER_BUDGET.with(|f| f.set(true));
                return Err(E::custom(OVER));
            }
            Ok(())
        }
        fn leaf(bytes: usize) -> Self {
            Expanded {
                nodes: 1,
                bytes: bytes as u64,
            }
        }
    }

    impl<'de> Deserialize<'de> for Expanded {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Count)
        }
    }

    struct Count;

    impl<'de> Visitor<'de> for Count {
        type Value = Expanded;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any YAML")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Expanded, E> {
            Ok(Expanded::leaf(1))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Expanded, E> {
            Ok(Expanded::leaf(8))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Expanded, E> {
            Ok(Expanded::leaf(8))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Expanded, E> {
            Ok(Expanded::leaf(8))
        }
        fn visit_str<E>(self, s: &str) -> Result<Expanded, E> {
            Ok(Expanded::leaf(s.len()))
        }
        fn visit_bytes<E>(self, b: &[u8]) -> Result<Expanded, E> {
            Ok(Expanded::leaf(b.len()))
        }
        fn visit_unit<E>(self) -> Result<Expanded, E> {
            Ok(Expanded::leaf(0))
        }
        fn visit_none<E>(self) -> Result<Expanded, E> {
            Ok(Expanded::leaf(0))
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Expanded, D::Error> {
            Expanded::deserialize(d)
        }
        fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Expanded, D::Error> {
            Expanded::deserialize(d)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Expanded, A::Error> {
            let mut n = Expanded::leaf(0);
            while let Some(e) = a.next_element::<Expanded>()? {
                n.add::<A::Error>(e)?;
            }
            Ok(n)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Expanded, A::Error> {
            let mut n = Expanded::leaf(0);
            while let Some((k, v)) = a.next_entry::<Expanded, Expanded>()? {
                n.add::<A::Error>(k)?;
                n.add::<A::Error>(v)?;
            }
            Ok(n)
        }
        fn visit_enum<A: de::EnumAccess<'de>>(self, a: A) -> Result<Expanded, A::Error> {
            use de::VariantAccess as _;
            // A tagged node (`!tag value`): the tag, then the value.
            let (mut n, v) = a.variant::<Expanded>()?;
            let inner = v.newtype_variant::<Expanded>()?;
            n.add::<A::Error>(inner)?;
            Ok(n)
        }
    }
}
