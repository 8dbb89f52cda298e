//! `dpclaims new <id>`: scaffolds a claim spec that loads and runs as written — every
//! required field present and commented (what it means, its allowed values), one sweep,
//! a main variant, a negative control that breaks the statement, and one prediction that
//! catches it — for one of the built-in systems ([`super::new_templates`]). The
//! scaffold claims no paper: its source and quote are `TODO` placeholders and it names
//! no hypothesis registry (`paper:` left out).
use super::new_templates::{self, Template};
use crate::spec::names;
use crate::systems::{self, OptionInfo, ParamKind, System};
use anyhow::{anyhow, bail};
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct NewArgs {
    /// The claim's id: lowercase letters, digits and '-' (it names the file and the
    /// reports).
    pub id: String,
    /// The system the claim simulates (`rf-dpgd` and `rf_dpgd` are the same).
    #[arg(long, default_value = "rf-dpgd", value_name = "S")]
    pub system: String,
    /// Where to write the spec (a directory: `<dir>/<id>.yaml`); default
    /// `claims/<id>.yaml` when a `claims/` directory is here, else `./<id>.yaml`. An
    /// existing file is never overwritten.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

/// The systems `dpclaims new` scaffolds, as a user types them.
pub fn supported() -> Vec<String> {
    new_templates::all()
        .iter()
        .map(|t| t.system.replace('_', "-"))
        .collect()
}

pub fn run(a: &NewArgs) -> anyhow::Result<ExitCode> {
    names::claim_id(&a.id).map_err(|m| anyhow!("bad claim id: {m}"))?;
    let wanted = a.system.trim().replace('-', "_");
    let templates = new_templates::all();
    let Some(t) = templates.iter().find(|t| t.system == wanted) else {
        let why = if wanted == systems::external::NAME {
            "runs a program of yours: start from docs/external-cores.md".to_string()
        } else {
            "is not a system of dpclaims".to_string()
        };
        bail!(
            "system `{}` {why}; `dpclaims new --system` scaffolds: {}",
            a.system,
            supported().join(", ")
        );
    };
    let system =
        systems::by_name(t.system).ok_or_else(|| anyhow!("internal: no system `{}`", t.system))?;
    let path = out_path(a);
    if path.symlink_metadata().is_ok() {
        bail!(
            "{} already exists: not overwritten (choose another id, or --out PATH)",
            path.display()
        );
    }
    let text = format!("{}{}", schema_line(&path), scaffold(&a.id, t, system));
    // The scaffold must load as written: a template out of step with its system is a
    // bug of dpclaims, never a file left for the user to repair.
    crate::spec::claim_from_bytes(&path, text.as_bytes()).map_err(|e| {
        anyhow!(
            "internal: the scaffold of system `{}` does not load: {e}",
            t.system
        )
    })?;
    write_new(&path, &text)?;
    let shown = path.display();
    println!(
        "wrote {shown}: a claim on system {} that runs as written (its example statement holds, \
         its negative control is caught); replace every TODO",
        t.system
    );
    println!("next:");
    println!("  dpclaims plan {shown}    # what it costs, without running it");
    println!("  dpclaims run {shown}     # run it, judge it, write its reports");
    Ok(ExitCode::SUCCESS)
}

/// The first line of a scaffold: where editors with a YAML language server find the
/// spec's JSON Schema (`docs/claim.schema.json` of the current directory), relative to
/// the new file. A comment: the loader ignores it. Outside a dpclaims checkout (no
/// `docs/claim.schema.json` here) the line would point at nothing, so the scaffold says
/// how to get the schema instead.
fn schema_line(path: &Path) -> String {
    const SCHEMA: &str = "docs/claim.schema.json";
    let schema = crate::project::path(SCHEMA);
    if !schema.is_file() {
        return "# Editor completion and validation: `dpclaims schema > claim.schema.json`, then a \
                first line\n# `# yaml-language-server: $schema=<path to claim.schema.json>`.\n"
            .to_string();
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let up: Option<usize> = dir
        .components()
        .map(|c| match c {
            std::path::Component::Normal(_) => Some(1),
            std::path::Component::CurDir => Some(0),
            _ => None,
        })
        .sum();
    let target = match up {
        Some(n) => format!("{}{}", "../".repeat(n), schema.display()),
        // An absolute or `..` path: the schema's absolute path.
        None => std::env::current_dir()
            .map(|d| d.join(&schema).display().to_string())
            .unwrap_or_else(|_| SCHEMA.to_string()),
    };
    format!("# yaml-language-server: $schema={target}\n")
}

fn out_path(a: &NewArgs) -> PathBuf {
    let file = format!("{}.yaml", a.id);
    match &a.out {
        Some(p) if p.is_dir() => p.join(file),
        Some(p) => p.clone(),
        None if crate::project::path("claims").is_dir() => {
            crate::project::path("claims").join(file)
        }
        None => PathBuf::from(file),
    }
}

/// Writes `text` to a new file at `path` (never replacing one, even one created since
/// the check).
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => anyhow!(
                "{} already exists: not overwritten (choose another id, or --out PATH)",
                path.display()
            ),
            _ => anyhow!("cannot write {}: {e}", path.display()),
        })?;
    f.write_all(text.as_bytes())
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// A value's constraint, in words.
fn kind_words(k: ParamKind) -> String {
    match k {
        ParamKind::Positive => "> 0".into(),
        ParamKind::NonNegative => ">= 0".into(),
        ParamKind::Probability => "in (0, 1)".into(),
        ParamKind::IntAtLeast(n) => format!("an integer >= {n}"),
        ParamKind::PositiveOrInfinite => "> 0, or inf".into(),
        ParamKind::Finite => "a finite number".into(),
    }
}

