//! Option `tune` of the `tp_topk` system's mode `train`: each method a unit runs (its
//! own `method` and, under `compare`, each comparator) chooses its own learning rate
//! and clipping norm on a validation split over a declared grid, so that a method
//! comparison (Tables 2-4) is not won by the hyper-parameters that happen to suit one
//! method; and the non-private ceiling of dense DP-SGD (Sec. 7.2: sparsification helps
//! "when dense DP-SGD remains far from ceiling accuracy").
//!
//! * Grid: `lr_i = tune_lr_min (tune_lr_max/tune_lr_min)^(i/(tune_lr_points-1))`, i = 0..
//!   tune_lr_points (log-spaced; one point is `tune_lr_min`), and likewise the clipping
//!   norms over `tune_clip_*`. Cells in grid order: learning rate ascending, then clip
//!   ascending. A cell's clip c sets C1 = c and C2 = `clip_phase2 * (c / clip)`, so C2 =
//!   C1 unless `clip_phase2` is set (then the ratio C2/C1 is kept); the spec's `lr` and
//!   `clip` are otherwise replaced by the grid.
//! * Validation split: the LAST m = round(f N) examples of the training split (f =
//!   `validation_fraction`), the runs train on the first N - m. The training split is in
//!   random order (digits: a permutation of the data set; planted and synthetic: i.i.d.
//!   draws), so no draw is added and the stream `data` is consumed as without tuning.
//! * Streams: every cell of every method, and the ceiling, runs on the unit's streams
//!   `run/init`, `run/train`, `run/support` — those of the untuned run — so cells and
//!   methods differ by their hyper-parameters and not by their draws (common random
//!   numbers; no stream per cell).
//! * Edge: a selected cell is *at the grid's edge* when its learning rate is the first
//!   or last of an axis of at least 3 points, or its clip the first or last of a clip
//!   axis of at least 3 points (`selected_at_edge`, 0 or 1 per unit; its mean over a
//!   point's replicates is the share of units whose selection sits on an edge). An axis
//!   of 1 point is fixed by design and an axis of 2 points has no interior: neither
//!   counts (the selected clip itself is reported as `selected_clip`). A selection at
//!   the edge means the grid may not contain the method's optimum: the tuning is
//!   reported, not silently trusted (issue 46).
//! * Selection: the cell of the highest validation accuracy; ties go to the earlier cell
//!   in grid order (the smaller learning rate, then the smaller clip). The "second" cell
//!   is the next in the order by validation accuracy (descending, ties in grid order);
//!   on a one-cell grid it is the best one. A method reports the test accuracy (and the
//!   diagnostics) of its selected cell's run. The test split is never read by the
//!   selection: a run's test accuracy is computed, but only validation accuracies order
//!   the cells.
//! * `validation_fraction: 0` is allowed on a one-cell grid only (nothing to select;
//!   a grid of more cells with no validation split is an error, hyper-parameters are
//!   never chosen on test): the runs then train on the whole training split, and the
//!   unit equals `tune: none` at that cell bit for bit.
//! * `tune: none`: one cell, the spec's (`lr`, `clip`), on the whole training split:
//!   today's single run; the selected cell is that one and the second is the best.
//! * The ceiling ([`crate::train::dpsgd::run_non_private`]: dense minibatch SGD without
//!   clipping or noise) is tuned the same way over the learning rates (without clipping
//!   the clip grid has no effect); it runs only when `dense_ceiling_*` is asked for.
//!
//! Privacy: each run is calibrated to the target epsilon as without tuning, and its
//! reported epsilon is that of the selected run alone. The selection itself reads the
//! training data (its validation part) through every cell's run and is NOT privatised
//! or accounted: the reported epsilon does not cover the choice of the cell (a private
//! selection costs privacy, Papernot and Steinke, "Hyperparameter tuning with Rényi
//! differential privacy", ICLR 2022). Our copy of the paper does not say how its
//! hyper-parameters were chosen. Sec. 7.1 (Reporting protocol) implies that they were
//! tuned — the diagnostics "are used only for post-hoc analysis and are never used for
//! support construction, hyperparameter tuning, early stopping, or model selection" —
//! and its accounting covers the training alone ("both training phases are included in
//! the privacy accountant", Sec. 7.1, Privacy accounting), as here.
use super::{SystemError, UnitInput};
use crate::rng::{SeedPath, Tape};
use crate::train::dpsgd::{
    run_method_on_tape, run_non_private, Classification, Method, MethodConfig, MethodRun, Model,
};
use crate::train::Recipe;
use ndarray::{s, Array1, Array2};
use std::cell::RefCell;

