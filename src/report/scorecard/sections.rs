//! The sections of a scorecard page (issue 31, item 8), in the order a referee reads
//! them: errata (confirmed), statements that hold (with the control each caught),
//! inconclusive (with power), not testable at feasible sizes (the failing hypothesis),
//! proxies, consequences, not checkable, not yet checked; the tool's self-checks apart.
use super::found::{combine, first_sentence, lookup, measured, text, Combined, Found, FoundMap};
use super::{Catalogue, Check, PaperResult, Scorecard};
use serde_json::Value;
use std::fmt::Write as _;

/// The sections of a scorecard, in the order a referee reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Section {
    Errata,
    FollowsFrom,
    Holds,
    NotDiscriminating,
    Inconclusive,
    NotTestable,
    Proxies,
    Printed,
    Consequences,
    Identity,
    NotCheckable,
    NotYet,
}

impl Section {
    pub(super) const ALL: [Section; 12] = [
        Section::Errata,
        Section::FollowsFrom,
        Section::Holds,
        Section::NotDiscriminating,
        Section::Inconclusive,
        Section::NotTestable,
        Section::Proxies,
        Section::Printed,
        Section::Consequences,
        Section::Identity,
        Section::NotCheckable,
        Section::NotYet,
    ];
    pub(super) fn title(self) -> &'static str {
        match self {
            Section::Errata => "Errata",
            Section::FollowsFrom => "Verdicts that follow from another result",
            Section::Holds => "Statements that hold",
            Section::NotDiscriminating => "Holds, not discriminating",
            Section::Inconclusive => "Inconclusive",
            Section::NotTestable => "Not testable at feasible sizes",
            Section::Proxies => "Reproduced or not reproduced on proxies",
            Section::Consequences => "Consequences derived by the tool",
            Section::Printed => "Consistent with the paper's printed numbers",
            Section::Identity => "Self-checks: identities and inequalities true by construction",
            Section::NotCheckable => "Not checkable in simulation",
            Section::NotYet => "Not yet checked (or not in this report set)",
        }
    }
    /// The words after a count of `n` results in this section ("1 erratum", "2 errata").
    pub(super) fn count_word(self, n: usize) -> &'static str {
        match self {
            Section::Errata if n == 1 => "erratum",
            Section::Consequences if n == 1 => "consequence",
            Section::Errata => "errata",
            Section::FollowsFrom if n == 1 => "follows from another result",
            Section::FollowsFrom => "follow from other results",
            Section::Holds => "hold",
            Section::NotDiscriminating => "hold but not discriminating",
            Section::Inconclusive => "inconclusive",
            Section::NotTestable => "not testable at feasible sizes",
            Section::Proxies => "on proxies",
            Section::Consequences => "consequences",
            Section::Printed => "checked on its printed numbers",
            Section::Identity if n == 1 => "self-check",
            Section::Identity => "self-checks",
            Section::NotCheckable => "not checkable in simulation",
            Section::NotYet => "not yet checked",
        }
    }
    pub(super) fn explain(self) -> &'static str {
        match self {
            Section::Errata => "A statement of the paper refuted inside its hypotheses, with the counterexample and an independent confirmation.",
            Section::FollowsFrom => "Statements decided by another result's checks (a statement one of whose parts is that result): the verdict is that result's, named beside it, and counted once, there.",
            Section::Holds => "Statements tested literally inside their hypotheses; each could have failed: the control it caught is named.",
            Section::NotDiscriminating => "Statements whose checks hold but catch no negative control of their own that breaks the statement: consistent, not counted as holding.",
            Section::Inconclusive => "Statements the run could not decide (or whose holds no control could move), with what the row could detect and what would resolve it.",
            Section::NotTestable => "Statements that cannot be judged at feasible sizes: the quantity that makes it so, its measured value and the size at which it would change.",
            Section::Proxies => "Empirical results of the paper reproduced on another task or model (named): reproduced / not reproduced on the proxy, never a refutation of the paper.",
            Section::Consequences => "Quantities the tool derives from the paper (exact finite-size forms, proof steps): consistent / inconsistent.",
            Section::Printed => "Statements about the paper's own tables, checked on its printed numbers: consistent or inconsistent with them, never a holds (no data of ours could have said no).",
            Section::Identity => "Identities and inequalities true by construction (one line of algebra, the triangle inequality): their Monte Carlo checks the tool, not the paper; listed, never counted.",
            Section::NotCheckable => "Results with nothing a simulation here can measure: a definition, a procedure or a choice; an assumption met by construction or a conclusion that follows by algebra; a statement with no finite quantity (an unstated constant, a conjecture, a figure without a stated number); or an experiment on data the harness does not have. Each says which.",
            Section::NotYet => "Results whose checks are still to be written or were not run here.",
        }
    }
}

