//! Integration tests of DP-SGD, TP-TopK and its baselines (`train::dpsgd`), the digits
//! loader and `dpclaims train`. Release mode, seeded, small; each check has a negative
//! control where one makes sense.
use dpclaims::data::digits;
use dpclaims::privacy::{
    calibrate_two_phase, default_orders, improved_conversion, rdp_curve, Accountant,
    AccountantRecipe, Phase, PhasePlan,
};
use dpclaims::rng::SeedPath;
use dpclaims::train::dpsgd::{
    dp_step, misranking_bound, misranking_monte_carlo, poisson_sample, privatize,
    score_mean_monte_carlo,
    support::{random_support, scores, top_k, ScoreAccumulator},
    support_miss_monte_carlo, Activation, Classification, ClipOrder, DpSgdRecipe, Mask, Method,
    MethodConfig, Model, ModelKind, PrivacyLedger, StepParams, SyntheticSpec,
};
use dpclaims::train::Recipe;
use ndarray::{s, Array1, Array2};
use rand_distr::{Distribution, StandardNormal};

fn small_data(seed: u64) -> Classification {
    let spec = SyntheticSpec {
        n_train: 300,
        n_test: 200,
        features: 12,
        informative: 3,
        classes: 3,
        separation: 1.5,
        nuisance_sd: 1.0,
    };
    Classification::synthetic(&spec, &mut SeedPath::new(seed).rng_for("data")).unwrap()
}

fn models() -> Vec<ModelKind> {
    vec![
        ModelKind::Logreg,
        ModelKind::Mlp {
            hidden: 7,
            activation: Activation::Tanh,
        },
        ModelKind::Mlp {
            hidden: 7,
            activation: Activation::Relu,
        },
    ]
}

fn max_rel_err(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// Random parameters (the MLP init plus random biases, so no gradient is trivially 0).
fn random_theta(model: &Model, seed: u64) -> Array1<f64> {
    let mut rng = SeedPath::new(seed).rng_for("theta");
    model
        .init(&mut rng)
        .mapv(|v| v + 0.3 * Distribution::<f64>::sample(&StandardNormal, &mut rng))
}

// ---------------------------------------------------------------- per-example gradients

/// The batched per-example gradients (outer products), their squared norms computed
/// without materialising them (dense and masked), and the clipped sum by GEMM all equal
/// the brute-force loop over examples to 1e-10 relative.
#[test]
fn per_example_gradients_match_brute_force_for_both_models() {
    let data = small_data(1);
    let x = data.train_x.slice(s![..40, ..]).to_owned();
    let y = &data.train_y[..40];
    for kind in models() {
        let model = Model::new(kind, data.features(), data.classes);
        let p = model.num_params();
        let theta = random_theta(&model, 2);
        let bw = model.backward(&theta.view(), &x.view(), y);
        let g = model.per_example_gradients(&bw);
        let mut brute = Array2::zeros((y.len(), p));
        for (i, &yi) in y.iter().enumerate() {
            let gi = model.example_gradient_reference(&theta.view(), &x.row(i), yi);
            let err = max_rel_err(&g.row(i).to_owned(), &gi);
            assert!(err < 1e-10, "{kind:?} example {i}: rel err {err:e}");
            brute.row_mut(i).assign(&gi);
        }
        // Squared norms: dense and under a random mask.
        let mask = Mask::from_support(
            p,
            &random_support(p, p / 3, &mut SeedPath::new(3).rng()).unwrap(),
        )
        .unwrap();
        let fast_dense = model.per_example_sq_norms(&bw, None);
        let fast_masked = model.per_example_sq_norms(&bw, Some(&mask.weights()));
        for i in 0..y.len() {
            let row = brute.row(i);
            let dense: f64 = row.iter().map(|v| v * v).sum();
            let masked: f64 = mask.support().iter().map(|&j| row[j] * row[j]).sum();
            assert!(
                (fast_dense[i] - dense).abs() <= 1e-10 * dense,
                "{kind:?} dense norm {i}"
            );
            assert!(
                (fast_masked[i] - masked).abs() <= 1e-10 * masked,
                "{kind:?} masked norm {i}"
            );
        }
        // Weighted (clipped) sum by GEMM vs the explicit sum.
        let c: Array1<f64> = (0..y.len()).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let fast = model.weighted_gradient_sum(&bw, &c.view());
        let explicit = brute.t().dot(&c);
        let err = max_rel_err(&fast, &explicit);
        assert!(err < 1e-10, "{kind:?} weighted sum rel err {err:e}");
        // Negative control: the brute force is sensitive at that tolerance.
        let mut wrong = explicit.clone();
        wrong[0] += 1e-8 * explicit.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max_rel_err(&fast, &wrong) > 1e-10);
    }
}