/// Default learning-rate grid `(min, max, points)`: 0.02, 0.1, 0.5.
pub(super) const LR_GRID: (f64, f64, usize) = (0.02, 0.5, 3);
/// Default clip grid `(min, max, points)`: 0.5, 2.
pub(super) const CLIP_GRID: (f64, f64, usize) = (0.5, 2.0, 2);
/// Default share of the training split held out for the selection.
pub(super) const VALIDATION_FRACTION: f64 = 0.2;

fn invalid(e: impl std::fmt::Display) -> SystemError {
    SystemError::Invalid(e.to_string())
}

/// The log-spaced grid of `name` (module docs), ascending.
fn log_grid(name: &str, min: f64, max: f64, points: usize) -> Result<Vec<f64>, SystemError> {
    if !(min > 0.0 && min <= max && max.is_finite()) || points == 0 {
        return Err(invalid(format!(
            "{name} grid: need 0 < {name}_min <= {name}_max and {name}_points >= 1, got {min}, {max}, {points}"
        )));
    }
    if points == 1 {
        return Ok(vec![min]);
    }
    let ratio = max / min;
    Ok((0..points)
        .map(|i| min * ratio.powf(i as f64 / (points - 1) as f64))
        .collect())
}

/// One grid cell of a method, measured.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cell {
    pub lr: f64,
    pub clip: f64,
    /// Validation accuracy (NaN without a validation split).
    pub validation: f64,
    pub test: f64,
    /// On an edge of an axis of at least 3 points (module docs).
    pub at_edge: bool,
}

/// A method's selection: its best and second-best cells and the best cell's run.
pub(super) struct Tuned<R> {
    pub best: Cell,
    pub second: Cell,
    pub run: R,
}

/// The data split and the grid of a unit (module docs).
pub(super) struct Tuner {
    /// What every run trains on (the training split minus the validation part) and is
    /// tested on.
    data: Classification,
    validation: Option<(Array2<f64>, Vec<usize>)>,
    /// `(learning rates, clips)`; `None` under `tune: none` (the config's own cell).
    grid: Option<(Vec<f64>, Vec<f64>)>,
    /// The streams of every run (`run` under the unit).
    seeds: SeedPath,
    /// The `train` stream under `seeds`, generated once for every run of the unit
    /// ([`crate::rng::Tape`]: the same bits as each run drawing it anew).
    tape: RefCell<Tape>,
}

impl Tuner {
    /// The unit's tuner over `data` (module docs), its runs on `seeds`.
    pub(super) fn new(
        data: Classification,
        u: &UnitInput,
        seeds: SeedPath,
    ) -> Result<Self, SystemError> {
        if u.option("tune") != "validation" {
            return Ok(Self {
                data,
                validation: None,
                grid: None,
                tape: RefCell::new(Tape::new(seeds.child("train"))),
                seeds,
            });
        }
        let axis = |name: &str, (min, max, points): (f64, f64, usize)| {
            log_grid(
                name,
                u.var_or(&format!("{name}_min"), min),
                u.var_or(&format!("{name}_max"), max),
                u.var_or(&format!("{name}_points"), points as f64) as usize,
            )
        };
        let (lrs, clips) = (axis("tune_lr", LR_GRID)?, axis("tune_clip", CLIP_GRID)?);
        let cells = lrs.len() * clips.len();
        let fraction = u.var_or("validation_fraction", VALIDATION_FRACTION);
        if !(0.0..1.0).contains(&fraction) {
            return Err(invalid(format!(
                "validation_fraction must be in [0, 1), got {fraction}"
            )));
        }
        let n = data.train_y.len();
        let m = (fraction * n as f64).round() as usize;
        if m == 0 {
            if cells > 1 {
                return Err(invalid(format!(
                    "a grid of {cells} cells needs a validation split (validation_fraction {fraction} of {n} training examples holds out none): hyper-parameters are never chosen on the test split"
                )));
            }
            return Ok(Self {
                data,
                validation: None,
                grid: Some((lrs, clips)),
                tape: RefCell::new(Tape::new(seeds.child("train"))),
                seeds,
            });
        }
        if m >= n {
            return Err(invalid(format!(
                "validation_fraction {fraction} leaves no training example of {n}"
            )));
        }
        let fit = n - m;
        let validation = (
            data.train_x.slice(s![fit.., ..]).to_owned(),
            data.train_y[fit..].to_vec(),
        );
        let data = Classification {
            train_x: data.train_x.slice(s![..fit, ..]).to_owned(),
            train_y: data.train_y[..fit].to_vec(),
            ..data
        };
        Ok(Self {
            data,
            validation: Some(validation),
            grid: Some((lrs, clips)),
            tape: RefCell::new(Tape::new(seeds.child("train"))),
            seeds,
        })
    }

