//! The legend of a [`LogLogPlot`](super::LogLogPlot), right of the plot area: one row per
//! series (its marker, hollow for a negative control) and per line (its stroke). The
//! SVG is made wide enough for the longest label, so no label is clipped at the edge.
use super::{esc, num, LogLogPlot};
use std::fmt::Write as _;

/// Font size of legend labels (px).
pub(crate) const LEGEND_FONT: f64 = 11.0;
/// Height of one legend row (px).
pub(crate) const ROW: f64 = 18.0;
/// Where a label's text starts, right of the legend's left edge (marker or stroke first).
const TEXT_OFFSET: f64 = 26.0;
/// Space kept right of the longest label (px).
const PAD_RIGHT: f64 = 10.0;

/// An upper estimate of the width of `text` in a sans-serif font of `font_px`: 0.62 em a
/// character. DejaVu Sans and Liberation Sans (what rsvg and the browsers of Debian use
/// for `sans-serif`) average below 0.58 em over lowercase letters, digits and the
/// punctuation of labels; only runs of capitals, `m` or `w` are wider.
pub(crate) fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars().count() as f64 * 0.62 * font_px
}

/// A legend's box: left, top, width, height (px).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LegendBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl LogLogPlot {
    fn legend_labels(&self) -> impl Iterator<Item = &str> {
        self.series
            .iter()
            .map(|s| s.label.as_str())
            .chain(self.lines.iter().map(|l| l.label.as_str()))
            .chain(self.curves.iter().map(|c| c.label.as_str()))
            .chain(self.bands.iter().map(|b| b.label.as_str()))
    }

    /// The box the legend occupies when drawn at `(x, top)`.
    pub(crate) fn legend_box(&self, x: f64, top: f64) -> LegendBox {
        let widest = self
            .legend_labels()
            .map(|l| text_width(l, LEGEND_FONT))
            .fold(0.0, f64::max);
        let rows = self.series.len() + self.lines.len() + self.curves.len() + self.bands.len();
        LegendBox {
            x,
            y: top,
            w: TEXT_OFFSET + widest + PAD_RIGHT,
            h: rows as f64 * ROW,
        }
    }

    pub(super) fn draw_legend(&self, svg: &mut String, x: f64, top: f64) {
        let _ = writeln!(svg, r#"<g font-size="{LEGEND_FONT}">"#);
        let mut y = top + 8.0;
        for (i, s) in self.series.iter().enumerate() {
            let colour = self.series_colour_of(i);
            let _ = writeln!(
                svg,
                r#"{}<text x="{}" y="{}">{}</text>"#,
                super::marker(x + 10.0, y, colour, s.hollow),
                num(x + TEXT_OFFSET),
                num(y + 4.0),
                esc(&s.label)
            );
            y += ROW;
        }
        for (j, l) in self.lines.iter().enumerate() {
            let (colour, width, dash) = self.line_style(j);
            let _ = writeln!(
                svg,
                r#"<line x1="{}" y1="{y0}" x2="{}" y2="{y0}" stroke="{colour}" stroke-width="{width}"{dash}/><text x="{}" y="{}">{}</text>"#,
                num(x),
                num(x + 20.0),
                num(x + TEXT_OFFSET),
                num(y + 4.0),
                esc(&l.label),
                y0 = num(y)
            );
            y += ROW;
        }
        for c in &self.curves {
            let _ = writeln!(
                svg,
                r#"<line x1="{}" y1="{y0}" x2="{}" y2="{y0}" stroke="{}" stroke-width="{}"{}/><text x="{}" y="{}">{}</text>"#,
                num(x),
                num(x + 20.0),
                c.colour,
                num(c.width),
                c.dash
                    .map(|d| format!(r#" stroke-dasharray="{d}""#))
                    .unwrap_or_default(),
                num(x + TEXT_OFFSET),
                num(y + 4.0),
                esc(&c.label),
                y0 = num(y)
            );
            y += ROW;
        }
        for b in &self.bands {
            let _ = writeln!(
                svg,
                r#"<rect x="{}" y="{}" width="20" height="10" fill="{}" stroke="{}" stroke-width="0.75"/><text x="{}" y="{}">{}</text>"#,
                num(x),
                num(y - 5.0),
                super::tint(b.colour, b.opacity),
                super::tint(b.colour, (2.0 * b.opacity).min(1.0)),
                num(x + TEXT_OFFSET),
                num(y + 4.0),
                esc(&b.label)
            );
            y += ROW;
        }
        let _ = writeln!(svg, "</g>");
    }
}
