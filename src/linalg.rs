//! Small dense linear-algebra helpers on top of ndarray / ndarray-linalg / LAPACK.
//!
//! Products go through `ndarray::dot`, which calls BLAS (`ndarray` feature `blas`, with
//! the system OpenBLAS linked by `ndarray-linalg`'s `openblas-system` backend), except
//! the hot products of the reduced engine, which take a [`Kernels`]: faer by default.
use ndarray::linalg::general_mat_mul;
use ndarray::{
    Array1, Array2, ArrayBase, ArrayView1, ArrayView2, ArrayViewMut2, Axis, DataMut, Dimension,
};
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
                crate::perf::blas_core().unwrap_or_else(|| "unknown".into())
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
    let n = k.ncols();
    assert_eq!(k.nrows(), n, "K is square");
    let k = k.as_slice().expect("row-major K");
    let hn = h.nrows();
    assert_eq!(h.ncols(), n, "h has n columns");
    let h = h.as_slice_mut().expect("row-major h");
    assert_eq!(offs.len(), rows.len() + 1, "one range per row");
    assert!(offs.windows(2).all(|w| w[0] <= w[1]) && offs.last() <= Some(&idx.len()));
    assert_eq!(idx.len(), delta.len());
    assert!(rows.iter().all(|&j| j < hn) && idx.iter().all(|&i| i < n));
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            unsafe { sparse_avx512(k, n, rows, offs, idx, delta, h) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { sparse_avx2(k, n, rows, offs, idx, delta, h) };
            return;
        }
    }
    sparse_generic(k, n, rows, offs, idx, delta, h);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sparse_avx512(
    k: &[f64],
    n: usize,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut [f64],
) {
    sparse_generic(k, n, rows, offs, idx, delta, h)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sparse_avx2(
    k: &[f64],
    n: usize,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut [f64],
) {
    sparse_generic(k, n, rows, offs, idx, delta, h)
}

/// The body of [`add_sparse_combinations`], compiled once per instruction set.
#[inline(always)]
fn sparse_generic(
    k: &[f64],
    n: usize,
    rows: &[usize],
    offs: &[usize],
    idx: &[usize],
    delta: &[f64],
    h: &mut [f64],
) {
    let mut c0 = 0;
    while c0 < n {
        let w = SPARSE_BLOCK.min(n - c0);
        for (s, &j) in rows.iter().enumerate() {
            let seg = &mut h[j * n + c0..j * n + c0 + w];
            let terms = offs[s]..offs[s + 1];
            if w == SPARSE_BLOCK {
                let mut acc = [0.0f64; SPARSE_BLOCK];
                acc.copy_from_slice(seg);
                for p in terms {
                    let d = delta[p];
                    let row: &[f64; SPARSE_BLOCK] = k[idx[p] * n + c0..][..SPARSE_BLOCK]
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
                    let row = &k[idx[p] * n + c0..][..w];
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

/// Coefficients of Cephes' `tanh` for `|x| < 0.625` (Cephes Math Library 2.8, `tanh.c`,
/// S. L. Moshier, public domain): `tanh(x) = x + x z P(z)/Q(z)`, `z = x^2`; `P` from the
/// highest power down, `Q` monic (its leading 1 left out). The constants of this and the
/// next items are Cephes' decimal digits verbatim, to be checked against the source; they
/// parse to the same doubles as their shortest forms.
#[allow(clippy::excessive_precision)]
const TANH_P: [f64; 3] = [
    -9.64399179425052238628E-1,
    -9.92877231001918586564E1,
    -1.61468768441708447952E3,
];
#[allow(clippy::excessive_precision)]
const TANH_Q: [f64; 3] = [
    1.12811678491632931402E2,
    2.23548839060100448583E3,
    4.84406305325125486048E3,
];
/// Coefficients of Cephes' `exp` (`exp.c`, same library) on `|r| <= ln2/2`:
/// `exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))`.
#[allow(clippy::excessive_precision)]
const EXP_P: [f64; 3] = [
    1.26177193074810590878E-4,
    3.02994407707441961300E-2,
    9.99999999999999999910E-1,
];
#[allow(clippy::excessive_precision)]
const EXP_Q: [f64; 4] = [
    3.00198505138664455042E-6,
    2.52448340349684104192E-3,
    2.27265548208155028766E-1,
    2.00000000000000000009E0,
];
/// `ln 2 = EXP_C1 + EXP_C2` split so that `n * EXP_C1` is exact for the `n` used here.
const EXP_C1: f64 = 6.93145751953125E-1;
#[allow(clippy::excessive_precision)]
const EXP_C2: f64 = 1.42860682030941723212E-6;
/// `1.5 * 2^52`: `t + ROUND_MAGIC - ROUND_MAGIC` is `t` rounded to the nearest integer
/// (ties to even) for `|t| < 2^51`, and the integer sits in the low bits of
/// `(t + ROUND_MAGIC).to_bits()`.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// Below this `|x|` the rational approximation of `tanh` is used, above it `exp`.
const TANH_SMALL: f64 = 0.625;
/// `|x|` is clamped here before `exp(2|x|)`: from `|x| >= 19.0616` on, `1 - 2/(e^{2|x|} + 1)`
/// rounds to exactly 1, and `exp(40)` is far from overflow.
const TANH_CLAMP: f64 = 20.0;

/// `if mask is all ones { a } else { b }` on the bits: a data-flow select that LLVM keeps
/// as a vector blend instead of turning into a branch.
#[inline(always)]
fn select_bits(mask: u64, a: f64, b: f64) -> f64 {
    f64::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
}

/// All ones if `c`, else zero.
#[inline(always)]
fn mask_of(c: bool) -> u64 {
    0u64.wrapping_sub(c as u64)
}

/// Deterministic `tanh`: the exact formula [`tanh_in_place`] evaluates on every element,
/// here for one value (the remainder of a slice, tests).
///
/// Why not `f64::tanh`: glibc's scalar `tanh` was about 20-33 % of the random-features
/// claims' time (the `n x p` feature matrices), and a libm may round differently on another
/// machine or version. This one uses only IEEE `+ - * /`, comparisons, `abs`, `copysign`
/// and bit manipulation (no fused multiply-add, no libm), so its bits are the same on every
/// x86-64 machine and in every SIMD width; it is within 2 ulp of the true `tanh` (at most
/// 2 ulp from glibc's over the test sweep, 1.3 ulp from a 120-bit reference on 300 000
/// points of (1e-4, 20)).
///
/// Construction (Cephes Math Library 2.8, `tanh.c` and `exp.c`, S. L. Moshier, public
/// domain), both branches evaluated and one selected, so a chunk of a slice has no branch:
/// * `|x| < 0.625`: `z = x^2`, `tanh(x) = x + x z P(z)/Q(z)` (`TANH_P`, `TANH_Q`);
///   for tiny or subnormal `x`, `z` underflows and the result is `x` exactly;
/// * otherwise `tanh(|x|) = 1 - 2/(e + 1)` with `e = exp(2 min(|x|, 20))`: `n =
///   round(2|x| log2 e)`, `r = 2|x| - n C1 - n C2`, `exp(r) = 1 + 2 r P / (Q - r P)`
///   (`EXP_P`, `EXP_Q`), times `2^n` built in the exponent bits (`n <= 58`);
/// * the sign of `x` is copied onto the result: odd bit for bit, `tanh(-0) = -0`,
///   `tanh(+-inf) = +-1`, exactly `+-1` for `|x| >= 19.0616`, NaN stays NaN.
#[inline(always)]
pub fn tanh_det(x: f64) -> f64 {
    let a = x.abs();
    // Small branch: numerator and denominator of P(z)/Q(z).
    let z = a * a;
    let sp = (TANH_P[0] * z + TANH_P[1]) * z + TANH_P[2];
    let sq = ((z + TANH_Q[0]) * z + TANH_Q[1]) * z + TANH_Q[2];
    // Large branch: e = exp(2 min(|x|, 20)) (NaN stays NaN: the comparison is false).
    let y = 2.0 * select_bits(mask_of(a > TANH_CLAMP), TANH_CLAMP, a);
    let k = y * std::f64::consts::LOG2_E + ROUND_MAGIC;
    let n = k - ROUND_MAGIC;
    let r = y - n * EXP_C1 - n * EXP_C2;
    let rr = r * r;
    let px = r * ((EXP_P[0] * rr + EXP_P[1]) * rr + EXP_P[2]);
    let qx = ((EXP_Q[0] * rr + EXP_Q[1]) * rr + EXP_Q[2]) * rr + EXP_Q[3];
    let er = 1.0 + 2.0 * (px / (qx - px));
    // 2^n: n is in the low bits of k's mantissa; shifting by 52 drops k's own exponent.
    let scale = f64::from_bits((k.to_bits() << 52).wrapping_add(1023 << 52));
    let e = er * scale;
    // One division for both: small `a + (a z) sp/sq`, large `1 - 2/(e + 1)`.
    let m = mask_of(a < TANH_SMALL);
    let num = select_bits(m, sp, 2.0);
    let den = select_bits(m, sq, e + 1.0);
    let base = select_bits(m, a, 1.0);
    let coef = select_bits(m, a * z, -1.0);
    (base + coef * (num / den)).copysign(x)
}

/// Below this the deterministic `exp` of [`exp_det_nonpositive`] returns 0 (e^-708 is
/// about 3e-308, the bottom of the normal doubles).
const EXP_FLOOR: f64 = -708.0;

/// Deterministic `exp(x)` for `x <= 0` (the max-shifted logits of a softmax): Cephes'
/// construction of [`tanh_det`]'s large branch (`n = round(x log2 e)`, `r = x - n C1 -
/// n C2`, `exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))`, times `2^n` in the exponent
/// bits), with only IEEE `+ - * /` and bit manipulation: the same bits on every machine
/// and vector width, within 2 ulp of glibc's `exp` (test). `exp(0) = 1` exactly; below
/// [`EXP_FLOOR`] (and at `-inf`) it is 0, an absolute error under 3e-308 where the
/// largest term of a softmax is 1. NaN stays NaN. Written for the fused
/// logistic-regression pass, where glibc's `exp` was a tenth of a TP-TopK step.
#[inline(always)]
pub fn exp_det_nonpositive(x: f64) -> f64 {
    let below = mask_of(x < EXP_FLOOR);
    let y = select_bits(below, 0.0, x);
    let k = y * std::f64::consts::LOG2_E + ROUND_MAGIC;
    let n = k - ROUND_MAGIC;
    let r = y - n * EXP_C1 - n * EXP_C2;
    let rr = r * r;
    let px = r * ((EXP_P[0] * rr + EXP_P[1]) * rr + EXP_P[2]);
    let qx = ((EXP_Q[0] * rr + EXP_Q[1]) * rr + EXP_Q[2]) * rr + EXP_Q[3];
    let er = 1.0 + 2.0 * (px / (qx - px));
    // 2^n for -1022 <= n <= 0: n sits in the low bits of k's mantissa (two's complement).
    let scale = f64::from_bits((k.to_bits() << 52).wrapping_add(1023 << 52));
    select_bits(below, 0.0, er * scale)
}

/// Elements per chunk of [`tanh_in_place`]: the compiler turns a chunk into SIMD
/// operations (2, 4 or 8 lanes), with no branch inside.
const TANH_CHUNK: usize = 8;

/// `x <- tanh(x)` on every element, bit for bit [`tanh_det`] (see there for why and how),
/// vectorised: AVX-512 or AVX2 when the CPU has them (runtime detection), else SSE2. The
/// formula has no fused multiply-add and no libm call, so every instruction set gives the
/// same bits. Measured on this machine (AMD EPYC, 10^7 values in [-4, 4]): 0.7 ns an
/// element with AVX-512, 1.5 with AVX2, 3.2 with SSE2, against 6.9 for glibc's `tanh`.
pub fn tanh_in_place(xs: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            unsafe { tanh_avx512(xs) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { tanh_avx2(xs) };
            return;
        }
    }
    tanh_generic(xs);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tanh_avx512(xs: &mut [f64]) {
    tanh_generic(xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tanh_avx2(xs: &mut [f64]) {
    tanh_generic(xs)
}

/// The body of [`tanh_in_place`], compiled once per instruction set.
#[inline(always)]
fn tanh_generic(xs: &mut [f64]) {
    let mut chunks = xs.chunks_exact_mut(TANH_CHUNK);
    for chunk in &mut chunks {
        for v in chunk {
            *v = tanh_det(*v);
        }
    }
    for v in chunks.into_remainder() {
        *v = tanh_det(*v);
    }
}

/// `tanh` in place on every element of an array ([`tanh_in_place`] on its memory when it
/// is contiguous, in any order, else [`tanh_det`] element by element: the same bits
/// either way).
pub fn tanh_array_in_place<S, D>(m: &mut ArrayBase<S, D>)
where
    S: DataMut<Elem = f64>,
    D: Dimension,
{
    match m.as_slice_memory_order_mut() {
        Some(s) => tanh_in_place(s),
        None => m.mapv_inplace(tanh_det),
    }
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
    fn exp_det_nonpositive_is_within_two_ulp_of_glibc() {
        let mut worst = (0u64, 0.0);
        let mut x = -707.999;
        while x < 0.0 {
            for v in [x, x * 0.999_999_7, x / 3.1] {
                let d = ulp_distance(exp_det_nonpositive(v), v.exp());
                if d > worst.0 {
                    worst = (d, v);
                }
            }
            x += 0.000_731;
        }
        for v in [-1e-300, -1e-17, -5e-324, -0.0] {
            let d = ulp_distance(exp_det_nonpositive(v), v.exp());
            if d > worst.0 {
                worst = (d, v);
            }
        }
        assert!(worst.0 <= 2, "worst {} ulp at x = {}", worst.0, worst.1);
        assert_eq!(exp_det_nonpositive(0.0), 1.0);
        assert_eq!(exp_det_nonpositive(-708.5), 0.0);
        assert_eq!(exp_det_nonpositive(f64::NEG_INFINITY), 0.0);
        assert!(exp_det_nonpositive(f64::NAN).is_nan());
    }

    fn ulp_distance(a: f64, b: f64) -> u64 {
        let key = |v: f64| {
            let i = v.to_bits() as i64;
            if i < 0 {
                i64::MIN.wrapping_sub(i)
            } else {
                i
            }
        };
        key(a).abs_diff(key(b))
    }

    /// The sweep of the accuracy test: 2 million points log-spaced in |x| from 1e-300 to
    /// 40, both signs, then 2 million uniform in [-5, 5].
    fn tanh_sweep() -> Vec<f64> {
        let n = 1_000_000;
        let (l0, l1) = (1e-300f64.ln(), 40f64.ln());
        let mut xs = Vec::with_capacity(4 * n);
        for i in 0..n {
            let x = (l0 + (l1 - l0) * i as f64 / (n - 1) as f64).exp();
            xs.push(x);
            xs.push(-x);
        }
        let m = 2 * n;
        xs.extend((0..m).map(|i| -5.0 + 10.0 * i as f64 / (m - 1) as f64));
        xs
    }

    /// Within 3 ulp of glibc's `tanh` (itself within about 1 ulp of the true value)
    /// everywhere on the sweep, the slice version equal to the scalar one bit for bit.
    #[test]
    fn tanh_det_accuracy_against_libm() {
        let xs = tanh_sweep();
        let mut ys = xs.clone();
        tanh_in_place(&mut ys);
        let (mut worst, mut at) = (0, 0.0);
        for (&x, &y) in xs.iter().zip(&ys) {
            assert_eq!(
                y.to_bits(),
                tanh_det(x).to_bits(),
                "slice vs scalar at {x:e}"
            );
            let u = ulp_distance(y, x.tanh());
            if u > worst {
                (worst, at) = (u, x);
            }
        }
        assert!(
            worst <= 3,
            "max error {worst} ulp against f64::tanh (at x = {at:e})"
        );
        eprintln!("tanh_det: max {worst} ulp against f64::tanh, at x = {at:e}");
    }

    #[test]
    fn tanh_det_special_values() {
        let same = |x: f64, want: f64| {
            let got = tanh_det(x);
            assert_eq!(got.to_bits(), want.to_bits(), "tanh_det({x:e}) = {got:e}");
            let mut v = [x];
            tanh_in_place(&mut v);
            assert_eq!(v[0].to_bits(), want.to_bits(), "tanh_in_place({x:e})");
        };
        same(0.0, 0.0);
        same(-0.0, -0.0);
        same(f64::INFINITY, 1.0);
        same(f64::NEG_INFINITY, -1.0);
        for x in [19.1, 19.5, 20.0, 20.5, 40.0, 710.0, 1e300, f64::MAX] {
            same(x, 1.0);
            same(-x, -1.0);
        }
        // tanh(x) = x to the last bit for tiny x, subnormals included.
        for x in [
            f64::from_bits(1),
            f64::from_bits(12345),
            f64::MIN_POSITIVE / 3.0,
            f64::MIN_POSITIVE,
            1e-300,
            1e-200,
            1e-20,
            1e-9,
        ] {
            same(x, x);
            same(-x, -x);
        }
        assert!(tanh_det(f64::NAN).is_nan() && tanh_det(-f64::NAN).is_nan());
        let mut v = [f64::NAN; 9];
        tanh_in_place(&mut v);
        assert!(v.iter().all(|y| y.is_nan()));
        // Just below the clamp the result is below 1, and never above 1 anywhere.
        assert!(tanh_det(18.0) < 1.0 && tanh_det(18.0) == 18f64.tanh());
    }

    #[test]
    fn tanh_det_odd_and_monotone() {
        let xs = tanh_sweep();
        for &x in &xs {
            assert_eq!(
                tanh_det(-x).to_bits(),
                (-tanh_det(x)).to_bits(),
                "odd at {x:e}"
            );
            assert!(tanh_det(x).abs() <= 1.0);
        }
        // Monotone (non-decreasing) on a dense sorted sweep of [-21, 21], across the
        // branch switch at 0.625 and the clamp at 20, and on the log-spaced points.
        let m = 2_000_000;
        let mut prev = tanh_det(-21.0);
        for i in 1..=m {
            let x = -21.0 + 42.0 * i as f64 / m as f64;
            let y = tanh_det(x);
            assert!(y >= prev, "not monotone at {x:e}: {y:e} < {prev:e}");
            prev = y;
        }
        let mut pos: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
        pos.sort_by(f64::total_cmp);
        for w in pos.windows(2) {
            assert!(
                tanh_det(w[0]) <= tanh_det(w[1]),
                "not monotone at {:e}",
                w[1]
            );
        }
        // Around the branch switch, ulp by ulp.
        let mut x = TANH_SMALL;
        for _ in 0..2000 {
            x = f64::from_bits(x.to_bits() - 1);
        }
        for _ in 0..4000 {
            let next = f64::from_bits(x.to_bits() + 1);
            assert!(tanh_det(x) <= tanh_det(next), "not monotone at {next:e}");
            x = next;
        }
    }

    /// Every length 0..=37 (full chunks and remainders) and a start off the chunk
    /// boundary: bit for bit the scalar formula.
    #[test]
    fn tanh_in_place_equals_scalar_for_every_length() {
        let src: Vec<f64> = (0..40)
            .map(|i| (i as f64 * 0.618_033_988_749_895).fract() * 12.0 - 6.0)
            .collect();
        for start in 0..3 {
            for len in 0..=37 {
                let mut v = src[start..start + len].to_vec();
                tanh_in_place(&mut v);
                for (y, &x) in v.iter().zip(&src[start..]) {
                    assert_eq!(y.to_bits(), tanh_det(x).to_bits(), "len {len}, x = {x:e}");
                }
            }
        }
        // Every instruction set this CPU has gives the same bits on the whole sweep.
        let xs = tanh_sweep();
        let mut want = xs.clone();
        tanh_generic(&mut want);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut v = xs.clone();
                // SAFETY: the CPU has AVX2 (checked just above).
                unsafe { tanh_avx2(&mut v) };
                assert!(v.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                let mut v = xs.clone();
                // SAFETY: the CPU has AVX-512F (checked just above).
                unsafe { tanh_avx512(&mut v) };
                assert!(v.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
        // Arrays: row-major, column-major, and a non-contiguous view (every other column).
        let m = Array2::from_shape_fn((7, 5), |(i, j)| src[i * 5 + j]);
        let mut a = m.clone();
        tanh_array_in_place(&mut a);
        let mut b = m.t().as_standard_layout().into_owned().reversed_axes();
        assert!(b.as_slice().is_none() && b.as_slice_memory_order().is_some());
        tanh_array_in_place(&mut b);
        let mut c = m.clone();
        let mut every_other = c.slice_mut(ndarray::s![.., ..;2]);
        assert!(every_other.as_slice_memory_order().is_none());
        tanh_array_in_place(&mut every_other);
        for (((i, j), x), (y, (z, w))) in m.indexed_iter().zip(a.iter().zip(b.iter().zip(&c))) {
            let want = tanh_det(*x).to_bits();
            assert_eq!((y.to_bits(), z.to_bits()), (want, want));
            let want_c = if j % 2 == 0 { want } else { x.to_bits() };
            assert_eq!(w.to_bits(), want_c, "({i}, {j})");
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
