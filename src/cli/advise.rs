//! `dpclaims advise CLAIM`: the replicate advisor (issue 33, item 8). For each row of a
//! claim that is inconclusive or changes with the seed in the stability records
//! (`reports/stability/seed-<k>.jsonl`), why (the interval straddles the boundary of the
//! verdict regions, or is wider than the distance to it) and how many replicates per
//! point, at the seed-to-seed spread the records show, would put the row in one region
//! with a flip chance per seed of at most `--flip-chance`.
//!
//! The model: a row's interval has half-width `h` and its centre sits a distance `D`
//! inside the region its seeds lean to (`D = h - to_X`, [`Edges`]), with seed-to-seed
//! standard deviation `s`. With `k` times the replicates, `h` and `s` shrink by
//! `sqrt(k)` while `D` stays: the row lands in the region at a seed when
//! `D - z s / sqrt(k) > h / sqrt(k)`, i.e. `k = ((h + z s) / D)^2` with `z` the normal
//! quantile of the flip chance. The intervals are at the suite's family-wise level
//! already, so the advice holds at that level. `D <= 0` (the centre on or across the
//! boundary): no number of replicates resolves it. Events (Clopper-Pearson on a
//! frequency) are listed without advice.
use crate::fit::Verdict;
use crate::report::stability::record::{self, Header, Row};
use crate::report::stability::Edges;
use crate::spec::Profile;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// The claim: a spec file or a claim id in ./claims/.
    pub claim: PathBuf,
    /// Where the stability records are (`dpclaims stability` writes them).
    #[arg(long, value_name = "DIR", default_value = "reports/stability")]
    pub records: PathBuf,
    /// The largest chance per seed that a row leaves its region, after the advice.
    #[arg(long, default_value_t = 0.01, value_name = "P")]
    pub flip_chance: f64,
}

pub fn run(a: &AdviseArgs) -> anyhow::Result<ExitCode> {
    if !(a.flip_chance > 0.0 && a.flip_chance < 0.5) {
        anyhow::bail!("--flip-chance must be in (0, 0.5), got {}", a.flip_chance);
    }
    let paths = super::select::resolve(std::slice::from_ref(&a.claim))?;
    let claims = crate::spec::load_claims(&paths)?;
    let [claim] = claims.as_slice() else {
        anyhow::bail!("advise takes one claim; {} were given", claims.len());
    };
    // Every row of this claim in every record judged by this build with the claim's
    // current spec (the rule `dpclaims stability` reuses rows by: a record of another
    // build, or of an older spec of the claim, says nothing about this one's spread).
    let mut rows: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    let mut profile = Profile::Quick;
    let mut seeds = 0;
    let mut stale: Vec<String> = Vec::new();
    let entries = std::fs::read_dir(&a.records).map_err(|e| {
        anyhow::anyhow!("{}: {e} (run `make stability` first)", a.records.display())
    })?;
    let mut names: Vec<(std::path::PathBuf, String)> = entries
        .flatten()
        .map(|e| (e.path(), e.file_name().to_string_lossy().into_owned()))
        .filter(|(_, n)| n.starts_with("seed-") && n.ends_with(".jsonl"))
        .collect();
    names.sort_by(|x, y| x.1.cmp(&y.1));
    for (path, name) in names {
        let text = crate::fsio::read_string(&path, crate::fsio::InputKind::Record)?;
        let Some(header) = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<Header>(l).ok())
        else {
            stale.push(format!("{name} (no readable header)"));
            continue;
        };
        let prof = match header.profile.as_str() {
            "quick" => Profile::Quick,
            "full" => Profile::Full,
            other => {
                stale.push(format!("{name} (profile `{other}`)"));
                continue;
            }
        };
        let want = Header::current(header.seed, prof, std::slice::from_ref(claim));
        let reuse = match record::parse(&text, &want) {
            Ok(r) => r,
            Err(why) => {
                stale.push(format!("{name} ({why})"));
                continue;
            }
        };
        if let Some(why) = reuse.rerun.get(&claim.id) {
            if *why != "not in the record" {
                stale.push(format!("{name} ({why})"));
            }
            continue;
        }
        let Some(kept) = reuse.kept.get(&claim.id) else {
            continue;
        };
        profile = prof;
        seeds += 1;
        for r in kept {
            rows.entry((r.prediction.clone(), r.variant.clone()))
                .or_default()
                .push(r.clone());
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "advise: {} record(s) of {} not used for `{}`: {}",
            stale.len(),
            a.records.display(),
            claim.id,
            stale.join("; ")
        );
    }
    if seeds < 2 {
        anyhow::bail!(
            "claim `{}` has rows in {seeds} record(s) of {} judged by this build with its current spec: the advice needs the spread over at least 2 seeds (`dpclaims stability --seeds K`)",
            claim.id,
            a.records.display()
        );
    }
    let z = {
        use statrs::distribution::{ContinuousCDF, Normal};
        Normal::new(0.0, 1.0)
            .map(|n| n.inverse_cdf(1.0 - a.flip_chance))
            .unwrap_or(2.33)
    };
    let units = crate::pipeline::planned_units(claim, profile);
    println!(
        "{}: {seeds} seeds in {}; advice for a flip chance per seed <= {} (z = {:.2})",
        claim.id,
        a.records.display(),
        a.flip_chance,
        z
    );
    let mut shown = 0;
    for p in &claim.predictions {
        for v in &claim.variants {
            let Some(rs) = rows.get(&(p.name.clone(), v.name.clone())) else {
                continue;
            };
            let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
            for r in rs {
                *counts.entry(word(r.verdict)).or_default() += 1;
            }
            let varies = counts.len() > 1;
            let undecided = counts.contains_key("inconclusive");
            let reps = units
                .iter()
                .filter(|u| u.key.sweep == p.sweep && u.key.variant == v.name)
                .map(|u| u.key.replicate + 1)
                .max()
                .unwrap_or(0);
            let (text, more) = advice(rs, reps, z);
            // A row decided the same way at every seed is listed only when the spread
            // over seeds gives it a flip chance above the one asked.
            if !varies && !undecided && !more {
                continue;
            }
            shown += 1;
            let tally: Vec<String> = counts
                .iter()
                .map(|(w, n)| format!("{w} {n}/{}", rs.len()))
                .collect();
            println!("\n{} / {}: {}", p.name, v.name, tally.join(", "));
            println!("    {text}");
        }
    }
    if shown == 0 {
        println!("every row gives the same decided verdict at every seed: nothing to advise");
    }
    Ok(ExitCode::SUCCESS)
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Holds => "holds",
        Verdict::Refuted => "refuted",
        Verdict::Inconclusive => "inconclusive",
        Verdict::OutOfRegime => "out_of_regime",
    }
}

