//! Small dense linear-algebra helpers on top of ndarray / ndarray-linalg / LAPACK.
//!
//! Products go through `ndarray::dot`, which calls BLAS (`ndarray` feature `blas`, with
//! the system OpenBLAS linked by `ndarray-linalg`'s `openblas-system` backend), except
//! the hot products of the reduced engine, which take a [`Kernels`]: faer by default.
use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis};
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
    #[error("scalar eigensolver: {0}")]
    Scalar(String),
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

/// Which implementation runs the hot dense products of the reduced engine (the Gram
/// computation and the per-step matrix products of [`crate::train::reduced`]).
///
/// Debian's OpenBLAS 0.3.21 picks its GEMM kernels by CPU model: where it does not
/// recognise the processor it falls back to generic SSE3 (Prescott) kernels, about 3x
/// slower than its AVX-512 ones on the same machine. faer (pure Rust) picks AVX-512 or
/// AVX2 + FMA kernels from the CPU's feature flags at run time, so its speed does not
/// depend on that recognition. Both are called sequentially (one thread per call;
/// dpclaims parallelises across independent units), so the bits do not depend on any
/// thread count; they may differ between the two, in the last bits. The reduced engine
/// also does less work with faer (sparse product updates, blocked noise: see
/// [`crate::train::reduced`]); [`Kernels::Blas`] keeps the engine as it was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernels {
    /// faer, sequential (`Par::Seq`): the engine's default.
    #[default]
    Faer,
    /// The system BLAS (OpenBLAS pinned to one thread, [`pin_blas_threads`]): the
    /// reduced engine as it was before faer, kept as the reference the faer path is
    /// tested against.
    Blas,
}

impl Kernels {
    /// What runs the products on this machine: `"faer avx512"`, `"faer avx2"`,
    /// `"faer generic"` (faer's portable kernels) or `"openblas <core>"`.
    pub fn describe(self) -> String {
        match self {
            Kernels::Faer => format!("faer {}", faer_simd_level()),
            Kernels::Blas => format!(
                "openblas {}",
                blas_core().unwrap_or_else(|| "unknown".into())
            ),
        }
    }
}

/// The instruction set faer's matrix products dispatch to on this CPU (the same test
/// faer 0.24 makes before calling its x86 kernels).
pub fn faer_simd_level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "avx512";
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "avx2";
        }
    }
    "generic"
}

/// A faer view of an ndarray view (any strides).
fn faer_ref<'a>(a: &ArrayView2<'a, f64>) -> faer::MatRef<'a, f64> {
    let (r, c) = a.dim();
    let s = a.strides();
    // SAFETY: the pointer, shape and strides describe exactly the elements of `a`, which
    // are initialised and borrowed immutably for 'a.
    unsafe { faer::MatRef::from_raw_parts(a.as_ptr(), r, c, s[0], s[1]) }
}

/// A mutable faer view of an ndarray view (any strides, no aliasing: ndarray's mutable
/// views never alias).
fn faer_mut<'a>(a: &'a mut ArrayViewMut2<'_, f64>) -> faer::MatMut<'a, f64> {
    let (r, c) = a.dim();
    let (s0, s1) = (a.strides()[0], a.strides()[1]);
    // SAFETY: as in `faer_ref`, with the unique borrow of `a` for 'a.
    unsafe { faer::MatMut::from_raw_parts_mut(a.as_mut_ptr(), r, c, s0, s1) }
}

/// `C = A B` with the given kernels (`c` is overwritten; any layouts).
pub fn matmul_into(
    kernels: Kernels,
    a: &ArrayView2<f64>,
    b: &ArrayView2<f64>,
    mut c: ArrayViewMut2<f64>,
) {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions");
    assert_eq!(c.dim(), (a.nrows(), b.ncols()), "matmul: output shape");
    match kernels {
        Kernels::Blas => general_mat_mul(1.0, a, b, 0.0, &mut c),
        Kernels::Faer => faer::linalg::matmul::matmul(
            faer_mut(&mut c),
            faer::Accum::Replace,
            faer_ref(a),
            faer_ref(b),
            1.0,
            faer::Par::Seq,
        ),
    }
}

/// `A B` with the given kernels.
pub fn matmul(kernels: Kernels, a: &ArrayView2<f64>, b: &ArrayView2<f64>) -> Array2<f64> {
    let mut c = Array2::<f64>::zeros((a.nrows(), b.ncols()));
    matmul_into(kernels, a, b, c.view_mut());
    c
}

