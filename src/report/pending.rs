//! Baselines as insta keeps them (issue 33, item 4): a run whose snapshot of a claim is
//! new or differs from the baseline leaves a *pending* snapshot (the run's own result,
//! no second computation); `dpclaims accept` moves pending snapshots into the baseline,
//! `dpclaims review` shows each as a diff of numbers and verdicts and asks.
//!
//! Pending snapshots live in `target/dpclaims/pending/` (beside the build's outputs:
//! nothing in the committed tree changes until a snapshot is accepted), named as their
//! baseline file, in the format of the insta snapshots they replace.
use super::baseline::snapshot_file;
use super::snapshot::{snapshot, Snap};
use crate::judge::ClaimOutcome;
use crate::spec::Profile;
use std::path::{Path, PathBuf};

/// The directory of pending snapshots (under the project root: [`crate::project`]).
pub fn dir() -> PathBuf {
    crate::project::path("target")
        .join("dpclaims")
        .join("pending")
}

/// A claim's snapshot as the insta file of `tests/claims.rs` holds it: the header
/// (source, expression, profile and seed, the spec file) and the rendering's YAML.
pub fn snapshot_text(o: &ClaimOutcome, profile: Profile, seed: u64) -> Option<String> {
    let body = insta_yaml(&snapshot(o));
    let input = o.claim.file.display().to_string();
    let input = input
        .strip_prefix(&format!("{}/", std::env::current_dir().ok()?.display()))
        .map(str::to_string)
        .unwrap_or(input);
    Some(format!(
        "---\nsource: tests/claims.rs\nexpression: snap\ninfo:\n  profile: {profile}\n  seed: {seed}\ninput_file: {input}\n---\n{body}"
    ))
}

/// The snapshot's YAML exactly as insta writes it (its emitter's style: sequences
/// indented under their key, `~` for null, numbers as Rust prints them, strings quoted
/// only where YAML needs it), so that a snapshot accepted by `dpclaims accept` equals
/// the one insta recorded for the same results, byte for byte.
pub fn insta_yaml(s: &Snap) -> String {
    let mut out = format!("id: {}\n", scalar_str(&s.id));
    if s.results.is_empty() {
        out.push_str("results: []\n");
        return out;
    }
    out.push_str("results:\n");
    let num = |v: Option<f64>| v.map_or("~".to_string(), |x| format!("{x}"));
    let text = |v: &Option<String>| v.as_deref().map_or("~".to_string(), scalar_str);
    for r in &s.results {
        out.push_str(&format!("  - prediction: {}\n", scalar_str(&r.prediction)));
        out.push_str(&format!("    variant: {}\n", scalar_str(&r.variant)));
        out.push_str(&format!("    metric: {}\n", scalar_str(&r.metric)));
        out.push_str(&format!("    kind: {}\n", scalar_str(r.kind)));
        out.push_str(&format!("    x: {}\n", text(&r.x)));
        out.push_str(&format!("    estimate: {}\n", num(r.estimate)));
        match r.ci {
            None => out.push_str("    ci: ~\n"),
            Some((a, b)) => out.push_str(&format!("    ci:\n      - {a}\n      - {b}\n")),
        }
        out.push_str(&format!("    predicted: {}\n", num(r.predicted)));
        out.push_str(&format!("    verdict: {}\n", scalar_str(&r.verdict)));
        out.push_str(&format!("    control: {}\n", text(&r.control)));
        out.push_str(&format!("    points: {}\n", r.points));
        out.push_str(&format!("    points_total: {}\n", r.points_total));
        // Skipped when absent (`skip_serializing_if`), a two-element sequence otherwise.
        if let Some((c, v)) = &r.constant {
            out.push_str(&format!(
                "    constant:\n      - {c:?}\n      - {}\n",
                scalar_str(v)
            ));
        }
    }
    out
}

/// A string scalar, plain when YAML reads it back as the same string, else double-quoted.
fn scalar_str(s: &str) -> String {
    let special_start = s.starts_with([
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@',
        '`', ' ',
    ]);
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "" | "~" | "null" | "true" | "false"
    ) || s.parse::<f64>().is_ok()
        || s.starts_with("0x")
        || s.starts_with("0o");
    let inner = s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.ends_with(' ')
        || s.chars()
            .any(|c| c.is_control() || "{}[],\"'\\`".contains(c));
    if special_start || reserved || inner {
        serde_json::to_string(s).unwrap_or_default()
    } else {
        s.to_string()
    }
}

/// Writes the pending snapshot of every claim in `ids` (new or changed against the
/// baseline) and removes the pending snapshots of the other claims of the run (they now
/// equal their baseline). Returns the ids written. Errors are warnings: the verdicts and
/// the exit status stand.
pub fn record(
    outcomes: &[ClaimOutcome],
    ids: &[String],
    profile: Profile,
    seed: u64,
) -> Vec<String> {
    let d = dir();
    let mut written = Vec::new();
    for o in outcomes {
        let file = snapshot_file(&d, &o.claim.id);
        if !ids.contains(&o.claim.id) {
            if file.is_file() {
                let _ = std::fs::remove_file(&file);
            }
            continue;
        }
        let Some(text) = snapshot_text(o, profile, seed) else {
            continue;
        };
        if let Err(e) =
            std::fs::create_dir_all(&d).and_then(|_| super::write_atomic(&file, text.as_bytes()))
        {
            crate::report::eprint_line(&format!(
                "warning: could not keep the pending snapshot {}: {e}",
                file.display()
            ));
            continue;
        }
        written.push(o.claim.id.clone());
    }
    written
}

