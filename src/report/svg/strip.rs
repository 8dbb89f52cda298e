//! A key number against its threshold: one small plot per numbered result of a
//! scorecard (the small multiples of its HTML page). The estimate is a dot with its
//! interval as a bar, on one horizontal axis (log10 when every number is positive and
//! the number is a ratio or a constant), and the threshold a red dashed vertical line
//! labelled with its meaning; a tolerance band around it is shaded. Deterministic like
//! every plot here: rounded numbers, fixed decimals.
use super::axis::{tick_text, Axis, TickLabel};
use super::{esc, fit_text, num, text_width, FONT_FAMILY};
use std::fmt::Write as _;

/// Width and height of a strip in pixels.
pub const STRIP_WIDTH: f64 = 340.0;
pub const STRIP_HEIGHT: f64 = 116.0;

const LEFT: f64 = 16.0;
const RIGHT: f64 = 16.0;
/// The row of the estimate and the axis line.
const ROW_Y: f64 = 72.0;
const AXIS_Y: f64 = 88.0;
/// Top of the threshold line and of the tolerance band.
const TOP_Y: f64 = 50.0;
/// Font size of the caption.
const CAPTION_PX: f64 = 10.0;

/// One key number and its threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyStrip {
    /// The numbered result (`Theorem 2`).
    pub title: String,
    /// What the number is, with its value (`exact eps / target eps <= 0.952`).
    pub caption: String,
    pub value: f64,
    /// The number's interval, if it has one.
    pub interval: Option<(f64, f64)>,
    /// Where the statement's side ends: the line drawn.
    pub threshold: f64,
    /// What the line is (`bound 1`, `registered ceiling 12.6`, `0 = no gap`).
    pub threshold_label: String,
    /// The tolerance around the threshold, shaded.
    pub band: Option<(f64, f64)>,
    /// Log10 axis (every number drawn must be positive; else linear).
    pub log: bool,
}

impl KeyStrip {
    /// The numbers drawn, rounded as every plot's are.
    fn numbers(&self) -> Vec<f64> {
        let mut v = vec![self.value, self.threshold];
        if let Some((a, b)) = self.interval {
            v.extend([a, b]);
        }
        if let Some((a, b)) = self.band {
            v.extend([a, b]);
        }
        v.into_iter()
            .map(crate::report::number::round)
            .filter(|x| x.is_finite())
            .collect()
    }

    /// Whether the axis is logarithmic: asked for, and every number positive.
    pub fn log_axis(&self) -> bool {
        self.log && self.numbers().iter().all(|x| *x > 0.0)
    }