    /// What the runs train on and are tested on.
    pub(super) fn data(&self) -> &Classification {
        &self.data
    }

    /// `cfg.method`, tuned (module docs), with the formulas of `recipe`.
    pub(super) fn method(
        &self,
        cfg: &MethodConfig,
        recipe: &Recipe,
    ) -> Result<Tuned<MethodRun>, SystemError> {
        let clips = self.grid.as_ref().map(|(_, c)| c.as_slice());
        // Every cell trains; only the selected one's held-out diagnostics are reported,
        // so only it computes them (the same bits as computing them in every cell).
        let mut tuned = self.select(cfg, clips, |c| {
            let r = run_method_on_tape(&self.data, c, &self.seeds, recipe, &self.tape)
                .map_err(invalid)?;
            Ok((r.test_accuracy, r.theta.clone(), r))
        })?;
        tuned.run.diagnose(&self.data).map_err(invalid)?;
        Ok(tuned)
    }

    /// The non-private ceiling of dense DP-SGD at `cfg`'s model, epochs and batch, tuned
    /// over the learning rates (module docs); returns its test accuracy.
    pub(super) fn ceiling(&self, cfg: &MethodConfig) -> Result<f64, SystemError> {
        let c = MethodConfig {
            method: Method::DpSgd,
            ..cfg.clone()
        };
        let t = self.select(&c, Some(&[cfg.clip]), |c| {
            let r = run_non_private(&self.data, c, &self.seeds).map_err(invalid)?;
            Ok((r.test_accuracy, r.theta, ()))
        })?;
        Ok(t.best.test)
    }

    /// Runs every cell (`clips` replaces the grid's clips; `run` returns a run's test
    /// accuracy, final parameters and result) and selects on validation accuracy.
    fn select<R>(
        &self,
        cfg: &MethodConfig,
        clips: Option<&[f64]>,
        run: impl Fn(&MethodConfig) -> Result<(f64, Array1<f64>, R), SystemError>,
    ) -> Result<Tuned<R>, SystemError> {
        let configs: Vec<MethodConfig> = match (&self.grid, clips) {
            (Some((lrs, _)), Some(clips)) => lrs
                .iter()
                .flat_map(|&lr| {
                    clips.iter().map(move |&clip| MethodConfig {
                        lr,
                        clip,
                        clip_phase2: cfg.clip_phase2 * (clip / cfg.clip),
                        ..cfg.clone()
                    })
                })
                .collect(),
            _ => vec![cfg.clone()],
        };
        // Axis sizes and positions, for the edge flag (module docs): grid order is the
        // learning rate ascending, then the clip ascending.
        let (n_lr, n_clip) = match (&self.grid, clips) {
            (Some((lrs, _)), Some(clips)) => (lrs.len(), clips.len()),
            _ => (1, 1),
        };
        let edge = |i: usize, n: usize| n >= 3 && (i == 0 || i + 1 == n);
        let model = Model::new(cfg.model, self.data.features(), self.data.classes);
        let mut cells = Vec::with_capacity(configs.len());
        let mut runs = Vec::with_capacity(configs.len());
        for (index, c) in configs.iter().enumerate() {
            let (test, theta, r) = run(c)?;
            let (i_lr, i_clip) = (index / n_clip, index % n_clip);
            // The selection's only input: accuracy on the validation part.
            let validation = self.validation.as_ref().map_or(f64::NAN, |(x, y)| {
                model.accuracy(&theta.view(), &x.view(), y)
            });
            cells.push(Cell {
                lr: c.lr,
                clip: c.clip,
                validation,
                test,
                at_edge: edge(i_lr, n_lr) || edge(i_clip, n_clip),
            });
            runs.push(Some(r));
        }
        let validation: Vec<f64> = cells.iter().map(|c| c.validation).collect();
        let (best, second) = best_two(&validation);
        Ok(Tuned {
            best: cells[best],
            second: cells[second],
            run: runs[best].take().expect("each run is taken once"),
        })
    }
}

