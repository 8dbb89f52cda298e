//! A planted regression as CI shows it (issue 59): the core's noise halved under a
//! recorded baseline. The failure list leads with the main row that held on the
//! baseline and no longer does; the negative controls whose numbers moved with it are
//! grouped under it, no failures of their own; "Failures (N)" is the number of bullets,
//! each case once; the job summary's first line says the core regressed; and no CI
//! output tells the user to silence the row with a `finding`.
//!
//! The regression is planted in the spec a baseline was not recorded from: the baseline
//! is the snapshot of the correct claim (`kappa: "2"`, replace-one sensitivity), the run
//! is of the same claim with `kappa: "1"` — the noise constant of the `noise-c-over-n`
//! fault (`dpclaims faults`): half the noise. Closed forms only (`gaussian_calibration`),
//! so the run is deterministic and takes well under a second.
use super::hardening3_util::{cmd, wait, Out, DEADLINE};
use std::path::Path;

/// One main variant, two negative controls (the calibration without its
/// sqrt(8 ln(1/delta)), at two epsilons), one prediction judged on each: the exact
/// epsilon at most half the target (about 0.36 of it with the correct noise, 0.76 with
/// half of it: measured).
const CORRECT: &str = r#"id: tiny-reg
title: "tiny calibration with two controls (test only)"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: gaussian_calibration
model: none
adjacency: replace_one
params: {epsilon: "1", kappa: "2", eta: "0.1", steps: "10"}
sweeps:
  grid:
    quick: {axes: {delta: [1.0e-5, 1.0e-4, 1.0e-3]}, replicates: 1}
    full: {axes: {delta: [1.0e-5, 1.0e-3]}, replicates: 1}
variants:
  - name: base
  - name: broken
    negative_control: true
    caught_by: [eps-bound]
    options: {calibration: inverse_epsilon}
  - name: broken-eps2
    negative_control: true
    caught_by: [eps-bound]
    options: {calibration: inverse_epsilon}
    params: {epsilon: "2"}
predictions:
  - kind: inequality
    evidence: consequence
    name: eps-bound
    metric: exact_epsilon
    sweep: grid
    op: "<="
    rhs: "epsilon / 2"
"#;

/// [`CORRECT`] with half the noise: what the core computes after the planted bug.
fn halved() -> String {
    let s = CORRECT.replace("kappa: \"2\"", "kappa: \"1\"");
    assert_ne!(s, CORRECT);
    s
}

/// A project whose baseline is the snapshot of [`CORRECT`] and whose claim file is
/// `spec`.
fn project(spec: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let claims = d.path().join("claims");
    std::fs::create_dir_all(&claims).unwrap();
    std::fs::write(claims.join("tiny-reg.yaml"), CORRECT).unwrap();
    crate::util::record_baseline(d.path(), &claims.join("tiny-reg.yaml"));
    std::fs::write(claims.join("tiny-reg.yaml"), spec).unwrap();
    d
}

/// `dpclaims run --junit j.xml` in `dir` under GitHub Actions, under the deadline.
fn ci_run(dir: &Path) -> Out {
    let mut c = cmd(dir, &["run", "--no-reports", "--junit", "j.xml"]);
    c.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env_remove("GITHUB_WORKSPACE");
    wait(c.spawn().expect("start dpclaims"), DEADLINE)
}

/// The job summary's failures section: (the count in its heading, its lines).
fn failures_section(md: &str) -> (usize, Vec<&str>) {
    let head = md
        .lines()
        .find(|l| l.starts_with("**Failures** ("))
        .unwrap_or_else(|| panic!("no failures heading: {md}"));
    let n = head["**Failures** (".len()..]
        .trim_end_matches("):")
        .parse()
        .unwrap();
    let lines: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("**Failures** ("))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    (n, lines)
}