    /// The inline SVG element (no XML prolog: it sits in an HTML page).
    pub fn render(&self) -> String {
        let r = crate::report::number::round;
        let log = self.log_axis();
        let axis = Axis::new(log, &self.numbers(), LEFT, STRIP_WIDTH - RIGHT);
        let clamp = |x: f64| axis.px(x).clamp(LEFT, STRIP_WIDTH - RIGHT);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="keyplot" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}" role="img" aria-label="{label}">"#,
            w = num(STRIP_WIDTH),
            h = num(STRIP_HEIGHT),
            label = esc(&format!("{}: {}", self.title, self.caption)),
        );
        let room = STRIP_WIDTH - LEFT - RIGHT;
        let (title, size) = fit_text(&self.title, 13.0, 9.0, room, 1.1);
        let _ = write!(
            s,
            r#"<text x="{}" y="15" font-size="{}" font-weight="bold">{}</text>"#,
            num(LEFT),
            num(size),
            esc(&title)
        );
        // The caption on at most two lines, cut at a space.
        for (i, line) in two_lines(&self.caption, room, CAPTION_PX)
            .iter()
            .enumerate()
        {
            let (line, size) = fit_text(line, CAPTION_PX, 8.0, room, 1.0);
            let _ = write!(
                s,
                r##"<text x="{}" y="{}" font-size="{}" fill="#333">{}</text>"##,
                num(LEFT),
                num(29.0 + 12.0 * i as f64),
                num(size),
                esc(&line)
            );
        }
        if let Some((a, b)) = self.band {
            let (x0, x1) = (clamp(r(a.min(b))), clamp(r(a.max(b))));
            let _ = write!(
                s,
                r##"<rect class="band" x="{}" y="{}" width="{}" height="{}" fill="#cccccc" fill-opacity="0.5"/>"##,
                num(x0),
                num(TOP_Y),
                num((x1 - x0).max(0.5)),
                num(AXIS_Y - TOP_Y)
            );
        }
        // The axis, its ticks and labels.
        let _ = write!(
            s,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#555" stroke-width="1"/>"##,
            num(LEFT),
            num(STRIP_WIDTH - RIGHT),
            y = num(AXIS_Y)
        );
        let ticks: Vec<_> = axis.ticks().into_iter().filter(|t| t.major).collect();
        let labels: Vec<Option<String>> =
            ticks.iter().map(|t| t.label.as_ref().map(label)).collect();
        // Every other label when they would touch.
        let widest = labels
            .iter()
            .flatten()
            .map(|l| text_width(l, 9.0))
            .fold(0.0, f64::max);
        let every = if widest * labels.len() as f64 > 0.8 * room {
            2
        } else {
            1
        };
        for (i, (t, l)) in ticks.iter().zip(&labels).enumerate() {
            let x = axis.tick_px(t.at);
            let _ = write!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#555" stroke-width="1"/>"##,
                num(AXIS_Y),
                num(AXIS_Y + 4.0),
                x = num(x)
            );
            if let (Some(l), true) = (l, i % every == 0) {
                let _ = write!(
                    s,
                    r#"<text x="{}" y="{}" font-size="9" text-anchor="middle">{l}</text>"#,
                    num(x),
                    num(AXIS_Y + 14.0),
                );
            }
        }
        // The threshold.
        let tx = clamp(r(self.threshold));
        let _ = write!(
            s,
            r##"<line class="threshold" x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="4 3"><title>{}</title></line>"##,
            num(TOP_Y),
            num(AXIS_Y),
            esc(&self.threshold_label),
            x = num(tx)
        );
        let right = tx > STRIP_WIDTH / 2.0;
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="9" fill="#c0392b" text-anchor="{}">{}</text>"##,
            num(if right { tx - 3.0 } else { tx + 3.0 }),
            num(STRIP_HEIGHT - 3.0),
            if right { "end" } else { "start" },
            esc(&self.threshold_label)
        );
        // The estimate and its interval.
        if let Some((a, b)) = self.interval {
            let _ = write!(
                s,
                r##"<line class="interval" x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#0072B2" stroke-width="3"/>"##,
                num(clamp(r(a.min(b)))),
                num(clamp(r(a.max(b)))),
                y = num(ROW_Y)
            );
        }
        let _ = write!(
            s,
            r##"<circle class="estimate" cx="{}" cy="{}" r="4.5" fill="#0072B2"/>"##,
            num(clamp(r(self.value))),
            num(ROW_Y)
        );
        s.push_str("</svg>");
        s
    }
}

/// A tick's label: a power of ten as `10^k`, a plain number with at most three
/// significant digits (a range of 1e-12 would print twelve zeros).
fn label(l: &TickLabel) -> String {
    match l {
        TickLabel::Plain(p) => match p.parse::<f64>() {
            Ok(v) if p.len() > 6 => esc(&crate::report::scorecard::keynum::sig(v)),
            _ => tick_text(l),
        },
        TickLabel::Power(_) => tick_text(l),
    }
}

/// `text` on one line, or on two cut at the space nearest the middle when it is wider
/// than `room` at `px`.
fn two_lines(text: &str, room: f64, px: f64) -> Vec<String> {
    if text_width(text, px) <= room {
        return vec![text.to_string()];
    }
    let mid = text.len() / 2;
    let cut = text
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(mid));
    match cut {
        Some(i) => vec![text[..i].to_string(), text[i + 1..].to_string()],
        None => vec![text.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(value: f64, threshold: f64, log: bool) -> KeyStrip {
        KeyStrip {
            title: "Theorem 2".into(),
            caption: "exact eps / target eps <= 0.952".into(),
            value,
            interval: Some((value * 0.9, value * 1.1)),
            threshold,
            threshold_label: "bound 1".into(),
            band: None,
            log,
        }
    }

    #[test]
    fn a_strip_draws_its_threshold_and_estimate_deterministically() {
        let s = strip(0.952, 1.0, true);
        let svg = s.render();
        assert_eq!(svg, s.render());
        assert_eq!(svg.matches(r#"class="threshold""#).count(), 1, "{svg}");
        assert_eq!(svg.matches(r#"class="estimate""#).count(), 1);
        assert!(svg.contains("bound 1") && svg.contains("Theorem 2"));
        assert!(s.log_axis());
        // A non-positive number: a linear axis, whatever was asked.
        assert!(!strip(-0.5, 0.0, true).log_axis());
        // The threshold sits right of an estimate below it.
        let x = |class: &str, attr: &str| -> f64 {
            let i = svg.find(&format!("class=\"{class}\"")).unwrap();
            let a = svg[i..].find(&format!("{attr}=\"")).unwrap() + i + attr.len() + 2;
            svg[a..a + svg[a..].find('"').unwrap()].parse().unwrap()
        };
        assert!(x("estimate", "cx") < x("threshold", "x1"));
    }
}
