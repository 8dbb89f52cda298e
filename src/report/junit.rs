//! `dpclaims run --junit FILE`: the run as JUnit XML, the format CI tools read (GitHub
//! actions publishing test reports, GitLab's `artifacts:reports:junit`, Jenkins).
//!
//! One `<testsuite>` per claim, one `<testcase>` per verdict ([`super::ci::cases`]):
//! `classname` the claim id, `name` "prediction/variant", `file` and `line` the spec and
//! the line naming the prediction. A case fails (one `<failure>`, its reasons joined)
//! exactly when the run exits 1 because of it — except a negative control whose numbers
//! only moved with a regression of its claim's main rows: it is named in the
//! regression's failure and passes, saying so in `<system-out>` ([`super::ci`]);
//! inconclusive and out-of-regime verdicts
//! are `<skipped>` (neither confirmed nor refuted, and no reason to fail the build);
//! every other verdict passes, its measurement in `<system-out>`.
//!
//! `time` is the wall time of the units a verdict is measured from (the units of its
//! sweep and variant, summed; units run in parallel and are shared by the predictions
//! of a sweep, so the cases of a suite add up to more than its `time`, which is the
//! claim's wall time). Unknown times (`dpclaims merge`) are 0. This file is the only
//! output of a run that holds times: the reports and snapshots never do.
use super::ci::{prediction_line, Case};
use crate::judge::ClaimOutcome;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Wall times of one claim's run, in seconds.
#[derive(Clone, Debug, Default)]
pub struct ClaimTime {
    /// The claim's wall time.
    pub wall: f64,
    /// (sweep, variant) -> the summed wall time of its units.
    pub units: BTreeMap<(String, String), f64>,
}

/// Text with the characters XML 1.0 cannot hold (control characters other than tab,
/// newline, carriage return; U+FFFE, U+FFFF) replaced by U+FFFD, and `&`, `<`, `>`,
/// `"`, `'` escaped. In attributes, tab and line breaks become character references so
/// that parsers keep them (attribute value normalisation turns them into spaces).
pub fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Seconds as JUnit writes them.
fn secs(t: f64) -> String {
    format!("{:.3}", if t.is_finite() && t > 0.0 { t } else { 0.0 })
}

/// The wall time of the units a case is measured from.
fn case_time(case: &Case, times: Option<&ClaimTime>) -> f64 {
    let (Some(r), Some(t)) = (case.result, times) else {
        return 0.0;
    };
    t.units
        .get(&(r.sweep.clone(), r.variant.clone()))
        .copied()
        .unwrap_or(0.0)
}

/// The JUnit XML document of a run's cases (`outcomes` gives the suites and their
/// order; `spec_texts` the spec files' text by claim id, for the `line` attributes).
pub fn junit_xml(
    outcomes: &[ClaimOutcome],
    cases: &[Case],
    times: &BTreeMap<String, ClaimTime>,
    spec_texts: &BTreeMap<String, String>,
    stamp: &Stamp,
) -> String {
    let attr = |s: &str| escape(s, true);
    let profile = outcomes
        .first()
        .map(|o| o.profile.to_string())
        .unwrap_or_default();
    let seed = outcomes.first().map(|o| o.seed).unwrap_or(0);
    let count = |f: &dyn Fn(&Case) -> bool, id: Option<&str>| {
        cases
            .iter()
            .filter(|c| id.is_none_or(|id| c.outcome.claim.id == id) && f(c))
            .count()
    };
    let failed = |c: &Case| !c.failures.is_empty();
    let skipped = |c: &Case| c.undecided().is_some();
    let all = |_: &Case| true;
    let total_time: f64 = times.values().map(|t| t.wall).sum();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"dpclaims\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
        count(&all, None),
        count(&failed, None),
        count(&skipped, None),
        secs(total_time)
    );
    for o in outcomes {
        let id = o.claim.id.as_str();
        let file = o.claim.file.display().to_string();
        let t = times.get(id);
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\" file=\"{}\"{}>",
            attr(id),
            count(&all, Some(id)),
            count(&failed, Some(id)),
            count(&skipped, Some(id)),
            secs(t.map_or(0.0, |t| t.wall)),
            attr(&file),
            stamp.attributes()
        );
        let _ = writeln!(s, "    <properties>");
        for (k, v) in [
            ("profile", profile.as_str()),
            ("seed", &seed.to_string()),
            ("spec", &file),
            ("source", &o.claim.source.to_string()),
        ] {
            let _ = writeln!(
                s,
                "      <property name=\"{}\" value=\"{}\"/>",
                attr(k),
                attr(v)
            );
        }
        let _ = writeln!(s, "    </properties>");
        for c in cases.iter().filter(|c| c.outcome.claim.id == id) {
            let line = c
                .prediction
                .as_deref()
                .and_then(|p| spec_texts.get(id).map(|t| prediction_line(t, p)))
                .unwrap_or(1);
            let _ = write!(
                s,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\" file=\"{}\" line=\"{line}\">",
                attr(id),
                attr(&c.name),
                secs(case_time(c, t)),
                attr(&file),
            );
            if !c.failures.is_empty() {
                // One failure, its reasons joined (and, for a regression, the negative
                // controls that moved with it).
                let kinds: Vec<&str> = c.failures.iter().map(|f| f.kind).collect();
                let message = c.message();
                let _ = write!(
                    s,
                    "\n      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    attr(&message),
                    attr(&kinds.join(",")),
                    escape(&message, false)
                );
            } else if let Some(why) = c.undecided() {
                let _ = write!(s, "\n      <skipped message=\"{}\"/>", attr(&why));
            }
            // Every case has a failure or a result.
            if c.result.is_some() {
                let _ = write!(
                    s,
                    "\n      <system-out>{}</system-out>",
                    escape(&c.summary(), false)
                );
            }
            let _ = writeln!(s, "\n    </testcase>");
        }
        let _ = writeln!(s, "  </testsuite>");
    }
    s.push_str("</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaped_text_round_trips_through_an_xml_parser() {
        let nasty = "a < b && c > \"d\" 'e'\ttab\nnew line\r\u{1b}[31m\u{0} ]]> \u{FFFF} ≤ ε";
        let xml = format!(
            "<r a=\"{}\">{}</r>",
            escape(nasty, true),
            escape(nasty, false)
        );
        let doc = roxmltree::Document::parse(&xml).expect("well-formed");
        let r = doc.root_element();
        // Forbidden characters become U+FFFD; everything else survives, in attributes
        // too (tab and line breaks as character references).
        let expected = nasty.replace(['\u{1b}', '\u{0}', '\u{FFFF}'], "\u{FFFD}");
        assert_eq!(r.attribute("a"), Some(expected.as_str()));
        // Text content: XML parsers normalise a literal CR, but we write it as &#13;.
        assert_eq!(r.text(), Some(expected.as_str()));
    }
}

