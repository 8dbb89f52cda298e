//! Spec input quoted in error messages, clipped: a message names the field and what is
//! wrong in a line or two, even when the offending value (or another one the parser
//! quotes) is a 200 KB string.
//!
//! [`clip`] shortens one value to [`ECHO_CHARS`] characters and "…". [`clip_echoes`]
//! applies it to a whole message: to every quoted segment (between backticks, double
//! quotes, or single quotes that are not apostrophes) and to every other run of
//! non-blank characters longer than [`LONG_WORD`], so it also covers the messages of
//! the YAML parser and of the expression parser, which quote what they saw.

/// Characters of spec input kept in a message.
pub const ECHO_CHARS: usize = 80;
/// A run of non-blank characters longer than this (outside quotes) is clipped too.
const LONG_WORD: usize = 160;

/// `s` itself when it has at most [`ECHO_CHARS`] characters, else its first
/// [`ECHO_CHARS`] characters followed by "…".
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(ECHO_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

/// `msg` with every quoted segment of more than [`ECHO_CHARS`] characters, and every
/// unquoted run of more than [`LONG_WORD`] non-blank characters, clipped ([`clip`]).
/// Messages without long segments come back unchanged.
pub fn clip_echoes(msg: &str) -> String {
    let chars: Vec<char> = msg.chars().collect();
    let mut out = String::with_capacity(msg.len().min(4096));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(close) = quote_end(&chars, i) {
            let inner: String = chars[i + 1..close].iter().collect();
            out.push(c);
            out.push_str(&clip(&inner));
            out.push(chars[close]);
            i = close + 1;
            continue;
        }
        if !c.is_whitespace() {
            let end = (i..chars.len())
                .find(|&k| chars[k].is_whitespace())
                .unwrap_or(chars.len());
            if end - i > LONG_WORD {
                out.push_str(&clip(&chars[i..end].iter().collect::<String>()));
                i = end;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// If `chars[i]` opens a quoted segment, the index of its closing quote. A single
/// quote opens only after a non-alphanumeric character and closes only before one, so
/// apostrophes ("doesn't", "Eq. 6's") are not quotes.
fn quote_end(chars: &[char], i: usize) -> Option<usize> {
    let q = chars[i];
    let word = |k: usize| chars.get(k).is_some_and(|c| c.is_alphanumeric());
    match q {
        '`' | '"' => (i + 1..chars.len()).find(|&k| chars[k] == q),
        '\'' if i == 0 || !word(i - 1) => {
            (i + 1..chars.len()).find(|&k| chars[k] == q && !word(k + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_are_unchanged() {
        for m in [
            "unknown system `nope` (known: a, b)",
            "the spec doesn't say; Eq. 6's 'x' is fine",
            "invalid type: string \"many\", expected usize",
        ] {
            assert_eq!(clip_echoes(m), m);
        }
    }

    #[test]
    fn long_quoted_and_unquoted_runs_are_clipped() {
        let big = "x".repeat(200_000);
        for m in [
            format!("unknown system `{big}` (known: a)"),
            format!("invalid type: string \"{big}\", expected usize"),
            format!("syntax error in expression '{big}' at byte 3"),
            format!("point {big}=1 is bad"),
            format!("unterminated `{big}"),
        ] {
            let c = clip_echoes(&m);
            assert!(c.chars().count() < 300, "{}", c.len());
            assert!(c.contains('…'));
        }
        let text = "é".repeat(100);
        assert_eq!(clip(&text).chars().count(), ECHO_CHARS + 1);
    }
}
