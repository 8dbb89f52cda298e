//! The fused pass of the direct DP-GD step ([`super::clipped_mean_gradient`],
//! [`super::run_shared`]): one read of `Phi` a step for every run that shares it.
//!
//! For each block of four rows `phi_i`, and for each run ("lane") `b` on it: `f_i =
//! phi_i^T theta_b`, the residual, the per-sample gradient norm and clip factor `c_i` of
//! the module docs of [`super`], and then `g_b += (c_i r_i) phi_i` while the rows are
//! still in cache. Two BLAS GEMVs a run read `Phi` twice a step; this reads it once for
//! all the lanes (the noise-term runs of `rf_dpgd` step a main run and its noise-only
//! run on one `Phi`), and the block of rows shares the loads of `theta` and of the sum.
//! (Measured: noise-term-scaling's quick runs 15.5 -> 12.4 s; one pass with one row at a
//! time was no faster than the GEMVs: these matrices sit in cache, so the loads, not
//! the memory, bound the step.)
//!
//! A fixed order of plain `+` and `*` (Rust never contracts them into FMAs): the dot
//! products in eight interleaved partial sums combined in a fixed tree, the sums over
//! rows in row order, element by element (a block of rows adds its four terms in row
//! order). So the bits are the same at every vector width and block boundary and do not
//! depend on the machine's BLAS.
use super::{ClipRule, StepStats};

/// One run on the shared `Phi`: its labels, parameters and clip rule.
pub(super) struct Lane<'a> {
    pub y: &'a [f64],
    pub theta: &'a [f64],
    pub clip: f64,
    pub rule: ClipRule,
    pub ridge: f64,
}

/// Partial sums of [`dot`].
const PARTIALS: usize = 8;

/// Rows a block of the pass: their products with `theta` share its loads, their shares
/// of the sum share the loads and stores of the sum.
const BLOCK: usize = 4;

/// `sum_j a_j b_j`: eight interleaved partial sums (j mod 8), combined pairwise
/// `((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))`, then the tail in order.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f64; PARTIALS];
    let (ca, cb) = (a.chunks_exact(PARTIALS), b.chunks_exact(PARTIALS));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..PARTIALS {
            s[l] += x[l] * y[l];
        }
    }
    finish_dot(s, ra, rb)
}

/// `||v||^2` in [`dot`]'s order.
pub(super) fn norm_sq(v: &[f64]) -> f64 {
    dot(v, v)
}

/// [`dot`] of four rows with `b`, with AVX2: per row the eight partial sums in two
/// registers (register k, lane l holds partial `4k + l`), then [`dot`]'s tree and tail,
/// so each is [`dot`]'s bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot4_avx2(rows: [&[f64]; BLOCK], b: &[f64]) -> [f64; BLOCK] {
    use std::arch::x86_64::*;
    let n = rows.iter().map(|r| r.len()).fold(b.len(), usize::min);
    let chunks = n / PARTIALS;
    let pb = b.as_ptr();
    let pr = rows.map(|r| r.as_ptr());
    let mut acc = [[_mm256_setzero_pd(); 2]; BLOCK];
    for c in 0..chunks {
        let base = c * PARTIALS;
        for k in 0..2 {
            // SAFETY: base + 4k + 3 < chunks * 8 <= n, within every slice.
            let y = unsafe { _mm256_loadu_pd(pb.add(base + 4 * k)) };
            for (q, a) in acc.iter_mut().enumerate() {
                let x = unsafe { _mm256_loadu_pd(pr[q].add(base + 4 * k)) };
                a[k] = _mm256_add_pd(a[k], _mm256_mul_pd(x, y));
            }
        }
    }
    let mut out = [0.0; BLOCK];
    for q in 0..BLOCK {
        let mut s = [0.0f64; PARTIALS];
        for (k, r) in acc[q].iter().enumerate() {
            // SAFETY: s has room for four lanes at 4k.
            unsafe { _mm256_storeu_pd(s.as_mut_ptr().add(4 * k), *r) };
        }
        let tail = chunks * PARTIALS..n;
        out[q] = finish_dot(s, &rows[q][tail.clone()], &b[tail]);
    }
    out
}