/// Where a result goes and the word shown for it.
pub(super) struct Placed {
    pub(super) section: Section,
    pub(super) word: String,
    pub(super) decisive: Option<Check>,
}

/// The effective verdict of a row for the combination: a holds that is not
/// discriminating counts as inconclusive.
fn effective(f: &Found) -> &'static str {
    match f.r["verdict"].as_str().unwrap_or("") {
        "holds" if nondiscriminating(f) => "inconclusive",
        "holds" => "holds",
        "refuted" => "refuted",
        "inconclusive" => "inconclusive",
        _ => "out_of_regime",
    }
}

fn nondiscriminating(f: &Found) -> bool {
    f.r["verdict"] == "holds" && f.r["discriminating"] == Value::Bool(false)
}

/// Every result of `card` placed ([`place`]); a result whose verdict follows from another's
/// (`could_fail: follows`) names that result beside its word.
pub(super) fn place_all(card: &Scorecard, found: &FoundMap) -> Vec<Placed> {
    use super::CouldFail;
    card.results
        .iter()
        .map(|r| {
            let mut p = place(r, found);
            if r.could_fail == Some(CouldFail::Follows) {
                let from = card.results.iter().find(|q| {
                    q.could_fail != Some(CouldFail::Follows)
                        && q.checked_by.iter().any(|c| r.checked_by.contains(c))
                });
                if let Some(q) = from {
                    // The verdict word alone (its qualifiers belong to the other result).
                    let verdict = p.word.split(" (").next().unwrap_or("").to_string();
                    p.word = format!("{verdict} (follows from {})", q.result);
                }
            }
            p
        })
        .collect()
}

pub(super) fn place(r: &PaperResult, found: &FoundMap) -> Placed {
    use super::CouldFail;
    let placed = place_by_checks_declared(r, found);
    match r.could_fail {
        Some(CouldFail::Follows) => {
            return Placed {
                section: Section::FollowsFrom,
                word: placed.word,
                decisive: placed.decisive,
            }
        }
        Some(CouldFail::Construction) => {
            return Placed {
                section: Section::Identity,
                word: "self-check (true by construction)".into(),
                decisive: placed.decisive,
            }
        }
        Some(CouldFail::Printed)
            if matches!(
                placed.section,
                Section::Holds | Section::NotDiscriminating | Section::Errata
            ) =>
        {
            return Placed {
                section: Section::Printed,
                word: if placed.section == Section::Errata {
                    "inconsistent with its printed numbers".into()
                } else {
                    "consistent with its printed numbers".into()
                },
                decisive: placed.decisive,
            }
        }
        Some(CouldFail::Data) if placed.section == Section::Holds => {
            // A holds counts only when the named control, which changes the mechanism or
            // the statement's quantity, is caught by a check of the result.
            let caught = r.control.as_ref().is_some_and(|ctl| {
                r.checked_by.iter().any(|c| {
                    found
                        .get(&(c.claim.clone(), c.prediction.clone(), ctl.clone()))
                        .is_some_and(|f| f.r["control"] == "caught")
                })
            });
            if !caught {
                return Placed {
                    section: Section::NotDiscriminating,
                    word: match &r.control {
                        None => "holds, no control of the mechanism named".into(),
                        Some(_) => "holds, its control of the mechanism not caught".into(),
                    },
                    decisive: placed.decisive,
                };
            }
        }
        _ => {}
    }
    placed
}

