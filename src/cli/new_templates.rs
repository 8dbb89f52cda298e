//! The system-specific part of each `dpclaims new` scaffold: tiny sizes (every scaffold
//! runs in well under a second at the quick profile), an example statement the system
//! can check, a main variant, a negative control that breaks the statement and the one
//! prediction that catches it. The comments common to every scaffold, and the docs of
//! the parameters, options and metrics (from each system's `SystemInfo`), are written
//! by `new.rs`.

/// One system's scaffold.
pub(super) struct Template {
    /// The system's name (`systems::by_name`).
    pub system: &'static str,
    pub adjacency: &'static str,
    /// `data: {input, target}` for the systems that simulate data.
    pub data: Option<(&'static str, &'static str)>,
    /// Options the scaffold sets; the system's other options are listed as comments.
    pub options: &'static [(&'static str, &'static str)],
    /// `params:` in order: name and expression.
    pub params: &'static [(&'static str, &'static str)],
    /// Docs of the variables in `params` that the system does not read (helpers of the
    /// expressions, grid coordinates).
    pub helper_docs: &'static [(&'static str, &'static str)],
    /// What the scaffold checks as it stands, in words.
    pub example: &'static str,
    /// The body of `sweeps:` (indented two spaces).
    pub sweeps: &'static str,
    /// The items of `variants:`: the main variant, then the negative control.
    pub variants: &'static str,
    /// The one item of `predictions:`.
    pub prediction: &'static str,
    /// A metric to suggest in the commented `report_metrics:` line.
    pub report_metric: &'static str,
}

/// The placeholder quote of every `evidence: statement` scaffold.
const QUOTE: &str = r#"quote: {text: "TODO: the paper's sentence, word for word", where: "TODO: Sec. ?, Eq. ? (line)"}"#;

/// The prediction of both Gaussian scaffolds: the exact epsilon of the calibrated
/// mechanism at most the claimed one, at every point of the grid.
const EXACT_EPSILON_GRID: &str = r#"  - kind: inequality
    name: exact-epsilon-grid
    evidence: statement
    QUOTE
    metric: exact_epsilon
    sweep: grid
    op: "<="                       # <= | < | >= | >
    rhs: "epsilon"                 # an expression of the point's variables
"#;

/// Every system `dpclaims new` scaffolds (`external` runs a program of the user's:
/// docs/external-cores.md).
pub(super) fn all() -> [Template; 10] {
    [
        rf_dpgd(),
        gaussian_calibration(),
        gaussian_mechanism(),
        privacy_audit(),
        feature_learning(),
        rf_engines(),
        rf_tuned(),
        rf_fig2(),
        rf_kernel(),
        tp_topk(),
    ]
}

