//! `dpclaims new` (issue 33, item 1): the scaffold of every system it supports loads,
//! runs at the quick profile with its negative control caught, in seconds; an existing
//! file is never overwritten, a bad id or an unsupported system is refused (exit 2).
use crate::util::dpclaims_in;
use dpclaims::spec::{self, Evidence};
use std::path::Path;
use std::process::Output;

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The systems `dpclaims new --system` lists as supported (from its refusal of an
/// unknown one).
fn supported(dir: &Path) -> Vec<String> {
    let o = dpclaims_in(dir, &["new", "x", "--system", "no-such-system"]);
    assert_eq!(code(&o), 2, "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let list = err
        .split("scaffolds: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of systems in: {err}"));
    list.trim().split(", ").map(str::to_string).collect()
}

#[test]
fn every_supported_system_scaffolds_a_claim_that_runs_with_its_control_caught() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    let systems = supported(dir.path());
    // Every built-in system is supported (none had to be left out for speed).
    for s in dpclaims::systems::all() {
        let typed = s.name().replace('_', "-");
        assert!(systems.contains(&typed), "{typed} not in {systems:?}");
    }
    for sys in &systems {
        let id = format!("demo-{sys}");
        let o = dpclaims_in(dir.path(), &["new", &id, "--system", sys]);
        assert_eq!(code(&o), 0, "{sys}: {}", text(&o.stderr));
        let rel = format!("claims/{id}.yaml");
        let out = text(&o.stdout);
        assert!(out.contains(&format!("wrote {rel}")), "{out}");
        assert!(out.contains(&format!("dpclaims run {rel}")), "{out}");

        let path = dir.path().join(&rel);
        let bytes = std::fs::read(&path).unwrap();
        let claim = spec::claim_from_bytes(&path, &bytes)
            .unwrap_or_else(|e| panic!("{sys}: the scaffold does not load: {e}"));
        assert_eq!(claim.id, id);
        assert_eq!(claim.system.name().replace('_', "-"), *sys);
        // No paper is claimed: placeholders, and no hypothesis registry.
        assert!(claim.paper.is_empty(), "{sys}: paper `{}`", claim.paper);
        assert!(
            claim.source.paper.starts_with("TODO"),
            "{}",
            claim.source.paper
        );
        // A main variant and a negative control caught by the one prediction.
        assert_eq!(claim.predictions.len(), 1);
        let p = &claim.predictions[0];
        assert!(claim.variants.iter().any(|v| !v.negative_control));
        let controls: Vec<_> = claim
            .variants
            .iter()
            .filter(|v| v.negative_control)
            .collect();
        assert_eq!(controls.len(), 1, "{sys}");
        assert_eq!(controls[0].caught_by, vec![p.name.clone()], "{sys}");
        if p.evidence == Evidence::Statement {
            assert!(p.quote.is_some(), "{sys}: a statement without a quote");
        }
        // Every required top-level field is there and commented.
        let yaml = text(&bytes);
        for field in [
            "id:",
            "title:",
            "source:",
            "statement:",
            "system:",
            "model:",
            "adjacency:",
            "params:",
            "sweeps:",
            "variants:",
            "predictions:",
        ] {
            let at = yaml
                .lines()
                .position(|l| l.starts_with(field))
                .unwrap_or_else(|| panic!("{sys}: no `{field}`"));
            let above = yaml.lines().nth(at.saturating_sub(1)).unwrap_or("");
            assert!(
                above.starts_with('#'),
                "{sys}: `{field}` has no comment above it (`{above}`)"
            );
        }
        assert!(!yaml.lines().any(|l| l.starts_with("paper:")), "{sys}");
        assert!(
            !yaml.lines().any(|l| l.ends_with(' ')),
            "{sys}: trailing spaces"
        );

        let r = dpclaims_in(dir.path(), &["run", &rel, "--no-reports"]);
        let err = text(&r.stderr);
        assert_eq!(code(&r), 0, "{sys}: {err}{}", text(&r.stdout));
        let control = &controls[0].name;
        assert!(
            err.lines()
                .any(|l| l.contains(control.as_str()) && l.ends_with("(control caught)")),
            "{sys}: control `{control}` not caught:\n{err}"
        );
        assert!(
            text(&r.stdout).contains("negative controls 1/1 caught"),
            "{}",
            text(&r.stdout)
        );
    }
}

#[test]
fn the_default_path_is_claims_when_there_is_one_else_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let o = dpclaims_in(dir.path(), &["new", "here"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(dir.path().join("here.yaml").is_file());
    assert!(text(&o.stdout).contains("dpclaims run here.yaml"));
    // The default system is rf-dpgd.
    let yaml = std::fs::read_to_string(dir.path().join("here.yaml")).unwrap();
    assert!(yaml.contains("\nsystem: rf_dpgd\n"), "{yaml}");

    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let o = dpclaims_in(dir.path(), &["new", "there", "--out", "elsewhere"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(dir.path().join("elsewhere/there.yaml").is_file());
    let o = dpclaims_in(
        dir.path(),
        &["new", "named", "--system", "rf_dpgd", "--out", "x.yaml"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(dir.path().join("x.yaml").is_file());
}

#[test]
fn an_existing_file_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    let file = dir.path().join("claims/mine.yaml");
    std::fs::write(&file, "my own work\n").unwrap();
    for args in [
        vec!["new", "mine"],
        vec!["new", "other", "--out", "claims/mine.yaml"],
    ] {
        let o = dpclaims_in(dir.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            text(&o.stderr).contains("claims/mine.yaml already exists: not overwritten"),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "my own work\n");
    }
}

#[test]
fn a_bad_id_or_an_unsupported_system_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (id, why) in [
        ("Bad_Id", "a claim id: lowercase letters, digits and '-'"),
        ("summary", "is reserved"),
        ("a/b", "contains '/'"),
    ] {
        let o = dpclaims_in(dir.path(), &["new", id]);
        assert_eq!(code(&o), 2, "{id}");
        let err = text(&o.stderr);
        assert!(
            err.contains("bad claim id") && err.contains(why),
            "{id}: {err}"
        );
    }
    let o = dpclaims_in(dir.path(), &["new", "ok", "--system", "external"]);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("docs/external-cores.md") && err.contains("rf-dpgd"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a refused scaffold wrote a file"
    );
}

/// Issue 33 item 3: the `gaussian_mechanism` system and an accountant called in a
/// right-hand side (`calibrate_sigma_pld`), in the example claim: both predictions hold
/// on the classic calibration and catch the half-noise control.
#[test]
fn the_gaussian_mechanism_example_runs_with_an_accountant_in_its_rhs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/gaussian-mechanism/classic-calibration.yaml");
    let out = dir.path().join("out");
    let o = dpclaims_in(
        dir.path(),
        &[
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-cache",
            "--no-baseline",
        ],
    );
    let stdout = text(&o.stdout);
    assert_eq!(code(&o), 0, "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("paper: 1 hold, 0 refuted"), "{stdout}");
    assert!(stdout.contains("consequences: 1 consistent"), "{stdout}");
    assert!(stdout.contains("negative controls 2/2 caught"), "{stdout}");
}