/// The partial sums combined pairwise as a balanced tree, then the tail in order.
#[inline(always)]
fn finish_dot(mut s: [f64; PARTIALS], ra: &[f64], rb: &[f64]) -> f64 {
    let mut width = PARTIALS;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            s[l] = s[2 * l] + s[2 * l + 1];
        }
    }
    let mut t = s[0];
    for (x, y) in ra.iter().zip(rb) {
        t += x * y;
    }
    t
}

/// `g += w row`, element by element.
#[inline(always)]
fn axpy(g: &mut [f64], w: f64, row: &[f64]) {
    for (gj, &x) in g.iter_mut().zip(row) {
        *gj += w * x;
    }
}

/// [`axpy`] of four rows in order, `g_j = (((g_j + w0 r0j) + w1 r1j) + w2 r2j) + w3 r3j`:
/// the bits of four [`axpy`]s, one load and store of `g`.
#[inline(always)]
fn axpy4(g: &mut [f64], w: [f64; BLOCK], rows: [&[f64]; BLOCK]) {
    let n = rows.iter().map(|r| r.len()).fold(g.len(), usize::min);
    let (g, [r0, r1, r2, r3]) = (&mut g[..n], rows.map(|r| &r[..n]));
    for j in 0..n {
        g[j] = (((g[j] + w[0] * r0[j]) + w[1] * r1[j]) + w[2] * r2[j]) + w[3] * r3[j];
    }
}

/// [`dot`] of four rows with `b`.
#[inline(always)]
fn dot4(rows: [&[f64]; BLOCK], b: &[f64]) -> [f64; BLOCK] {
    rows.map(|r| dot(r, b))
}

