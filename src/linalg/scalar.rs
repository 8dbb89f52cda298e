//! Scalar linear algebra whose bits are the same on every x86-64 machine.
//!
//! OpenBLAS picks its GEMM and LAPACK kernels by CPU model and faer picks its SIMD
//! width at run time, so their results may differ in the last bits between machines.
//! For almost every quantity the tool reports this is invisible at a report's 6
//! significant digits. It is not for a quantity whose condition number is near 1e10:
//! privacy-for-free's theta* at the interpolation threshold p = n (Sec. 3.1, L145: "the
//! expected peak at the interpolation threshold"), where the smallest eigenvalue of the
//! kernel matrix K = Phi Phi^T is about 1e-10 of its largest and a last-bit change of K
//! moves theta*'s test loss by up to 7e-6 relative (measured: OPENBLAS_CORETYPE=Prescott
//! against the native kernels moved 4 of 128 values at the 6th digit).
//!
//! The functions here are plain loops in a fixed order with IEEE operations only (no
//! fused multiply-add: Rust never contracts; `sqrt` is correctly rounded; no libm
//! call): compiled once for the x86-64 baseline, they give the same bits on every
//! machine and under every `OPENBLAS_CORETYPE`. They are O(n^3) without blocking, for
//! matrices of a few hundred rows.
use super::LinalgError;
use ndarray::{Array1, Array2, ArrayView2};

/// `a b^T` (m x k times (n x k)^T), each entry one dot product summed in index order.
pub fn matmul_nt(a: &ArrayView2<f64>, b: &ArrayView2<f64>) -> Array2<f64> {
    assert_eq!(a.ncols(), b.ncols(), "matmul_nt: inner dimensions differ");
    let (m, n, k) = (a.nrows(), b.nrows(), a.ncols());
    let a = a.as_standard_layout();
    let b = b.as_standard_layout();
    let (a, b) = (a.as_slice().unwrap_or(&[]), b.as_slice().unwrap_or(&[]));
    let mut c = Array2::<f64>::zeros((m, n));
    for i in 0..m {
        let ai = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let bj = &b[j * k..(j + 1) * k];
            let mut s = 0.0;
            for t in 0..k {
                s += ai[t] * bj[t];
            }
            c[[i, j]] = s;
        }
    }
    c
}

/// `sqrt(a^2 + b^2)` without overflow, from `sqrt` (correctly rounded) and not glibc's
/// `hypot`, whose implementation may differ between library builds.
fn hypot(a: f64, b: f64) -> f64 {
    let (a, b) = (a.abs(), b.abs());
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if big == 0.0 {
        return 0.0;
    }
    let r = small / big;
    big * (1.0 + r * r).sqrt()
}

/// Eigendecomposition of a symmetric matrix: eigenvalues ascending and the orthonormal
/// eigenvectors as columns, as [`super::sym_eig`] returns them (LAPACK's `dsyevd`), but
/// computed by Householder tridiagonalisation and the implicit QL algorithm (EISPACK's
/// `tred2` and `tql2`, in the form of the public-domain JAMA library) in scalar loops.
/// Reads the lower triangle. Fails, rather than looping, if an eigenvalue takes more
/// than 60 QL iterations (30 is EISPACK's limit; it does not happen for a finite
/// symmetric matrix in practice) or if the input has a non-finite entry.
pub fn sym_eig(a: &ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>), LinalgError> {
    let n = a.nrows();
    assert_eq!(n, a.ncols(), "sym_eig needs a square matrix");
    if a.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::Scalar("a non-finite entry".into()));
    }
    if n == 0 {
        return Ok((Array1::zeros(0), Array2::zeros((0, 0))));
    }
    // v[i][j], row-major; symmetric from the lower triangle.
    let mut v = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        for j in 0..=i {
            v[i][j] = a[[i, j]];
            v[j][i] = a[[i, j]];
        }
    }
    let mut d = vec![0.0f64; n];
    let mut e = vec![0.0f64; n];
    tred2(&mut v, &mut d, &mut e);
    tql2(&mut v, &mut d, &mut e)?;
    let lam = Array1::from(d);
    let q = Array2::from_shape_fn((n, n), |(i, j)| v[i][j]);
    Ok((lam, q))
}

/// Householder reduction to tridiagonal form (JAMA `tred2`): on return `v` holds the
/// orthogonal transformation, `d` the diagonal and `e[1..]` the subdiagonal.
#[allow(clippy::needless_range_loop)]
fn tred2(v: &mut [Vec<f64>], d: &mut [f64], e: &mut [f64]) {
    let n = d.len();
    d.copy_from_slice(&v[n - 1]);
    for i in (1..n).rev() {
        let mut scale = 0.0;
        let mut h = 0.0;
        for k in 0..i {
            scale += d[k].abs();
        }
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[i - 1][j];
                v[i][j] = 0.0;
                v[j][i] = 0.0;
            }
        } else {
            for k in 0..i {
                d[k] /= scale;
                h += d[k] * d[k];
            }
            let mut f = d[i - 1];
            let mut g = h.sqrt();
            if f > 0.0 {
                g = -g;
            }
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for j in 0..i {
                e[j] = 0.0;
            }
            for j in 0..i {
                f = d[j];
                v[j][i] = f;
                g = e[j] + v[j][j] * f;
                for k in (j + 1)..i {
                    g += v[k][j] * d[k];
                    e[k] += v[k][j] * f;
                }
                e[j] = g;
            }
            f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                f = d[j];
                g = e[j];
                for k in j..i {
                    v[k][j] -= f * e[k] + g * d[k];
                }
                d[j] = v[i - 1][j];
                v[i][j] = 0.0;
            }
        }
        d[i] = h;
    }
    for i in 0..n - 1 {
        v[n - 1][i] = v[i][i];
        v[i][i] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[k][i + 1] / h;
            }
            for j in 0..=i {
                let mut g = 0.0;
                for k in 0..=i {
                    g += v[k][i + 1] * v[k][j];
                }
                for k in 0..=i {
                    v[k][j] -= g * d[k];
                }
            }
        }
        for k in 0..=i {
            v[k][i + 1] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[n - 1][j];
        v[n - 1][j] = 0.0;
    }
    v[n - 1][n - 1] = 1.0;
    e[0] = 0.0;
}

