//! SVG plots: a deterministic log-log (or linear) scatter plot with error bars and
//! fitted / predicted lines.
//!
//! The output is a standalone SVG document of [`WIDTH`] × [`HEIGHT`] pixels. It is a pure
//! function of the plot: series and lines are drawn in the order given, the data are
//! first rounded to 6 significant digits (`report::number`: the kernels' last bits do not
//! move an axis or a coordinate), every number is written with a fixed number of decimals (coordinates with 2, tick labels with a
//! precision derived from the tick step), and nothing depends on time, locale, hashing
//! or the platform, so the bytes are identical across runs (STYLE: same spec + seed ⇒
//! same bytes out).
//!
//! Points that cannot be drawn on the chosen axes (non-finite, or non-positive on a
//! logarithmic axis) are skipped and listed in the document's `<desc>`.
//!
//! Hand-written rather than `plotters` (0.3.7, SVG backend), measured on the same
//! log-log panel: both give identical bytes across 2000 runs and across threads, and
//! take about the same time (150–180 µs a panel, under 10 ms for the whole suite); but
//! plotters' defaults cut the y tick labels (its naive text metrics size the label
//! area), write decimals instead of `10^k`, and put the legend over the data, so matching
//! this output would take as much custom code as this module, and would change every
//! committed plot for no gain.

#![deny(clippy::float_cmp)]

mod axis;
mod legend;
mod strip;

pub use strip::{KeyStrip, STRIP_HEIGHT, STRIP_WIDTH};

#[cfg(test)]
use axis::nice_step;
use axis::{tick_text, Axis};
pub(crate) use legend::text_width;
use std::fmt::Write as _;

/// The font family every figure names: the one embedded for the PNG and PDF copies
/// ([`super::export`]), then the generic family for a browser that lacks it.
pub const FONT_FAMILY: &str = "DejaVu Sans, sans-serif";

/// Width of the SVG in pixels.
pub const WIDTH: f64 = 720.0;
/// Height of the SVG in pixels.
pub const HEIGHT: f64 = 420.0;

pub(crate) const MARGIN_LEFT: f64 = 72.0;
pub(crate) const MARGIN_RIGHT: f64 = 176.0;
pub(crate) const MARGIN_TOP: f64 = 52.0;
pub(crate) const MARGIN_BOTTOM: f64 = 56.0;

/// Colour-blind-safe palette (Okabe & Ito, 2008), then a few extra distinct colours;
/// series take the first colours, lines the next ones, cycling if there are more.
const PALETTE: [&str; 10] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    "#7F3C8D", "#8C564B",
];

/// Number of line samples when a line is not straight on the chosen axes.
const CURVE_SAMPLES: usize = 64;

/// A scatter plot with vertical error bars and straight lines `ln y = a + b ln x`.
#[derive(Debug, Clone)]
pub struct LogLogPlot {
    /// Title at the top.
    pub title: String,
    /// A smaller line under the title (empty: none).
    pub subtitle: String,
    /// Label of the horizontal axis.
    pub x_label: String,
    /// Label of the vertical axis.
    pub y_label: String,
    /// Data series, drawn in order.
    pub series: Vec<Series>,
    /// Power-law lines, drawn in order across the x range of the data.
    pub lines: Vec<Line>,
    /// Shaded regions between two power laws (a tolerance or a confidence band), drawn
    /// under everything else and clipped to the plot: they do not widen the axes.
    pub bands: Vec<Band>,
    /// Polylines through given points (a threshold, a right-hand side), included in the
    /// axis ranges.
    pub curves: Vec<Curve>,
    /// Logarithmic x axis (default true).
    pub log_x: bool,
    /// Logarithmic y axis (default true).
    pub log_y: bool,
}

impl Default for LogLogPlot {
    fn default() -> Self {
        LogLogPlot {
            title: String::new(),
            subtitle: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            series: Vec::new(),
            lines: Vec::new(),
            bands: Vec::new(),
            curves: Vec::new(),
            log_x: true,
            log_y: true,
        }
    }
}