/// The fused logistic-regression pass (the training step's path for logreg) equals the
/// brute-force loop over examples: clip factors from the (masked) per-example norms,
/// the clipped sum and the mean loss, dense and under a random mask, with a clip that
/// clips some examples and not others. It is `None` for an MLP (the GEMM path).
#[test]
fn fused_logreg_pass_matches_brute_force() {
    let data = small_data(1);
    let x = data.train_x.slice(s![..40, ..]).to_owned();
    let y = &data.train_y[..40];
    for kind in models() {
        let model = Model::new(kind, data.features(), data.classes);
        let p = model.num_params();
        let theta = random_theta(&model, 2);
        if kind != ModelKind::Logreg {
            assert!(model
                .logreg_clipped_sum(&theta.view(), &x.view(), y, None, None, None, 1.0, None)
                .is_none());
            continue;
        }
        let mask = Mask::from_support(
            p,
            &random_support(p, p / 3, &mut SeedPath::new(3).rng()).unwrap(),
        )
        .unwrap();
        let brute: Vec<Array1<f64>> = (0..y.len())
            .map(|i| model.example_gradient_reference(&theta.view(), &x.row(i), y[i]))
            .collect();
        let loss = model.backward(&theta.view(), &x.view(), y).loss;
        for masked in [false, true] {
            let m = masked.then(|| mask.support());
            let norms: Vec<f64> = brute
                .iter()
                .map(|g| match masked {
                    false => g.iter().map(|v| v * v).sum::<f64>().sqrt(),
                    true => mask
                        .support()
                        .iter()
                        .map(|&j| g[j] * g[j])
                        .sum::<f64>()
                        .sqrt(),
                })
                .collect();
            let mut sorted = norms.clone();
            sorted.sort_by(f64::total_cmp);
            let clip = sorted[sorted.len() / 2];
            let (sum, factors, fused_loss) = model
                .logreg_clipped_sum(&theta.view(), &x.view(), y, None, m, None, clip, None)
                .expect("logreg");
            // Reading the support only gives the same bits there, and 0 elsewhere.
            let (on_support, ..) = model
                .logreg_clipped_sum(
                    &theta.view(),
                    &x.view(),
                    y,
                    None,
                    m,
                    Some(mask.support()),
                    clip,
                    None,
                )
                .expect("logreg");
            for j in 0..p {
                let want = if mask.is_active(j) { sum[j] } else { 0.0 };
                assert_eq!(on_support[j].to_bits(), want.to_bits(), "coordinate {j}");
            }
            let mut explicit = Array1::<f64>::zeros(p);
            for (i, g) in brute.iter().enumerate() {
                let c = if norms[i] > clip {
                    clip / norms[i]
                } else {
                    1.0
                };
                assert!(
                    (factors[i] - c).abs() <= 1e-12 * c,
                    "masked {masked}: factor {i}: {} vs {c}",
                    factors[i]
                );
                explicit.scaled_add(c, g);
            }
            assert!(factors.iter().any(|&f| f < 1.0) && factors.iter().any(|&f| f == 1.0));
            let err = max_rel_err(&sum, &explicit);
            assert!(err < 1e-12, "masked {masked}: clipped sum rel err {err:e}");
            assert!((fused_loss - loss).abs() <= 1e-12 * loss.abs());
            // A batch read in place by its rows has the bits of the gathered batch.
            let rows = [7usize, 0, 31, 7, 12];
            let bx = x.select(ndarray::Axis(0), &rows);
            let by: Vec<usize> = rows.iter().map(|&i| y[i]).collect();
            let gathered = model
                .logreg_clipped_sum(&theta.view(), &bx.view(), &by, None, m, None, clip, None)
                .expect("logreg");
            let in_place = model
                .logreg_clipped_sum(
                    &theta.view(),
                    &x.view(),
                    y,
                    Some(&rows),
                    m,
                    None,
                    clip,
                    None,
                )
                .expect("logreg");
            assert_eq!(gathered.0, in_place.0);
            assert_eq!(gathered.1, in_place.1);
            assert_eq!(gathered.2.to_bits(), in_place.2.to_bits());
            // Negative control: the comparison sees a slip of 1e-9 in one coordinate.
            let mut wrong = explicit.clone();
            wrong[p - 1] += 1e-9 * explicit.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(max_rel_err(&sum, &wrong) > 1e-12);
        }
    }
}

/// Phase 2 with the frozen logits: the fused pass on a support with the logits' frozen
/// part kept in a [`StepCache`] equals the pass without it to 1e-12 (factors, sum, loss);
/// after a coordinate outside the support changes, the cache computes the part again
/// (the pass still agrees; keeping the old part would not).
#[test]
fn frozen_logits_match_the_full_forward_pass_and_follow_theta() {
    use dpclaims::train::dpsgd::fused::StepCache;
    let data = small_data(1);
    let (x, y) = (data.train_x.view(), &data.train_y[..]);
    let model = Model::new(ModelKind::Logreg, data.features(), data.classes);
    let p = model.num_params();
    let mut theta = random_theta(&model, 2);
    let support = random_support(p, p / 10, &mut SeedPath::new(3).rng()).unwrap();
    let mask = Mask::from_support(p, &support).unwrap();
    let rows: Vec<usize> = (0..y.len()).step_by(3).collect();
    let s = Some(mask.support());
    let mut cache = StepCache::default();
    for round in 0..3 {
        let plain = model
            .logreg_clipped_sum(&theta.view(), &x, y, Some(&rows), s, s, 0.5, None)
            .unwrap();
        let cached = model
            .logreg_clipped_sum(
                &theta.view(),
                &x,
                y,
                Some(&rows),
                s,
                s,
                0.5,
                Some(&mut cache),
            )
            .unwrap();
        assert!(
            max_rel_err(&cached.0, &plain.0) < 1e-12,
            "round {round}: sum"
        );
        assert!(
            max_rel_err(&cached.1, &plain.1) < 1e-12,
            "round {round}: factors"
        );
        assert!(
            (cached.2 - plain.2).abs() < 1e-12 * plain.2.abs(),
            "round {round}: loss"
        );
        // Round 1 moves a support coordinate (the cache stays valid), round 2 one
        // outside it (the cache must be computed again).
        let j = if round == 0 {
            support[0]
        } else {
            (0..p).find(|j| !mask.is_active(*j)).unwrap()
        };
        theta[j] += 0.7;
    }
    // Negative control: the change outside the support in round 2 moves the pass by far
    // more than the tolerance, so a cache that kept the old frozen part would have failed
    // round 2's comparison.
    let mut stale = StepCache::default();
    let before = {
        let mut t = theta.clone();
        let j = (0..p).find(|j| !mask.is_active(*j)).unwrap();
        t[j] -= 0.7;
        t
    };
    let plain = model
        .logreg_clipped_sum(&theta.view(), &x, y, Some(&rows), s, s, 0.5, None)
        .unwrap();
    let wrong = model
        .logreg_clipped_sum(
            &before.view(),
            &x,
            y,
            Some(&rows),
            s,
            s,
            0.5,
            Some(&mut stale),
        )
        .unwrap();
    assert!(max_rel_err(&wrong.0, &plain.0) > 1e-6);
}

