//! Axes of the plots: data ranges mapped to pixels on log10 or linear scales, and
//! "nice" ticks (1, 2, 5 times a power of ten; powers of ten on log axes).
use super::esc;

/// The narrowest log axis, in decades.
const MIN_LOG_SPAN: f64 = 0.3;

/// One axis: the data range mapped to a pixel range, on a log10 or linear scale.
#[derive(Debug, Clone, Copy)]
pub(super) struct Axis {
    pub(super) log: bool,
    /// Range in axis units (log10 of the value for a log axis).
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Pixel positions of `lo` and `hi`.
    pub(super) px_lo: f64,
    pub(super) px_hi: f64,
}

/// A tick: position in axis units and its label (plain text, or `10^k`).
pub(super) struct Tick {
    pub(super) at: f64,
    pub(super) major: bool,
    pub(super) label: Option<TickLabel>,
}

pub(super) enum TickLabel {
    Power(i64),
    Plain(String),
}

impl Axis {
    /// Builds an axis covering the values in `values` (already filtered for the scale).
    pub(super) fn new(log: bool, values: &[f64], px_lo: f64, px_hi: f64) -> Axis {
        let (mut lo, mut hi) = values
            .iter()
            .map(|&v| if log { v.log10() } else { v })
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if !(lo.is_finite() && hi.is_finite()) {
            // No data: one decade, or [0, 1].
            (lo, hi) = (0.0, 1.0);
        }
        if log {
            // Fitted to the data: 5% of the span beyond each end (at least 0.03 decade),
            // and at least 0.3 decade in all, so a narrow range is not a flat line.
            let pad = ((hi - lo) * 0.05).max(0.03);
            lo -= pad;
            hi += pad;
            if hi - lo < MIN_LOG_SPAN {
                let mid = (lo + hi) / 2.0;
                lo = mid - MIN_LOG_SPAN / 2.0;
                hi = mid + MIN_LOG_SPAN / 2.0;
            }
        } else {
            if hi - lo <= 0.0 {
                let pad = if lo.abs() > 0.0 { lo.abs() * 0.1 } else { 1.0 };
                lo -= pad;
                hi += pad;
            }
            // Fitted to the data, 4% of the span beyond each end, so no point sits on
            // the frame; ticks at the 1-2-5 steps inside.
            let pad = (hi - lo) * 0.04;
            lo -= pad;
            hi += pad;
        }
        Axis {
            log,
            lo,
            hi,
            px_lo,
            px_hi,
        }
    }

    /// Pixel position of a value (not transformed yet).
    pub(super) fn px(&self, value: f64) -> f64 {
        let u = if self.log { value.log10() } else { value };
        self.px_lo + (u - self.lo) / (self.hi - self.lo) * (self.px_hi - self.px_lo)
    }

    /// The value at the ends of the axis.
    pub(super) fn value_range(&self) -> (f64, f64) {
        if self.log {
            (10f64.powf(self.lo), 10f64.powf(self.hi))
        } else {
            (self.lo, self.hi)
        }
    }

    /// On a log axis, `10^k` ticks when the range holds three decades or more (with
    /// minor ticks at 2..9 up to 6 decades), else labelled ticks at 1, 2, 5 times a
    /// power of ten; on a linear axis, 1-2-5 steps.
    pub(super) fn ticks(&self) -> Vec<Tick> {
        let mut ticks = Vec::new();
        if self.log {
            // Decades inside the range carry `10^k` labels when there are three or more;
            // otherwise 1, 2 and 5 times a power of ten are labelled as plain numbers
            // (every integer multiple if that still gives fewer than three labels).
            let inside = |at: f64| at >= self.lo - 1e-9 && at <= self.hi + 1e-9;
            let (first, last) = (self.lo.floor() as i64, self.hi.ceil() as i64);
            let decades: Vec<i64> = (first..=last).filter(|&k| inside(k as f64)).collect();
            let many = decades.len() >= 3;
            let span = self.hi - self.lo;
            let every = ((span.ceil() as i64) + 7) / 8; // label at most ~8 decades
            let candidates = |ms: &[u32]| -> usize {
                (first..=last)
                    .flat_map(|k| ms.iter().map(move |&m| k as f64 + f64::from(m).log10()))
                    .filter(|&at| inside(at))
                    .count()
            };
            let plain: &[u32] = if many {
                &[]
            } else if candidates(&[1, 2, 5]) >= 3 {
                &[1, 2, 5]
            } else {
                &[1, 2, 3, 4, 5, 6, 7, 8, 9]
            };
            for k in first..=last {
                if many && inside(k as f64) {
                    let labelled = (k - decades[0]) % every.max(1) == 0;
                    ticks.push(Tick {
                        at: k as f64,
                        major: true,
                        label: labelled.then_some(TickLabel::Power(k)),
                    });
                }
                for m in 1..=9u32 {
                    let at = k as f64 + f64::from(m).log10();
                    if (many && m == 1) || !inside(at) || (span > 6.0 && m > 1) {
                        continue;
                    }
                    let labelled = plain.contains(&m);
                    ticks.push(Tick {
                        at,
                        major: labelled || m == 1,
                        label: labelled.then(|| TickLabel::Plain(plain_number(m, k))),
                    });
                }
            }
        } else {
            // At least four labelled ticks: the next smaller 1-2-5 step if need be.
            let mut step = nice_step(self.hi - self.lo);
            if (self.hi - self.lo) / step < 4.0 {
                let mag = 10f64.powf(step.log10().floor());
                step = match (step / mag).round() as i64 {
                    1 => 0.5 * mag,
                    2 => mag,
                    _ => 2.0 * mag,
                };
            }
            let decimals = (-step.log10().floor()).max(0.0) as usize;
            let first = (self.lo / step).ceil();
            // At most 100 ticks, whatever the range (guards against overflowing spans).
            let n = ((self.hi / step).floor() - first).clamp(0.0, 100.0) as i64;
            for i in 0..=n {
                let at = (first + i as f64) * step;
                let mut label = format!("{at:.decimals$}");
                if label.starts_with('-') && label.trim_start_matches(['-', '0', '.']).is_empty() {
                    label.remove(0);
                }
                ticks.push(Tick {
                    at,
                    major: true,
                    label: Some(TickLabel::Plain(label)),
                });
            }
        }
        ticks
    }

    /// Pixel position of a tick (given in axis units).
    pub(super) fn tick_px(&self, at: f64) -> f64 {
        self.px_lo + (at - self.lo) / (self.hi - self.lo) * (self.px_hi - self.px_lo)
    }
}

/// `m · 10^k` as a plain decimal number (`200`, `0.05`).
fn plain_number(m: u32, k: i64) -> String {
    if k >= 0 {
        format!("{}{}", m, "0".repeat(k as usize))
    } else {
        let decimals = (-k) as usize;
        format!("{:.decimals$}", f64::from(m) * 10f64.powi(k as i32))
    }
}

/// A step of 1, 2 or 5 times a power of ten giving about five intervals over `span`.
pub(super) fn nice_step(span: f64) -> f64 {
    let raw = (span / 5.0).abs();
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let m = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// SVG text of a tick label: `10` with a superscript exponent, or the plain number.
pub(super) fn tick_text(label: &TickLabel) -> String {
    match label {
        TickLabel::Power(k) => {
            format!(r#"10<tspan dy="-6" font-size="9">{k}</tspan>"#)
        }
        TickLabel::Plain(s) => esc(s),
    }
}