/// One data series: points `(x, y, y_lo, y_hi)`, the error bar spanning `y_lo..y_hi`.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// `(x, y, y_lo, y_hi)` for each point.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Hollow markers (a negative control: visibly not the series being judged).
    pub hollow: bool,
    /// Marker colour; `None`: the palette colour of the series' index.
    pub colour: Option<&'static str>,
}

/// The region between two power laws `ln y = intercept + slope · ln x` over the x range
/// of the data; when both pass through one point it is a bow tie (a range of slopes).
#[derive(Debug, Clone, Default)]
pub struct Band {
    /// Legend label.
    pub label: String,
    /// `(slope, intercept)` of the two edges.
    pub edges: [(f64, f64); 2],
    /// Colour, drawn as its tint at [`Band::opacity`] over white ([`tint`]).
    pub colour: &'static str,
    /// Strength of the tint (0: white, 1: the colour).
    pub opacity: f64,
}

/// A polyline through data points `(x, y)` (not extended beyond them).
#[derive(Debug, Clone, Default)]
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Stroke colour.
    pub colour: &'static str,
    /// Dash pattern (`stroke-dasharray`), or none for a solid stroke.
    pub dash: Option<&'static str>,
    /// Stroke width (px).
    pub width: f64,
}

/// The colour of series `i` (lines of a series take it too).
pub fn series_colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A point marker: a filled circle, or a hollow one (white inside, coloured ring).
pub(crate) fn marker(cx: f64, cy: f64, colour: &str, hollow: bool) -> String {
    if hollow {
        format!(
            r#"<circle cx="{}" cy="{}" r="3.5" fill="white" stroke="{colour}" stroke-width="1.5"/>"#,
            num(cx),
            num(cy)
        )
    } else {
        format!(
            r#"<circle cx="{}" cy="{}" r="3" fill="{colour}"/>"#,
            num(cx),
            num(cy)
        )
    }
}

/// A power law `ln y = intercept + slope · ln x` (a straight line on log-log axes).
#[derive(Debug, Clone, Default)]
pub struct Line {
    /// Legend label.
    pub label: String,
    /// Exponent.
    pub slope: f64,
    /// `ln` of the prefactor.
    pub intercept: f64,
    /// Dashed stroke (e.g. for a predicted rather than fitted line).
    pub dashed: bool,
    /// Stroke colour (e.g. [`series_colour`] of the series it fits); `None`: the next
    /// palette colour after the series' colours.
    pub colour: Option<&'static str>,
    /// A wider stroke (2 px instead of 1.5), drawn last, over the other lines.
    pub bold: bool,
}

/// `colour` (`#RRGGBB`) mixed with white: `strength` of the colour, the rest white. Bands
/// are opaque tints rather than `fill-opacity`: svg2pdf writes one graphics state per
/// translucent shape and lists them in a `HashMap`'s order, so the PDF's bytes would
/// change from one process to the next ([`super::export`]).
pub fn tint(colour: &str, strength: f64) -> String {
    let v = u32::from_str_radix(colour.trim_start_matches('#'), 16).unwrap_or(0);
    let a = strength.clamp(0.0, 1.0);
    let mix = |c: u32| (255.0 - a * (255.0 - f64::from(c & 255))).round() as u8;
    format!("#{:02X}{:02X}{:02X}", mix(v >> 16), mix(v >> 8), mix(v))
}

/// `text` at the largest font size in `[min, max]` (px) at which its estimated width
/// ([`text_width`] times `widen`, e.g. for bold) fits `room`; cut with "…" if even `min`
/// is too large.
pub(crate) fn fit_text(text: &str, max: f64, min: f64, room: f64, widen: f64) -> (String, f64) {
    let at = |size: f64, t: &str| text_width(t, size * widen);
    if at(max, text) <= room {
        return (text.to_string(), max);
    }
    let size = (max * room / at(max, text)).max(min);
    let size = (size * 2.0).floor() / 2.0;
    if at(size, text) <= room {
        return (text.to_string(), size);
    }
    let keep = ((room / (0.62 * size * widen)) as usize).saturating_sub(1);
    let cut: String = text.chars().take(keep).collect();
    (format!("{}…", cut.trim_end()), size)
}

