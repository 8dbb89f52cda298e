//! The scorecard page a researcher reads in two minutes (issue 49): a box of at most
//! [`MAX_SUMMARY_LINES`] lines with numbers from the run, one table with one row per
//! numbered result (result | the claim in at most [`MAX_CLAIM_WORDS`] words | verdict |
//! key number with its meaning | claim page), "Not judged, and why", the self-checks in
//! one line, remarks, and the method last. Everything else (the method in full, the
//! hypotheses, every check, the failing hypotheses) is on the paper's details page
//! (`scorecard-<name>-details.md`, [`details_page`]) and the claim pages.
use super::found::{first_sentence, FoundMap};
use super::keynum::{fill, resolve};
use super::render::{add, scorecard_markdown};
use super::sections::{place_all, self_check_rows, Section};
use super::{Catalogue, PaperResult, Scorecard};
use crate::judge::ClaimOutcome;
use crate::report::claim_page::cell;
use crate::report::kept::Kept;
use crate::report::run_json;
use std::fmt::Write as _;

/// Lines of the page's box.
pub const MAX_SUMMARY_LINES: usize = 8;
/// Words of a result's `claim`.
pub const MAX_CLAIM_WORDS: usize = 15;
/// Characters of a row of the page's table, as shown (link targets not counted).
pub const MAX_ROW_CHARS: usize = 250;

/// Calls `f` with the rows of this run (rounded as `verdicts.json` is) and of the kept
/// claims, keyed by (claim, prediction, variant).
fn with_found<T>(
    outcomes: &[ClaimOutcome],
    kept: &[Kept],
    f: impl FnOnce(&FoundMap, Option<(String, u64)>) -> T,
) -> T {
    let first = outcomes.first();
    let run = first.map(|o| (o.profile.to_string(), o.seed));
    let run_doc = first.map(|o| {
        let mut d = run_json(o.profile, o.seed, outcomes);
        crate::report::number::json(&mut d);
        d
    });
    let mut found = FoundMap::new();
    if let (Some(doc), Some((p, _))) = (&run_doc, &run) {
        for c in doc["claims"].as_array().into_iter().flatten() {
            let id = c["id"].as_str().unwrap_or("");
            add(&mut found, id, &c["results"], None, p.clone());
        }
    }
    for k in kept {
        add(
            &mut found,
            &k.id,
            &k.doc["results"],
            Some(&k.from),
            k.from.profile.clone(),
        );
    }
    f(&found, run)
}

/// The stem of the details page of `card`.
pub fn details_stem(card: &Scorecard) -> String {
    format!("{}-details", card.page)
}

/// `scorecard-<name>-details.md`: the method in full, the hypotheses, the results by
/// section with their evidence and regime, the self-checks and every check.
pub fn details_page(
    card: &Scorecard,
    claims: &Catalogue,
    outcomes: &[ClaimOutcome],
    kept: &[Kept],
) -> String {
    let mut md = scorecard_markdown(card, claims, outcomes, kept);
    scorecard_amendments(card, &mut md);
    let md = md.replacen(
        "# Scorecard — ",
        &format!("[← the scorecard]({}.md)\n\n# Details — ", card.page),
        1,
    );
    // The one explanation of a margin, written once for the page.
    match md.find("\n## ") {
        Some(i) => format!(
            "{}\n*A margin is the measured side minus the bound (the bound minus the \
             measured side for a lower bound) at the worst point: above 0 violates.*\n{}",
            &md[..i],
            &md[i..]
        ),
        None => md,
    }
}

/// The heading of a scorecard's own amendments (details page).
pub(crate) const SCORECARD_AMENDMENTS: &str =
    "## Changes to this scorecard after registration (amendments)";