/// The indices of the best and second-best of `validation` accuracies in grid order
/// (highest first; equal accuracies keep the grid order: the smaller learning rate, then
/// the smaller clip); the second is the best when there is one cell.
fn best_two(validation: &[f64]) -> (usize, usize) {
    let mut order: Vec<usize> = (0..validation.len()).collect();
    // A stable sort: ties keep the grid order.
    order.sort_by(|&a, &b| validation[b].total_cmp(&validation[a]));
    (order[0], order[1.min(order.len() - 1)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::planted::PlantedSpec;
    use crate::spec::{DataSpec, TargetSpec};
    use crate::systems::{cost::CostInput, System};
    use crate::train::dpsgd::run_method;
    use crate::train::dpsgd::ModelKind;
    use std::collections::{BTreeMap, BTreeSet};

    const SEED: u64 = 11;

    /// A small planted unit (P = 204, 15 steps a run) with `vars` and `options` on top.
    struct Unit {
        vars: BTreeMap<String, f64>,
        options: BTreeMap<String, String>,
        metrics: BTreeSet<String>,
        data: DataSpec,
    }

    fn unit(vars: &[(&str, f64)], options: &[(&str, &str)]) -> Unit {
        let sys = &crate::systems::tp_topk::TpTopK;
        let base = [
            ("epsilon", 3.0),
            ("epochs", 3.0),
            ("phase1_epochs", 1.0),
            ("n_train", 400.0),
            ("n_test", 300.0),
        ];
        Unit {
            vars: base
                .iter()
                .chain(vars)
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            // Defaults (the first allowed value), as spec validation fills them in.
            options: sys
                .options()
                .iter()
                .map(|o| (o.name.to_string(), o.values[0].to_string()))
                .chain(
                    [("data", "planted"), ("compare", "ranking")]
                        .into_iter()
                        .chain(options.iter().copied())
                        .map(|(k, v)| (k.to_string(), v.to_string())),
                )
                .collect(),
            metrics: sys.metrics().iter().map(|m| m.name.to_string()).collect(),
            data: DataSpec {
                input: crate::data::InputDist::Gaussian,
                target: TargetSpec::None,
                label_noise: 0.0,
            },
        }
    }

    impl Unit {
        fn input(&self) -> UnitInput<'_> {
            UnitInput {
                vars: &self.vars,
                options: &self.options,
                data: &self.data,
                metrics: &self.metrics,
                variant: "main",
                seeds: SeedPath::new(SEED).child("tune-test"),
                recipe: &Recipe::PAPER,
                shared: None,
            }
        }
        fn run(&self) -> BTreeMap<String, u64> {
            crate::systems::tp_topk::TpTopK
                .run(&self.input())
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k, v.to_bits()))
                .collect()
        }
        fn cost(&self) -> f64 {
            crate::systems::tp_topk::TpTopK
                .cost(&CostInput {
                    vars: &self.vars,
                    options: &self.options,
                    metrics: &self.metrics,
                })
                .seconds
        }
        /// The unit's data, drawn as the system draws it.
        fn data(&self) -> Classification {
            let spec = PlantedSpec {
                n_train: 400,
                n_test: 300,
                ..PlantedSpec::default()
            };
            let rng = &mut self.input().seeds.rng_for("data");
            Classification::planted(&spec, rng).unwrap()
        }
    }

    fn cfg(method: Method) -> MethodConfig {
        let mut c = MethodConfig::new(method, ModelKind::Logreg, 3.0);
        c.epochs = 3;
        c.phase1_epochs = 1;
        c
    }

    const GRID: [(&str, f64); 4] = [
        ("tune_lr_points", 2.0),
        ("tune_clip_points", 2.0),
        ("tune_lr_min", 0.1),
        ("tune_lr_max", 0.5),
    ];

    #[test]
    fn tune_none_is_the_untuned_run_bit_for_bit() {
        let u = unit(&[], &[]);
        let out = u.run();
        // Today's computation, from the core: the three methods once each at (0.5, 1)
        // on all of the training split, streams `run/*`.
        let data = u.data();
        let seeds = u.input().seeds.child("run");
        let acc = |m| {
            run_method(&data, &cfg(m), &seeds, &Recipe::PAPER)
                .unwrap()
                .test_accuracy
        };
        let (own, rand, dense) = (acc(Method::TpTopK), acc(Method::TpRand), acc(Method::DpSgd));
        assert_eq!(out["test_accuracy"], own.to_bits());
        assert_eq!(out["rand_accuracy"], rand.to_bits());
        assert_eq!(out["gap_vs_dense"], (own - dense).to_bits());
        assert_eq!(out["gap_vs_rand_second"], out["gap_vs_rand"]);
        assert_eq!(out["gap_vs_dense_second"], out["gap_vs_dense"]);
        for m in ["selected_lr", "rand_selected_lr", "dense_selected_lr"] {
            assert_eq!(out[m], 0.5f64.to_bits(), "{m}");
        }
        assert_eq!(out["selected_clip"], 1f64.to_bits());
        let ceiling = run_non_private(&data, &cfg(Method::DpSgd), &seeds).unwrap();
        assert_eq!(
            out["dense_ceiling_accuracy"],
            ceiling.test_accuracy.to_bits()
        );
        // Absent (as in a spec of before the option) and explicit `none` are the same.
        let mut v = unit(&[], &[]);
        v.options.remove("tune");
        assert_eq!(v.run(), out);
    }

    #[test]
    fn a_one_cell_grid_is_the_untuned_run_at_that_cell() {
        let cell = [("lr", 0.3), ("clip", 0.7), ("clip_phase2", 0.9)];
        let untuned = unit(&cell, &[]).run();
        // The cell is the spec's (lr, clip), so C2 keeps clip_phase2.
        let one = [
            ("lr", 0.3),
            ("clip", 0.7),
            ("tune_lr_min", 0.3),
            ("tune_lr_max", 0.3),
            ("tune_lr_points", 1.0),
            ("tune_clip_min", 0.7),
            ("tune_clip_max", 2.0),
            ("tune_clip_points", 1.0),
            ("clip_phase2", 0.9),
        ];
        let no_split = [&one[..], &[("validation_fraction", 0.0)]].concat();
        let tuned = unit(&no_split, &[("tune", "validation")]).run();
        assert_eq!(tuned, untuned);
        // With a validation split the runs train on the first 80% of the split.
        let u = unit(&one, &[("tune", "validation")]);
        let out = u.run();
        let mut data = u.data();
        data.train_x = data.train_x.slice(s![..320, ..]).to_owned();
        data.train_y.truncate(320);
        let mut c = cfg(Method::TpTopK);
        (c.lr, c.clip, c.clip_phase2) = (0.3, 0.7, 0.9);
        let run = run_method(&data, &c, &u.input().seeds.child("run"), &Recipe::PAPER).unwrap();
        assert_eq!(out["test_accuracy"], run.test_accuracy.to_bits());
        assert_eq!(out["gap_vs_rand_second"], out["gap_vs_rand"]);
    }

    #[test]
    fn selection_never_reads_the_test_split() {
        let u = unit(&GRID, &[("tune", "validation")]);
        let data = u.data();
        let mut other = data.clone();
        for y in &mut other.test_y {
            *y = (*y + 1) % other.classes;
        }
        other.test_x.mapv_inplace(|v| -v);
        let tune = |d: Classification| {
            let t = Tuner::new(d, &u.input(), u.input().seeds.child("run")).unwrap();
            let r = t.method(&cfg(Method::TpTopK), &Recipe::PAPER).unwrap();
            (r.best, r.second)
        };
        let ((b, s), (b2, s2)) = (tune(data), tune(other));
        let key = |c: Cell| (c.lr.to_bits(), c.clip.to_bits(), c.validation.to_bits());
        assert_eq!((key(b), key(s)), (key(b2), key(s2)));
        assert_ne!(
            b.test.to_bits(),
            b2.test.to_bits(),
            "the test split did change"
        );
    }

    #[test]
    fn tuned_units_repeat_bit_for_bit_and_select_from_the_grid() {
        let u = unit(&GRID, &[("tune", "validation")]);
        let out = u.run();
        assert_eq!(out, u.run());
        for m in ["selected_lr", "rand_selected_lr", "dense_selected_lr"] {
            let lr = f64::from_bits(out[m]);
            assert!(
                [0.1, 0.5].iter().any(|g| (g - lr).abs() < 1e-12),
                "{m} = {lr}"
            );
        }
        let clip = f64::from_bits(out["selected_clip"]);
        assert!(
            [0.5, 2.0].iter().any(|g| (g - clip).abs() < 1e-12),
            "{clip}"
        );
        // Two lr points and two clips: no axis has an interior, so no edge counts.
        for m in [
            "selected_at_edge",
            "rand_selected_at_edge",
            "dense_selected_at_edge",
        ] {
            assert_eq!(out[m], 0f64.to_bits(), "{m}");
        }
        let gap = f64::from_bits(out["dense_ceiling_gap"]);
        let ceiling = f64::from_bits(out["dense_ceiling_accuracy"]);
        let dense = f64::from_bits(out["dense_accuracy"]);
        assert!((ceiling - dense - gap).abs() < 1e-15);
    }

    #[test]
    fn a_selection_on_the_first_or_last_learning_rate_is_at_the_edge() {
        // Three learning rates, one clip: the edge flag is the selected lr's position.
        let grid = [
            ("tune_lr_points", 3.0),
            ("tune_lr_min", 0.02),
            ("tune_lr_max", 0.5),
            ("tune_clip_points", 1.0),
        ];
        let u = unit(&grid, &[("tune", "validation")]);
        let out = u.run();
        for (lr, edge) in [
            ("selected_lr", "selected_at_edge"),
            ("rand_selected_lr", "rand_selected_at_edge"),
            ("dense_selected_lr", "dense_selected_at_edge"),
        ] {
            let lr = f64::from_bits(out[lr]);
            let interior = (lr - 0.1).abs() < 1e-12;
            assert_eq!(f64::from_bits(out[edge]), if interior { 0.0 } else { 1.0 });
        }
    }

    #[test]
    fn ties_go_to_the_earlier_cell_and_grids_are_checked() {
        assert_eq!(best_two(&[0.5, 0.7, 0.7, 0.6]), (1, 2));
        assert_eq!(best_two(&[0.8, 0.8]), (0, 1));
        assert_eq!(best_two(&[0.4]), (0, 0));
        let g = log_grid("x", 0.02, 0.5, 3).unwrap();
        assert!((g[1] - 0.1).abs() < 1e-12 && (g[2] - 0.5).abs() < 1e-12);
        assert!(log_grid("x", 0.5, 0.02, 3).is_err());
        // More than one cell without a validation split: refused.
        let u = unit(&[("validation_fraction", 0.0)], &[("tune", "validation")]);
        let err = Tuner::new(u.data(), &u.input(), u.input().seeds.child("run"));
        assert!(err.is_err());
    }

    #[test]
    fn the_cost_counts_every_cell_and_method() {
        let cost = |options: &[(&str, &str)], metrics: &[&str]| {
            let mut u = unit(&[], options);
            u.metrics = metrics.iter().map(|m| m.to_string()).collect();
            u.cost()
        };
        let none = cost(&[], &["gap_vs_dense"]);
        let tuned = cost(&[("tune", "validation")], &["gap_vs_dense"]);
        // 6 cells for each of the 3 methods, a fifth of the steps fewer; the calibration
        // (0.03 s a method) is the schedule's, counted once per method, not per cell.
        let calibration = 3.0 * 0.03;
        let (run_none, run_tuned) = (none - calibration, tuned - calibration);
        assert!(
            run_tuned > 4.5 * run_none && run_tuned < 6.0 * run_none,
            "{tuned} vs {none}"
        );
        // The ceiling only when asked for: 3 more runs (no calibration).
        let ceiling = cost(&[("tune", "validation")], &["dense_ceiling_gap"]);
        assert!(ceiling > tuned && ceiling < tuned + none, "{ceiling}");
    }
}