/// The integer-threshold Poisson sample is the uniform comparison of the mechanism's
/// contract, bit for bit: same batch and same stream position afterwards, from the
/// generator and from a tape, at rates whose `q 2^53` is and is not an integer, at 1
/// and at rates small enough to draw nobody.
#[test]
fn poisson_sample_is_the_uniform_comparison() {
    use dpclaims::rng::{Tape, TapeRng};
    use rand::{Rng, RngExt};
    let path = SeedPath::new(11).child("poisson");
    for q in [
        0.08,
        0.5,
        0.25 + f64::EPSILON,
        1.0 / 3.0,
        1e-17,
        1.0,
        0.999_999_999_999,
    ] {
        for n in [0usize, 1, 7, 800, 1437] {
            let mut a = path.rng();
            let want: Vec<usize> = (0..n).filter(|_| a.random::<f64>() < q).collect();
            let mut b = path.rng();
            assert_eq!(poisson_sample(n, q, &mut b), want, "q {q} n {n}");
            assert_eq!(
                a.next_u32(),
                b.next_u32(),
                "stream position after, q {q} n {n}"
            );
            let tape = std::cell::RefCell::new(Tape::new(path.clone()));
            let mut t = TapeRng::new(&tape);
            assert_eq!(poisson_sample(n, q, &mut t), want, "tape, q {q} n {n}");
        }
    }
}

// ---------------------------------------------------------------- masking before clipping

/// Logistic regression with the weights of feature `j` inactive and zero: making
/// feature j of one example huge changes only that example's (inactive) gradient of
/// W[:, j]. With mask-then-clip, clip factors and g~ are bit-identical; the negative
/// control (clip-then-mask) sees the huge gradient through its clip factor.
#[test]
fn inactive_coordinates_never_affect_clipping_or_noise() {
    let data = small_data(4);
    let model = Model::new(ModelKind::Logreg, data.features(), data.classes);
    let (d, k_cls) = (data.features(), data.classes);
    let p = model.num_params();
    let j = 5;
    // Inactive: W[o, j] for every class o. Everything else active.
    let inactive: Vec<usize> = (0..k_cls).map(|o| o * d + j).collect();
    let support: Vec<usize> = (0..p).filter(|c| !inactive.contains(c)).collect();
    let mask = Mask::from_support(p, &support).unwrap();
    let mut theta = random_theta(&model, 5);
    for &c in &inactive {
        theta[c] = 0.0;
    }
    let x = data.train_x.slice(s![..50, ..]).to_owned();
    let y = &data.train_y[..50];
    let mut x_huge = x.clone();
    x_huge[[7, j]] = 1e6;
    let run = |xm: &Array2<f64>, order| {
        let params = StepParams {
            sampling_rate: 50.0 / 300.0,
            clip: 0.5,
            noise_multiplier: 1.3,
            lr: 0.1,
            recipe: DpSgdRecipe {
                clip_order: order,
                ..DpSgdRecipe::PAPER
            },
        };
        privatize(
            &model,
            &theta.view(),
            &xm.view(),
            y,
            50.0,
            &mask,
            &params,
            &mut SeedPath::new(6).rng(),
        )
    };
    let a = run(&x, ClipOrder::MaskThenClip);
    let b = run(&x_huge, ClipOrder::MaskThenClip);
    assert_eq!(
        a.clip_factors.mapv(f64::to_bits),
        b.clip_factors.mapv(f64::to_bits)
    );
    assert_eq!(a.gradient.mapv(f64::to_bits), b.gradient.mapv(f64::to_bits));
    for &c in &inactive {
        assert_eq!(
            a.gradient[c].to_bits(),
            0.0f64.to_bits(),
            "noise on inactive {c}"
        );
    }
    // Noise energy: k coordinates only (same draws, same energy).
    assert_eq!(a.noise_energy.to_bits(), b.noise_energy.to_bits());
    // Negative control: clip-then-mask is detected.
    let a2 = run(&x, ClipOrder::ClipThenMask);
    let b2 = run(&x_huge, ClipOrder::ClipThenMask);
    assert!(b2.clip_factors[7] < 1e-5 * a2.clip_factors[7]);
    assert!(max_rel_err(&a2.gradient, &b2.gradient) > 1e-6);
}

