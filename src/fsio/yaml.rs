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

/// Refuses a YAML text whose alias expansion exceeds [`MAX_YAML_NODES`] or
/// [`MAX_YAML_BYTES`], before it is deserialised. The check walks the document with the
/// same parser, counting nodes as the aliases are replayed and stopping at the budget,
/// so it costs at most the budget however deep the chain (it allocates nothing per node).
/// Any other problem of the text is left to the real parse, which names it.
pub fn alias_budget(text: &str) -> Result<(), String> {
    match crate::spec::raw::from_yaml::<budget::Expanded>(text) {
        Err((_, m)) if m.contains(budget::OVER) || m.contains("repetition limit exceeded") => {
            Err(format!(
                "the YAML expands to more than {MAX_YAML_NODES} nodes or {MAX_YAML_BYTES} bytes \
                 once its aliases (`*name`) are replaced by their anchors (`&name`): an alias \
                 bomb or a runaway chain of aliases; write the values out or use fewer aliases"
            ))
        }
        _ => Ok(()),
    }
}

/// The alias-expansion count of [`yaml_budget`].
mod budget {
    use serde::de::{self, Deserialize, Deserializer, Visitor};

    /// Marks the budget's error among serde_yaml's.
    pub const OVER: &str = "dpclaims: alias expansion over budget";

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