/// `code` with `comment` after it at column 34 when the line stays short, else the
/// comment on the lines above (wrapped), at `code`'s indentation.
fn commented(out: &mut String, code: &str, comment: &str) {
    const COL: usize = 34;
    let inline = format!("{code:<COL$} # {comment}");
    if code.chars().count() < COL && inline.chars().count() <= WIDTH {
        out.push_str(inline.trim_end());
        out.push('\n');
        return;
    }
    let indent: String = code.chars().take_while(|c| *c == ' ').collect();
    wrap(out, &indent, comment, WIDTH);
    out.push_str(code);
    out.push('\n');
}

/// `text` as `# ` comment lines at `indent`, wrapped at `width` characters.
fn wrap(out: &mut String, indent: &str, text: &str, width: usize) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + 2 + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}# {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}# {line}");
    }
}

/// A YAML scalar for an option value (`yes`/`no` quoted: YAML 1.1 reads them as booleans).
fn scalar(v: &str) -> String {
    if matches!(v, "yes" | "no" | "on" | "off" | "true" | "false") {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}

/// The spec text of the scaffold `id` for template `t` on `system`.
pub(super) fn scaffold(id: &str, t: &Template, system: &dyn System) -> String {
    let info = system.info();
    let mut s = String::new();
    let c = |s: &mut String, text: &str| wrap(s, "", text, WIDTH);
    // A section: a blank line, then its comment.
    let section = |s: &mut String, text: &str| {
        s.push('\n');
        wrap(s, "", text, WIDTH);
    };
    c(
        &mut s,
        &format!(
            "A claim spec scaffolded by `dpclaims new {id} --system {}`. As written it runs and \
         checks an example; make it yours by replacing every TODO and the example. The format: \
         claims/README.md; a walk-through: docs/spec-reference.md (\"Writing a claim\").",
            t.system.replace('_', "-")
        ),
    );
    section(
        &mut s,
        "Unique; names the reports (<id>.md, .html, .csv): lowercase letters, digits and '-'.",
    );
    let _ = writeln!(s, "id: {id}");
    c(&mut s, "One line: what the claim checks.");
    s.push_str("title: \"TODO: one line saying what this claim checks\"\n");
    c(
        &mut s,
        "Where the statement stands. Placeholders: this scaffold claims no paper.",
    );
    s.push_str("source:\n");
    s.push_str("  paper: \"TODO: authors, title, venue, year\"\n");
    s.push_str("  section: \"TODO: e.g. Sec. 2.1\"\n");
    s.push_str("  equation: \"TODO: e.g. Eq. 5, or Prop. 2.2\"\n");
    c(
        &mut s,
        "Optional: `paper: <name>` reads the hypothesis registry scorecards/<name>.yaml, whose \
               named hypotheses a prediction is judged under (`under: [...]`); shipped: \
               privacy-for-free, private-feature-learning, tp-topk. Left out: the claim names no \
               registry.",
    );
    s.push_str("# paper: privacy-for-free\n");
    c(&mut s, "The claim in words, as the paper states it.");
    s.push_str("statement: >\n");
    let statement = format!(
        "TODO: the paper's statement. As scaffolded (an example): {}",
        t.example
    );
    let mut folded = String::new();
    wrap(&mut folded, "", &statement, WIDTH);
    for l in folded.lines() {
        let _ = writeln!(s, "  {}", l.trim_start_matches("# "));
    }
    let others: Vec<&str> = new_templates::all()
        .iter()
        .map(|o| o.system)
        .filter(|o| *o != t.system)
        .collect();
    section(
        &mut s,
        &format!(
            "What is simulated: {} ({}). Other systems: {}, external (a program of yours: \
         docs/external-cores.md).",
            info.name,
            info.description,
            others.join(", ")
        ),
    );
    let _ = writeln!(s, "system: {}", info.name);
    c(
        &mut s,
        &format!(
            "The model the system simulates: {} must say `{}`.",
            info.name, info.model
        ),
    );
    let _ = writeln!(s, "model: {}", info.model);
    c(&mut s, "Neighbouring data sets: replace_one (sensitivity 2C/n) | add_remove (C/n) | not_applicable.");
    let _ = writeln!(s, "adjacency: {}", t.adjacency);
    if let Some((input, target)) = t.data {
        section(
            &mut s,
            &format!(
                "The simulated data{}.",
                if info.needs_target {
                    " (this system needs a target)"
                } else {
                    ""
                }
            ),
        );
        s.push_str("data:\n");
        commented(
            &mut s,
            &format!("  input: {input}"),
            "gaussian | sphere (||x|| = sqrt(d))",
        );
        commented(
            &mut s,
            &format!("  target: {target}"),
            "sign | {single_index: [a0, a1, ...]} | none",
        );
        commented(
            &mut s,
            "  label_noise: 0",
            "sd of additive Gaussian label noise",
        );
    }
    options(&mut s, t, system);
    params(&mut s, t, system);
    section(
        &mut s,
        "Optional: hypotheses checked at every sweep point; a point that fails one is \
                     not used (e.g. \"n >= d*ln(d)^2\", or {require: \"...\", source: \"Eq. 6\"}).",
    );
    s.push_str("# assumptions: []\n");
    section(
        &mut s,
        "Named sweeps, each with a quick profile (CI scale, what `run` uses) and a full \
                     one (paper scale, `run --profile full`; never fewer replicates than quick). \
                     Every point of the axes' cartesian product runs `replicates` times per \
                     variant; `coupled:` ties other variables to the axes by expressions (e.g. \
                     {p: \"n^2\"}).",
    );
    s.push_str("sweeps:\n");
    s.push_str(t.sweeps);
    section(
        &mut s,
        "Variants, each judged separately. A main variant (the statement as the paper \
                     makes it) is judged by every prediction. A negative control \
                     (negative_control: true; at least one per claim) breaks the statement in a \
                     way the paper excludes, and `caught_by` names the predictions that must \
                     refute it: a control not caught fails the run. A variant may override \
                     `params`, `options` and `data`.",
    );
    s.push_str("variants:\n");
    s.push_str(t.variants);
    section(
        &mut s,
        "Predictions, registered from the paper before measuring. kind: exponent | \
                     rate_at_most | event | inequality | bound. evidence: statement (a sentence of \
                     the paper, tested literally; needs `quote`) | consequence (derived by you \
                     from the paper) | proxy (an empirical result of the paper on another task, \
                     named in `proxy`) | self_check (the tool's own correctness). A fitted kind \
                     needs `tolerance_reason`.",
    );
    let metrics: Vec<&str> = info.metrics.iter().map(|m| m.name).collect();
    c(
        &mut s,
        &format!(
            "metric: one of {}'s metrics: {}.",
            info.name,
            metrics.join(", ")
        ),
    );
    s.push_str("predictions:\n");
    s.push_str(&new_templates::prediction(t));
    section(
        &mut s,
        "Optional: extra metrics tabulated in the report, with no verdict.",
    );
    let _ = writeln!(s, "# report_metrics: [{}]", t.report_metric);
    c(
        &mut s,
        "Optional, written after measuring: what was measured and what it means.",
    );
    s.push_str("# discussion: >\n#   TODO\n");
    s
}

/// The width of the scaffold's comment lines.
const WIDTH: usize = 92;

/// `#   <head>  <text>` with the text wrapped under itself: an entry of a commented list.
fn listed(out: &mut String, head: &str, text: &str) {
    let lead = format!("#   {head:<22} ");
    let hang = " ".repeat(lead.len() - 1);
    let mut line = lead.clone();
    for word in text.split_whitespace() {
        let fresh = line == lead || line.trim_end() == format!("#{hang}").trim_end();
        if !fresh && line.len() + 1 + word.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = format!("#{hang}");
        }
        if !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn options(s: &mut String, t: &Template, system: &dyn System) {
    let opts = system.options();
    if opts.is_empty() {
        return;
    }
    s.push('\n');
    wrap(
        s,
        "",
        "System options (allowed values after the `#`; the first is the default).",
        WIDTH,
    );
    let (set, unset): (Vec<&OptionInfo>, Vec<&OptionInfo>) = opts
        .iter()
        .partition(|o| t.options.iter().any(|(n, _)| *n == o.name));
    if !set.is_empty() {
        s.push_str("options:\n");
    }
    for o in &set {
        let v = t
            .options
            .iter()
            .find(|(n, _)| *n == o.name)
            .map_or(o.values[0], |(_, v)| *v);
        commented(
            s,
            &format!("  {}: {}", o.name, scalar(v)),
            &format!("{}: {}", o.values.join(" | "), o.doc),
        );
    }
    if !unset.is_empty() {
        wrap(
            s,
            "",
            "Other options of this system (unset: the first value applies):",
            WIDTH,
        );
        for o in unset {
            listed(s, o.name, &format!("{}: {}", o.values.join(" | "), o.doc));
        }
    }
}

fn params(s: &mut String, t: &Template, system: &dyn System) {
    s.push('\n');
    wrap(
        s,
        "",
        "Hyper-parameters: expressions (numbers, variables, + - * / ^, sqrt ln exp ceil floor abs \
         min max, pi), evaluated at every sweep point after the axes and coupled variables; \
         each must meet its constraint at every point.",
        WIDTH,
    );
    s.push_str("params:\n");
    for (name, expr) in t.params {
        let doc = match system.params().iter().find(|p| p.name == *name) {
            Some(p) => format!(
                "{}; {}{}",
                p.doc,
                kind_words(p.kind),
                if p.optional { "; optional" } else { "" }
            ),
            None => {
                let d = t
                    .helper_docs
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or("", |(_, d)| *d);
                format!("{d} (a helper variable: the system does not read it)")
                    .trim()
                    .to_string()
            }
        };
        commented(s, &format!("  {name}: \"{expr}\""), &doc);
    }
    let unused: Vec<_> = system
        .params()
        .iter()
        .filter(|p| !t.params.iter().any(|(n, _)| *n == p.name))
        .collect();
    if !unused.is_empty() {
        wrap(
            s,
            "",
            "Other parameters of this system (optional; unset here):",
            WIDTH,
        );
        for p in unused {
            listed(s, p.name, &format!("{}; {}", p.doc, kind_words(p.kind)));
        }
    }
}
