//! Small dense linear-algebra helpers on top of ndarray / ndarray-linalg / LAPACK.
//!
//! Products go through `ndarray::dot`, which calls BLAS (`ndarray` feature `blas`, with
//! the system OpenBLAS linked by `ndarray-linalg`'s `openblas-system` backend).
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use std::ffi::{c_char, c_int};

extern "C" {
    // Provided by the system OpenBLAS that `ndarray-linalg/openblas-system` links.
    fn openblas_set_num_threads(num_threads: c_int);
}

// CBLAS enum values (cblas.h): row-major 101, lower 122, no-transpose 111.
const CBLAS_ROW_MAJOR: c_int = 101;
const CBLAS_LOWER: c_int = 122;
const CBLAS_NO_TRANS: c_int = 111;

extern "C" {
    // Also from the system OpenBLAS.
    #[allow(clippy::too_many_arguments)]
    fn cblas_dsyrk(
        layout: c_int,
        uplo: c_int,
        trans: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        beta: f64,
        c: *mut f64,
        ldc: c_int,
    );
}

static BLAS_PINNED: std::sync::Once = std::sync::Once::new();

/// Pins OpenBLAS to one thread, once per process; every compute entry point calls it.
///
/// Why: OpenBLAS's GEMM rounds differently with 1 and 2 threads (measured on this
/// machine with Debian's OpenBLAS 0.3.21: the random-features matrix `tanh(X V^T)` for
/// X 300x20, V 1500x20 differs in the last bits, and so does everything after it), which
/// would make results depend on `OPENBLAS_NUM_THREADS`. dpclaims instead parallelises
/// across independent work units (sweep points, replicates) with rayon, whose results
/// are collected in a fixed order, so output bytes do not depend on any thread count.
pub fn pin_blas_threads() {
    BLAS_PINNED.call_once(|| unsafe { openblas_set_num_threads(1) });
}

/// Errors of the dense linear algebra.
#[derive(Debug, thiserror::Error)]
pub enum LinalgError {
    #[error("LAPACK {routine} failed with info = {info}")]
    Lapack { routine: &'static str, info: i32 },
    #[error("matrix too large for LAPACK's 32-bit indices: {0}")]
    TooLarge(usize),
}

/// Symmetric eigendecomposition `A = Q diag(w) Q^T` by LAPACK's divide-and-conquer
/// driver `dsyevd` (eigenvalues ascending, eigenvectors in the columns of `Q`).
///
/// `dsyevd` is about 10x faster than the QR-iteration driver at n = 2000 on this machine
/// (DEPENDENCIES.md, "Pitfalls measured"). Only the lower triangle of `a` is read.
pub fn sym_eig(a: &ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>), LinalgError> {
    let n = a.nrows();
    assert_eq!(n, a.ncols(), "sym_eig needs a square matrix");
    if n == 0 {
        return Ok((Array1::zeros(0), Array2::zeros((0, 0))));
    }
    let ni = i32::try_from(n).map_err(|_| LinalgError::TooLarge(n))?;
    // Column-major copy: for a symmetric matrix the transpose is the same matrix, so
    // copying the row-major data and reading the lower triangle as column-major reads
    // the upper triangle of `a` — identical by symmetry.
    let mut buf: Vec<f64> = a.t().iter().copied().collect();
    let mut w = vec![0.0f64; n];
    let jobz = b'V' as c_char;
    let uplo = b'L' as c_char;
    let mut info = 0i32;
    // Workspace query.
    let mut work_q = 0.0f64;
    let mut iwork_q = 0i32;
    let minus1 = -1i32;
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &ni,
            buf.as_mut_ptr(),
            &ni,
            w.as_mut_ptr(),
            &mut work_q,
            &minus1,
            &mut iwork_q,
            &minus1,
            &mut info,
        );
    }
    if info != 0 {
        return Err(LinalgError::Lapack {
            routine: "dsyevd (workspace query)",
            info,
        });
    }
    let lwork = work_q.ceil() as i32;
    let liwork = iwork_q;
    let mut work = vec![0.0f64; lwork.max(1) as usize];
    let mut iwork = vec![0i32; liwork.max(1) as usize];
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &ni,
            buf.as_mut_ptr(),
            &ni,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &lwork,
            iwork.as_mut_ptr(),
            &liwork,
            &mut info,
        );
    }
    if info != 0 {
        return Err(LinalgError::Lapack {
            routine: "dsyevd",
            info,
        });
    }
    // buf is column-major n x n: element (i, j) at j * n + i.
    let q = Array2::from_shape_vec((n, n), buf)
        .expect("n*n buffer")
        .reversed_axes();
    Ok((Array1::from(w), q.as_standard_layout().to_owned()))
}

