//! A claim's rows of `SUMMARY.md` as data: written by [`super::summary`] (which builds
//! them, `SummaryRows::of`), recorded in `verdicts.json` and read back by [`super::kept`].
//! Its own file so that the kept claims and the summary page do not import each other.
/// A claim's rows of `SUMMARY.md` without the claim cell (which links to the page):
/// what `verdicts.json` records per claim, so that a later run of other claims into the
/// same directory can list this one unchanged ([`super::kept`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SummaryRows {
    /// The source cell of the claims table.
    pub source: String,
    /// The claim in plain words ([`super::summary::claim_in_words`]).
    pub words: String,
    /// One row of the table of every verdict per result, from the prediction cell on.
    pub verdicts: Vec<String>,
}
