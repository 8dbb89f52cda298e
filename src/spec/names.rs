//! One validator for every name the tool writes into a file name, a table, a CSV
//! cell, an HTML page or a shell script: claim ids, and the names of variants,
//! predictions and sweeps. Checked when a spec is loaded, before anything runs, and on
//! names read back from files the tool wrote earlier (an old `verdicts.json`, a
//! stability record), which a user may have edited.
//!
//! * A claim id names its pages (`<id>.md`, `.html`, `.csv`, `.svg`): lowercase ASCII
//!   letters, digits and '-', starting with a letter or digit, at most [`MAX_LEN`]
//!   characters, and not a name the report set uses for its own pages ([`RESERVED`],
//!   or `scorecard-*`).
//! * A variant, prediction or sweep name: ASCII letters, digits, '-' and '_', starting
//!   with a letter or digit, at most [`MAX_LEN`] characters. No newline can split a
//!   verdict line, no leading `=`, `+`, `-` or `@` can become a spreadsheet formula in a
//!   CSV, no markup reaches an HTML page.

/// The longest id or name (a page's file name stays far below the usual 255 bytes).
pub const MAX_LEN: usize = 64;

/// Ids the report set uses for its own pages (compared without case: `SUMMARY.md`
/// and `summary.md` are one file on a case-insensitive file system).
pub const RESERVED: &[&str] = &[
    "index",
    "summary",
    "verdicts",
    "stability",
    "bench",
    "junit",
    "readme",
];

/// Checks a claim id (module docs).
pub fn claim_id(id: &str) -> Result<(), String> {
    common(id, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
    })
    .map_err(|m| format!("{m} (a claim id: lowercase letters, digits and '-')"))?;
    let lower = id.to_ascii_lowercase();
    if RESERVED.contains(&lower.as_str()) || lower.starts_with("scorecard-") {
        return Err(format!(
            "`{id}` is reserved: the report set names its own pages {} and scorecard-<paper>",
            RESERVED.join(", ")
        ));
    }
    Ok(())
}

/// Checks the name of a variant, prediction or sweep (module docs).
pub fn name(n: &str) -> Result<(), String> {
    common(n, |c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        .map_err(|m| format!("{m} (a name: letters, digits, '-' and '_')"))
}

fn common(s: &str, allowed: impl Fn(char) -> bool) -> Result<(), String> {
    let shown = crate::spec::echo::clip_echoes(&format!("{s:?}"));
    if s.is_empty() {
        return Err("empty".into());
    }
    if s.chars().count() > MAX_LEN {
        return Err(format!(
            "{} characters, more than {MAX_LEN}",
            s.chars().count()
        ));
    }
    if let Some(c) = s.chars().find(|c| !allowed(*c)) {
        return Err(format!("{shown} contains {c:?}"));
    }
    if !s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("{shown} does not start with a letter or digit"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        for ok in ["final-risk-bound", "a", "pff-fig2", &"x".repeat(64)] {
            assert!(claim_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "index",
            "SUMMARY",
            "summary",
            "verdicts",
            "scorecard-x",
            "-lead",
            "Upper",
            "a_b",
            "../x",
            "a\nb",
            "a b",
            &"x".repeat(65),
            "<b>x</b>",
            "idé",
        ] {
            assert!(claim_id(bad).is_err(), "{bad:?}");
        }
        for ok in ["eps4", "kappa-1", "sigma_calibrated", "E2"] {
            assert!(name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "=1+1", "-x", "+x", "@x", "_x", "a\nb", "a b", "a,b", "<i>", "a.b",
        ] {
            assert!(name(bad).is_err(), "{bad:?}");
        }
        // A Cyrillic look-alike of an ASCII letter is not ASCII.
        assert!(name("ерs4").unwrap_err().contains("contains"));
    }
}
