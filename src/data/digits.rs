//! The 8x8 handwritten digits data set (1797 images, 64 features, 10 classes), shipped
//! with the crate.
//!
//! The bytes of `src/data/digits.csv.gz` are scikit-learn's bundled copy
//! (`sklearn/datasets/data/digits.csv.gz`, BSD-3-Clause; provenance, sha256 and licence
//! text in `src/data/DIGITS-LICENSE.md`). They are compiled into the binary with
//! `include_bytes!`, so nothing is downloaded at run time. Each CSV line holds 64 pixel
//! counts in `0..=16` followed by the label `0..=9`; [`load`] scales the pixels to
//! `[0, 1]` (division by 16) and checks every field.
//!
//! [`Digits::split`] gives a deterministic train/test split from a generator (a
//! Fisher-Yates permutation drawn with `random_range`, documented draw order).
use flate2::read::GzDecoder;
use ndarray::{Array2, Axis};
use rand::{Rng, RngExt};
use std::io::Read;

/// The gzip-compressed CSV, as shipped by scikit-learn (see `DIGITS-LICENSE.md`).
const DIGITS_GZ: &[u8] = include_bytes!("digits.csv.gz");

/// Number of images.
pub const N_SAMPLES: usize = 1797;
/// Number of features (8 x 8 pixels).
pub const N_FEATURES: usize = 64;
/// Number of classes (digits 0-9).
pub const N_CLASSES: usize = 10;
/// Largest pixel count (4 x 4 blocks of a 32 x 32 bitmap).
const PIXEL_MAX: f64 = 16.0;

/// What can go wrong when decoding the shipped file or splitting it.
#[derive(Debug, thiserror::Error)]
pub enum DigitsError {
    #[error("digits.csv.gz: gzip decoding failed: {0}")]
    Gzip(String),
    #[error("digits.csv.gz line {line}: {what}")]
    Parse { line: usize, what: String },
    #[error("digits.csv.gz: expected {expected} rows, found {found}")]
    RowCount { expected: usize, found: usize },
    #[error("test fraction must be in (0, 1) and leave both parts non-empty, got {0}")]
    TestFraction(f64),
}

/// The whole data set: `x` is 1797 x 64 with entries in `[0, 1]`, `labels` in `0..10`.
#[derive(Clone, Debug)]
pub struct Digits {
    pub x: Array2<f64>,
    pub labels: Vec<usize>,
}

/// A train/test split of labelled rows.
#[derive(Clone, Debug)]
pub struct Split {
    pub train_x: Array2<f64>,
    pub train_labels: Vec<usize>,
    pub test_x: Array2<f64>,
    pub test_labels: Vec<usize>,
}

/// Decode and parse the shipped file (pixels scaled to `[0, 1]`).
pub fn load() -> Result<Digits, DigitsError> {
    let mut text = String::new();
    GzDecoder::new(DIGITS_GZ)
        .read_to_string(&mut text)
        .map_err(|e| DigitsError::Gzip(e.to_string()))?;
    parse_csv(&text)
}

/// Parse the CSV text: 65 comma-separated integers per non-empty line.
pub fn parse_csv(text: &str) -> Result<Digits, DigitsError> {
    let mut values = Vec::with_capacity(N_SAMPLES * N_FEATURES);
    let mut labels = Vec::with_capacity(N_SAMPLES);
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let fields: Vec<&str> = raw.split(',').collect();
        if fields.len() != N_FEATURES + 1 {
            return Err(DigitsError::Parse {
                line,
                what: format!("expected {} fields, found {}", N_FEATURES + 1, fields.len()),
            });
        }
        for (j, f) in fields.iter().enumerate() {
            let v: u32 = f.trim().parse().map_err(|_| DigitsError::Parse {
                line,
                what: format!("field {} is not a non-negative integer: `{f}`", j + 1),
            })?;
            if j < N_FEATURES {
                if f64::from(v) > PIXEL_MAX {
                    return Err(DigitsError::Parse {
                        line,
                        what: format!("pixel {} = {v} exceeds {PIXEL_MAX}", j + 1),
                    });
                }
                values.push(f64::from(v) / PIXEL_MAX);
            } else {
                let label = v as usize;
                if label >= N_CLASSES {
                    return Err(DigitsError::Parse {
                        line,
                        what: format!("label {label} is not in 0..{N_CLASSES}"),
                    });
                }
                labels.push(label);
            }
        }
    }
    if labels.len() != N_SAMPLES {
        return Err(DigitsError::RowCount {
            expected: N_SAMPLES,
            found: labels.len(),
        });
    }
    let x = Array2::from_shape_vec((labels.len(), N_FEATURES), values).map_err(|e| {
        DigitsError::Parse {
            line: 0,
            what: e.to_string(),
        }
    })?;
    Ok(Digits { x, labels })
}

/// A uniformly random permutation of `0..n` (Fisher-Yates from the top: for
/// `i = n-1, ..., 1`, swap `i` with `rng.random_range(0..=i)`; the draw order is part of
/// the contract).
pub fn permutation(n: usize, rng: &mut impl Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        p.swap(i, j);
    }
    p
}

impl Digits {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of images of each class.
    pub fn class_counts(&self) -> [usize; N_CLASSES] {
        let mut c = [0; N_CLASSES];
        for &l in &self.labels {
            c[l] += 1;
        }
        c
    }

    /// Random train/test split: a [`permutation`] of the rows; the first
    /// `round(test_fraction * n)` permuted rows are the test set, the rest the
    /// training set (both keep the permuted order).
    pub fn split(&self, test_fraction: f64, rng: &mut impl Rng) -> Result<Split, DigitsError> {
        let n = self.len();
        let n_test = (test_fraction * n as f64).round();
        if !(test_fraction > 0.0 && test_fraction < 1.0) || n_test < 1.0 || n_test >= n as f64 {
            return Err(DigitsError::TestFraction(test_fraction));
        }
        let n_test = n_test as usize;
        let perm = permutation(n, rng);
        let (test_idx, train_idx) = perm.split_at(n_test);
        Ok(Split {
            train_x: self.x.select(Axis(0), train_idx),
            train_labels: train_idx.iter().map(|&i| self.labels[i]).collect(),
            test_x: self.x.select(Axis(0), test_idx),
            test_labels: test_idx.iter().map(|&i| self.labels[i]).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_malformed_lines() {
        assert!(matches!(
            parse_csv("1,2,3"),
            Err(DigitsError::Parse { line: 1, .. })
        ));
        let mut row = vec!["0"; N_FEATURES];
        row.push("10");
        assert!(matches!(
            parse_csv(&row.join(",")),
            Err(DigitsError::Parse { line: 1, .. })
        ));
        let mut row = vec!["17"; N_FEATURES];
        row.push("1");
        assert!(parse_csv(&row.join(",")).is_err());
        let mut row = vec!["1"; N_FEATURES];
        row.push("1");
        assert!(matches!(
            parse_csv(&row.join(",")),
            Err(DigitsError::RowCount { found: 1, .. })
        ));
    }
}