#[test]
fn a_regression_leads_the_ci_failures_with_its_controls_grouped_under_it() {
    // The fault-free run against its own baseline: exit 0, no failure anywhere.
    let d = project(CORRECT);
    let ok = ci_run(d.path());
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let md = std::fs::read_to_string(d.path().join("summary.md")).unwrap();
    assert!(!md.contains("Regression of the core"), "{md}");
    assert!(!md.contains("**Failures**"), "{md}");

    // Half the noise.
    let d = project(&halved());
    let o = ci_run(d.path());
    assert_eq!(o.code, Some(1), "{}\n{}", o.stdout, o.stderr);
    let md = std::fs::read_to_string(d.path().join("summary.md")).unwrap();

    // The first line after the heading says the core regressed, naming the row.
    let first = md
        .lines()
        .skip(1)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    assert_eq!(
        first,
        "**Regression of the core**: 1 main row that held on the baseline no longer does: \
         `tiny-reg` `eps-bound/base` (consistent -> inconsistent); 2 negative controls moved \
         with the main rows that changed (under them in the failures). The core or the spec \
         changed since the baseline.",
        "{md}"
    );

    // One bullet per failing case, the count in the heading; no case twice; the
    // regression first, its controls as sub-bullets under it.
    let (n, lines) = failures_section(&md);
    let bullets: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("* "))
        .collect();
    assert_eq!(n, bullets.len(), "{md}");
    assert_eq!(n, 1, "{md}");
    // A bullet's case: its "`claim` `prediction/variant`"; a sub-bullet's: its control.
    let named: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| match l.strip_prefix("  * ") {
            Some(sub) => sub.split('`').nth(1),
            None => l.split(": ").next(),
        })
        .collect();
    assert_eq!(named.len(), lines.len(), "a case listed twice: {md}");
    assert!(
        bullets[0].starts_with("* `tiny-reg` `eps-bound/base`: regression of the core"),
        "{md}"
    );
    let subs: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("  * "))
        .collect();
    assert_eq!(lines.len(), bullets.len() + subs.len(), "{md}");
    assert_eq!(subs.len(), 2, "{md}");
    for (sub, name) in subs
        .iter()
        .zip(["eps-bound/broken", "eps-bound/broken-eps2"])
    {
        assert!(
            sub.starts_with(&format!(
                "  * moved with it, no failure of its own: `{name}` (negative control): "
            )),
            "{md}"
        );
    }
    // Its two reasons (the judge's and the baseline's) on the one bullet.
    assert!(bullets[0].contains("changed against the baseline"), "{md}");
    assert!(
        bullets[0].contains("it was consistent on the baseline and is inconsistent now"),
        "{md}"
    );
    // No advice to silence it, in any CI output.
    for l in &lines {
        assert!(!l.contains("finding"), "finding advice in the summary: {l}");
    }
    let errors: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(errors.len(), n, "{}", o.stdout);
    assert!(
        errors[0].contains("title=dpclaims%3A tiny-reg eps-bound/base::regression of the core"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains("2 negative controls moved with it"),
        "{}",
        errors[0]
    );
    assert!(!errors[0].contains("finding"), "{}", errors[0]);
    // The claim's row of the table says it regressed, before its words.
    assert!(
        md.contains(
            "| `tiny-reg` | s, e | **regressed against the baseline** (`eps-bound/base` held \
             there, not now); "
        ),
        "{md}"
    );

    // The plain output ends with the regression, and no FAIL line above it advises a
    // `finding` for the row that held on the baseline.
    let fails: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .collect();
    assert!(!fails.is_empty(), "{}", o.stderr);
    for l in &fails {
        assert!(!l.contains("finding"), "finding advice in a FAIL line: {l}");
    }
    assert!(
        fails
            .iter()
            .any(|l| l.contains("it was consistent on the baseline and is inconsistent now")),
        "{}",
        o.stderr
    );
    let last = o.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "REGRESSION of the core: tiny-reg eps-bound/base was consistent on the baseline \
             and is inconsistent now; 2 negative controls moved with it (eps-bound/broken, \
             eps-bound/broken-eps2). The core or the spec changed since the baseline"
        ),
        "{}",
        o.stderr
    );

    // JUnit: the regression is the one failure; the controls pass, saying what moved.
    let xml = std::fs::read_to_string(d.path().join("j.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed");
    assert_eq!(doc.root_element().attribute("failures"), Some("1"), "{xml}");
    let case = |name: &str| {
        doc.descendants()
            .find(|c| c.has_tag_name("testcase") && c.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no {name}: {xml}"))
    };
    let failure = case("eps-bound/base")
        .children()
        .find(|c| c.has_tag_name("failure"))
        .expect("the regression fails");
    let message = failure.attribute("message").unwrap();
    assert!(!message.contains("finding"), "{message}");
    assert_eq!(failure.attribute("type"), Some("problem,baseline_changed"));
    for name in ["eps-bound/broken", "eps-bound/broken-eps2"] {
        let c = case(name);
        assert!(!c.children().any(|k| k.has_tag_name("failure")), "{xml}");
        assert!(message.contains(name), "{message}");
        let out = c
            .children()
            .find(|k| k.has_tag_name("system-out"))
            .and_then(|k| k.text())
            .unwrap_or_default();
        assert!(
            out.contains("moved with the regression of eps-bound/base"),
            "{xml}"
        );
    }
}

/// Controls are grouped only under a main row that changed: a control that moved alone
/// (its own spec edited, no main row changed) stays a failure of its own, and nothing
/// says the core regressed.
#[test]
fn a_control_that_moved_alone_stays_a_failure_of_its_own() {
    let moved = CORRECT.replace("params: {epsilon: \"2\"}", "params: {epsilon: \"3\"}");
    assert_ne!(moved, CORRECT);
    let d = project(&moved);
    let o = ci_run(d.path());
    assert_eq!(o.code, Some(1), "{}\n{}", o.stdout, o.stderr);
    let md = std::fs::read_to_string(d.path().join("summary.md")).unwrap();
    assert!(!md.contains("Regression of the core"), "{md}");
    assert!(!md.contains("regressed against the baseline"), "{md}");
    let (n, lines) = failures_section(&md);
    assert_eq!((n, lines.len()), (1, 1), "{md}");
    assert!(
        lines[0].starts_with("* `tiny-reg` `eps-bound/broken-eps2`: changed against the baseline"),
        "{md}"
    );
    assert!(!o.stderr.contains("REGRESSION"), "{}", o.stderr);
    let xml = std::fs::read_to_string(d.path().join("j.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed");
    assert_eq!(doc.root_element().attribute("failures"), Some("1"), "{xml}");
}
