//! Spec input quoted in error messages, clipped: a message names the field and what is
//! wrong in a line or two, even when the offending value (or another one the parser
//! quotes) is a 200 KB string.
//!
//! [`clip`] shortens one value to [`ECHO_CHARS`] characters and "…". [`clip_echoes`]
//! applies it to a whole message: to every quoted segment (between backticks, double
//! quotes, or single quotes that are not apostrophes) and to every other run of
//! non-blank characters longer than [`LONG_WORD`], so it also covers the messages of
//! the YAML parser and of the expression parser, which quote what they saw. Each quoted
//! echo is also escaped by [`escape_controls`], the one escaping function of a user
//! value in a line: a value with a newline cannot start a line of its own.

/// C0 and C1 controls, DEL, and the bidirectional marks and overrides.
pub fn is_terminal_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The one escaping function for a user value in a line (issue 58; issue 50, family 7):
/// `s` with every control character — newlines, carriage returns and tabs included, C0
/// and C1 controls, DEL — and the bidirectional overrides that reorder what a terminal
/// shows written as a visible escape (`\x0a`, `\x1b`, `\u{202e}`). A spec value, a
/// file name or a path given on the command line, printed through it on stdout, stderr,
/// in a GitHub annotation or in the job summary, stays inside its line: it cannot start
/// a forged line (`::warning file=...::`, a summary heading) nor drive the terminal.
/// Also applied to every quoted echo of an error message ([`clip_echoes`]).
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = is_terminal_control;
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !bad(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

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
            // A quoted echo is a user value: one line, its controls escaped.
            out.push_str(&escape_controls(&clip(&inner)));
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