/// `C += A A^T` on the lower triangle of `C` with the given kernels (BLAS: `dsyrk`,
/// [`syrk_lower_accumulate`]; faer: its lower-triangular matrix product, also half the
/// flops of a GEMM). The upper triangle of `c` is not touched.
pub fn syrk_lower_accumulate_with(
    kernels: Kernels,
    a: &ArrayView2<f64>,
    c: &mut Array2<f64>,
) -> Result<(), LinalgError> {
    match kernels {
        Kernels::Blas => syrk_lower_accumulate(a, c),
        Kernels::Faer => {
            use faer::linalg::matmul::triangular::{matmul, BlockStructure};
            let n = a.nrows();
            assert_eq!(c.dim(), (n, n), "syrk: C must be N x N");
            matmul(
                faer_mut(&mut c.view_mut()),
                BlockStructure::TriangularLower,
                faer::Accum::Add,
                faer_ref(a),
                BlockStructure::Rectangular,
                faer_ref(a).transpose(),
                BlockStructure::Rectangular,
                1.0,
                faer::Par::Seq,
            );
            Ok(())
        }
    }
}

/// Columns per block of [`add_sparse_combinations`]: a block of K (n x 32) stays in L2
/// while every row of `h` takes its terms, and a row's 32 partial sums stay in registers.
const SPARSE_BLOCK: usize = 32;

/// Sparse combinations of the rows of `k`: for every `s`, row `rows[s]` of `h` gets
/// `sum_p delta[p] k[idx[p], :]` over `p` in `offs[s]..offs[s + 1]`, added one term at a
/// time in the order given (separate multiply and add, no fused multiply-add: the same
/// bits on every instruction set). `k` (n x n) and `h` (B x n) are row-major. With K
/// symmetric this is `h_j += K delta_j` for sparse `delta_j` at `|delta_j| n` flops
/// instead of `n^2`.
pub fn add_sparse_combinations(
    k: &ArrayView2<f64>,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut ArrayViewMut2<f64>,
) {
    assert_eq!(h.ncols(), k.ncols(), "h has n columns");
    add_sparse_combinations_cols(k, 0, rows, offs, idx, delta, h);
}

/// [`add_sparse_combinations`] on the columns `c_lo..c_lo + h.ncols()` of the product
/// only: `h` holds those columns of the rows (contiguous rows, any row stride). Every
/// entry is computed as in the whole product (its own terms, in order), so column
/// ranges computed apart give the bits of the whole.
pub fn add_sparse_combinations_cols(
    k: &ArrayView2<f64>,
    c_lo: usize,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut ArrayViewMut2<f64>,
) {
    let n = k.ncols();
    assert_eq!(k.nrows(), n, "K is square");
    let k = k.as_slice().expect("row-major K");
    assert!(c_lo + h.ncols() <= n, "columns within K");
    assert!(
        h.ncols() <= 1 || h.strides()[1] == 1,
        "contiguous rows of h"
    );
    assert_eq!(offs.len(), rows.len() + 1, "one range per row");
    assert!(offs.windows(2).all(|w| w[0] <= w[1]) && offs.last() <= Some(&idx.len()));
    assert_eq!(idx.len(), delta.len());
    assert!(rows.iter().all(|&j| j < h.nrows()) && idx.iter().all(|&i| i < n));
    let cols = SparseCols { k, n, c_lo };
    #[cfg(target_arch = "x86_64")]
    if simd::vector_allowed() {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            unsafe { sparse_avx512(&cols, rows, offs, idx, delta, h) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { sparse_avx2(&cols, rows, offs, idx, delta, h) };
            return;
        }
    }
    simd::note_fallback();
    sparse_generic(&cols, rows, offs, idx, delta, h);
}