fn rf_dpgd() -> Template {
    Template {
        system: "rf_dpgd",
        adjacency: "replace_one",
        data: Some(("gaussian", "sign")),
        options: &[("clip_rule", "divide")],
        params: &[
            ("d", "4"),
            ("n", "16"),
            ("p", "4 * n"),
            ("n_test", "50"),
            ("eta", "1/p"),
            ("steps", "ceil(d * ln(n)^2 / (eta * p))"),
            ("clip", "sqrt(p) * ln(n)^2"),
            ("epsilon", "2"),
            ("delta", "1.0e-5"),
            ("kappa", "2"),
            ("sigma_scale", "1"),
        ],
        helper_docs: &[],
        example:
            "with sigma calibrated as Prop. 2.2 of privacy-for-free does (sigma proportional to \
                  1/eps), the DP noise term of full-batch DP-GD on random features, \
                  E_x[(phi(x)^T Theta~_T)^2], falls as eps^-2.",
        sweeps: r#"  vs_eps:
    quick:
      axes: {epsilon: [0.25, 0.5, 1, 2, 4, 8, 16]}
      replicates: 30
    full:
      axes: {epsilon: [0.25, 0.5, 1, 2, 4, 8, 16]}
      coupled: {n: "32"}
      replicates: 60
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the algorithm as the paper states it (here: Prop. 2.2's sigma, kappa = 2, replace-one)"
  - name: sigma-over-sqrt-eps
    negative_control: true
    caught_by: [noise-term-vs-eps]
    description: "sigma proportional to 1/sqrt(eps) instead of 1/eps (a calibration slip): the noise term falls as eps^-1, which the statement excludes"
    params: {sigma_scale: "sqrt(epsilon)"}
"#,
        prediction: r#"  - kind: exponent
    name: noise-term-vs-eps
    evidence: statement
    QUOTE
    metric: noise_term
    sweep: vs_eps
    x: epsilon                     # the fit is ln(mean metric) on ln(x)
    predicted: -2.0
    tolerance: 0.25
    tolerance_reason: "TODO: why this tolerance (here: the slope's interval is about +-0.12 at 30 replicates over 7 points)"
"#,
        report_metric: "clip_fraction",
    }
}

fn gaussian_calibration() -> Template {
    Template {
        system: "gaussian_calibration",
        adjacency: "replace_one",
        data: None,
        options: &[("sensitivity", "replace_one"), ("calibration", "prop_2_2")],
        params: &[
            ("frac", "0.5"),
            ("delta", "1.0e-5"),
            ("epsilon", "frac * 8 * ln(1/delta)"),
            ("steps", "100"),
            ("eta", "0.01"),
            ("kappa", "2"),
        ],
        helper_docs: &[(
            "frac",
            "epsilon as a share of 8 ln(1/delta), Prop. 2.2's range",
        )],
        example: "for delta in (0, 1) and eps in (0, 8 ln(1/delta)), Prop. 2.2's sigma = \
                  sqrt(eta T) sqrt(8 ln(1/delta))/eps makes T steps of full-batch DP-GD \
                  (eps, delta)-DP: the exact (Gaussian-DP) epsilon of the mechanism is at most \
                  eps at every point of the grid.",
        sweeps: r#"  grid:
    quick:
      axes: {frac: [0.01, 0.1, 0.5, 0.9], delta: [1.0e-8, 1.0e-5, 1.0e-3]}
      replicates: 1
    full:
      axes: {frac: [0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99], delta: [1.0e-10, 1.0e-8, 1.0e-5, 1.0e-3, 0.01]}
      replicates: 1
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the calibration as the paper states it (here: Prop. 2.2, kappa = 2, replace-one)"
  - name: inverse-epsilon
    negative_control: true
    caught_by: [exact-epsilon-grid]
    description: "sigma = sqrt(eta T)/eps: the sqrt(8 ln(1/delta)) factor dropped, too little noise for the claimed eps"
    options: {calibration: inverse_epsilon}
"#,
        prediction: EXACT_EPSILON_GRID,
        report_metric: "slack_ratio",
    }
}

fn gaussian_mechanism() -> Template {
    Template {
        system: "gaussian_mechanism",
        adjacency: "replace_one",
        data: None,
        options: &[("calibration", "classic")],
        params: &[
            ("sensitivity", "1"),
            ("delta", "1.0e-5"),
            ("epsilon", "0.5"),
            ("noise_scale", "1"),
            ("samples", "1000"),
        ],
        helper_docs: &[],
        example: "for epsilon in (0, 1), the Gaussian mechanism with sigma = Delta \
                  sqrt(2 ln(1.25/delta))/epsilon is (epsilon, delta)-DP (Dwork & Roth 2014, \
                  Thm. A.1): its exact epsilon (Gaussian DP, mu = Delta/sigma) is at most \
                  epsilon at every point of the grid.",
        sweeps: r#"  grid:
    quick:
      axes: {epsilon: [0.05, 0.2, 0.5, 0.9], delta: [1.0e-8, 1.0e-5, 1.0e-3]}
      replicates: 1
    full:
      axes: {epsilon: [0.01, 0.05, 0.1, 0.2, 0.5, 0.7, 0.9, 0.99], delta: [1.0e-10, 1.0e-8, 1.0e-5, 1.0e-3, 0.01]}
      replicates: 1
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the calibration as the paper states it (here: Dwork & Roth's classic sigma)"
  - name: half-noise
    negative_control: true
    caught_by: [exact-epsilon-grid]
    description: "half the calibrated sigma: too little noise for the claimed epsilon"
    params: {noise_scale: 0.5}
"#,
        prediction: EXACT_EPSILON_GRID,
        report_metric: "sigma",
    }
}

fn privacy_audit() -> Template {
    Template {
        system: "privacy_audit",
        adjacency: "replace_one",
        data: None,
        options: &[("mechanism", "rf-dpgd"), ("calibration", "prop-2-2")],
        params: &[
            ("epsilon", "2"),
            ("delta", "1.0e-5"),
            ("trials", "4000"),
            ("noise_scale", "1"),
            ("kappa", "2"),
        ],
        helper_docs: &[],
        example: "DP-GD on random features with Prop. 2.2's sigma is (eps, delta)-DP, so no \
                  membership attack certifies more: the audited lower bound on epsilon \
                  (a worst-case canary) is at most the claimed eps.",
        sweeps: r#"  vs_eps:
    quick:
      axes: {epsilon: [1, 2, 4]}
      replicates: 1
    full:
      axes: {epsilon: [0.5, 1, 2, 4, 8]}
      coupled: {trials: "20000"}
      replicates: 1
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the mechanism as the paper states it (here: Prop. 2.2's sigma, kappa = 2, replace-one)"
  - name: quarter-noise
    negative_control: true
    caught_by: [epsilon-lower-bound-vs-eps]
    description: "a quarter of the exactly calibrated sigma: not (eps, delta)-DP, the audit certifies more than eps"
    params: {noise_scale: "0.25"}
    options: {calibration: exact}
"#,
        prediction: r#"  - kind: inequality
    name: epsilon-lower-bound-vs-eps
    evidence: statement
    QUOTE
    metric: epsilon_lower_bound
    sweep: vs_eps
    op: "<="                       # <= | < | >= | >
    rhs: "epsilon"                 # an expression of the point's variables
"#,
        report_metric: "epsilon_accounted",
    }
}

fn feature_learning() -> Template {
    Template {
        system: "feature_learning",
        adjacency: "replace_one",
        data: Some(("gaussian", "{single_index: [0.0, 1.0, 0.5]}")),
        options: &[
            ("a0_init", "ones_over_sqrt_p"),
            ("grad_reduction", "mean"),
            ("clip_rule", "none"),
            ("normalise", "yes"),
        ],
        params: &[
            ("d", "8"),
            ("n", "64"),
            ("p", "16"),
            ("n_test", "100"),
            ("eta_w", "1"),
            ("sigma_w", "0"),
            ("eta_a", "1/p"),
            ("steps", "20"),
            ("clip", "10"),
            ("lambda", "0"),
            ("epsilon", "2"),
            ("delta", "1.0e-5"),
            ("kappa", "2"),
            ("sigma_scale", "1"),
        ],
        helper_docs: &[],
        example: "in the blog's Algorithm 1 (one first-layer step, then DP-GD on the second \
                  layer with sigma_a proportional to 1/eps), the risk the second layer's DP \
                  noise adds falls as eps^-2 (Theorem 1's eps^-2 term).",
        sweeps: r#"  vs_eps:
    quick:
      axes: {epsilon: [0.125, 0.25, 0.5, 1, 2, 4]}
      replicates: 40
    full:
      axes: {epsilon: [0.125, 0.25, 0.5, 1, 2, 4]}
      replicates: 80
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the algorithm as the paper states it (here: Assumption 4's sigma_a, no clipping)"
  - name: sigma-over-sqrt-eps
    negative_control: true
    caught_by: [privacy-risk-vs-eps]
    description: "sigma_a proportional to 1/sqrt(eps) instead of 1/eps: the added risk falls as eps^-1, which the statement excludes"
    params: {sigma_scale: "sqrt(epsilon)"}
"#,
        prediction: r#"  - kind: exponent
    name: privacy-risk-vs-eps
    evidence: statement
    QUOTE
    metric: privacy_risk
    sweep: vs_eps
    x: epsilon                     # the fit is ln(mean metric) on ln(x)
    predicted: -2.0
    tolerance: 0.25
    tolerance_reason: "TODO: why this tolerance (here: the slope's interval is about +-0.11 at 40 replicates over 6 points)"
"#,
        report_metric: "test_risk",
    }
}

fn rf_engines() -> Template {
    Template {
        system: "rf_engines",
        adjacency: "replace_one",
        data: Some(("gaussian", "sign")),
        options: &[("test_noise", "exact"), ("kernel_features", "same")],
        params: &[
            ("d", "8"),
            ("n", "20"),
            ("p", "40"),
            ("n_test", "20"),
            ("eta", "1/p"),
            ("steps", "20"),
            ("clip", "0.5 * sqrt(p)"),
            ("epsilon", "2"),
            ("delta", "1.0e-5"),
            ("kappa", "2"),
            ("sigma_scale", "1"),
            ("seeds", "100"),
        ],
        helper_docs: &[],
        example: "the reduced (kernel-space) DP-GD engine computes the same training as the \
                  direct one: without noise (sigma = 0) their train and test losses agree to \
                  1e-9 at every step. A check of the tool, not of a paper.",
        sweeps: r#"  vs_p:
    quick:
      axes: {p: [20, 40, 80]}
      replicates: 1
    full:
      axes: {p: [20, 40, 80, 160]}
      replicates: 2
"#,
        variants: r#"  - name: as-implemented
    description: "TODO: what is checked (here: the reduced engine as implemented)"
  - name: redrawn-kernel
    negative_control: true
    caught_by: [sigma0-max-rel-diff-vs-p]
    description: "the reduced engine's Gram matrix from a different draw of the features: a different training"
    options: {kernel_features: redrawn}
"#,
        prediction: r#"  - kind: inequality
    name: sigma0-max-rel-diff-vs-p
    evidence: self_check              # the tool's own correctness: no quote
    metric: sigma0_max_rel_diff
    sweep: vs_p
    op: "<="                       # <= | < | >= | >
    rhs: "1e-9"                    # an expression of the point's variables
"#,
        report_metric: "ks_p_value",
    }
}

fn rf_fig2() -> Template {
    Template {
        system: "rf_fig2",
        adjacency: "replace_one",
        data: Some(("gaussian", "sign")),
        options: &[("sensitivity", "clip")],
        params: &[
            ("d", "4"),
            ("n", "24"),
            ("n_test", "60"),
            ("n_val", "20"),
            ("epsilon", "4"),
            ("delta", "1/n"),
            ("kappa", "2"),
            ("sigma_scale", "1"),
        ],
        helper_docs: &[],
        example: "at p = 20n the top-right corner of the (C_clip, T) grid (C = 10^1.5 sqrt(p), \
                  eta T p/d = 10^2.5) has a higher mean test loss than the centre (C = sqrt(p), \
                  eta T p/d = 1): the noise of a large C over a long run swamps the fit.",
        sweeps: r#"  cells:
    quick:
      axes: {epsilon: [4]}
      replicates: 64
    full:
      axes: {epsilon: [4]}
      coupled: {n: "48", n_test: "100", n_val: "40"}
      replicates: 128
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the algorithm as the paper states it (here: Prop. 2.2's sigma at each run's T)"
  - name: noise-omitted
    negative_control: true
    caught_by: [top-right-above-centre]
    description: "the DP noise omitted (sigma = 0): without the noise the long run is no worse than the centre"
    params: {sigma_scale: "0"}
"#,
        prediction: r#"  - kind: inequality
    name: top-right-above-centre
    evidence: statement
    QUOTE
    metric: top_right_above_centre
    sweep: cells
    op: ">"                        # <= | < | >= | >
    rhs: "0"                       # an expression of the point's variables
    over: means                    # runs (default: every replicate) | means (intervals of the replicate means)
"#,
        report_metric: "loss_centre",
    }
}

fn rf_kernel() -> Template {
    Template {
        system: "rf_kernel",
        adjacency: "replace_one",
        data: Some(("sphere", "sign")),
        options: &[("drift", "attractive")],
        params: &[
            ("d", "4"),
            ("p", "n^2"),
            ("n_test", "20"),
            ("tau", "d * ln(n)^2 / p"),
            ("clip", "sqrt(p) * ln(n)^2"),
            ("epsilon", "4"),
            ("delta", "1/n"),
            ("kappa", "2"),
            ("grid", "200"),
        ],
        helper_docs: &[],
        example: "the noise part of the OU process of privacy-for-free (Eq. 13) stays, in \
                  expectation, below the reflection bound of its drift-free comparison (Eq. 19): \
                  the mean over the training points of sup_t |phi_i^T Theta~(t)| over \
                  sqrt(pi/2) Sigma sqrt(tau) ||phi_i|| is at most 1, so its log at most 0.",
        sweeps: r#"  vs_n:
    quick:
      axes: {n: [8, 12, 16]}
      replicates: 8
    full:
      axes: {n: [8, 12, 16, 24]}
      replicates: 16
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the process as the paper states it (here: the attractive drift -H theta of Eq. 13)"
  - name: repulsive-drift
    negative_control: true
    caught_by: [sup-within-reflection-bound]
    description: "the drift +H theta instead of -H theta: the comparison with the drift-free process fails"
    options: {drift: repulsive}
"#,
        prediction: r#"  - kind: inequality
    name: sup-within-reflection-bound
    evidence: statement
    QUOTE
    metric: sup_noise_log_ratio
    sweep: vs_n
    op: "<="                       # <= | < | >= | >
    rhs: "0"                       # an expression of the point's variables
    over: means                    # runs (default: every replicate) | means (intervals of the replicate means)
"#,
        report_metric: "sup_noise_ratio",
    }
}

fn rf_tuned() -> Template {
    Template {
        system: "rf_tuned",
        adjacency: "replace_one",
        data: Some(("gaussian", "sign")),
        options: &[("clip_rule", "divide")],
        params: &[
            ("d", "5"),
            ("n", "30"),
            ("p", "4 * n"),
            ("n_test", "40"),
            ("n_val", "20"),
            ("eta", "1/p"),
            ("steps", "10"),
            ("clip", "sqrt(p)"),
            ("epsilon", "8"),
            ("delta", "1.0e-5"),
            ("kappa", "2"),
            ("sigma_scale", "1"),
            ("grid_clip_lo", "1"),
            ("grid_clip_hi", "1"),
            ("grid_clip_k", "1"),
            ("grid_steps_lo", "1"),
            ("grid_steps_hi", "8"),
            ("grid_steps_k", "4"),
        ],
        helper_docs: &[],
        example: "DP-GD on random features with T tuned on a validation split beats the trivial \
                  predictor 0 (test MSE 1 on sign labels) at eps >= 8: its mean test MSE is \
                  below 1.",
        sweeps: r#"  vs_eps:
    quick:
      axes: {epsilon: [8, 16, 32]}
      replicates: 20
    full:
      axes: {epsilon: [8, 16, 32]}
      coupled: {n: "60", n_val: "40", n_test: "100"}
      replicates: 40
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the algorithm as the paper states it (here: Prop. 2.2's sigma at each cell's T)"
  - name: thirty-fold-noise
    negative_control: true
    caught_by: [test-loss-below-trivial]
    description: "sigma 30 times Prop. 2.2's (a noise-scaling slip): the noise swamps the fit"
    params: {sigma_scale: "30"}
"#,
        prediction: r#"  - kind: inequality
    name: test-loss-below-trivial
    evidence: statement
    QUOTE
    metric: test_loss
    sweep: vs_eps
    op: "<"                        # <= | < | >= | >
    rhs: "1"                       # an expression of the point's variables
    over: means                    # runs (default: every replicate) | means (intervals of the replicate means)
"#,
        report_metric: "best_steps",
    }
}

fn tp_topk() -> Template {
    Template {
        system: "tp_topk",
        adjacency: "not_applicable",
        data: None,
        options: &[("mode", "misranking")],
        params: &[
            ("g_j", "0.5"),
            ("gap", "1"),
            ("g_i", "sqrt(g_j^2 + gap)"),
            ("sigma", "1"),
            ("t1", "16"),
            ("trials", "5000"),
            ("bound_t1", "t1"),
        ],
        helper_docs: &[
            ("gap", "g_i^2 - g_j^2 > 0 (the proposition's hypothesis)"),
            (
                "bound_t1",
                "the T1 the bound divides by (the negative control changes it)",
            ),
        ],
        example:
            "under the additive model of TP-TopK Sec. 5, if g_i^2 > g_j^2 the probability that \
                  the warm-up scores misrank coordinates i and j is at most Prop. 5.3's \
                  Chebyshev bound 4 sigma^2 (g_i^2 + g_j^2 + sigma^2) / (T1 (g_i^2 - g_j^2)^2).",
        sweeps: r#"  grid:
    quick:
      axes: {gap: [0.3, 1, 3], sigma: [0.5, 1, 2], t1: [4, 16, 64]}
      replicates: 1
    full:
      axes: {gap: [0.1, 0.3, 1, 3], sigma: [0.25, 0.5, 1, 2], t1: [1, 4, 16, 64, 256]}
      coupled: {trials: "20000"}
      replicates: 1
"#,
        variants: r#"  - name: as-stated
    description: "TODO: the bound as the paper states it (here: Var s_j = (4 g_j^2 sigma^2 + 2 sigma^4)/T1)"
  - name: t1-squared-variance
    negative_control: true
    caught_by: [misranking-below-bound]
    description: "the bound with T1^2 in place of T1 (the variance of an average taken as Var/T1^2): too small, the Monte Carlo misranking exceeds it"
    params: {bound_t1: "t1^2"}
"#,
        prediction: r#"  - kind: inequality
    name: misranking-below-bound
    evidence: statement
    QUOTE
    metric: misranking_mc
    sweep: grid
    op: "<="                       # <= | < | >= | >
    rhs: "4 * sigma^2 * (g_i^2 + g_j^2 + sigma^2) / (bound_t1 * (g_i^2 - g_j^2)^2)"
"#,
        report_metric: "misranking_bound",
    }
}

/// A template's prediction with the placeholder quote filled in.
pub(super) fn prediction(t: &Template) -> String {
    t.prediction.replace("QUOTE", QUOTE)
}