/// When and where a run happened, for the `timestamp` and `hostname` attributes of every
/// `<testsuite>` (JUnit's schema; CI tools show them).
#[derive(Clone, Debug)]
pub struct Stamp {
    /// ISO 8601, UTC, seconds (`2026-11-26T09:30:00`).
    pub timestamp: String,
    pub hostname: String,
}

impl Stamp {
    /// Now, on this machine.
    pub fn now() -> Stamp {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Stamp {
            timestamp: iso8601_utc(secs),
            hostname: hostname(),
        }
    }

    /// ` timestamp="..." hostname="..."`.
    pub fn attributes(&self) -> String {
        format!(
            " timestamp=\"{}\" hostname=\"{}\"",
            escape(&self.timestamp, true),
            escape(&self.hostname, true)
        )
    }
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SS` (UTC; the civil-from-days algorithm
/// of H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
pub fn iso8601_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A run that could not give verdicts (exit 2: a spec error, a crashing core): one
/// `<testsuite>` holding one `<testcase>` with an `<error>` naming the file, the field
/// and the message — as pytest reports a collection error — so that CI shows why
/// instead of "no test results".
pub fn error_xml(
    file: Option<&str>,
    line: Option<usize>,
    field: Option<&str>,
    message: &str,
    stamp: &Stamp,
) -> String {
    let attr = |s: &str| escape(s, true);
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"dpclaims\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">"
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"dpclaims\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\"{}>",
        stamp.attributes()
    );
    let name = match (file, field) {
        (Some(f), Some(fl)) => format!("{f}: {fl}"),
        (Some(f), None) => f.to_string(),
        _ => "run".to_string(),
    };
    let loc = match file {
        Some(f) => format!(" file=\"{}\" line=\"{}\"", attr(f), line.unwrap_or(1)),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "    <testcase classname=\"dpclaims\" name=\"{}\" time=\"0.000\"{loc}>",
        attr(&name)
    );
    let first = message.lines().next().unwrap_or("");
    let _ = writeln!(
        s,
        "      <error message=\"{}\" type=\"dpclaims error (exit 2)\">{}</error>",
        attr(first),
        escape(message, false)
    );
    let _ = writeln!(s, "    </testcase>");
    let _ = writeln!(s, "  </testsuite>");
    s.push_str("</testsuites>\n");
    s
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    #[test]
    fn the_epoch_and_a_leap_day_are_dated_right() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601_utc(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(iso8601_utc(1_795_651_200 + 3_661), "2026-11-26T01:01:01");
    }

    #[test]
    fn an_error_document_is_well_formed_and_names_file_field_and_message() {
        let stamp = Stamp {
            timestamp: "2026-11-26T00:00:00".into(),
            hostname: "h<1>".into(),
        };
        let xml = error_xml(
            Some("claims/x.yaml"),
            Some(8),
            Some("external.timeout_s"),
            "must be > 0 & < 3600\nsecond line",
            &stamp,
        );
        let doc = roxmltree::Document::parse(&xml).expect("well-formed");
        let case = doc
            .descendants()
            .find(|n| n.has_tag_name("testcase"))
            .unwrap();
        assert_eq!(case.attribute("file"), Some("claims/x.yaml"));
        assert_eq!(case.attribute("line"), Some("8"));
        assert_eq!(
            case.attribute("name"),
            Some("claims/x.yaml: external.timeout_s")
        );
        let err = case.children().find(|n| n.has_tag_name("error")).unwrap();
        assert_eq!(err.attribute("message"), Some("must be > 0 & < 3600"));
        let suite = doc
            .descendants()
            .find(|n| n.has_tag_name("testsuite"))
            .unwrap();
        assert_eq!(suite.attribute("hostname"), Some("h<1>"));
    }
}