/// Formats a coordinate with exactly two decimals, never as `-0.00`.
/// The `points` attribute of a polyline through `pts` (data coordinates).
fn polyline_points(pts: &[(f64, f64)], x_axis: &Axis, y_axis: &Axis) -> String {
    pts.iter()
        .map(|&(x, y)| format!("{},{}", num(x_axis.px(x)), num(y_axis.px(y))))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn num(v: f64) -> String {
    let s = format!("{v:.2}");
    if s == "-0.00" {
        "0.00".to_string()
    } else {
        s
    }
}

/// Escapes text for XML content and attribute values; a character XML 1.0 cannot hold
/// (a control character other than tab, newline and carriage return — a form feed in a
/// spec's `labels:` —, U+FFFE, U+FFFF) becomes U+FFFD, so every SVG parses as XML.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            _ => out.push(c),
        }
    }
    out
}

impl LogLogPlot {
    /// A plot with log-log axes and no data yet.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        LogLogPlot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..LogLogPlot::default()
        }
    }

    /// Width of the rendered SVG: [`WIDTH`], or more when the legend needs it.
    pub fn width(&self) -> f64 {
        let b = self.legend_box(WIDTH - MARGIN_RIGHT + 12.0, MARGIN_TOP);
        WIDTH.max((b.x + b.w).ceil())
    }

    /// Colour, stroke width and dash attribute of line `j`.
    fn line_style(&self, j: usize) -> (&'static str, &'static str, &'static str) {
        let l = &self.lines[j];
        let colour = l
            .colour
            .unwrap_or(PALETTE[(self.series.len() + j) % PALETTE.len()]);
        let width = if l.bold { "2" } else { "1.5" };
        let dash = if l.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        (colour, width, dash)
    }

    /// The marker colour of series `i`.
    pub(crate) fn series_colour_of(&self, i: usize) -> &'static str {
        self.series[i].colour.unwrap_or(PALETTE[i % PALETTE.len()])
    }

    fn drawable(&self, v: f64, log: bool) -> bool {
        v.is_finite() && (!log || v > 0.0)
    }

    /// Renders the standalone SVG document, from its numbers rounded to 6 significant
    /// digits ([`super::number::round`]: a value below 1e-12 at the floor), so that the
    /// axes, the coordinates and the `<desc>` are the same whichever BLAS kernels
    /// computed the data.
    pub fn render(&self) -> String {
        self.rounded().draw()
    }

    /// This plot with every data number (points, error bars, lines, bands, curves)
    /// rounded by [`super::number::round`].
    fn rounded(&self) -> LogLogPlot {
        let r = super::number::round;
        let mut p = self.clone();
        for s in &mut p.series {
            for pt in &mut s.points {
                *pt = (r(pt.0), r(pt.1), r(pt.2), r(pt.3));
            }
        }
        for l in &mut p.lines {
            l.slope = r(l.slope);
            l.intercept = r(l.intercept);
        }
        for b in &mut p.bands {
            for e in &mut b.edges {
                *e = (r(e.0), r(e.1));
            }
        }
        for c in &mut p.curves {
            for pt in &mut c.points {
                *pt = (r(pt.0), r(pt.1));
            }
        }
        p
    }

    /// Renders the standalone SVG document from the numbers as they are.
    fn draw(&self) -> String {
        let plot_left = MARGIN_LEFT;
        let plot_right = WIDTH - MARGIN_RIGHT;
        let plot_top = MARGIN_TOP;
        let plot_bottom = HEIGHT - MARGIN_BOTTOM;

        // Which points are drawable; the rest are reported in <desc>.
        let mut skipped: Vec<String> = Vec::new();
        let mut kept: Vec<Vec<(f64, f64, f64, f64)>> = Vec::with_capacity(self.series.len());
        for s in &self.series {
            let mut pts = Vec::new();
            for (i, &(x, y, lo, hi)) in s.points.iter().enumerate() {
                if self.drawable(x, self.log_x) && self.drawable(y, self.log_y) {
                    pts.push((x, y, lo, hi));
                } else {
                    skipped.push(format!(
                        "series '{}' point {i} (x = {x:e}, y = {y:e})",
                        s.label
                    ));
                }
            }
            kept.push(pts);
        }

        // Axis ranges: points and the drawable ends of their error bars; lines are
        // drawn across the x range and included in the y range.
        let curve_points: Vec<Vec<(f64, f64)>> = self
            .curves
            .iter()
            .map(|c| {
                c.points
                    .iter()
                    .copied()
                    .filter(|&(x, y)| self.drawable(x, self.log_x) && self.drawable(y, self.log_y))
                    .collect()
            })
            .collect();
        let mut xs: Vec<f64> = kept.iter().flatten().map(|p| p.0).collect();
        xs.extend(curve_points.iter().flatten().map(|p| p.0));
        let x_axis = Axis::new(self.log_x, &xs, plot_left, plot_right);
        let mut ys: Vec<f64> = Vec::new();
        for &(_, y, lo, hi) in kept.iter().flatten() {
            ys.push(y);
            ys.extend(
                [lo, hi]
                    .into_iter()
                    .filter(|&v| self.drawable(v, self.log_y)),
            );
        }
        let (x_min, x_max) = if xs.is_empty() {
            x_axis.value_range()
        } else {
            xs.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                })
        };
        let line_points: Vec<Vec<(f64, f64)>> = self
            .lines
            .iter()
            .map(|l| self.line_samples(l, x_min, x_max))
            .collect();
        ys.extend(line_points.iter().flatten().map(|p| p.1));
        ys.extend(curve_points.iter().flatten().map(|p| p.1));
        let y_axis = Axis::new(self.log_y, &ys, plot_bottom, plot_top);

        let width = self.width();
        let mut svg = String::new();
        // `write!` to a String cannot fail; the results are ignored on purpose.
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}" font-size="12">"#,
            w = width,
            h = HEIGHT
        );
        let _ = writeln!(svg, "<title>{}</title>", esc(&self.title));
        if !skipped.is_empty() {
            let _ = writeln!(
                svg,
                "<desc>skipped {} point(s) not drawable on these axes (non-finite, or non-positive on a log axis): {}</desc>",
                skipped.len(),
                esc(&skipped.join("; "))
            );
        }
        let _ = writeln!(
            svg,
            r#"<rect x="0" y="0" width="{}" height="{}" fill="white"/>"#,
            width, HEIGHT
        );
        let _ = writeln!(
            svg,
            r#"<defs><clipPath id="plot-area"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
            num(plot_left),
            num(plot_top),
            num(plot_right - plot_left),
            num(plot_bottom - plot_top)
        );

        self.draw_axes(
            &mut svg,
            &x_axis,
            &y_axis,
            (plot_left, plot_right, plot_top, plot_bottom),
        );

        // Bands under everything; then curves and lines, so points are drawn on top; bold
        // lines after the others.
        let _ = writeln!(svg, r#"<g clip-path="url(#plot-area)">"#);
        for b in &self.bands {
            let [lo, hi] = b.edges.map(|(slope, intercept)| {
                self.line_samples(
                    &Line {
                        slope,
                        intercept,
                        ..Line::default()
                    },
                    x_min,
                    x_max,
                )
            });
            if lo.len() < 2 || hi.len() < 2 {
                continue;
            }
            let coords: Vec<String> = lo
                .iter()
                .chain(hi.iter().rev())
                .map(|&(x, y)| format!("{},{}", num(x_axis.px(x)), num(y_axis.px(y))))
                .collect();
            // Opaque: a later band covers an earlier one, so the edges are drawn too.
            let _ = writeln!(
                svg,
                r#"<polygon points="{}" fill="{}" stroke="{}" stroke-width="0.75"/>"#,
                coords.join(" "),
                tint(b.colour, b.opacity),
                tint(b.colour, (2.0 * b.opacity).min(1.0))
            );
        }
        let _ = writeln!(svg, "</g>");
        let _ = writeln!(svg, r#"<g clip-path="url(#plot-area)" fill="none">"#);
        for (c, pts) in self.curves.iter().zip(&curve_points) {
            if pts.len() < 2 {
                continue;
            }
            let dash = c
                .dash
                .map(|d| format!(r#" stroke-dasharray="{d}""#))
                .unwrap_or_default();
            let points = polyline_points(pts, &x_axis, &y_axis);
            let _ = writeln!(
                svg,
                r#"<polyline points="{points}" stroke="{}" stroke-width="{}"{dash}/>"#,
                c.colour,
                num(c.width),
            );
        }
        let order = (0..self.lines.len())
            .filter(|&j| !self.lines[j].bold)
            .chain((0..self.lines.len()).filter(|&j| self.lines[j].bold));
        for j in order {
            let pts = &line_points[j];
            if pts.len() < 2 {
                continue;
            }
            let (colour, width, dash) = self.line_style(j);
            let points = polyline_points(pts, &x_axis, &y_axis);
            let _ = writeln!(
                svg,
                r#"<polyline points="{points}" stroke="{colour}" stroke-width="{width}"{dash}/>"#,
            );
        }
        let _ = writeln!(svg, "</g>");

        // Points are not clipped: the axis ranges contain every drawn point and bar end,
        // and a point on the frame (e.g. x = 100 on a decade axis) stays whole.
        let _ = writeln!(svg, "<g>");
        for (i, pts) in kept.iter().enumerate() {
            let colour = self.series_colour_of(i);
            let hollow = self.series[i].hollow;
            for &(x, y, lo, hi) in pts {
                let px = x_axis.px(x);
                let py = y_axis.px(y);
                // A non-finite error-bar end collapses onto the point; a finite end that
                // is not drawable (non-positive on a log axis) runs to the plot edge.
                let end = |v: f64, edge: f64| {
                    if !v.is_finite() {
                        py
                    } else if self.drawable(v, self.log_y) {
                        y_axis.px(v)
                    } else {
                        edge
                    }
                };
                let (b_lo, b_hi) = (end(lo, plot_bottom), end(hi, plot_top));
                if (b_lo - b_hi).abs() > 0.5 {
                    let _ = writeln!(
                        svg,
                        r#"<path d="M{a},{lo}V{hi}M{l},{lo}H{r}M{l},{hi}H{r}" stroke="{colour}" stroke-width="1" fill="none"/>"#,
                        a = num(px),
                        lo = num(b_lo),
                        hi = num(b_hi),
                        l = num(px - 3.0),
                        r = num(px + 3.0)
                    );
                }
                let _ = writeln!(svg, "{}", marker(px, py, colour, hollow));
            }
        }
        let _ = writeln!(svg, "</g>");

        self.draw_legend(&mut svg, plot_right + 12.0, plot_top);
        svg.push_str("</svg>\n");
        svg
    }

    /// Samples of a line over `[x_min, x_max]`: the two ends on log-log axes (where the
    /// power law is straight), otherwise [`CURVE_SAMPLES`] points, evenly spaced in
    /// the x axis' own scale. Samples not drawable on the y axis are dropped.
    fn line_samples(&self, line: &Line, x_min: f64, x_max: f64) -> Vec<(f64, f64)> {
        let n = if self.log_x && self.log_y {
            2
        } else {
            CURVE_SAMPLES
        };
        (0..n)
            .map(|i| {
                let t = i as f64 / (n - 1) as f64;
                let x = if self.log_x {
                    (x_min.ln() + t * (x_max.ln() - x_min.ln())).exp()
                } else {
                    x_min + t * (x_max - x_min)
                };
                (x, (line.intercept + line.slope * x.ln()).exp())
            })
            .filter(|&(x, y)| self.drawable(x, self.log_x) && self.drawable(y, self.log_y))
            .collect()
    }

    fn draw_axes(
        &self,
        svg: &mut String,
        x_axis: &Axis,
        y_axis: &Axis,
        frame: (f64, f64, f64, f64),
    ) {
        let (left, right, top, bottom) = frame;
        let _ = writeln!(
            svg,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444" stroke-width="1"/>"##,
            num(left),
            num(top),
            num(right - left),
            num(bottom - top)
        );
        let _ = writeln!(svg, r##"<g stroke="#444" stroke-width="1">"##);
        for t in x_axis.ticks() {
            let px = num(x_axis.tick_px(t.at));
            let len = if t.major { 6.0 } else { 3.0 };
            let _ = writeln!(
                svg,
                r#"<line x1="{px}" y1="{}" x2="{px}" y2="{}"/>"#,
                num(bottom),
                num(bottom - len)
            );
            if t.major {
                let _ = writeln!(
                    svg,
                    r##"<line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="#ddd"/>"##,
                    num(top),
                    num(bottom - len)
                );
            }
        }
        for t in y_axis.ticks() {
            let py = num(y_axis.tick_px(t.at));
            let len = if t.major { 6.0 } else { 3.0 };
            let _ = writeln!(
                svg,
                r#"<line x1="{}" y1="{py}" x2="{}" y2="{py}"/>"#,
                num(left),
                num(left + len)
            );
            if t.major {
                let _ = writeln!(
                    svg,
                    r##"<line x1="{}" y1="{py}" x2="{}" y2="{py}" stroke="#ddd"/>"##,
                    num(left + len),
                    num(right)
                );
            }
        }
        let _ = writeln!(svg, "</g>");

        let _ = writeln!(svg, r##"<g fill="#222">"##);
        for t in x_axis.ticks() {
            if let Some(label) = t.label {
                let px = num(x_axis.tick_px(t.at));
                let _ = writeln!(
                    svg,
                    r#"<text x="{px}" y="{}" text-anchor="middle">{}</text>"#,
                    num(bottom + 18.0),
                    tick_text(&label)
                );
            }
        }
        for t in y_axis.ticks() {
            if let Some(label) = t.label {
                let py = num(y_axis.tick_px(t.at) + 4.0);
                let _ = writeln!(
                    svg,
                    r#"<text x="{}" y="{py}" text-anchor="end">{}</text>"#,
                    num(left - 6.0),
                    tick_text(&label)
                );
            }
        }
        // The title fits the figure's width: a smaller font (down to 10 px), then cut.
        let room = self.width() - 8.0;
        let (title, size) = fit_text(&self.title, 14.0, 10.0, room, 15.5 / 14.0);
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="{}" font-weight="bold">{}</text>"#,
            // Centred over the plot area, unless that would cut the title at an edge.
            num(((left + right) / 2.0)
                .max(text_width(&title, size * 15.5 / 14.0) / 2.0 + 4.0)
                .min(self.width() - text_width(&title, size * 15.5 / 14.0) / 2.0 - 4.0)),
            num(22.0),
            num(size),
            esc(&title)
        );
        if !self.subtitle.is_empty() {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="#555">{}</text>"##,
                num(((left + right) / 2.0).max(text_width(&self.subtitle, 11.0) / 2.0 + 4.0)),
                num(40.0),
                esc(&self.subtitle)
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            num((left + right) / 2.0),
            num(HEIGHT - 14.0),
            esc(&self.x_label)
        );
        let cy = (top + bottom) / 2.0;
        let _ = writeln!(
            svg,
            r#"<text x="{x}" y="{y}" text-anchor="middle" transform="rotate(-90 {x} {y})">{}</text>"#,
            esc(&self.y_label),
            x = num(18.0),
            y = num(cy)
        );
        let _ = writeln!(svg, "</g>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LogLogPlot {
        let points: Vec<(f64, f64, f64, f64)> = (0..6)
            .map(|k| {
                let x = 10f64 * 2f64.powi(k);
                let y = 3.0 * x.powf(-0.5);
                (x, y, 0.9 * y, 1.1 * y)
            })
            .collect();
        LogLogPlot {
            title: "excess risk <DP-GD> & friends".into(),
            x_label: "n".into(),
            y_label: "risk".into(),
            series: vec![
                Series {
                    label: "measured".into(),
                    points: points.clone(),
                    hollow: false,
                    colour: None,
                },
                Series {
                    label: "baseline".into(),
                    points: points
                        .iter()
                        .map(|p| (p.0, 2.0 * p.1, 2.0 * p.2, 2.0 * p.3))
                        .collect(),
                    hollow: true,
                    colour: None,
                },
            ],
            lines: vec![
                Line {
                    label: "fit: slope -0.50".into(),
                    slope: -0.5,
                    intercept: 3f64.ln(),
                    dashed: false,
                    ..Line::default()
                },
                Line {
                    label: "predicted".into(),
                    slope: -0.5,
                    intercept: 2f64.ln(),
                    dashed: true,
                    ..Line::default()
                },
            ],
            ..LogLogPlot::default()
        }
    }

    #[test]
    fn text_xml_cannot_hold_is_replaced_and_the_svg_parses() {
        assert_eq!(
            esc("a\u{c}b\u{0}\u{FFFE}\t]]>"),
            "a\u{FFFD}b\u{FFFD}\u{FFFD}\t]]&gt;"
        );
        let plot = LogLogPlot {
            title: "t\u{c}<script>".into(),
            x_label: "n\u{1b}[31m".into(),
            ..sample()
        };
        let svg = plot.render();
        roxmltree::Document::parse(&svg).expect("well-formed SVG");
    }

    #[test]
    fn rendering_is_deterministic() {
        let plot = sample();
        let a = plot.render();
        let b = plot.clone().render();
        assert_eq!(a, b);
        assert!(a.starts_with("<svg"));
        assert!(a.trim_end().ends_with("</svg>"));
        for label in ["measured", "baseline", "fit: slope -0.50", "predicted"] {
            assert!(a.contains(label), "missing {label}");
        }
        assert!(a.contains("excess risk &lt;DP-GD&gt; &amp; friends"));
        assert!(a.contains("stroke-dasharray"));
        assert!(!a.contains("<desc>"));
        // x spans 10..320, a decade and a half: plain 1-2-5 labels, no powers.
        for label in [">20</text>", ">50</text>", ">100</text>", ">200</text>"] {
            assert!(a.contains(label), "missing x label {label}");
        }
        assert!(!a.contains("tspan"));
        // Three decades or more: `10^k` labels.
        let mut wide = plot.clone();
        wide.series[0].points.push((1e4, 1e-2, 1e-2, 1e-2));
        let w = wide.render();
        assert!(
            w.contains(r#"10<tspan dy="-6" font-size="9">2</tspan>"#),
            "{w}"
        );
        assert!(!a.contains("NaN") && !a.contains("inf"));
    }

    #[test]
    fn non_positive_points_are_skipped_and_noted() {
        let mut plot = sample();
        plot.series[0].points.push((0.0, 1.0, 0.5, 1.5));
        plot.series[0].points.push((100.0, -1.0, -2.0, 0.0));
        plot.series[1].points.push((100.0, f64::NAN, 0.0, 1.0));
        plot.series[1].points.push((100.0, 0.2, -1.0, 0.3));
        let svg = plot.render();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("<desc>skipped 3 point(s)"), "{svg}");
        assert!(svg.contains("y = NaN"), "{svg}");
        // Only the description mentions the NaN; no coordinate is NaN or infinite.
        let drawing = svg.split("</desc>").nth(1).unwrap_or_default();
        assert!(!drawing.contains("NaN") && !drawing.contains("inf"));
    }

    #[test]
    fn empty_and_degenerate_plots_render() {
        let empty = LogLogPlot::new("empty", "x", "y");
        let svg = empty.render();
        assert!(svg.starts_with("<svg") && !svg.contains("NaN"));
        let single = LogLogPlot {
            series: vec![Series {
                label: "one".into(),
                points: vec![(5.0, 5.0, 5.0, 5.0)],
                hollow: false,
                colour: None,
            }],
            lines: vec![Line {
                label: "flat".into(),
                slope: 0.0,
                intercept: 0.0,
                dashed: false,
                ..Line::default()
            }],
            ..LogLogPlot::default()
        };
        let svg = single.render();
        assert!(svg.contains("one") && !svg.contains("NaN"));
    }

    #[test]
    fn linear_axes_variant() {
        let mut plot = sample();
        plot.log_x = false;
        plot.log_y = false;
        plot.series[0].points.push((5.0, -1.0, -1.5, -0.5));
        let svg = plot.render();
        assert_eq!(svg, plot.render());
        assert!(
            !svg.contains("<desc>"),
            "negative y is drawable on a linear axis"
        );
        assert!(!svg.contains("tspan"), "no power labels on linear axes");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn the_legend_lies_inside_the_view_box_whatever_the_label_length() {
        for extra in [0, 20, 60] {
            let mut plot = sample();
            plot.series[1].label = format!("tp-topk-noise-for-twice-epsilon{}", "x".repeat(extra));
            plot.series[1].hollow = true;
            let svg = plot.render();
            let width = plot.width();
            assert!(svg.contains(&format!(r#"viewBox="0 0 {width} {HEIGHT}""#)));
            let b = plot.legend_box(WIDTH - MARGIN_RIGHT + 12.0, MARGIN_TOP);
            assert!(
                b.x + b.w <= width && b.y + b.h <= HEIGHT,
                "{b:?} in {width}"
            );
            assert!(
                svg.contains(r##"fill="white" stroke="#D55E00""##),
                "hollow marker"
            );
        }
        assert!(
            (sample().width() - WIDTH).abs() < 1e-9,
            "short labels keep the width"
        );
    }

    #[test]
    fn bands_and_curves_are_drawn_and_in_the_legend() {
        let mut plot = sample();
        plot.bands.push(Band {
            label: "predicted ± tolerance".into(),
            edges: [(-0.6, 3f64.ln()), (-0.4, 3f64.ln())],
            colour: "#999999",
            opacity: 0.3,
        });
        plot.curves.push(Curve {
            label: "threshold".into(),
            points: vec![(10.0, 0.5), (320.0, 0.5)],
            colour: "#B2182B",
            dash: Some("6 3"),
            width: 2.0,
        });
        let svg = plot.render();
        assert!(
            svg.contains(r##"<polygon points=""##)
                && svg.contains(r##"fill="#E0E0E0" stroke="#C2C2C2""##),
            "{svg}"
        );
        assert!(
            !svg.contains("opacity"),
            "opaque tints only (deterministic PDF)"
        );
        assert_eq!(tint("#0072B2", 0.0), "#FFFFFF");
        assert_eq!(tint("#0072B2", 1.0), "#0072B2");
        assert!(svg.contains(r##"stroke="#B2182B" stroke-width="2.00" stroke-dasharray="6 3""##));
        assert!(svg.contains(">predicted ± tolerance</text>") && svg.contains(">threshold</text>"));
        assert!(svg.contains(&format!(r#"font-family="{FONT_FAMILY}""#)));
    }

    #[test]
    fn a_long_title_is_shrunk_then_cut_to_the_figure() {
        let (t, size) = fit_text("short", 14.0, 10.0, 600.0, 1.0);
        assert_eq!((t.as_str(), size), ("short", 14.0));
        let long = "x".repeat(80);
        let (t, size) = fit_text(&long, 14.0, 10.0, 600.0, 1.0);
        assert!((10.0..14.0).contains(&size) && t == long);
        let (t, size) = fit_text(&"x".repeat(200), 14.0, 10.0, 600.0, 1.0);
        assert!((size - 10.0).abs() < 1e-9 && t.ends_with('…'));
        assert!(text_width(&t, size) <= 600.0);
    }

    #[test]
    fn helpers() {
        assert_eq!(num(-0.001), "0.00");
        assert_eq!(num(1.005), "1.00");
        assert_eq!(num(-2.5), "-2.50");
        assert!((nice_step(10.0) - 2.0).abs() < 1e-12);
        assert!((nice_step(0.7) - 0.2).abs() < 1e-12);
        assert!((nice_step(0.0) - 1.0).abs() < 1e-12);
    }
}
