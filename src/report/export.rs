//! PNG and PDF copies of the report's SVG figures (`dpclaims run --figures svg,png,pdf`).
//!
//! The SVG stays the source: usvg parses it once, resvg rasterises the tree (tiny-skia,
//! PNG at [`PNG_SCALE`] times the SVG's size, sharp enough for a slide) and svg2pdf
//! writes it as vector PDF. No renderer is hand-written here.
//!
//! Text is shaped with the one font shipped in `assets/fonts/` (DejaVu Sans; its licence
//! is beside it), loaded into an otherwise empty font database: the machine's installed
//! fonts are never read, so the PNG and PDF bytes are the same on every machine (STYLE:
//! same spec + seed ⇒ same bytes out). The SVGs name that family first
//! ([`super::svg::FONT_FAMILY`]), so a browser that has it draws the same glyphs.
//!
//! One face only, and no translucency in the figures: svg2pdf 0.13 keeps fonts and
//! graphics states in `HashMap`s and writes them in their (per-process random) order, so
//! two faces or two `fill-opacity` shapes give PDFs whose bytes differ from run to run.
//! Bold text (the titles) is drawn with the regular face in PNG and PDF.
//!
//! Written on request only (the default is `svg`): the committed `reports/` keeps small,
//! diffable text files, and a talk's figures are made with
//! `dpclaims run <claim> --figures svg,png,pdf --out <dir>`.
use std::sync::{Arc, OnceLock};

/// DejaVu Sans (Bitstream Vera licence, `assets/fonts/LICENSE`).
const FONT_REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The family name inside those files (what `font-family` must say).
pub const FONT_NAME: &str = "DejaVu Sans";

/// Pixels of the PNG per SVG pixel.
pub const PNG_SCALE: f32 = 2.0;

/// A figure format of `run --figures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum FigureFormat {
    /// `<id>.svg` (always written: the HTML pages show it).
    Svg,
    /// `<id>.png`, rendered from the SVG.
    Png,
    /// `<id>.pdf`, converted from the SVG.
    Pdf,
}

/// A figure that could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the SVG does not parse: {0}")]
    Parse(#[from] resvg::usvg::Error),
    #[error("the figure has an empty size")]
    EmptySize,
    #[error("PNG encoding failed: {0}")]
    Png(String),
    #[error("PDF conversion failed: {0}")]
    Pdf(String),
}

/// The parse options: the embedded font only, named as the SVGs name it.
fn options() -> &'static resvg::usvg::Options<'static> {
    static OPTIONS: OnceLock<resvg::usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(FONT_REGULAR.to_vec());
        // Generic families resolve to the same face, whatever the machine has.
        db.set_sans_serif_family(FONT_NAME);
        db.set_serif_family(FONT_NAME);
        db.set_monospace_family(FONT_NAME);
        resvg::usvg::Options {
            font_family: FONT_NAME.to_string(),
            fontdb: Arc::new(db),
            ..resvg::usvg::Options::default()
        }
    })
}

fn parse(svg: &str) -> Result<resvg::usvg::Tree, ExportError> {
    Ok(resvg::usvg::Tree::from_str(svg, options())?)
}

/// The SVG rendered to PNG at [`PNG_SCALE`], on its own (white) background.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, ExportError> {
    let tree = parse(svg)?;
    let size = tree.size().to_int_size().scale_by(PNG_SCALE);
    let size = size.ok_or(ExportError::EmptySize)?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or(ExportError::EmptySize)?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ExportError::Png(e.to_string()))
}

/// The SVG converted to a one-page vector PDF of the same size (at 96 px per inch).
pub fn svg_to_pdf(svg: &str) -> Result<Vec<u8>, ExportError> {
    let tree = parse(svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| ExportError::Pdf(e.to_string()))
}

/// The files of one figure `<stem>.svg` in the requested `formats` beyond SVG: (file
/// name, bytes), PNG before PDF.
pub fn exports(
    stem: &str,
    svg: &str,
    formats: &[FigureFormat],
) -> Result<Vec<(String, Vec<u8>)>, ExportError> {
    let mut out = Vec::new();
    if formats.contains(&FigureFormat::Png) {
        out.push((format!("{stem}.png"), svg_to_png(svg)?));
    }
    if formats.contains(&FigureFormat::Pdf) {
        out.push((format!("{stem}.pdf"), svg_to_pdf(svg)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40" font-family="DejaVu Sans, sans-serif"><rect width="120" height="40" fill="white"/><text x="4" y="26" font-size="14" font-weight="bold">sigma 10^2</text></svg>"#;

    #[test]
    fn the_font_database_holds_only_the_embedded_face() {
        let db = &options().fontdb;
        assert_eq!(db.len(), 1);
        assert!(db
            .faces()
            .all(|f| f.families.iter().any(|(name, _)| name == FONT_NAME)));
    }

    #[test]
    fn png_is_a_valid_png_with_the_same_bytes_on_every_render() {
        let a = svg_to_png(SVG).expect("renders");
        let b = svg_to_png(SVG).expect("renders");
        assert_eq!(a, b);
        assert!(a.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
        assert_eq!(&a[12..16], b"IHDR");
        let w = u32::from_be_bytes(a[16..20].try_into().expect("4 bytes"));
        let h = u32::from_be_bytes(a[20..24].try_into().expect("4 bytes"));
        assert_eq!((w, h), (240, 80), "PNG_SCALE times the SVG's size");
    }

    #[test]
    fn pdf_is_a_pdf_with_the_same_bytes_on_every_conversion() {
        let a = svg_to_pdf(SVG).expect("converts");
        assert!(a.starts_with(b"%PDF-"));
        assert_eq!(a, svg_to_pdf(SVG).expect("converts"));
        // The font is embedded (subset), not referenced by name.
        assert!(a.windows(9).any(|w| w == b"FontFile2"), "no embedded font");
    }

    #[test]
    fn exports_follow_the_requested_formats() {
        assert!(exports("x", SVG, &[FigureFormat::Svg])
            .expect("ok")
            .is_empty());
        let names: Vec<String> = exports("x", SVG, &[FigureFormat::Pdf, FigureFormat::Png])
            .expect("ok")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["x.png", "x.pdf"]);
        assert!(svg_to_png("<svg").is_err());
    }

    #[test]
    fn text_is_drawn_with_the_embedded_font() {
        // A face was found: the text became paths, so the PNG is not blank.
        let tree = parse(SVG).expect("parses");
        assert!(tree.root().has_children());
        let png = svg_to_png(SVG).expect("renders");
        let blank = svg_to_png(&SVG.replace("sigma 10^2", "")).expect("renders");
        assert_ne!(png, blank, "the text left no pixels");
    }
}
