//! Reports: Markdown, CSV and SVG written atomically to `reports/`.
pub mod svg;