/// Every change to how this scorecard counts results after it was registered (which
/// checks a result reads, what could make it fail, its control, its key number, its
/// hypotheses, a result declared not checkable or not testable): its ledger entry's
/// amendments. Nothing outside the ledger.
fn scorecard_amendments(card: &Scorecard, s: &mut String) {
    let Some(e) = &card.ledger else {
        return;
    };
    let _ = writeln!(
        s,
        "\n{SCORECARD_AMENDMENTS}\n\nRegistered {} ({}). {} since to how this page counts \
         results (which checks a result reads, what could make it fail and the control it \
         must catch, its key number, its hypotheses, a result declared not checkable or not \
         testable), each recorded with its reason in `tests/snapshots/ledger/{}.yaml`. The \
         claims' own amendments are on their pages.\n",
        cell(&e.registered.date),
        cell(&crate::report::claim_page::commit_words(
            &e.registered.commit
        )),
        crate::report::claim_page::changes_since(e),
        card.page
    );
    crate::report::claim_page::amendments_table(e, s);
}

/// The short word of a verdict for the table.
fn short_word(sec: Section, word: &str) -> String {
    match sec {
        Section::NotCheckable => "not checkable".into(),
        Section::NotTestable => "not testable".into(),
        Section::Errata => "erratum".into(),
        _ => word.replace(" (not discriminating)", ", not discriminating"),
    }
}

/// The claim of a result in at most [`MAX_CLAIM_WORDS`] words: its `claim`, else its
/// title cut.
fn short_claim(r: &PaperResult) -> String {
    if let Some(c) = &r.claim {
        return c.trim().to_string();
    }
    let w: Vec<&str> = r.title.split_whitespace().collect();
    if w.len() <= MAX_CLAIM_WORDS {
        w.join(" ")
    } else {
        format!("{} …", w[..MAX_CLAIM_WORDS].join(" "))
    }
}

/// One sentence on why a result is not judged, or `None` if it is judged.
fn why_not(r: &PaperResult, sec: Section) -> Option<String> {
    let judged = !matches!(
        sec,
        Section::NotCheckable | Section::NotTestable | Section::NotYet
    );
    if judged {
        return None;
    }
    if let Some(w) = &r.why {
        return Some(crate::report::sentence(w.trim()));
    }
    why_cut(r, sec).map(|w| words(&w, MAX_WHY_WORDS))
}

/// Words of a remark on the short page (in full on the details page): its first sentence,
/// or its `short` line when that sentence is longer.
pub(crate) const MAX_REMARK_WORDS: usize = 18;

/// Words of a "not judged" sentence cut from a longer text.
const MAX_WHY_WORDS: usize = 30;

/// The first `n` words of `s` (an ellipsis if cut).
fn words(s: &str, n: usize) -> String {
    let w: Vec<&str> = s.split_whitespace().collect();
    if w.len() <= n {
        w.join(" ")
    } else {
        format!("{} …", w[..n].join(" "))
    }
}

fn why_cut(r: &PaperResult, sec: Section) -> Option<String> {
    match sec {
        Section::NotCheckable => r.not_checkable.as_deref().map(first_sentence),
        Section::NotTestable => r.not_testable.as_ref().map(|nt| {
            format!(
                "{}: {}.",
                nt.quantity.trim(),
                nt.measured.trim().trim_end_matches('.')
            )
        }),
        Section::NotYet if !r.planned.is_empty() => Some(format!(
            "its check is to be written ({}).",
            r.planned.join(", ")
        )),
        Section::NotYet => Some("its claims are not in this report set.".into()),
        _ => None,
    }
}

/// The HTML of the small multiples of `card`'s page: one plot per result with a key
/// number ([`super::plots`]); empty when none can be drawn.
pub fn key_plots_html(
    card: &Scorecard,
    claims: &Catalogue,
    outcomes: &[ClaimOutcome],
    kept: &[Kept],
) -> String {
    with_found(outcomes, kept, |found, _| {
        super::plots::section(&super::plots::strips(card, claims, found))
    })
}

