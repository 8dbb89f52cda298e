//! The files of a new project (`dpclaims init`), relative to its root: the marker, the
//! example claim on an example core, the paper's scorecard, the CI files, and the
//! Python adapter `dpclaims_core` (python/ of this repository) copied beside the core so
//! the project runs without installing it. `{{name}}` is the project's name.

/// (path in the project, contents).
pub(super) const FILES: &[(&str, &str)] = &[
    (super::MARKER, include_str!("skeleton/dpclaims.toml")),
    (".gitignore", include_str!("skeleton/gitignore")),
    ("README.md", include_str!("skeleton/README.md")),
    (
        "claims/gaussian-mean.yaml",
        include_str!("skeleton/claims/gaussian-mean.yaml"),
    ),
    (
        "scorecards/dwork-roth-2014.yaml",
        include_str!("skeleton/scorecards/dwork-roth-2014.yaml"),
    ),
    (
        "core/gaussian_mean.py",
        include_str!("skeleton/core/gaussian_mean.py"),
    ),
    (
        "core/dpclaims_core/__init__.py",
        include_str!("../../python/dpclaims_core/__init__.py"),
    ),
    (
        "core/dpclaims_core/__main__.py",
        include_str!("../../python/dpclaims_core/__main__.py"),
    ),
    (
        "core/dpclaims_core/_core.py",
        include_str!("../../python/dpclaims_core/_core.py"),
    ),
    (
        ".github/workflows/dpclaims.yml",
        include_str!("skeleton/github/dpclaims.yml"),
    ),
    (".gitlab-ci.yml", include_str!("skeleton/gitlab-ci.yml")),
    (
        "requirements.txt",
        include_str!("skeleton/requirements.txt"),
    ),
];

/// Where the spec's JSON Schema goes (the example claim's first line points at it).
pub(super) const SCHEMA: &str = "docs/claim.schema.json";

/// The files init writes, relative to the project's root, in order.
pub fn files() -> Vec<&'static str> {
    FILES
        .iter()
        .map(|(p, _)| *p)
        .chain(std::iter::once(SCHEMA))
        .collect()
}