/// Phase 2 through the full step (Poisson sampling, noise, update): inactive parameters
/// are bit-identical after many steps, active ones move, and the ledger charges every
/// step at the phase's (q, z).
#[test]
fn inactive_parameters_are_frozen_bit_for_bit_in_phase_2() {
    let data = small_data(7);
    for kind in models() {
        let model = Model::new(kind, data.features(), data.classes);
        let p = model.num_params();
        let support = random_support(p, p / 4, &mut SeedPath::new(8).rng()).unwrap();
        let mask = Mask::from_support(p, &support).unwrap();
        let start = random_theta(&model, 9);
        let mut theta = start.clone();
        let params = StepParams {
            sampling_rate: 0.1,
            clip: 1.0,
            noise_multiplier: 1.1,
            lr: 0.3,
            recipe: DpSgdRecipe::PAPER,
        };
        let mut ledger = PrivacyLedger::new();
        let mut rng = SeedPath::new(10).rng();
        for _ in 0..25 {
            let out = dp_step(
                &model,
                &mut theta,
                &data.train_x.view(),
                &data.train_y,
                &mask,
                &params,
                &mut ledger,
                &mut rng,
            );
            for c in 0..p {
                if !mask.is_active(c) {
                    assert_eq!(out.privatized.gradient[c].to_bits(), 0.0f64.to_bits());
                }
            }
        }
        for c in 0..p {
            if mask.is_active(c) {
                assert_ne!(
                    theta[c].to_bits(),
                    start[c].to_bits(),
                    "{kind:?} active {c} frozen"
                );
            } else {
                assert_eq!(
                    theta[c].to_bits(),
                    start[c].to_bits(),
                    "{kind:?} inactive {c} moved"
                );
            }
        }
        assert_eq!(ledger.phases(), &[Phase::new(0.1, 1.1, 25)]);
    }
}

// ---------------------------------------------------------------- scores and supports

/// s_j = mean_t g~_{t,j}^2 - sigma^2 (paper Sec. 3.2), and Lemma 5.2: under the additive
/// model the score is unbiased for g_j^2. Negative control: without the noise-floor
/// correction the mean is off by sigma^2.
#[test]
fn warm_up_score_formula_and_unbiasedness() {
    let g = Array1::from(vec![0.5, -0.2, 0.0, 1.0]);
    let sigma = 0.7;
    let t1 = 20;
    let reps = 4000;
    let mut rng = SeedPath::new(11).rng();
    let mut mean_scores = Array1::<f64>::zeros(4);
    let mut mean_raw = Array1::<f64>::zeros(4);
    for r in 0..reps {
        let mut acc = ScoreAccumulator::new(4);
        let mut sum_sq = Array1::<f64>::zeros(4);
        for _ in 0..t1 {
            let gt: Array1<f64> =
                g.mapv(|v| v + sigma * Distribution::<f64>::sample(&StandardNormal, &mut rng));
            sum_sq += &gt.mapv(|v| v * v);
            acc.add(&gt.view());
        }
        let s = acc.scores(sigma).unwrap();
        if r == 0 {
            // The formula, term by term.
            for j in 0..4 {
                let want = sum_sq[j] / t1 as f64 - sigma * sigma;
                assert!((s[j] - want).abs() <= 1e-14 * want.abs().max(1.0));
            }
            assert_eq!(s, scores(&sum_sq.view(), t1, sigma).unwrap());
        }
        mean_scores += &s;
        mean_raw += &sum_sq.mapv(|v| v / t1 as f64);
    }
    mean_scores /= reps as f64;
    mean_raw /= reps as f64;
    for j in 0..4 {
        let g2 = g[j] * g[j];
        // sd of one score: sqrt((4 g^2 s^2 + 2 s^4)/T1); 5 standard errors.
        let se =
            ((4.0 * g2 * sigma * sigma + 2.0 * sigma.powi(4)) / t1 as f64 / reps as f64).sqrt();
        assert!((mean_scores[j] - g2).abs() < 5.0 * se, "coord {j}");
        assert!((mean_raw[j] - g2).abs() > 10.0 * se, "negative control {j}");
    }
}

#[test]
fn top_k_breaks_ties_by_lower_index_and_random_support_is_uniform() {
    let s = Array1::from(vec![1.0, 3.0, 3.0, -1.0, 3.0, 2.0]);
    assert_eq!(top_k(&s.view(), 2).unwrap(), vec![1, 2]);
    assert_eq!(top_k(&s.view(), 4).unwrap(), vec![1, 2, 4, 5]);
    assert!(top_k(&s.view(), 7).is_err());
    // Random support: each index with frequency k/P.
    let (p, k, reps) = (10, 3, 20000);
    let mut counts = [0usize; 10];
    let mut rng = SeedPath::new(12).rng();
    for _ in 0..reps {
        let sup = random_support(p, k, &mut rng).unwrap();
        assert_eq!(sup.len(), k);
        assert!(sup.windows(2).all(|w| w[0] < w[1]));
        for j in sup {
            counts[j] += 1;
        }
    }
    let pr = k as f64 / p as f64;
    let se = (pr * (1.0 - pr) / reps as f64).sqrt();
    for c in counts {
        assert!((c as f64 / reps as f64 - pr).abs() < 5.0 * se);
    }
}