/// `C += A A^T` on the lower triangle of `C` (BLAS `dsyrk`: half the flops of a GEMM).
/// `a` is N x k, `c` is N x N; both must be in standard (row-major) layout. The upper
/// triangle of `c` is not touched: call [`fill_upper_from_lower`] when done.
pub fn syrk_lower_accumulate(a: &ArrayView2<f64>, c: &mut Array2<f64>) -> Result<(), LinalgError> {
    let (n, k) = a.dim();
    assert_eq!(c.dim(), (n, n), "syrk: C must be N x N");
    assert!(
        a.is_standard_layout() && c.is_standard_layout(),
        "syrk: row-major inputs"
    );
    if n == 0 || k == 0 {
        return Ok(());
    }
    let ni = c_int::try_from(n).map_err(|_| LinalgError::TooLarge(n))?;
    let ki = c_int::try_from(k).map_err(|_| LinalgError::TooLarge(k))?;
    // SAFETY: a is n x k row-major with leading dimension k, c is n x n row-major with
    // leading dimension n; both buffers live for the call.
    unsafe {
        cblas_dsyrk(
            CBLAS_ROW_MAJOR,
            CBLAS_LOWER,
            CBLAS_NO_TRANS,
            ni,
            ki,
            1.0,
            a.as_ptr(),
            ki,
            1.0,
            c.as_mut_ptr(),
            ni,
        );
    }
    Ok(())
}

/// Copies the lower triangle of a square matrix onto its upper triangle.
pub fn fill_upper_from_lower(c: &mut Array2<f64>) {
    let n = c.nrows();
    for i in 0..n {
        for j in 0..i {
            c[(j, i)] = c[(i, j)];
        }
    }
}

/// Squared Euclidean norm of every row of `m`.
pub fn row_norms_sq(m: &ArrayView2<f64>) -> Array1<f64> {
    m.map_axis(Axis(1), |r| r.dot(&r))
}

/// Relative eigenvalue cut-off used by the pseudo-inverses: eigenvalues of a Gram
/// matrix below `GRAM_RCOND * max eigenvalue` are treated as zero. The Gram squares
/// the condition number, so this corresponds to singular values below ~1e-6 relative.
pub const GRAM_RCOND: f64 = 1e-12;

