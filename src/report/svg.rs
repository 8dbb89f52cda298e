//! SVG plots