// ---------------------------------------------------------------- Poisson sampling

/// Batch sizes of Poisson sampling: mean qN and variance qN(1-q), both within 5
/// standard errors. Negative control: a fixed-size sampler fails the variance check.
#[test]
fn poisson_batch_size_mean_and_variance() {
    let (n, q, reps) = (2000usize, 0.05, 4000usize);
    let mut rng = SeedPath::new(13).rng();
    let sizes: Vec<f64> = (0..reps)
        .map(|_| poisson_sample(n, q, &mut rng).len() as f64)
        .collect();
    let (mean_ok, var_ok) = batch_size_checks(&sizes, n, q);
    assert!(mean_ok && var_ok);
    let fixed = vec![q * n as f64; reps];
    let (m2, v2) = batch_size_checks(&fixed, n, q);
    assert!(m2 && !v2, "a fixed batch size must be rejected");
}

fn batch_size_checks(sizes: &[f64], n: usize, q: f64) -> (bool, bool) {
    let r = sizes.len() as f64;
    let mean = sizes.iter().sum::<f64>() / r;
    let var = sizes.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (r - 1.0);
    let (mu, v) = (q * n as f64, q * (1.0 - q) * n as f64);
    // Var of the sample variance ~ 2 v^2/(r-1) (near-normal binomial).
    let mean_ok = (mean - mu).abs() < 5.0 * (v / r).sqrt();
    let var_ok = (var - v).abs() < 5.0 * (2.0 * v * v / (r - 1.0)).sqrt();
    (mean_ok, var_ok)
}

// ---------------------------------------------------------------- privacy matching

fn digits_data() -> Classification {
    Classification::digits(0.2, &mut SeedPath::new(0).rng_for("data")).unwrap()
}

/// Every method meets the target: accounted epsilon <= target and within 1% of it; the
/// two-phase epsilon equals the composed RDP accountant's value (curves added,
/// improved conversion) and calibrate_two_phase's.
#[test]
fn every_method_spends_the_target_epsilon() {
    let data = digits_data();
    for eps in [1.0, 3.0] {
        for m in Method::ALL {
            let mut cfg = MethodConfig::new(m, ModelKind::Logreg, eps);
            cfg.epochs = 10;
            cfg.phase1_epochs = 3;
            let run =
                dpclaims::train::dpsgd::run_method(&data, &cfg, &SeedPath::new(1), &Recipe::PAPER)
                    .unwrap();
            let e = run.privacy.epsilon;
            assert!(e <= eps && e >= 0.99 * eps, "{m}: eps {e} vs target {eps}");
            let phases: Vec<Phase> = run
                .privacy
                .phases
                .iter()
                .map(|p| Phase::new(p.sampling_rate, p.noise_multiplier, p.steps))
                .collect();
            assert_eq!(
                phases.iter().map(|p| p.steps).sum::<u64>() as usize,
                run.steps
            );
            let orders = default_orders();
            let (composed, _) = improved_conversion(
                &orders,
                &rdp_curve(&phases, &orders, &AccountantRecipe::PAPER).unwrap(),
                cfg.delta,
            )
            .unwrap();
            assert_eq!(composed.to_bits(), e.to_bits(), "{m}");
            if m.is_two_phase() {
                assert_eq!(phases.len(), 2);
                let cal = calibrate_two_phase(
                    Accountant::Rdp,
                    eps,
                    cfg.delta,
                    cfg.budget_split,
                    PhasePlan {
                        sampling_rate: phases[0].sampling_rate,
                        steps: phases[0].steps,
                    },
                    PhasePlan {
                        sampling_rate: phases[1].sampling_rate,
                        steps: phases[1].steps,
                    },
                    &AccountantRecipe::PAPER,
                )
                .unwrap();
                assert_eq!(cal.epsilon.to_bits(), e.to_bits());
                let p1 = run.privacy.phases[0].epsilon_alone;
                assert!(p1 <= cfg.budget_split * eps * (1.0 + 1e-9));
                // Negative control: adding standalone epsilons overstates the cost.
                assert!(p1 + run.privacy.phases[1].epsilon_alone > e);
            } else {
                assert_eq!(phases.len(), 1);
            }
        }
    }
}

// ---------------------------------------------------------------- digits loader