/// `scorecard-<name>.md`, the page a researcher reads first.
pub fn scorecard_page(
    card: &Scorecard,
    claims: &Catalogue,
    outcomes: &[ClaimOutcome],
    kept: &[Kept],
) -> String {
    with_found(outcomes, kept, |found, run| page(card, claims, found, run))
}

fn page(
    card: &Scorecard,
    claims: &Catalogue,
    found: &FoundMap,
    run: Option<(String, u64)>,
) -> String {
    let details = details_stem(card);
    let mut s = String::new();
    let _ = writeln!(s, "# Scorecard — {}\n", card.paper);
    let _ = writeln!(
        s,
        "*Generated by `dpclaims run`{} from `scorecards/{}`; numbers are this run's. Do not edit.*\n",
        run.map(|(p, seed)| format!(" (profile `{p}`, seed {seed})"))
            .unwrap_or_default(),
        card.file
            .file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default()
    );
    let placed: Vec<_> = place_all(card, found);
    if !card.summary.is_empty() {
        let _ = writeln!(s, "> **In brief.**");
        for l in &card.summary {
            let _ = writeln!(s, "> - {}", fill(l.trim(), None, found));
        }
        let _ = writeln!(s);
    }
    let count = |sec: Section| placed.iter().filter(|p| p.section == sec).count();
    let tally: Vec<String> = Section::ALL
        .iter()
        .filter(|sec| count(**sec) > 0)
        .map(|sec| format!("{} {}", count(*sec), sec.count_word(count(*sec))))
        .collect();
    let _ = writeln!(
        s,
        "**{} results of the paper:** {}.\n",
        card.results.len(),
        tally.join(", ")
    );
    // Results whose verdict moved with a change made after results (the ledger).
    let amended: Vec<bool> = card.results.iter().map(|r| amended(r, found)).collect();
    let judged = placed
        .iter()
        .zip(&card.results)
        .filter(|(p, r)| !r.checked_by.is_empty() && p.section != Section::NotCheckable)
        .count();
    let n_amended = amended.iter().filter(|a| **a).count();
    let _ = writeln!(
        s,
        "**Changed after results:** {n_amended} of {judged} verdicts depend on a change made \
         after results (†; amendments on each claim page){}.\n",
        match card.ledger.as_ref().map_or(0, |e| e.amendments.len()) {
            0 => String::new(),
            n => format!("; its counting changed {n} times (details)"),
        }
    );
    let _ = writeln!(
        s,
        "| result | claim | verdict | key number | page |\n|---|---|---|---|---|"
    );
    for ((r, p), amended) in card.results.iter().zip(&placed).zip(&amended) {
        let key = r
            .key
            .as_ref()
            .map(|k| {
                let v = resolve(&k.num_ref(), found);
                match v {
                    Some(v) => fill(k.meaning.trim(), Some(&v), found),
                    None => "not in this report set".into(),
                }
            })
            .unwrap_or_else(|| "—".into());
        let link = r
            .key
            .as_ref()
            .map(|k| &k.from.claim)
            .or(r.checked_by.first().map(|c| &c.claim))
            .map(|c| format!("[{c}]({c}.md)"))
            .unwrap_or_else(|| "—".into());
        let _ = writeln!(
            s,
            "| {} | {} | **{}**{} | {} | {} |",
            cell(&r.result),
            cell(&short_claim(r)),
            cell(&short_word(p.section, &p.word)),
            if *amended { " †" } else { "" },
            cell(&key),
            link
        );
    }
    let _ = writeln!(s);
    let not_judged: Vec<String> = card
        .results
        .iter()
        .zip(&placed)
        .filter_map(|(r, p)| {
            why_not(r, p.section).map(|w| format!("- **{}.** {}", r.result, capital(&w)))
        })
        .collect();
    if !not_judged.is_empty() {
        let _ = writeln!(s, "## Not judged, and why\n\n{}\n", not_judged.join("\n"));
    }
    if !card.remarks.is_empty() {
        let _ = writeln!(s, "## Remarks for the authors (not errata)\n");
        for m in &card.remarks {
            let _ = writeln!(
                s,
                "- **{}.** {}",
                m.location.trim().trim_end_matches('.'),
                capital(&match &m.short {
                    Some(sh) => sh.split_whitespace().collect::<Vec<_>>().join(" "),
                    None => words(&first_sentence(m.text.trim()), MAX_REMARK_WORDS),
                })
            );
        }
        let _ = writeln!(
            s,
            "\nIn full, with derivations: [details page]({details}.md#remarks-for-the-authors-not-errata).\n"
        );
    }
    let selfs = self_check_rows(card, claims, found);
    let passed = selfs
        .iter()
        .filter(|(_, f)| f.r["verdict"] == "holds")
        .count();
    let failed = selfs
        .iter()
        .filter(|(_, f)| f.r["verdict"] == "refuted")
        .count();
    // Neither passed nor failed: inconclusive or out of regime, said as such (never
    // counted as a failure).
    let undecided = selfs.len() - passed - failed;
    let _ = writeln!(
        s,
        "**Tool self-checks** (the tool's correctness, not the paper's): \
         {passed} of {} passed{}{} ([list]({details}.md#tool-self-checks-not-counted)).\n",
        selfs.len(),
        if failed > 0 {
            format!(", {failed} FAILED")
        } else {
            String::new()
        },
        if undecided > 0 {
            format!(", {undecided} undecided")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "## Method\n\nVerdicts test the paper's statements inside its hypotheses; a holds counts \
         only with a caught control; proxies never refute. Every check: [details]({details}.md)."
    );
    s
}

/// Whether a check of `r` (or the row of its key number) moved its verdict with an
/// amendment: its row's `verdict_moved_by` in the verdicts is not empty.
fn amended(r: &PaperResult, found: &FoundMap) -> bool {
    let key = r.key.as_ref().map(|k| k.from.clone());
    r.checked_by
        .iter()
        .chain(key.iter())
        .filter_map(|c| super::found::lookup(found, c))
        .any(|f| {
            f.r["verdict_moved_by"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        })
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A line of a Markdown table as shown: `[text](target)` counted as `text`.
fn shown(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        out.push_str(&rest[..i]);
        match rest[i..].find(')') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = &rest[i..];
                break;
            }
        }
    }
    out.push_str(rest);
    out.replace(['[', '*'], "")
}

