//! SVG heat map (privacy-for-free Fig. 2, fourth panel): a deterministic grid of
//! coloured cells with a colour bar; same conventions as [`super::svg`].
use super::fmt_num;
use super::svg::{
    esc, num, text_width, FONT_FAMILY, HEIGHT, MARGIN_BOTTOM, MARGIN_LEFT, MARGIN_RIGHT,
    MARGIN_TOP, WIDTH,
};
use std::fmt::Write as _;

/// A heat map of `values[row][col]` over a grid (`xs` columns, `ys` rows, bottom row
/// first), coloured from light (low) to dark red at `cap`; values at or above `cap`
/// are drawn dark blue, missing (NaN) values grey.
#[derive(Debug, Clone)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub xs: Vec<f64>,
    pub ys: Vec<f64>,
    pub values: Vec<Vec<f64>>,
    pub cap: f64,
}

/// Font size of the tick labels (px).
const TICK_FONT: f64 = 11.0;

/// A tick label: three significant digits, plain (`0.0234`, `1.62`, `195`), so labels
/// of logarithmically spaced cells stay short.
fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return "NaN".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    if digits > 6 || v.abs() >= 1e6 {
        return format!("{v:.2e}");
    }
    format!("{v:.digits$}")
}

/// Label every `k`-th cell, with `k` the smallest stride at which labels of width
/// `widths[i]` centred on cells `cell` apart leave a gap of at least 6 px.
fn stride(widths: &[f64], cell: f64) -> usize {
    let widest = widths.iter().copied().fold(0.0, f64::max);
    let need = widest + 6.0;
    ((need / cell.max(f64::MIN_POSITIVE)).ceil() as usize).max(1)
}

/// Linear interpolation through a few colour stops (t in [0, 1]).
fn ramp(t: f64) -> String {
    const STOPS: [(f64, [f64; 3]); 4] = [
        (0.0, [255.0, 255.0, 204.0]),
        (0.35, [254.0, 178.0, 76.0]),
        (0.7, [240.0, 59.0, 32.0]),
        (1.0, [128.0, 0.0, 38.0]),
    ];
    let t = t.clamp(0.0, 1.0);
    let i = STOPS.iter().rposition(|s| s.0 <= t).unwrap_or(0).min(2);
    let (t0, c0) = STOPS[i];
    let (t1, c1) = STOPS[i + 1];
    let u = (t - t0) / (t1 - t0);
    let c: Vec<u8> = (0..3)
        .map(|k| (c0[k] + u * (c1[k] - c0[k])).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

impl HeatMap {
    /// The labelled columns (index and label), for cells `cw` px wide.
    fn x_ticks(&self, cw: f64) -> Vec<(usize, String)> {
        let labels: Vec<String> = self.xs.iter().map(|&x| tick_label(x)).collect();
        let widths: Vec<f64> = labels.iter().map(|l| text_width(l, TICK_FONT)).collect();
        let k = stride(&widths, cw);
        labels.into_iter().enumerate().step_by(k).collect()
    }

    /// Renders the standalone SVG document.
    pub fn render(&self) -> String {
        let (left, right, top, bottom) = (
            MARGIN_LEFT,
            WIDTH - MARGIN_RIGHT,
            MARGIN_TOP,
            HEIGHT - MARGIN_BOTTOM,
        );
        let (nx, ny) = (self.xs.len().max(1), self.ys.len().max(1));
        let cw = (right - left - 60.0) / nx as f64;
        let ch = (bottom - top) / ny as f64;
        let finite: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v < self.cap)
            .collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let lo = if lo.is_finite() { lo } else { 0.0 };
        let mut s = String::new();
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"{FONT_FAMILY}\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
            num(WIDTH / 2.0),
            esc(&self.title)
        );
        for (r, row) in self.values.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                let fill = if !v.is_finite() {
                    "#bbbbbb".to_string()
                } else if v >= self.cap {
                    "#08306b".to_string()
                } else {
                    ramp((v - lo) / (self.cap - lo).max(f64::MIN_POSITIVE))
                };
                let x = left + c as f64 * cw;
                let y = bottom - (r + 1) as f64 * ch;
                let _ = writeln!(
                    s,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"><title>{} = {}, {} = {}: {}</title></rect>",
                    num(x),
                    num(y),
                    num(cw),
                    num(ch),
                    esc(&self.x_label),
                    fmt_num(self.xs.get(c).copied().unwrap_or(f64::NAN)),
                    esc(&self.y_label),
                    fmt_num(self.ys.get(r).copied().unwrap_or(f64::NAN)),
                    fmt_num(v)
                );
            }
        }
        // Tick labels as often as they fit without overlapping.
        for (c, label) in self.x_ticks(cw) {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                num(left + (c as f64 + 0.5) * cw),
                num(bottom + 14.0),
                esc(&label)
            );
        }
        let y_stride = stride(&vec![TICK_FONT; self.ys.len()], ch);
        for (r, y) in self.ys.iter().enumerate().step_by(y_stride) {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                num(left - 4.0),
                num(bottom - (r as f64 + 0.5) * ch + 4.0),
                esc(&tick_label(*y))
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n<text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>",
            num((left + right - 60.0) / 2.0),
            num(HEIGHT - 8.0),
            esc(&self.x_label),
            num((top + bottom) / 2.0),
            num((top + bottom) / 2.0),
            esc(&self.y_label)
        );
        // Colour bar.
        let bx = right - 40.0;
        for k in 0..20 {
            let t = k as f64 / 19.0;
            let _ = writeln!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"{}\"/>",
                num(bx),
                num(bottom - (k + 1) as f64 * (bottom - top) / 21.0),
                num((bottom - top) / 21.0),
                ramp(t)
            );
        }
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"#08306b\"/>\n<text x=\"{}\" y=\"{}\">{}</text>\n<text x=\"{}\" y=\"{}\">&gt;= {}</text>\n</svg>",
            num(bx),
            num(top),
            num((bottom - top) / 21.0),
            num(bx + 16.0),
            num(bottom),
            fmt_num(lo),
            num(bx - 20.0),
            num(top - 4.0),
            fmt_num(self.cap)
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logspace(a: f64, b: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 10f64.powf(a + (b - a) * i as f64 / (n - 1) as f64))
            .collect()
    }

    #[test]
    fn x_tick_labels_do_not_overlap() {
        for n in [3, 8, 15, 20, 40] {
            let hm = HeatMap {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                xs: logspace(-2.0, 1.5, n),
                ys: logspace(-1.5, 2.5, n),
                values: vec![vec![1.0; n]; n],
                cap: 1.6,
            };
            let cw = (WIDTH - MARGIN_RIGHT - MARGIN_LEFT - 60.0) / n as f64;
            let ticks = hm.x_ticks(cw);
            assert!(ticks.len() >= 2, "n = {n}: at least two labels");
            for w in ticks.windows(2) {
                let (c0, l0) = &w[0];
                let (c1, l1) = &w[1];
                let right = (*c0 as f64 + 0.5) * cw + text_width(l0, TICK_FONT) / 2.0;
                let left = (*c1 as f64 + 0.5) * cw - text_width(l1, TICK_FONT) / 2.0;
                assert!(right < left, "n = {n}: {l0} overlaps {l1}");
            }
            let svg = hm.render();
            assert_eq!(svg, hm.render());
            assert!(!svg.contains("NaN"));
        }
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.01), "0.0100");
        assert_eq!(tick_label(0.02336), "0.0234");
        assert_eq!(tick_label(1.624), "1.62");
        assert_eq!(tick_label(194.7), "195");
        assert_eq!(tick_label(0.0), "0");
    }
}
