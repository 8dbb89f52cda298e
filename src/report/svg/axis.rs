//! Axes of the plots: data ranges mapped to pixels on log10 or linear scales, and
//! "nice" ticks (1, 2, 5 times a power of ten; powers of ten on log axes).
use super::esc;

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
            // Whole decades, at least one.
            lo = lo.floor();
            hi = hi.ceil();
            if hi - lo < 1.0 {
                hi = lo + 1.0;
            }
        } else {
            if hi - lo <= 0.0 {
                let pad = if lo.abs() > 0.0 { lo.abs() * 0.1 } else { 1.0 };
                lo -= pad;
                hi += pad;
            }
            let step = nice_step(hi - lo);
            lo = (lo / step).floor() * step;
            hi = (hi / step).ceil() * step;
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

    /// Decade ticks (with minor ticks at 2..9 when there are at most 6 decades) for a log
    /// axis; 1-2-5 steps for a linear axis.
    pub(super) fn ticks(&self) -> Vec<Tick> {
        let mut ticks = Vec::new();
        if self.log {
            let lo = self.lo as i64;
            let hi = self.hi as i64;
            let decades = hi - lo;
            let every = (decades + 7) / 8; // label at most ~8 decades
            for k in lo..=hi {
                let labelled = (k - lo) % every.max(1) == 0;
                ticks.push(Tick {
                    at: k as f64,
                    major: true,
                    label: labelled.then_some(TickLabel::Power(k)),
                });
                if decades <= 6 && k < hi {
                    for m in 2..=9 {
                        ticks.push(Tick {
                            at: k as f64 + f64::from(m).log10(),
                            major: false,
                            label: None,
                        });
                    }
                }
            }
        } else {
            let step = nice_step(self.hi - self.lo);
            let decimals = (-step.log10().floor()).max(0.0) as usize;
            // At most 100 ticks, whatever the range (guards against overflowing spans).
            let n = ((self.hi - self.lo) / step).round().clamp(0.0, 100.0) as i64;
            for i in 0..=n {
                let at = self.lo + i as f64 * step;
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