/// The page's limits ([`MAX_SUMMARY_LINES`], [`MAX_ROW_CHARS`]), checked on the rendered
/// Markdown: one message per breach.
pub fn check_page(md: &str) -> Vec<String> {
    let mut out = vec![];
    let boxed = md.lines().filter(|l| l.starts_with("> - ")).count();
    if boxed > MAX_SUMMARY_LINES {
        out.push(format!(
            "the box has {boxed} lines (at most {MAX_SUMMARY_LINES})"
        ));
    }
    if md.contains("n/a") {
        out.push("a number of the page is not in this report set (`n/a`)".into());
    }
    let table = md
        .lines()
        .skip_while(|l| !l.starts_with("| result | claim |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'));
    for l in table {
        let n = shown(l).chars().count();
        if n > MAX_ROW_CHARS {
            out.push(format!(
                "a row has {n} characters (at most {MAX_ROW_CHARS}): {}",
                l.chars().take(60).collect::<String>()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_measured_as_shown() {
        assert_eq!(shown("| a | [x](x.md) | **holds** |"), "| a | x | holds |");
        let long = format!("| r | {} | **holds** | 1 | — |", "w ".repeat(200));
        let md = format!(
            "| result | claim | verdict | key number | page |\n|---|---|---|---|---|\n{long}\n"
        );
        assert_eq!(check_page(&md).len(), 1);
        let boxed = format!("{}\n", "> - line\n".repeat(9));
        assert_eq!(check_page(&boxed).len(), 1);
    }
}