/// The advice for one row over its seeds (module docs), and whether it asks for more
/// replicates than the row has.
pub fn advice(rows: &[Row], reps: usize, z: f64) -> (String, bool) {
    if rows.iter().any(|r| r.kind == "event") {
        return (
            "an event (Clopper-Pearson on a frequency): no advice".into(),
            false,
        );
    }
    let per_seed: Vec<(f64, f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let (lo, hi) = r.ci()?;
            let e = Edges::of(r)?;
            let h = (hi - lo) / 2.0;
            Some((h, h - e.to_holds, h - e.to_refuted))
        })
        .collect();
    if per_seed.len() < 2 {
        return (
            "fewer than 2 seeds with an interval (out of regime or not judged): no advice".into(),
            false,
        );
    }
    let n = per_seed.len() as f64;
    let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| per_seed.iter().map(f).sum::<f64>() / n;
    let h = mean(&|t| t.0);
    let (dh, dr) = (mean(&|t| t.1), mean(&|t| t.2));
    let (target, d, i) = if dh >= dr {
        ("holds", dh, 1)
    } else {
        ("refuted", dr, 2)
    };
    let pick = |t: &(f64, f64, f64)| if i == 1 { t.1 } else { t.2 };
    let s = (per_seed.iter().map(|t| (pick(t) - d).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let why = if d.abs() <= s {
        "its interval straddles the boundary: the centre is within one seed-to-seed sd of it"
    } else if d < h {
        "its interval is wider than the centre's distance to the boundary"
    } else {
        "its interval is inside one region on average"
    };
    if d <= 0.0 {
        return (
            format!(
                "{why} (mean half-width {}, centre {} from the `{target}` region, seed-to-seed sd {}): no number of replicates resolves it; the true value sits on the boundary",
                g(h), g(-d), g(s)
            ),
            false,
        );
    }
    let k = ((h + z * s) / d).powi(2);
    let needed = (k * reps as f64).ceil();
    let tail = if needed > 1e6 {
        "more than 1e6 replicates per point: not resolvable at these sizes".to_string()
    } else if needed <= reps as f64 {
        format!("{reps} replicates per point already suffice on average; the spread over seeds makes it vary")
    } else {
        format!(
            "about {} replicates per point (now {reps}, x{:.1} the work) would make it `{target}`",
            needed as u64, k
        )
    };
    (
        format!(
            "{why} (mean half-width {}, centre {} inside the `{target}` region, seed-to-seed sd {}): {tail}",
            g(h), g(d), g(s)
        ),
        needed > reps as f64,
    )
}

fn g(x: f64) -> String {
    crate::fit::fmt_num(x)
}