#[test]
fn digits_loader_shape_classes_and_split() {
    let d = digits::load().unwrap();
    assert_eq!(d.x.dim(), (1797, 64));
    assert_eq!(d.labels.len(), 1797);
    let counts = d.class_counts();
    assert_eq!(counts.iter().sum::<usize>(), 1797);
    assert!(
        counts.iter().all(|&c| (174..=183).contains(&c)),
        "{counts:?}"
    );
    assert!(d.x.iter().all(|&v| (0.0..=1.0).contains(&v)));
    // First line of the CSV: 0,0,5,13,9,1,0,0,... label 0.
    assert_eq!(d.labels[0], 0);
    assert_eq!(d.x[[0, 2]].to_bits(), (5.0f64 / 16.0).to_bits());
    assert_eq!(d.x[[0, 3]].to_bits(), (13.0f64 / 16.0).to_bits());
    // The maximum pixel value is attained: scaling is by 16.
    assert_eq!(
        d.x.iter().fold(0.0f64, |m, &v| m.max(v)).to_bits(),
        1.0f64.to_bits()
    );
    let s1 = d.split(0.2, &mut SeedPath::new(3).rng()).unwrap();
    let s2 = d.split(0.2, &mut SeedPath::new(3).rng()).unwrap();
    let s3 = d.split(0.2, &mut SeedPath::new(4).rng()).unwrap();
    assert_eq!(s1.test_labels.len(), 359);
    assert_eq!(s1.train_labels.len(), 1438);
    assert_eq!(s1.train_x, s2.train_x);
    assert_eq!(s1.test_labels, s2.test_labels);
    assert_ne!(s1.test_labels, s3.test_labels);
    // The split is a partition: per-class counts add up.
    let mut c = [0usize; 10];
    for &l in s1.train_labels.iter().chain(&s1.test_labels) {
        c[l] += 1;
    }
    assert_eq!(c, counts);
    assert!(d.split(0.0, &mut SeedPath::new(3).rng()).is_err());
    assert!(d.split(1.0, &mut SeedPath::new(3).rng()).is_err());
}

// ---------------------------------------------------------------- determinism and runs

/// Same seed => bit-identical parameters; another seed => different ones. TP-TopK and
/// TP-Rand share their warm-up (same streams, dense mask).
#[test]
fn runs_are_deterministic_from_the_seed() {
    let data = digits_data();
    for kind in [
        ModelKind::Logreg,
        ModelKind::Mlp {
            hidden: 16,
            activation: Activation::Relu,
        },
    ] {
        let mut cfg = MethodConfig::new(Method::TpTopK, kind, 3.0);
        cfg.epochs = 6;
        cfg.phase1_epochs = 2;
        let run = |cfg: &MethodConfig, seed| {
            dpclaims::train::dpsgd::run_method(&data, cfg, &SeedPath::new(seed), &Recipe::PAPER)
                .unwrap()
        };
        let a = run(&cfg, 5);
        let b = run(&cfg, 5);
        let c = run(&cfg, 6);
        assert_eq!(a.theta.mapv(f64::to_bits), b.theta.mapv(f64::to_bits));
        assert_eq!(a.theta_digest, b.theta_digest);
        assert_ne!(a.theta_digest, c.theta_digest);
        cfg.method = Method::TpRand;
        let r = run(&cfg, 5);
        let t1 = a.privacy.phases[0].steps as usize;
        assert_eq!(a.trace[..t1], r.trace[..t1]);
        assert_ne!(a.support, r.support);
    }
}

/// On the synthetic mixture (gradient energy on few coordinates) the learned support
/// captures more oracle energy than k/P, and more than the random support; the
/// noise energy injected per step is k (z2 C2/qN)^2 in phase 2 vs P (z1 C1/qN)^2.
#[test]
fn learned_support_beats_random_on_concentrated_gradients() {
    let data = Classification::synthetic(
        &SyntheticSpec::default(),
        &mut SeedPath::new(21).rng_for("data"),
    )
    .unwrap();
    let mut cfg = MethodConfig::new(Method::TpTopK, ModelKind::Logreg, 8.0);
    cfg.epochs = 10;
    cfg.phase1_epochs = 4;
    let topk = dpclaims::train::dpsgd::run_method(&data, &cfg, &SeedPath::new(22), &Recipe::PAPER)
        .unwrap();
    cfg.method = Method::TpRand;
    let rand = dpclaims::train::dpsgd::run_method(&data, &cfg, &SeedPath::new(22), &Recipe::PAPER)
        .unwrap();
    let (dt, dr) = (&topk.diagnostics, &rand.diagnostics);
    let kp = dt.random_expectation;
    let (gt, gr) = (dt.gamma.unwrap(), dr.gamma.unwrap());
    assert!(
        gt > 2.0 * kp && gt > 2.0 * gr,
        "gamma topk {gt}, rand {gr}, k/P {kp}"
    );
    assert!(dt.proxy_concentration.unwrap() > 2.0 * kp);
    assert!(dt.gamma_best.unwrap() >= gt);
    let n = data.train_y.len() as f64;
    let qn = topk.privacy.phases[0].sampling_rate * n;
    for (e, ph, coords) in [
        (&dt.noise_energy[0], &topk.privacy.phases[0], dt.params),
        (&dt.noise_energy[1], &topk.privacy.phases[1], dt.active),
    ] {
        let want = coords as f64 * (ph.noise_multiplier * ph.clip / qn).powi(2);
        assert!((e.expected - want).abs() <= 1e-12 * want);
        assert_eq!(e.active, coords);
        // Measured: mean of a scaled chi-square with coords*steps degrees of freedom.
        let rel_sd = (2.0 / (coords * e.steps) as f64).sqrt();
        assert!(
            (e.measured / want - 1.0).abs() < 5.0 * rel_sd,
            "{}",
            e.segment
        );
    }
}

// ---------------------------------------------------------------- Prop. 5.3