/// [`place_by_checks`], with a result declared not testable placed there unless a check
/// decides it.
fn place_by_checks_declared(r: &PaperResult, found: &FoundMap) -> Placed {
    let placed = place_by_checks(r, found);
    // A result declared not testable at feasible sizes is placed there unless a check of
    // it decides (holds or refuted inside its hypotheses).
    let decided = r
        .checked_by
        .iter()
        .filter_map(|c| lookup(found, c))
        .any(|f| matches!(effective(f), "holds" | "refuted"));
    if r.not_testable.is_some() && !decided {
        return Placed {
            section: Section::NotTestable,
            word: "not testable at feasible sizes".into(),
            decisive: placed.decisive,
        };
    }
    placed
}

fn place_by_checks(r: &PaperResult, found: &FoundMap) -> Placed {
    if r.not_checkable.is_some() {
        return Placed {
            section: Section::NotCheckable,
            word: "not checkable in simulation".into(),
            decisive: None,
        };
    }
    let rows: Vec<(&Check, &Found)> = r
        .checked_by
        .iter()
        .filter_map(|c| lookup(found, c).map(|f| (c, f)))
        .collect();
    for ev in ["statement", "proxy", "consequence", "printed"] {
        let mine: Vec<&(&Check, &Found)> =
            rows.iter().filter(|(_, f)| f.r["evidence"] == ev).collect();
        if mine.is_empty() {
            continue;
        }
        let v: Vec<Option<&str>> = mine.iter().map(|(_, f)| Some(effective(f))).collect();
        let c = combine(&v, false);
        let decisive = mine
            .iter()
            .find(|(_, f)| effective(f) == c.as_str())
            .map(|(chk, _)| (*chk).clone());
        let word = decisive
            .as_ref()
            .and_then(|d| lookup(found, d))
            .map(|f| text(&f.r["word"]))
            .unwrap_or_else(|| c.as_str().into());
        // Inconclusive only because its holds catch no control: its own heading and word.
        let only_nd = c == Combined::Inconclusive
            && mine
                .iter()
                .all(|(_, f)| effective(f) != "inconclusive" || nondiscriminating(f));
        let word = if only_nd && ev == "statement" {
            "holds, not discriminating".into()
        } else {
            word
        };
        let section = match (ev, c) {
            ("statement", Combined::Refuted) => Section::Errata,
            ("statement", Combined::Holds) => Section::Holds,
            ("statement", Combined::Inconclusive) if only_nd => Section::NotDiscriminating,
            ("statement", Combined::Inconclusive) => Section::Inconclusive,
            ("statement", _) => Section::NotTestable,
            ("proxy", _) => Section::Proxies,
            ("printed", _) => Section::Printed,
            _ => Section::Consequences,
        };
        return Placed {
            section,
            word,
            decisive,
        };
    }
    Placed {
        section: Section::NotYet,
        word: if r.checked_by.is_empty() {
            "not yet checked".into()
        } else {
            "not run".into()
        },
        decisive: None,
    }
}

