//! What could make a scorecard result's checks fail (`could_fail:`), declared per result
//! and read by the counting ([`super::sections`]): data of the paper's mechanism, an
//! identity true by construction, the paper's own printed numbers, or another result's
//! checks (its verdict follows from that result's).

/// What could make a result's checks fail, declared per result: the tool counts by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CouldFail {
    /// Simulated data of the paper's mechanism: a holds counts, with a caught control
    /// that changes the mechanism or the statement's quantity (`control`).
    Data,
    /// An identity or an inequality true by construction: a self-check, listed, never
    /// counted among the holds.
    Construction,
    /// The paper's own printed numbers: "consistent with its printed numbers", its own
    /// count, never a holds.
    Printed,
    /// Its checks are another result's, listed there too (a statement one of whose parts
    /// is that result, a restatement): its verdict follows from that result's, is shown
    /// with the result's name, and is counted once, under that result.
    Follows,
}

impl CouldFail {
    pub fn as_str(self) -> &'static str {
        match self {
            CouldFail::Data => "data",
            CouldFail::Construction => "construction",
            CouldFail::Printed => "printed",
            CouldFail::Follows => "follows",
        }
    }

    pub fn parse(s: &str) -> Option<CouldFail> {
        match s {
            "data" => Some(CouldFail::Data),
            "construction" => Some(CouldFail::Construction),
            "printed" => Some(CouldFail::Printed),
            "follows" => Some(CouldFail::Follows),
            _ => None,
        }
    }
}

/// The declared `could_fail` of a result (`checked`: it has `checked_by`), and its
/// `control`: required with checks, one of the three words, `control` only with `data`.
pub(super) fn declared(
    could_fail: &Option<String>,
    control: &Option<String>,
    checked: bool,
) -> Result<Option<CouldFail>, String> {
    let c = match (could_fail, checked) {
        (None, true) => {
            return Err(
                "a checked result declares what could make its checks fail: \
                        `could_fail: data` (simulated data of the paper's mechanism; name the \
                        `control` that changes the mechanism or the statement's quantity), \
                        `construction` (an identity or an inequality true by construction: a \
                        self-check, never counted), `printed` (the paper's own printed \
                        numbers) or `follows` (its checks are another result's: its verdict \
                        follows from that result's, counted there)"
                    .into(),
            )
        }
        (None, false) => None,
        (Some(t), _) => Some(CouldFail::parse(t.trim()).ok_or_else(|| {
            format!("`could_fail: {t}`: one of data, construction, printed, follows")
        })?),
    };
    if control.is_some() && c != Some(CouldFail::Data) {
        return Err("`control` names the control of a `could_fail: data` result".into());
    }
    Ok(c)
}
