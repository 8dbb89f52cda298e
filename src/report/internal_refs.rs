//! Pages are self-contained (issue 49, item 6): a parenthetical pointer to the project's
//! issue tracker in a spec's prose ("What this claim judges now (issue 31).") names a
//! document a reader of the reports does not have, and the sentence around it already
//! says what changed; the pages drop the pointer.
use std::borrow::Cow;

/// `text` without each ` (issue N)` and ` (issue N, item M)`; anything else unchanged.
pub fn without_issue_refs(text: &str) -> Cow<'_, str> {
    if !text.contains("(issue ") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("(issue ") {
        let after = &rest[i + "(issue ".len()..];
        match ref_len(after) {
            Some(n) => {
                out.push_str(rest[..i].strip_suffix(' ').unwrap_or(&rest[..i]));
                rest = &after[n..];
            }
            None => {
                out.push_str(&rest[..i + 1]);
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The length of `N)` or `N, item M)` at the start of `s` (through the parenthesis).
fn ref_len(s: &str) -> Option<usize> {
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(s);
    if n == 0 {
        return None;
    }
    let mut len = n;
    if let Some(t) = s[len..].strip_prefix(", item ") {
        let m = digits(t);
        if m == 0 {
            return None;
        }
        len += ", item ".len() + m;
    }
    s[len..].starts_with(')').then_some(len + 1)
}

#[cfg(test)]
mod tests {
    use super::without_issue_refs as w;

    #[test]
    fn issue_pointers_are_dropped_and_other_parentheses_kept() {
        assert_eq!(
            w("What this claim judges now (issue 31). Fig. 2"),
            "What this claim judges now. Fig. 2"
        );
        assert_eq!(w("Tuning grids (issue 46, item 2): x"), "Tuning grids: x");
        assert_eq!(
            w("a (issue x) b (issue 4 c (issue"),
            "a (issue x) b (issue 4 c (issue"
        );
        assert_eq!(w("no pointer (Eq. 5)"), "no pointer (Eq. 5)");
    }
}