/// One pending snapshot: its claim id, its file and the baseline file it would replace.
#[derive(Clone, Debug)]
pub struct Pending {
    pub id: String,
    pub file: PathBuf,
    pub target: PathBuf,
}

/// The pending snapshots (all, or those of `ids`), sorted by id.
pub fn list(baseline: &Path, ids: &[String]) -> anyhow::Result<Vec<Pending>> {
    let d = dir();
    let mut out = Vec::new();
    let prefix = "tests__claims__every_claim_at_the_quick_profile@";
    let entries = std::fs::read_dir(&d).into_iter().flatten().flatten();
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(id) = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".yaml.snap"))
        else {
            continue;
        };
        if crate::spec::names::claim_id(id).is_err() {
            continue;
        }
        if !ids.is_empty() && !ids.iter().any(|i| i == id) {
            continue;
        }
        out.push(Pending {
            id: id.to_string(),
            file: e.path(),
            target: snapshot_file(baseline, id),
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    for id in ids {
        if !out.iter().any(|p| &p.id == id) {
            anyhow::bail!(
                "no pending snapshot of claim `{id}` in {} (run it first: a snapshot is kept \
                 when it is new or differs from the baseline)",
                d.display()
            );
        }
    }
    Ok(out)
}

/// The changes of a pending snapshot against its baseline, one line per result
/// ("new claim" when there is no baseline file).
pub fn changes(p: &Pending) -> anyhow::Result<Vec<String>> {
    let new = crate::fsio::read_string(&p.file, crate::fsio::InputKind::Snapshot)?;
    let old = match crate::fsio::read_string(&p.target, crate::fsio::InputKind::Snapshot) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(vec!["new claim: no snapshot in the baseline yet".into()])
        }
        Err(e) => return Err(e.into()),
    };
    Ok(super::baseline::text_changes(&old, &new)
        .into_iter()
        .map(|c| format!("{} / {}: {}", c.prediction, c.variant, c.what))
        .collect())
}

/// Moves a pending snapshot into the baseline (atomically) and removes it.
pub fn accept(p: &Pending) -> anyhow::Result<()> {
    // The pending snapshot is the tool's own file: a symbolic link (to any file at all)
    // or anything but a regular file is refused, never copied into the baseline.
    let m = std::fs::symlink_metadata(&p.file)?;
    if !m.file_type().is_file() {
        anyhow::bail!(
            "pending snapshot {} is {}: refusing to accept it (not a file dpclaims wrote)",
            p.file.display(),
            crate::fsio::describe(m.file_type())
        );
    }
    let bytes = crate::fsio::read(&p.file, crate::fsio::InputKind::Snapshot)?;
    if let Some(parent) = p.target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    super::write_atomic(&p.target, &bytes)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", p.target.display()))?;
    std::fs::remove_file(&p.file)?;
    Ok(())
}

/// Drops a pending snapshot.
pub fn reject(p: &Pending) -> anyhow::Result<()> {
    std::fs::remove_file(&p.file)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::insta_yaml;
    use crate::report::snapshot::{Snap, SnapResult};

    /// Every committed snapshot (recorded by insta) re-emitted from its own values gives
    /// its own bytes: `dpclaims accept` of an unchanged claim changes no file.
    #[test]
    fn the_emitter_writes_insta_s_bytes_for_every_committed_snapshot() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if !p.to_string_lossy().ends_with(".snap") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let body = text.splitn(3, "---\n").nth(2).unwrap();
            let v: serde_yaml::Value = serde_yaml::from_str(body).unwrap();
            let f = |r: &serde_yaml::Value, k: &str| r.get(k).and_then(|x| x.as_f64());
            let st = |r: &serde_yaml::Value, k: &str| {
                r.get(k).and_then(|x| match x {
                    serde_yaml::Value::String(s) => Some(s.clone()),
                    serde_yaml::Value::Null => None,
                    other => Some(serde_yaml::to_string(other).unwrap().trim().to_string()),
                })
            };
            let results = v["results"]
                .as_sequence()
                .map(|rs| {
                    rs.iter()
                        .map(|r| SnapResult {
                            prediction: st(r, "prediction").unwrap(),
                            variant: st(r, "variant").unwrap(),
                            metric: st(r, "metric").unwrap(),
                            kind: Box::leak(st(r, "kind").unwrap().into_boxed_str()),
                            x: st(r, "x"),
                            estimate: f(r, "estimate"),
                            ci: r["ci"]
                                .as_sequence()
                                .map(|c| (c[0].as_f64().unwrap(), c[1].as_f64().unwrap())),
                            predicted: f(r, "predicted"),
                            verdict: st(r, "verdict").unwrap(),
                            control: st(r, "control"),
                            points: r["points"].as_u64().unwrap() as usize,
                            points_total: r["points_total"].as_u64().unwrap() as usize,
                            constant: r["constant"].as_sequence().map(|c| {
                                (c[0].as_f64().unwrap(), c[1].as_str().unwrap().to_string())
                            }),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let snap = Snap {
                id: st(&v, "id").unwrap(),
                results,
            };
            assert_eq!(insta_yaml(&snap), body, "{}", p.display());
            n += 1;
        }
        assert!(n >= 20, "{n} snapshots");
    }
}
