//! The rounded rendering of a claim outcome that the insta snapshots of
//! `tests/claims.rs` hold (rounded estimates and verdicts, never raw `f64`s or timings),
//! shared with `dpclaims faults`, which compares it between a faulty and the fault-free
//! core: a fault that changes this rendering fails the snapshot test; and with
//! `dpclaims run`, which compares it with the committed snapshots (the regression
//! baseline, [`super::baseline`]).
use crate::judge::ClaimOutcome;
use crate::judge::ControlStatus;
use serde::Serialize;

/// One judged prediction, rounded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SnapResult {
    pub prediction: String,
    pub variant: String,
    pub metric: String,
    pub kind: &'static str,
    pub x: Option<String>,
    pub estimate: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub predicted: Option<f64>,
    pub verdict: String,
    /// Negative controls: caught, not_caught or identical.
    pub control: Option<String>,
    /// Points judged (inside the hypotheses) and points of the sweep.
    pub points: usize,
    pub points_total: usize,
    /// A bound with a registered constant: its implied constant (rounded) and the
    /// constant's verdict, so a change of either is a change of the baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant: Option<(f64, String)>,
}

/// A claim outcome as snapshotted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Snap {
    pub id: String,
    pub results: Vec<SnapResult>,
}

/// Rounds to 2 decimals (snapshots hold rounded numbers, never raw f64s). Large values
/// are rounded to 2 significant decimals in scientific form so tiny relative changes of
/// a big number do not flip the snapshot.
pub fn round2(v: f64) -> f64 {
    if v.abs() >= 1e3 {
        let e = v.abs().log10().floor();
        let m = (v / 10f64.powf(e) * 100.0).round() / 100.0;
        m * 10f64.powf(e)
    } else {
        let r = (v * 100.0).round() / 100.0;
        if r == 0.0 {
            0.0
        } else {
            r
        }
    }
}

/// The snapshot of an outcome.
pub fn snapshot(out: &ClaimOutcome) -> Snap {
    Snap {
        id: out.claim.id.clone(),
        // Exploratory rows are no part of the regression baseline (`exploratory: true`).
        results: out
            .results
            .iter()
            .filter(|r| !r.exploratory)
            .map(|r| SnapResult {
                prediction: r.prediction_name.clone(),
                variant: r.variant.clone(),
                metric: r.metric.clone(),
                kind: r.kind,
                x: r.x.clone(),
                estimate: r.estimate.map(round2),
                ci: r.ci.map(|(a, b)| (round2(a), round2(b))),
                predicted: r.predicted.map(round2),
                verdict: r.word.clone(),
                control: r.control.as_ref().map(|c| match c {
                    ControlStatus::Caught => "caught".to_string(),
                    ControlStatus::NotCaught => "not_caught".to_string(),
                    ControlStatus::IdenticalTo(m) => format!("identical_to_{m}"),
                }),
                points: r.points,
                points_total: r.regime.total,
                constant: r.detail.constant_judged.and_then(|(_, v)| {
                    let (m, _) = r.detail.implied_constant?;
                    Some((round2(m), format!("{v:?}").to_lowercase()))
                }),
            })
            .collect(),
    }
}