/// `pinv(phi) y` — the minimum-norm least-squares solution of `phi theta = y`.
///
/// Computed through the eigendecomposition of the smaller Gram matrix: for p >= n,
/// `pinv(Phi) y = Phi^T Q diag(1/lambda) Q^T y` with `Phi Phi^T = Q diag(lambda) Q^T`;
/// for p < n, `pinv(Phi) y = (Phi^T Phi)^+ Phi^T y`.
pub fn pinv_solve(phi: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<Array1<f64>, LinalgError> {
    gram_solve(phi, y, 0.0)
}

/// Ridge solution of `min (1/n)||Phi theta - y||^2 + lambda ||theta||^2`, i.e.
/// `theta = (Phi^T Phi + n lambda I)^{-1} Phi^T y = Phi^T (Phi Phi^T + n lambda I)^{-1} y`,
/// through the smaller Gram matrix.
pub fn ridge_solve(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    lambda: f64,
) -> Result<Array1<f64>, LinalgError> {
    gram_solve(phi, y, phi.nrows() as f64 * lambda)
}

/// `(Phi^T Phi + shift I)^+ Phi^T y` through the eigendecomposition of the smaller Gram
/// matrix (`Phi Phi^T` when p >= n, using `(Phi^T Phi + s I)^+ Phi^T = Phi^T (Phi Phi^T + s I)^+`).
fn gram_solve(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    shift: f64,
) -> Result<Array1<f64>, LinalgError> {
    let (n, p) = phi.dim();
    let wide = p >= n;
    let k = if wide {
        phi.dot(&phi.t())
    } else {
        phi.t().dot(phi)
    };
    let (lam, q) = sym_eig(&k.view())?;
    let lam = lam.mapv(|l| l + shift);
    if wide {
        Ok(phi.t().dot(&pinv_apply(&lam, &q, &y.to_owned())))
    } else {
        Ok(pinv_apply(&lam, &q, &phi.t().dot(y)))
    }
}

/// `Q diag(1/lambda)^+ Q^T v` with the [`GRAM_RCOND`] cut-off.
fn pinv_apply(lam: &Array1<f64>, q: &Array2<f64>, v: &Array1<f64>) -> Array1<f64> {
    let lmax = lam.iter().copied().fold(0.0f64, f64::max);
    let cut = GRAM_RCOND * lmax;
    let mut c = q.t().dot(v);
    for (ci, &l) in c.iter_mut().zip(lam.iter()) {
        *ci = if l > cut { *ci / l } else { 0.0 };
    }
    q.dot(&c)
}

/// Top singular triple `(sigma_1, sigma_2, u_1)` of `m` (left vector `u_1`), through the
/// deterministic divide-and-conquer SVD (`svddc`): `TruncatedSvd` seeds from an unseeded
/// generator and is not reproducible (DEPENDENCIES.md).
pub fn top_singular(m: &ArrayView2<f64>) -> Result<(f64, f64, Array1<f64>), LinalgError> {
    use ndarray_linalg::{JobSvd, SVDDC};
    let (u, s, _) = m
        .to_owned()
        .svddc(JobSvd::Some)
        .map_err(|_| LinalgError::Lapack {
            routine: "gesdd",
            info: -1,
        })?;
    let u = u.expect("JobSvd::Some returns U");
    let s2 = if s.len() > 1 { s[1] } else { 0.0 };
    Ok((s[0], s2, u.column(0).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn sym_eig_reconstructs() {
        let a = array![[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]];
        let (w, q) = sym_eig(&a.view()).unwrap();
        assert!(w[0] <= w[1] && w[1] <= w[2]);
        let rec = q.dot(&Array2::from_diag(&w)).dot(&q.t());
        for (x, y) in rec.iter().zip(a.iter()) {
            assert!((x - y).abs() < 1e-12);
        }
    }

    #[test]
    fn pinv_matches_normal_equations_both_shapes() {
        // Wide: min-norm interpolator satisfies Phi theta = y and lies in the row space.
        let phi = array![[1.0, 2.0, 0.0, 1.0], [0.0, 1.0, 1.0, -1.0]];
        let y = array![1.0, 2.0];
        let th = pinv_solve(&phi.view(), &y.view()).unwrap();
        let fit = phi.dot(&th);
        assert!((fit[0] - 1.0).abs() < 1e-12 && (fit[1] - 2.0).abs() < 1e-12);
        // Tall: least squares satisfies the normal equations.
        let phi_t = phi.t().to_owned();
        let y4 = array![1.0, 0.0, 2.0, 1.0];
        let th = pinv_solve(&phi_t.view(), &y4.view()).unwrap();
        let g = phi_t.t().dot(&(phi_t.dot(&th) - &y4));
        assert!(g.iter().all(|v| v.abs() < 1e-12));
    }
}
