//! Where a field path (`predictions[1].tolerance`) stands in a spec's text: its line and
//! column. `serde_yaml::Value` has no spans, so the text is walked once more by the same
//! parser with a visitor that follows the path and fails on purpose at its last step;
//! serde_yaml stamps that error with the position of the node it was reading — a key for
//! a mapping entry, the first token of an item for a sequence element. The same parser
//! means the same reading of flow collections, anchors and indentation as the loader's.
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Splits a field path as the loader writes it (`a.b[0].c`); the pseudo-fields
/// `(top level)`, `(file)` and `(directory)` are the root (no step).
pub fn parse_path(field: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    if field.starts_with('(') || field.is_empty() {
        return out;
    }
    for part in field.split('.') {
        let mut rest = part;
        let key_end = rest.find('[').unwrap_or(rest.len());
        if key_end > 0 {
            out.push(Seg::Key(rest[..key_end].to_string()));
        }
        rest = &rest[key_end..];
        while let Some(r) = rest.strip_prefix('[') {
            let Some(close) = r.find(']') else { break };
            match r[..close].parse::<usize>() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(r[..close].to_string())),
            }
            rest = &r[close + 1..];
        }
    }
    out
}

/// Writes a path back as the loader does (`a.b[0].c`; the root is `(top level)`).
pub fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    if s.is_empty() {
        "(top level)".to_string()
    } else {
        s
    }
}

const FOUND: &str = "\u{0}dpclaims-locate-found";

/// The 1-based (line, column) of the node at `path` in `text` (of its key when it is a
/// mapping entry), or of the nearest ancestor found; `None` for the root or when the text
/// does not parse that far.
pub fn locate(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    for len in (1..=path.len()).rev() {
        if let Some(at) = locate_exact(text, &path[..len]) {
            return Some(at);
        }
    }
    None
}

fn locate_exact(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    if path.is_empty() {
        return None;
    }
    let de = serde_yaml::Deserializer::from_str(text);
    match (Node { path, depth: 0 }).deserialize(de) {
        Err(e) if e.to_string().contains(FOUND) => {
            let loc = e.location()?;
            Some((loc.line(), loc.column()))
        }
        _ => None,
    }
}

/// A node at `path[..depth]`.
struct Node<'a> {
    path: &'a [Seg],
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML node")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.leaf()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.depth == self.path.len() {
            return Err(de::Error::custom(FOUND));
        }
        let mut i = 0;
        loop {
            let next = if self.path[self.depth] == Seg::Index(i) {
                seq.next_element_seed(Node {
                    path: self.path,
                    depth: self.depth + 1,
                })?
                .map(|_| ())
            } else {
                seq.next_element::<IgnoredAny>()?.map(|_| ())
            };
            if next.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.depth == self.path.len() {
            return Err(de::Error::custom(FOUND));
        }
        let want = match &self.path[self.depth] {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        };
        let last = self.depth + 1 == self.path.len();
        while let Some(hit) = map.next_key_seed(Key { want, last })? {
            if hit {
                map.next_value_seed(Node {
                    path: self.path,
                    depth: self.depth + 1,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl Node<'_> {
    fn leaf<E: de::Error>(self) -> Result<(), E> {
        if self.depth == self.path.len() {
            Err(E::custom(FOUND))
        } else {
            Ok(())
        }
    }
}

/// A mapping key: whether it is the one wanted (failing on purpose when it is the last
/// step, so that the error carries the key's position).
struct Key<'a> {
    want: Option<&'a str>,
    last: bool,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        let hit = self.want == Some(v);
        if hit && self.last {
            return Err(E::custom(FOUND));
        }
        Ok(hit)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "id: x\nsource:\n  paper: p\n  section: s\nsweeps: {a: {quick: 1}}\n\
                        predictions:\n  - kind: event\n    name: one\n  - kind: bound\n    \
                        tolerance: 0.1\n";

    #[test]
    fn keys_and_items_are_located() {
        let at = |p: &str| locate(TEXT, &parse_path(p));
        assert_eq!(at("id"), Some((1, 1)));
        assert_eq!(at("source.section"), Some((4, 3)));
        assert_eq!(at("sweeps.a.quick"), Some((5, 14)));
        assert_eq!(at("predictions[1].tolerance"), Some((10, 5)));
        assert_eq!(at("predictions[1]").map(|a| a.0), Some(9));
        // A missing step: the nearest ancestor.
        assert_eq!(at("source.nope"), Some((2, 1)));
        assert_eq!(at("(top level)"), None);
    }

    #[test]
    fn paths_round_trip() {
        for p in ["a.b[0].c", "predictions[12]", "x", "(top level)"] {
            assert_eq!(path_string(&parse_path(p)), p);
        }
    }
}