/// The Chebyshev bound dominates the Monte Carlo misranking probability (up to MC
/// error), decreases in T1 like 1/T1, and rejects pairs with g_i^2 <= g_j^2.
#[test]
fn misranking_bound_dominates_monte_carlo() {
    let mut rng = SeedPath::new(30).rng();
    for (gi, gj, sigma, t1) in [(1.0, 0.5, 0.5, 5), (0.3, 0.1, 0.3, 20), (2.0, 1.5, 1.0, 50)] {
        let b = misranking_bound(gi, gj, sigma, t1).unwrap();
        let mc = misranking_monte_carlo(gi, gj, sigma, t1, 20000, &mut rng).unwrap();
        let se = (mc.probability * (1.0 - mc.probability) / 20000.0).sqrt();
        assert!(
            mc.probability <= b + 4.0 * se,
            "{gi},{gj},{sigma},{t1}: {mc:?} vs {b}"
        );
        let b2 = misranking_bound(gi, gj, sigma, 2 * t1).unwrap();
        assert!((b / b2 - 2.0).abs() < 1e-12);
    }
    // Closed form at one point: 4 s^2 (a + b + s^2) / (T (a - b)^2).
    let b = misranking_bound(1.0, 0.5, 0.5, 5).unwrap();
    let want = 4.0 * 0.25 * (1.0 + 0.25 + 0.25) / (5.0 * 0.75 * 0.75);
    assert!((b - want).abs() < 1e-15);
    // A large signal gap: the misranking probability is small, and so is the bound.
    let mc = misranking_monte_carlo(3.0, 0.1, 0.5, 50, 5000, &mut rng).unwrap();
    assert_eq!(mc.misranked, 0);
    assert!(misranking_bound(0.5, 1.0, 0.5, 5).is_err());
    assert!(misranking_bound(1.0, 0.5, -1.0, 5).is_err());
    assert!(misranking_monte_carlo(1.0, 0.5, 0.5, 0, 10, &mut rng).is_err());
}

/// The Sec. 5 diagnostics (Prop. 5.3's bound, its Monte Carlo, the union bound's support
/// miss, Lemma 5.2's score mean) accept each edge of the domain they document and refuse
/// each input just outside it, one input at a time: signals finite with `g_i^2 > g_j^2`,
/// `sigma` finite and `>= 0`, `T1 >= 1`, `1 <= k < P`, at least one trial (two for a
/// mean with its standard error), a finite noise-floor scale.
#[test]
fn the_section_5_diagnostics_accept_each_edge_of_their_domain_and_refuse_the_next_value() {
    let mut rng = SeedPath::new(31).rng();
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    // (g_i, g_j, sigma, t1): Prop. 5.3 and both of its Monte Carlo estimates.
    let edges = [
        (1.0, 0.5, 0.0, 1),
        (1.0, 0.999, 0.5, 1),
        (-1.0, 0.5, 0.5, 3),
        (0.5, 0.0, 1e300, 2),
    ];
    let outside = [
        (nan, 0.5, 0.5, 5),
        (1.0, inf, 0.5, 5),
        (1.0, 1.0, 0.5, 5),
        (1.0, -1.0, 0.5, 5),
        (0.5, 1.0, 0.5, 5),
        (1.0, 0.5, -1e-300, 5),
        (1.0, 0.5, nan, 5),
        (1.0, 0.5, inf, 5),
        (1.0, 0.5, 0.5, 0),
    ];
    for (gi, gj, s, t1) in edges {
        let at = format!("g_i {gi}, g_j {gj}, sigma {s}, T1 {t1}");
        assert!(
            misranking_bound(gi, gj, s, t1).is_ok(),
            "bound refuses {at}"
        );
        assert!(
            misranking_monte_carlo(gi, gj, s, t1, 1, &mut rng).is_ok(),
            "MC refuses {at}"
        );
        let miss = support_miss_monte_carlo(gi, gj, s, t1, 1, 2, 1, &mut rng);
        assert!(miss.is_ok(), "support miss refuses {at}");
    }
    for (gi, gj, s, t1) in outside {
        let at = format!("g_i {gi}, g_j {gj}, sigma {s}, T1 {t1}");
        assert!(
            misranking_bound(gi, gj, s, t1).is_err(),
            "bound accepts {at}"
        );
        assert!(
            misranking_monte_carlo(gi, gj, s, t1, 1, &mut rng).is_err(),
            "MC accepts {at}"
        );
        let miss = support_miss_monte_carlo(gi, gj, s, t1, 1, 2, 1, &mut rng);
        assert!(miss.is_err(), "support miss accepts {at}");
    }
    assert!(
        misranking_monte_carlo(1.0, 0.5, 0.5, 5, 0, &mut rng).is_err(),
        "no trial"
    );
    // The union bound: 1 <= k < P and at least one trial.
    for (k, p, trials, ok) in [
        (1, 2, 1, true),
        (3, 4, 1, true),
        (0, 2, 1, false),
        (2, 2, 1, false),
        (1, 2, 0, false),
    ] {
        let r = support_miss_monte_carlo(1.0, 0.5, 0.5, 2, k, p, trials, &mut rng);
        assert_eq!(
            r.is_ok(),
            ok,
            "support miss with k {k}, P {p}, trials {trials}: {r:?}"
        );
    }
    // Lemma 5.2's score mean: (g, sigma, T1, trials, floor scale).
    for (g, s, t1, trials, floor) in [
        (0.0, 0.0, 1, 2, 0.0),
        (-3.0, 0.5, 4, 2, 1.0),
        (1e300, 1e-300, 1, 3, -2.0),
    ] {
        let r = score_mean_monte_carlo(g, s, t1, trials, floor, &mut rng);
        assert!(
            r.is_ok(),
            "score mean refuses g {g}, sigma {s}, T1 {t1}, {trials} trials, floor {floor}: {r:?}"
        );
    }
    for (g, s, t1, trials, floor) in [
        (nan, 0.5, 4, 10, 1.0),
        (inf, 0.5, 4, 10, 1.0),
        (1.0, -1e-300, 4, 10, 1.0),
        (1.0, nan, 4, 10, 1.0),
        (1.0, inf, 4, 10, 1.0),
        (1.0, 0.5, 0, 10, 1.0),
        (1.0, 0.5, 4, 1, 1.0),
        (1.0, 0.5, 4, 10, nan),
        (1.0, 0.5, 4, 10, -inf),
    ] {
        let r = score_mean_monte_carlo(g, s, t1, trials, floor, &mut rng);
        assert!(
            r.is_err(),
            "score mean accepts g {g}, sigma {s}, T1 {t1}, {trials} trials, floor {floor}: {r:?}"
        );
    }
}