/// The evidence cell of a result: per section, what a referee needs to see.
pub(super) fn section_detail(
    sec: Section,
    r: &PaperResult,
    p: &Placed,
    found: &FoundMap,
    card: &Scorecard,
    claims: &Catalogue,
) -> String {
    if let (Section::NotTestable, Some(nt)) = (sec, &r.not_testable) {
        let diag = p
            .decisive
            .as_ref()
            .and_then(|chk| lookup(found, chk).map(|f| (chk, f)))
            .map(|(chk, f)| {
                format!(
                    " Diagnostic only (not a verdict): `{}` / `{}`: {}.",
                    chk.prediction,
                    chk.variant,
                    measured(f.r)
                )
            })
            .unwrap_or_default();
        return format!("{}{diag}", nt.sentence());
    }
    let Some(chk) = &p.decisive else {
        return match sec {
            Section::NotCheckable => r.not_checkable.clone().unwrap_or_default(),
            Section::NotYet if !r.planned.is_empty() => {
                format!("its claim is to be written ({})", r.planned.join(", "))
            }
            _ => "its claims are not in this report set".into(),
        };
    };
    let Some(f) = lookup(found, chk) else {
        return "—".into();
    };
    let head = format!(
        "`{}` / `{}`: {}",
        chk.prediction,
        chk.variant,
        measured(f.r)
    );
    match sec {
        Section::Errata => {
            let e = &f.r["erratum"];
            let claim = claims.get(&chk.claim);
            let er = claim
                .and_then(|c| c.variant(&chk.variant))
                .and_then(|v| v.errata.get(&chk.prediction));
            match er {
                Some(er) => format!(
                    "{head}. Counterexample: {}{} Confirmation ({}): {}",
                    crate::report::sentence(&er.counterexample),
                    if er.reading.is_empty() {
                        String::new()
                    } else {
                        format!(" Reading needed: {}", crate::report::sentence(&er.reading))
                    },
                    if e["confirmed"] == Value::Bool(true) {
                        "confirmed"
                    } else {
                        "UNCONFIRMED"
                    },
                    text(&e["how"])
                ),
                None => format!("{head}. No erratum in the spec: refuted, unconfirmed"),
            }
        }
        Section::Holds => {
            let caught = controls_caught(claims, found, chk);
            format!(
                "{head}. Could have failed on data: catches {}{}",
                if caught.is_empty() {
                    "—".into()
                } else {
                    caught.join(", ")
                },
                r.control
                    .as_ref()
                    .map(|c| format!("; the control that changes the mechanism: `{c}`"))
                    .unwrap_or_default()
            )
        }
        Section::Inconclusive => {
            let trend = f.r["trend"]
                .as_str()
                .map(|t| format!(" {t}."))
                .unwrap_or_default();
            match text(&f.r["power"]) {
                p if p.is_empty() => {
                    format!("{head}.{trend} An {}.", crate::judge::power::EXACT)
                }
                p => format!("{head}.{trend} Power: {p}"),
            }
        }
        Section::NotTestable => {
            let mut out = head;
            for v in f.r["regime"]["violated"].as_array().into_iter().flatten() {
                let src = v["source"].as_str().unwrap_or("");
                let name = src.split(':').next().unwrap_or("");
                let _ = write!(
                    out,
                    "; fails: `{}` ({}), worst {}",
                    text(&v["assumption"]),
                    src,
                    text(&v["worst"])
                );
                if let Some(h) = card.hypotheses.iter().find(|h| h.name == name) {
                    if !h.feasible_from.is_empty() {
                        let _ = write!(out, "; feasible from: {}", h.feasible_from);
                    }
                }
            }
            out
        }
        _ => {
            let finding = f.r["finding"]
                .as_str()
                .map(|t| format!(" Finding: {}", first_sentence(t)))
                .unwrap_or_default();
            format!("{head}.{finding}")
        }
    }
}

/// The negative controls of the check's claim that its prediction catches.
fn controls_caught(claims: &Catalogue, found: &FoundMap, chk: &Check) -> Vec<String> {
    let Some(c) = claims.get(&chk.claim) else {
        return vec![];
    };
    c.variants
        .iter()
        .filter(|v| v.negative_control && v.caught_by.contains(&chk.prediction))
        .filter(|v| {
            found
                .get(&(chk.claim.clone(), chk.prediction.clone(), v.name.clone()))
                .is_some_and(|f| f.r["control"] == "caught")
        })
        .map(|v| format!("`{}` ({})", v.name, v.description))
        .collect()
}

/// Every self-check row of the claims about this paper.
pub(super) fn self_check_rows<'a>(
    card: &Scorecard,
    claims: &Catalogue,
    found: &'a FoundMap<'a>,
) -> Vec<(Check, &'a Found<'a>)> {
    let stem = card.page.trim_start_matches("scorecard-");
    found
        .iter()
        .filter(|((id, _, _), f)| {
            f.r["evidence"] == "self_check"
                && f.r["negative_control"] != Value::Bool(true)
                && claims.get(id).is_some_and(|c| c.paper == stem)
        })
        .map(|((id, p, v), f)| {
            (
                Check {
                    claim: id.clone(),
                    prediction: p.clone(),
                    variant: v.clone(),
                },
                f,
            )
        })
        .collect()
}
