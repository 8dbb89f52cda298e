//! Reading claim files: the spec files of a directory, their bytes as UTF-8 text, and the
//! strict load of one file or of many ([`super::load`] validates).
use super::load::validate;
use super::raw::{self, RawClaim};
use super::{Claim, SpecError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The spec files of a directory (its `*.yaml` and `*.yml` files, sorted by name), or the
/// file itself.
pub fn spec_files(p: &Path) -> Result<Vec<PathBuf>, SpecError> {
    if !p.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let rd = std::fs::read_dir(p).map_err(|e| SpecError {
        file: p.display().to_string(),
        field: "(directory)".into(),
        message: e.to_string(),
    })?;
    let v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    // A spec whose name is not UTF-8 is an error naming it (lossily), never skipped
    // (issue 50, family 7): a directory run must not silently lose a claim.
    if let Some(bad) = v
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n.to_str().is_none()))
    {
        return Err(SpecError {
            file: bad.display().to_string(),
            field: "(file name)".into(),
            message: format!(
                "the file name {:?} is not UTF-8: rename the spec",
                bad.file_name().unwrap_or_default().to_string_lossy()
            ),
        });
    }
    let mut v: Vec<PathBuf> = v
        .into_iter()
        // Hidden files and editor lock files (`.#a.yaml`, `#a.yaml#`, `.a.yaml`):
        // not claims.
        .filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && !n.starts_with('#'))
        })
        .collect();
    if v.is_empty() {
        // A run of nothing would "succeed" with 0 claims: almost always a wrong
        // directory.
        return Err(SpecError {
            file: p.display().to_string(),
            field: "(directory)".into(),
            message: format!(
                "no claim specs in {} (no *.yaml or *.yml file)",
                p.display()
            ),
        });
    }
    v.sort();
    Ok(v)
}

/// Loads and validates every `*.yaml` file of a directory (sorted by file name), or the
/// given files.
pub fn load_claims(paths: &[PathBuf]) -> Result<Vec<Claim>, SpecError> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(spec_files(p)?);
    }
    let mut claims = Vec::new();
    let mut ids = BTreeSet::new();
    for f in files {
        let c = load_claim(&f)?;
        if !ids.insert(c.id.clone()) {
            return Err(SpecError {
                file: f.display().to_string(),
                field: "id".into(),
                message: format!("duplicate claim id `{}`", c.id),
            });
        }
        claims.push(c);
    }
    Ok(claims)
}

/// Reads and validates one claim file.
pub fn load_claim(path: &Path) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let err = |message: String| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message,
    };
    // Not a FIFO, device or directory; at most 16 MiB (crate::fsio::InputKind::Spec).
    let bytes =
        crate::fsio::read(path, crate::fsio::InputKind::Spec).map_err(|e| err(e.to_string()))?;
    claim_from_bytes(path, &bytes)
}

/// Validates the bytes of a claim file (`path` names it in errors and is recorded as its
/// file): what [`load_claim`] does once the file is read. Any bytes give a claim or a
/// [`SpecError`], never a panic (the fuzz target `fuzz/fuzz_targets/spec_load.rs`).
pub fn claim_from_bytes(path: &Path, bytes: &[u8]) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let err = |message: String| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message,
    };
    let text = spec_text(bytes).map_err(err)?;
    crate::fsio::yaml::alias_budget(text).map_err(|e| SpecError {
        file: file.clone(),
        field: "(top level)".into(),
        message: e.to_string(),
    })?;
    let raw: RawClaim = raw::claim_from_yaml(text).map_err(|(field, message)| SpecError {
        file: file.clone(),
        field,
        message,
    })?;
    let sha = |b: &[u8]| {
        use sha2::{Digest, Sha256};
        Sha256::digest(b)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let mut judged = raw::without_discussion(text).unwrap_or_else(|| text.to_string());
    let mut claim = validate(raw, path, sha(bytes))?;
    // An external claim's rows also depend on the protocol code, which the build's
    // verdict hash leaves out (build.rs, `EXTERNAL`).
    if claim.system.name() == crate::systems::external::NAME {
        judged.push_str("\n# external protocol ");
        judged.push_str(crate::build_id::EXTERNAL_HASH);
    }
    // The paper's registry decides the claim's regimes: its hypotheses are part of what
    // the claim is judged by, so an edit of them changes the claim's judged hash, while an
    // edit of the rest of the scorecard (its counting and prose) does not (build.rs keeps
    // `scorecards/` out of the verdict hash for that reason).
    if !claim.paper.is_empty() {
        if let Ok(reg) = super::registry::find(&claim.file, &claim.paper) {
            judged.push_str("\n# registry hypotheses\n");
            judged.push_str(&format!("{:?}", reg.hypotheses));
        }
    }
    claim.judged_hash = sha(judged.as_bytes());
    claim.key_hash = super::judged::key_hash(text);
    Ok(claim)
}

/// The text of a spec file: UTF-8, a leading byte-order mark dropped (editors on some
/// systems write one; it is not part of the YAML). The spec hash stays the hash of the
/// file's bytes.
pub(super) fn spec_text(bytes: &[u8]) -> Result<&str, String> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(body).map_err(|e| {
        let utf16 = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
        format!(
            "the file is not UTF-8 (invalid byte at offset {}{}); save it as UTF-8",
            e.valid_up_to() + (bytes.len() - body.len()),
            if utf16 { ", it looks like UTF-16" } else { "" }
        )
    })
}