/// Row-major K (n x n) and the first of its columns that `h` holds.
struct SparseCols<'a> {
    k: &'a [f64],
    n: usize,
    c_lo: usize,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sparse_avx512(
    cols: &SparseCols,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut ArrayViewMut2<f64>,
) {
    sparse_generic(cols, rows, offs, idx, delta, h)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sparse_avx2(
    cols: &SparseCols,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut ArrayViewMut2<f64>,
) {
    sparse_generic(cols, rows, offs, idx, delta, h)
}

/// The body of [`add_sparse_combinations_cols`], compiled once per instruction set.
#[inline(always)]
fn sparse_generic(
    cols: &SparseCols,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut ArrayViewMut2<f64>,
) {
    let SparseCols { k, n, c_lo } = *cols;
    let width = h.ncols();
    let mut c0 = 0;
    while c0 < width {
        let w = SPARSE_BLOCK.min(width - c0);
        let kc = c_lo + c0;
        for (s, &j) in rows.iter().enumerate() {
            let mut hrow = h.row_mut(j);
            let seg = &mut hrow.as_slice_mut().expect("contiguous row")[c0..c0 + w];
            let terms = offs[s]..offs[s + 1];
            if w == SPARSE_BLOCK {
                let mut acc = [0.0f64; SPARSE_BLOCK];
                acc.copy_from_slice(seg);
                for p in terms {
                    let d = delta[p];
                    let row: &[f64; SPARSE_BLOCK] = k[idx[p] * n + kc..][..SPARSE_BLOCK]
                        .try_into()
                        .expect("a block");
                    for (a, &v) in acc.iter_mut().zip(row) {
                        *a += d * v;
                    }
                }
                seg.copy_from_slice(&acc);
            } else {
                for p in terms {
                    let d = delta[p];
                    let row = &k[idx[p] * n + kc..][..w];
                    for (a, &v) in seg.iter_mut().zip(row) {
                        *a += d * v;
                    }
                }
            }
        }
        c0 += w;
    }
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

mod elementary;
pub mod scalar;
pub mod simd;
pub use elementary::{exp_det_nonpositive, tanh_array_in_place, tanh_det, tanh_in_place};

extern "C" {
    // Provided by the system OpenBLAS (see `crate::linalg`).
    fn openblas_get_corename() -> *const std::ffi::c_char;
}

/// The kernel set OpenBLAS chose for this CPU (e.g. `Haswell`, `SkylakeX`, or
/// `Prescott` when its detection does not know the CPU); `OPENBLAS_CORETYPE` overrides it.
pub fn blas_core() -> Option<String> {
    // SAFETY: OpenBLAS returns a pointer to a static NUL-terminated string.
    let p = unsafe { openblas_get_corename() };
    (!p.is_null()).then(|| {
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .trim()
            .to_string()
    })
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

    /// The sparse row combinations add the terms one at a time, in order, on every
    /// instruction set: bit for bit the plain loop (n = 70: two full blocks of 32 and a
    /// partial one). And faer's products equal BLAS's to rounding.
    #[test]
    fn sparse_combinations_and_faer_products() {
        let n = 70;
        let k = Array2::from_shape_fn((n, n), |(i, j)| ((i * 31 + j * 17) % 23) as f64 / 7.0 - 1.3);
        let mut h = Array2::from_shape_fn((3, n), |(i, j)| (i + j) as f64 * 0.25);
        let mut want = h.clone();
        let (rows, offs) = ([2usize, 0], [0usize, 3, 4]);
        let (idx, delta) = ([5usize, 69, 5, 33], [0.5, -1.25, 3.0, 1e-3]);
        for s in 0..rows.len() {
            for p in offs[s]..offs[s + 1] {
                for c in 0..n {
                    want[(rows[s], c)] += delta[p] * k[(idx[p], c)];
                }
            }
        }
        add_sparse_combinations(&k.view(), &rows, &offs, &idx, &delta, &mut h.view_mut());
        assert_eq!(h, want);

        let a = Array2::from_shape_fn((40, n), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let (f, b) = (
            matmul(Kernels::Faer, &a.view(), &k.view()),
            matmul(Kernels::Blas, &a.view(), &k.view()),
        );
        for (x, y) in f.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0));
        }
        let mut g1 = Array2::zeros((40, 40));
        let mut g2 = Array2::zeros((40, 40));
        syrk_lower_accumulate_with(Kernels::Faer, &a.view(), &mut g1).unwrap();
        syrk_lower_accumulate_with(Kernels::Blas, &a.view(), &mut g2).unwrap();
        for i in 0..40 {
            for j in 0..=i {
                assert!((g1[(i, j)] - g2[(i, j)]).abs() <= 1e-12 * g2[(i, i)]);
            }
        }
    }

    /// Distance in units in the last place between two finite doubles (0 if equal,
    /// including +0 and -0).
    /// The softmax's `exp`: within 2 ulp of glibc's on (-708, 0], exact at 0, 0 below
    /// the floor and at -inf, NaN kept.
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
