//! Issue 50, family 6: the scalar fallbacks of the vectorised kernels, which no machine
//! here runs on its own (they all have AVX2). Each test runs a kernel with its fallback
//! forced (`linalg::simd::with_scalar_fallbacks`, per thread, off in production), checks
//! the fallback really ran (its call counter), and that it gives the same bits as the
//! dispatched path; the negative control changes one input by one ulp and checks the
//! bits change, so a fallback replaced by constants (or by anything input-blind) fails.
use dpclaims::linalg::simd::with_scalar_fallbacks;
use ndarray::{Array1, Array2};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn nudge(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The fused logistic-regression pass of DP-SGD (src/train/dpsgd/fused.rs, `run`).
#[test]
fn the_fused_logreg_pass_fallback_gives_the_vectorised_bits() {
    use dpclaims::train::dpsgd::{Model, ModelKind};
    let (d, k, n) = (23, 5, 37);
    let m = Model::new(ModelKind::Logreg, d, k);
    let theta = Array1::from_shape_fn(m.num_params(), |j| ((j as f64) * 0.37).sin() * 0.3);
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        (((i * 31 + j * 7) % 101) as f64) / 50.0 - 1.0
    });
    let y: Vec<usize> = (0..n).map(|i| (i * 3) % k).collect();
    let run = |theta: &Array1<f64>| {
        let (g, f, l) = m
            .logreg_clipped_sum(&theta.view(), &x.view(), &y, None, None, None, 0.7, None)
            .expect("logistic regression");
        (
            bits(g.as_slice().unwrap()),
            bits(f.as_slice().unwrap()),
            l.to_bits(),
        )
    };
    let (fast, before) = (run(&theta), dpclaims::linalg::simd::fallbacks());
    if has_avx2() {
        assert_eq!(
            dpclaims::linalg::simd::fallbacks(),
            before,
            "the default took the fallback"
        );
    }
    let (slow, calls) = with_scalar_fallbacks(|| run(&theta));
    assert!(calls >= 1, "the fallback did not run");
    assert_eq!(
        fast, slow,
        "the fallback's bits differ from the vectorised pass"
    );
    // Negative control: one ulp of one parameter changes the bits.
    let mut t2 = theta.clone();
    t2[3] = nudge(t2[3]);
    let (other, _) = with_scalar_fallbacks(|| run(&t2));
    assert_ne!(other, slow, "the comparison cannot see a change of input");
}

/// The clipped-sums pass of DP-GD (src/train/dpgd/pass.rs, `clipped_sums_inline`).
#[test]
fn the_dpgd_clipped_sums_fallback_gives_the_vectorised_bits() {
    use dpclaims::train::dpgd::{clipped_mean_gradient, ClipRule};
    let (n, p) = (19, 53);
    let phi = Array2::from_shape_fn((n, p), |(i, j)| {
        (((i * p + j) * 7919 % 1000) as f64) / 333.0 - 1.5
    });
    let phi_sq = Array1::from_iter(
        phi.rows()
            .into_iter()
            .map(|r| r.iter().map(|x| x * x).sum()),
    );
    let y = Array1::from_shape_fn(n, |i| (i as f64).sin());
    let theta = Array1::from_shape_fn(p, |j| ((j as f64) * 0.37).cos() * 0.2);
    let run = |theta: &Array1<f64>, rule| {
        let (g, s) = clipped_mean_gradient(
            &phi.view(),
            &phi_sq.view(),
            &y.view(),
            &theta.view(),
            3.0,
            rule,
            0.1,
        );
        (bits(g.as_slice().unwrap()), s.train_mse.to_bits())
    };
    for rule in [ClipRule::Divide, ClipRule::None] {
        let fast = run(&theta, rule);
        let (slow, calls) = with_scalar_fallbacks(|| run(&theta, rule));
        assert!(calls >= 1, "the fallback did not run");
        assert_eq!(fast, slow, "the fallback's bits differ ({rule:?})");
        let mut t2 = theta.clone();
        t2[0] = nudge(t2[0]);
        let (other, _) = with_scalar_fallbacks(|| run(&t2, rule));
        assert_ne!(other, slow, "the comparison cannot see a change of input");
    }
}

/// `tanh_in_place` (src/linalg/elementary.rs, `tanh_generic`).
#[test]
fn the_tanh_fallback_gives_the_vectorised_bits() {
    let xs: Vec<f64> = (0..4099).map(|i| (i as f64 - 2049.0) / 200.0).collect();
    let mut fast = xs.clone();
    dpclaims::linalg::tanh_in_place(&mut fast);
    let mut slow = xs.clone();
    let ((), calls) = with_scalar_fallbacks(|| dpclaims::linalg::tanh_in_place(&mut slow));
    assert!(calls >= 1, "the fallback did not run");
    assert_eq!(bits(&fast), bits(&slow));
    let mut other = xs.clone();
    other[2100] = nudge(other[2100]);
    let ((), _) = with_scalar_fallbacks(|| dpclaims::linalg::tanh_in_place(&mut other));
    assert_ne!(
        bits(&other),
        bits(&slow),
        "the comparison cannot see a change of input"
    );
}

/// `add_sparse_combinations` (src/linalg/mod.rs, `sparse_generic`).
#[test]
fn the_sparse_combinations_fallback_gives_the_vectorised_bits() {
    let n = 70;
    let k = Array2::from_shape_fn((n, n), |(i, j)| {
        (((i * 13 + j * 17) % 29) as f64) / 7.0 - 2.0
    });
    let rows = [0usize, 2, 3];
    let offs = [0usize, 3, 5, 9];
    let idx = [1usize, 5, 69, 0, 33, 2, 4, 8, 60];
    let delta = [0.5, -1.25, 3.0, 0.1, 0.7, -0.3, 2.5, 1e-3, -7.0];
    let run = |delta: &[f64]| {
        let mut h = Array2::from_shape_fn((4, n), |(i, j)| (i + j) as f64 * 0.01);
        dpclaims::linalg::add_sparse_combinations(
            &k.view(),
            &rows,
            &offs,
            &idx,
            delta,
            &mut h.view_mut(),
        );
        bits(h.as_slice().unwrap())
    };
    let fast = run(&delta);
    let (slow, calls) = with_scalar_fallbacks(|| run(&delta));
    assert!(calls >= 1, "the fallback did not run");
    assert_eq!(fast, slow);
    let mut d2 = delta;
    d2[4] = nudge(d2[4]);
    let (other, _) = with_scalar_fallbacks(|| run(&d2));
    assert_ne!(other, slow, "the comparison cannot see a change of input");
}