// ---------------------------------------------------------------- CLI

fn train_cli(args: &[&str]) -> std::process::Output {
    let mut all = vec!["train"];
    all.extend_from_slice(args);
    crate::util::dpclaims(&all)
}

#[test]
fn cli_train_json_and_bad_input() {
    let out = train_cli(&[
        "--method",
        "tp-topk",
        "--epsilon",
        "3",
        "--epochs",
        "4",
        "--json",
    ]);
    let v = crate::util::ok_json(&out);
    let eps = v["result"]["privacy"]["epsilon"].as_f64().unwrap();
    assert!(eps <= 3.0 && eps > 2.97);
    assert!(v["result"]["test_accuracy"].as_f64().unwrap() > 0.5);
    assert_eq!(
        v["result"]["privacy"]["phases"].as_array().unwrap().len(),
        2
    );
    for bad in [
        vec!["--method", "tp-topk", "--epsilon", "-1"],
        vec![
            "--method",
            "tp-topk",
            "--epsilon",
            "3",
            "--active-ratio",
            "0",
        ],
        vec![
            "--method",
            "tp-topk",
            "--epsilon",
            "3",
            "--active-ratio",
            "1.5",
        ],
        vec!["--method", "tp-topk", "--epsilon", "3", "--delta", "2"],
        vec![
            "--method",
            "tp-topk",
            "--epsilon",
            "3",
            "--epochs",
            "2",
            "--phase1-epochs",
            "2",
        ],
        vec!["--method", "dp-sgd", "--epsilon", "3", "--batch-size", "0"],
        vec!["--method", "nope", "--epsilon", "3"],
    ] {
        let out = train_cli(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{bad:?}: {err}");
    }
}

/// A run whose held-out diagnostics are deferred ([`run_method_deferred`], what a tuned
/// unit does for every cell of its grid) and computed afterwards has the same bits as a
/// run that computes them as it goes, for every method; before `diagnose` the held-out
/// fields are empty, and the training itself (parameters, trace) is the same run.
#[test]
fn deferred_held_out_diagnostics_have_the_bits_of_eager_ones() {
    use dpclaims::train::dpsgd::run_method_deferred;
    let data = Classification::synthetic(
        &SyntheticSpec::default(),
        &mut SeedPath::new(31).rng_for("data"),
    )
    .unwrap();
    for method in Method::ALL {
        let mut cfg = MethodConfig::new(method, ModelKind::Logreg, 4.0);
        cfg.epochs = 5;
        cfg.phase1_epochs = 2;
        let seeds = SeedPath::new(32);
        let eager =
            dpclaims::train::dpsgd::run_method(&data, &cfg, &seeds, &Recipe::PAPER).unwrap();
        let mut late = run_method_deferred(&data, &cfg, &seeds, &Recipe::PAPER).unwrap();
        assert_eq!(late.theta_digest, eager.theta_digest, "{method}");
        assert_eq!(late.trace, eager.trace, "{method}");
        assert_eq!(late.diagnostics.gamma, None, "{method}");
        assert_eq!(late.diagnostics.gamma_trajectory, None, "{method}");
        late.diagnose(&data).unwrap();
        assert!(late.held_out.is_none());
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        let (a, b) = (&eager.diagnostics, &late.diagnostics);
        for (x, y, what) in [
            (a.gamma, b.gamma, "gamma"),
            (a.gamma_best, b.gamma_best, "gamma_best"),
            (a.gamma_trajectory, b.gamma_trajectory, "gamma_trajectory"),
            (a.proxy_concentration, b.proxy_concentration, "proxy"),
        ] {
            assert_eq!(bits(x), bits(y), "{method} {what}");
        }
        assert_eq!(a, b, "{method}");
        // Two-phase methods have a trajectory; every method but DP-SGD a checkpoint.
        assert_eq!(
            a.gamma_trajectory.is_some(),
            method.is_two_phase(),
            "{method}"
        );
        assert_eq!(a.gamma.is_some(), method != Method::DpSgd, "{method}");
    }
}