/// Symmetric tridiagonal QL with implicit shifts (JAMA `tql2`), accumulating into `v`;
/// eigenvalues sorted ascending with their vectors.
#[allow(clippy::needless_range_loop)]
fn tql2(v: &mut [Vec<f64>], d: &mut [f64], e: &mut [f64]) -> Result<(), LinalgError> {
    let n = d.len();
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0f64;
    let mut tst1 = 0.0f64;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                if iter > 60 {
                    return Err(LinalgError::Scalar(format!(
                        "eigenvalue {l} did not converge in 60 QL iterations"
                    )));
                }
                let mut g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = hypot(p, 1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let mut h = g - d[l];
                for i in (l + 2)..n {
                    d[i] -= h;
                }
                f += h;
                p = d[m];
                let mut c = 1.0;
                let mut c2 = c;
                let mut c3 = c;
                let el1 = e[l + 1];
                let mut s = 0.0;
                let mut s2 = 0.0;
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    g = c * e[i];
                    h = c * p;
                    r = hypot(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    for row in v.iter_mut() {
                        h = row[i + 1];
                        row[i + 1] = s * row[i] + c * h;
                        row[i] = c * row[i] - s * h;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if e[l].abs() <= eps * tst1 {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
    for i in 0..n - 1 {
        let mut k = i;
        let mut p = d[i];
        for j in (i + 1)..n {
            if d[j] < p {
                k = j;
                p = d[j];
            }
        }
        if k != i {
            d[k] = d[i];
            d[i] = p;
            for row in v.iter_mut() {
                row.swap(i, k);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    fn random_sym(n: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a = Array2::from_shape_fn((n, n + 3), |_| StandardNormal.sample(&mut rng));
        matmul_nt(&a.view(), &a.view())
    }

    #[test]
    fn matches_lapack_and_reconstructs() {
        for (n, seed) in [(1, 1), (2, 2), (7, 3), (40, 4), (120, 5)] {
            let a = random_sym(n, seed);
            let (lam, q) = sym_eig(&a.view()).unwrap();
            let (lam_ref, _) = crate::linalg::sym_eig(&a.view()).unwrap();
            let scale = lam_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (x, y) in lam.iter().zip(lam_ref.iter()) {
                assert!((x - y).abs() <= 1e-12 * scale, "n={n}: {x} vs {y}");
            }
            // Q diag(lam) Q^T = A and Q^T Q = I.
            let qd = &q * &lam.view().insert_axis(ndarray::Axis(0));
            let rec = qd.dot(&q.t());
            let qtq = q.t().dot(&q);
            for i in 0..n {
                for j in 0..n {
                    assert!((rec[[i, j]] - a[[i, j]]).abs() <= 1e-11 * scale);
                    let id = if i == j { 1.0 } else { 0.0 };
                    assert!((qtq[[i, j]] - id).abs() <= 1e-12);
                }
            }
        }
    }

    #[test]
    fn a_rank_deficient_matrix_has_zero_eigenvalues_and_a_diagonal_one_is_sorted() {
        // 10 x 10 of rank 3: seven eigenvalues at round-off level.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let a = Array2::from_shape_fn((10, 3), |_| StandardNormal.sample(&mut rng));
        let k = matmul_nt(&a.view(), &a.view());
        let (lam, _) = sym_eig(&k.view()).unwrap();
        let top = lam[9];
        assert!(lam.iter().take(7).all(|v| v.abs() < 1e-13 * top), "{lam}");
        assert!(lam[7] > 1e-3 * top);
        let diag = Array2::from_diag(&ndarray::arr1(&[3.0, -1.0, 2.0, 0.0]));
        let (lam, q) = sym_eig(&diag.view()).unwrap();
        assert_eq!(lam.to_vec(), vec![-1.0, 0.0, 2.0, 3.0]);
        assert_eq!(q[[1, 0]].abs(), 1.0);
    }

    #[test]
    fn a_non_finite_entry_is_an_error() {
        let mut a = Array2::<f64>::eye(3);
        a[[1, 0]] = f64::NAN;
        assert!(sym_eig(&a.view()).is_err());
    }

    #[test]
    fn matmul_nt_is_the_product() {
        let a = ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let b = ndarray::arr2(&[[1.0, 0.0], [0.0, 1.0]]);
        assert_eq!(matmul_nt(&a.view(), &b.view()), a);
        assert_eq!(
            matmul_nt(&a.view(), &a.view())[[2, 1]],
            5.0 * 3.0 + 6.0 * 4.0
        );
    }
}