/// Per lane, the sum `sum_i (c_i r_i) phi_i` into `sums[b]` (zeroed here), what the step
/// saw and `sum_i c_i`. `phi` holds the n rows of length `p` one after the other; `phi_sq[i] =
/// ||phi_i||^2`; `theta_sq[b] = ||theta_b||^2` (read only with a ridge).
pub(super) fn clipped_sums(
    phi: &[f64],
    p: usize,
    phi_sq: &[f64],
    lanes: &[Lane<'_>],
    theta_sq: &[f64],
    sums: &mut [Vec<f64>],
) -> Vec<(StepStats, f64)> {
    #[cfg(target_arch = "x86_64")]
    if crate::linalg::simd::vector_allowed() && std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { clipped_sums_avx2(phi, p, phi_sq, lanes, theta_sq, sums) };
    }
    crate::linalg::simd::note_fallback();
    clipped_sums_inline(phi, p, phi_sq, lanes, theta_sq, sums, dot4)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn clipped_sums_avx2(
    phi: &[f64],
    p: usize,
    phi_sq: &[f64],
    lanes: &[Lane<'_>],
    theta_sq: &[f64],
    sums: &mut [Vec<f64>],
) -> Vec<(StepStats, f64)> {
    // SAFETY: the caller checked AVX2.
    clipped_sums_inline(phi, p, phi_sq, lanes, theta_sq, sums, |r, b| unsafe {
        dot4_avx2(r, b)
    })
}

/// Accumulators of one lane over the rows.
#[derive(Default)]
struct Acc {
    clipped: usize,
    max_r: f64,
    max_ratio: f64,
    sse: f64,
    sum_c: f64,
}

#[inline(always)]
fn clipped_sums_inline(
    phi: &[f64],
    p: usize,
    phi_sq: &[f64],
    lanes: &[Lane<'_>],
    theta_sq: &[f64],
    sums: &mut [Vec<f64>],
    dot4: impl Fn([&[f64]; BLOCK], &[f64]) -> [f64; BLOCK],
) -> Vec<(StepStats, f64)> {
    let n = phi_sq.len();
    assert_eq!(phi.len(), n * p, "Phi holds n rows of length p");
    assert!(lanes.len() == sums.len() && lanes.len() == theta_sq.len());
    for s in sums.iter_mut() {
        s.clear();
        s.resize(p, 0.0);
    }
    let mut acc: Vec<Acc> = lanes.iter().map(|_| Acc::default()).collect();
    let row = |i: usize| &phi[i * p..(i + 1) * p];
    // Rows in blocks of four (the last block's missing rows are row 0 with weight 0
    // and are not counted).
    let mut w = vec![[0.0; BLOCK]; lanes.len()];
    for start in (0..n).step_by(BLOCK) {
        let m = (n - start).min(BLOCK);
        let rows: [&[f64]; BLOCK] =
            std::array::from_fn(|q| row(if q < m { start + q } else { start }));
        for (b, lane) in lanes.iter().enumerate() {
            let f = dot4(rows, lane.theta);
            let (ridge, a) = (lane.ridge, &mut acc[b]);
            for q in 0..m {
                let i = start + q;
                let (fi, si) = (f[q], phi_sq[i]);
                let r = fi - lane.y[i];
                a.sse += r * r;
                a.max_r = a.max_r.max(r.abs());
                let gsq =
                    4.0 * r * r * si + 8.0 * ridge * r * fi + 4.0 * ridge * ridge * theta_sq[b];
                let ratio = gsq.max(0.0).sqrt() / lane.clip;
                a.max_ratio = a.max_ratio.max(ratio);
                let c = if ratio > 1.0 {
                    a.clipped += 1;
                    lane.rule.scale(ratio)
                } else {
                    1.0
                };
                a.sum_c += c;
                w[b][q] = c * r;
            }
        }
        for (b, s) in sums.iter_mut().enumerate() {
            if m == BLOCK {
                axpy4(s, w[b], rows);
            } else {
                for q in 0..m {
                    axpy(s, w[b][q], rows[q]);
                }
            }
        }
    }
    let nf = n as f64;
    acc.iter()
        .map(|a| {
            let stats = StepStats {
                clip_fraction: a.clipped as f64 / nf,
                max_abs_residual: a.max_r,
                max_grad_ratio: a.max_ratio,
                train_mse: a.sse / nf,
            };
            (stats, a.sum_c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 build of the pass and the baseline (SSE2) build give the same bits.
    #[test]
    fn every_vector_width_gives_the_same_bits() {
        let (n, p) = (9, 53);
        let phi: Vec<f64> = (0..n * p)
            .map(|k| ((k * 7919) % 1000) as f64 / 333.0 - 1.5)
            .collect();
        let phi_sq: Vec<f64> = phi
            .chunks(p)
            .map(|r| r.iter().map(|x| x * x).sum())
            .collect();
        let y: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let theta: Vec<f64> = (0..p).map(|j| ((j as f64) * 0.37).cos() * 0.2).collect();
        let lanes = [
            Lane {
                y: &y,
                theta: &theta,
                clip: 3.0,
                rule: ClipRule::Divide,
                ridge: 0.1,
            },
            Lane {
                y: &y,
                theta: &theta,
                clip: 3.0,
                rule: ClipRule::None,
                ridge: 0.0,
            },
        ];
        let tsq = [norm_sq(&theta), 0.0];
        let mut a = vec![Vec::new(), Vec::new()];
        let mut b = vec![Vec::new(), Vec::new()];
        let sa = clipped_sums(&phi, p, &phi_sq, &lanes, &tsq, &mut a);
        let sb = clipped_sums_inline(&phi, p, &phi_sq, &lanes, &tsq, &mut b, dot4);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for k in 0..2 {
            assert_eq!(bits(&a[k]), bits(&b[k]));
            assert_eq!(sa[k].1.to_bits(), sb[k].1.to_bits());
            assert_eq!(sa[k].0.train_mse.to_bits(), sb[k].0.train_mse.to_bits());
        }
    }
}
