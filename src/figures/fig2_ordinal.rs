//! The ordinal statements of privacy-for-free's Fig. 2 (Bombari & Mondelli, Sec. 3.1-3.2,
//! L145-L149 of the paper file), each as one number that is positive exactly when the
//! statement is reproduced. One definition for both paths that judge them: the
//! `rf_fig2` system (claims/pff-fig2-regions.yaml, a per-replicate metric judged as an
//! inequality over means) and `dpclaims fig2` (its own tables at the paper's size,
//! written into fig2.md), so the two never disagree in definition.
//!
//! The two peak tests compare logs: theta*'s loss at p = n is heavy-tailed (11 to 2.2e4
//! over 32 replicates at d = 20, n = 200), so the mean of a difference has no power there,
//! while each replicate's sign is the same on either scale.
//!
//! The paper gives no threshold for "close to 1" or "close to the loss of theta*": each
//! is read ordinally (registered before measuring), against the initial loss
//! E y^2 = 1 of theta_0 = 0 on labels y = +-1 ([`INIT_LOSS`]).

/// Test loss of theta_0 = 0 on y = sign(u^T x): E y^2 = 1 (the paper's "close to 1 as at
/// initialization", L149).
pub const INIT_LOSS: f64 = 1.0;

/// Test losses at the widths p = n/2, n, 2n, 20n (Sec. 3.1, L145), in that order: the
/// non-private baseline theta* = pinv(Phi) y (Eq. 9) and DP-GD.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PSweep {
    pub min_norm: [f64; 4],
    pub dpgd: [f64; 4],
}

/// Test losses at five cells of the heat map over (C_clip, T) at p = 20n (Sec. 3.2,
/// L149; x = C_clip, y = T): the corners of the paper's grid c_clip in
/// logspace(-2, 1.5), c_time in logspace(-1.5, 2.5) (T = c_time d/(eta p), the bottom row
/// at least one step) and the centre C = sqrt(p), eta T p/d = 1 (Eq. 8's scaling).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corners {
    pub centre: f64,
    pub top_left: f64,
    pub top_right: f64,
    pub bottom_left: f64,
    pub bottom_right: f64,
}

/// One statement: its metric name, where the paper says it, the ordinal reading and the
/// measured value (> 0: reproduced).
#[derive(Clone, Debug, PartialEq)]
pub struct Ordinal {
    pub name: &'static str,
    pub quote: &'static str,
    pub reading: &'static str,
    pub value: f64,
}

impl Ordinal {
    /// Whether the statement is reproduced (the value is positive; NaN is not).
    pub fn reproduced(&self) -> bool {
        self.value > 0.0
    }
}

/// The four statements of the first panel (L145).
pub fn p_sweep(s: &PSweep) -> Vec<Ordinal> {
    let [mh, m1, m2, _] = s.min_norm;
    let [dh, d1, d2, d20] = s.dpgd;
    let m20 = s.min_norm[3];
    vec![
        Ordinal {
            name: "gd_peak_at_n",
            quote: "the test loss of theta* displays ... the expected peak at the interpolation threshold (p = n)",
            reading: "ln L*(n) - ln max(L*(n/2), L*(2n)) > 0 (on the log scale: L*(n) is heavy-tailed)",
            value: m1.ln() - mh.max(m2).ln(),
        },
        Ordinal {
            name: "dpgd_no_peak_at_n",
            quote: "the lack of an interpolation peak in the test loss of DP-GD",
            reading: "ln max(L(n/2), L(2n)) - ln L(n) > 0 (the peak test of theta*, reversed)",
            value: dh.max(d2).ln() - d1.ln(),
        },
        Ordinal {
            name: "dpgd_improves_with_p",
            quote: "the performance of theta^p steadily improves",
            reading: "L(n/2) - L(20n) > 0",
            value: dh - d20,
        },
        Ordinal {
            name: "dpgd_near_gd_at_20n",
            quote: "as p increases, it plateaus to a value close to the loss of theta*",
            reading: "at p = 20n, |L - 1| - |L - L*| > 0: nearer theta*'s loss than the initial loss 1",
            value: (d20 - INIT_LOSS).abs() - (d20 - m20).abs(),
        },
    ]
}

/// The four regions of the fourth panel (L149), each against the centre or its
/// neighbouring corner.
pub fn heat_map(c: &Corners) -> Vec<Ordinal> {
    vec![
        Ordinal {
            name: "top_right_above_centre",
            quote: "1) Top-Right, we have very low utility due to the large noise",
            reading: "L(top-right) - L(centre) > 0",
            value: c.top_right - c.centre,
        },
        Ordinal {
            name: "bottom_left_near_init",
            quote: "2) Bottom-Left the test loss is close to 1 as at initialization, since the model does not have the time to learn",
            reading: "(1 - L(centre))/2 - |L(bottom-left) - 1| > 0: within half the centre's distance from 1, on either side",
            value: (INIT_LOSS - c.centre) / 2.0 - (c.bottom_left - INIT_LOSS).abs(),
        },
        Ordinal {
            name: "bottom_right_above_bottom_left",
            quote: "3) Bottom-Right, we have larger C_clip which could allow for faster convergence. However, as C_clip becomes larger than the typical per-sample gradient size, the overly pessimistic injection of noise ultimately undermines utility",
            reading: "L(bottom-right) - L(bottom-left) > 0: along the bottom row the larger C ends worse",
            value: c.bottom_right - c.bottom_left,
        },
        Ordinal {
            name: "top_left_near_centre",
            quote: "Moving toward the 4) Top-Left there is no decrease in performance",
            reading: "|L(top-left) - 1| - |L(top-left) - L(centre)| > 0: nearer the centre's loss than the initial loss 1",
            value: (c.top_left - INIT_LOSS).abs() - (c.top_left - c.centre).abs(),
        },
    ]
}

/// The second panel (L149): "the optimal T minimizing the test error decreases with p",
/// over `(p, T*)` in increasing p: the smallest ln T*(p_i) - ln T*(p_{i+1}) must be > 0.
/// None with fewer than two widths.
pub fn t_star(points: &[(usize, f64)]) -> Option<Ordinal> {
    let value = points
        .windows(2)
        .map(|w| w[0].1.ln() - w[1].1.ln())
        .reduce(f64::min)?;
    Some(Ordinal {
        name: "t_star_decreases",
        quote: "the optimal T minimizing the test error decreases with p",
        reading: "min over consecutive widths of ln T*(p_i) - ln T*(p_i+1) > 0",
        value,
    })
}

/// The statements on `dpclaims fig2`'s own tables, with the losses each compares:
/// panel 1 at the means over seeds (with the number of seeds at which each statement is
/// reproduced), the heat map at every eps (the caption's eps = 4 first), panel 2 on the
/// best T per width. Statements whose cells the tables lack are left out.
pub fn on_fig2(
    cfg: &super::fig2::Fig2Config,
    res: &super::fig2::Fig2Results,
    t_best: &[(usize, f64)],
) -> Vec<(Ordinal, String)> {
    let mut out = Vec::new();
    let ws = [cfg.n / 2, cfg.n, 2 * cfg.n, 20 * cfg.n];
    let curve = |method: &str, seed: Option<usize>| -> Option<[f64; 4]> {
        let mut v = [0.0; 4];
        for (slot, &p) in v.iter_mut().zip(&ws) {
            let l: Vec<f64> = res
                .loss_vs_p
                .iter()
                .filter(|r| r.p == p && r.method == method && seed.is_none_or(|s| r.seed == s))
                .map(|r| r.test_loss)
                .collect();
            if l.is_empty() {
                return None;
            }
            *slot = l.iter().sum::<f64>() / l.len() as f64;
        }
        Some(v)
    };
    if let (Some(min_norm), Some(dpgd)) = (curve("min-norm", None), curve("dp-gd", None)) {
        let seeds: Vec<Vec<Ordinal>> = (0..cfg.seeds)
            .filter_map(|s| {
                Some(p_sweep(&PSweep {
                    min_norm: curve("min-norm", Some(s))?,
                    dpgd: curve("dp-gd", Some(s))?,
                }))
            })
            .collect();
        let f = |v: &[f64; 4]| {
            v.iter()
                .map(|x| crate::report::fmt_num(*x))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (i, o) in p_sweep(&PSweep { min_norm, dpgd }).into_iter().enumerate() {
            let k = seeds.iter().filter(|v| v[i].reproduced()).count();
            let detail = format!(
                "means over seeds at p = {ws:?}: theta* {}; DP-GD {}; reproduced at {k}/{} seeds",
                f(&min_norm),
                f(&dpgd),
                seeds.len()
            );
            out.push((o, detail));
        }
    }
    let mut eps_order = cfg.heat_eps.clone();
    eps_order.sort_by(|a, b| {
        (*b == cfg.eps_p)
            .cmp(&(*a == cfg.eps_p))
            .then(b.total_cmp(a))
    });
    for eps in eps_order {
        let cells: Vec<&super::fig2::HeatCell> =
            res.heatmap.iter().filter(|c| c.eps == eps).collect();
        let centre = res.heat_centre.iter().find(|c| c.eps == eps);
        let (Some(centre), false) = (centre, cells.is_empty()) else {
            continue;
        };
        let fold = |f: fn(f64, f64) -> f64, init: f64, g: fn(&super::fig2::HeatCell) -> f64| {
            cells.iter().map(|c| g(c)).fold(init, f)
        };
        let (c_lo, c_hi) = (
            fold(f64::min, f64::INFINITY, |c| c.c_clip),
            fold(f64::max, 0.0, |c| c.c_clip),
        );
        let t_hi = fold(f64::max, 0.0, |c| c.c_time);
        // The bottom row: the smallest c_time with at least one step.
        let t_lo = cells
            .iter()
            .filter(|c| c.steps >= 1)
            .map(|c| c.c_time)
            .fold(f64::INFINITY, f64::min);
        let at = |cc: f64, ct: f64| {
            cells
                .iter()
                .find(|c| c.c_clip == cc && c.c_time == ct)
                .map(|c| (c.test_loss, c.steps))
        };
        let (Some(tl), Some(tr), Some(bl), Some(br)) = (
            at(c_lo, t_hi),
            at(c_hi, t_hi),
            at(c_lo, t_lo),
            at(c_hi, t_lo),
        ) else {
            continue;
        };
        let k = Corners {
            centre: centre.test_loss,
            top_left: tl.0,
            top_right: tr.0,
            bottom_left: bl.0,
            bottom_right: br.0,
        };
        let n = crate::report::fmt_num;
        let detail = format!(
            "eps = {eps}, p = {}: centre (C = sqrt(p), T = {}) {}; top-left (c_clip {}, T = {}) {}; \
             top-right (c_clip {}) {}; bottom-left (T = {}) {}; bottom-right {}",
            cfg.heat_p,
            centre.steps,
            n(k.centre),
            n(c_lo),
            tl.1,
            n(k.top_left),
            n(c_hi),
            n(k.top_right),
            bl.1,
            n(k.bottom_left),
            n(k.bottom_right)
        );
        for o in heat_map(&k) {
            out.push((o, detail.clone()));
        }
    }
    if let Some(o) = t_star(t_best) {
        let detail = t_best
            .iter()
            .map(|(p, t)| format!("T*({p}) = {t}"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push((o, detail));
    }
    out
}

/// The section of fig2.md: [`on_fig2`] as a table.
pub fn markdown_section(
    cfg: &super::fig2::Fig2Config,
    res: &super::fig2::Fig2Results,
    t_best: &[(usize, f64)],
) -> String {
    use std::fmt::Write as _;
    let rows = on_fig2(cfg, res, t_best);
    let mut s = String::new();
    let size = match cfg.profile {
        crate::spec::Profile::Full => "at the paper's size".to_string(),
        crate::spec::Profile::Quick => format!("at d = {}, n = {} (quick profile)", cfg.d, cfg.n),
    };
    let _ = writeln!(
        s,
        "\n## Ordinal statements of Sec. 3.1-3.2 {size}: reproduced / not reproduced\n\n\
         The statements registered in claims/pff-fig2-regions.yaml, computed by the same function \
         (`src/figures/fig2_ordinal.rs`) on this run's tables; each value is positive exactly when \
         the statement is reproduced. \"Close to\" has no threshold in the paper: it is read \
         ordinally (nearer one loss than the other). Panel 1 uses the DP-GD cell selected on the \
         test loss (as the figure), panel 4 one seed; the heat map's bottom row is the smallest \
         c_time with at least one step. Panel 2's T grid is c_time d/(eta p), so T* falls with p \
         unless the best c_time grows as fast as p: claims/pff-steps-collapse.yaml judges it on a \
         T grid that does not depend on p.\n"
    );
    let _ = writeln!(
        s,
        "| statement | the paper (L145-L149) | reading | value | verdict | losses compared |\n|---|---|---|---|---|---|"
    );
    for (o, detail) in &rows {
        let _ = writeln!(
            s,
            "| `{}` | \"{}\" | {} | {} | {} | {} |",
            o.name,
            o.quote,
            o.reading.replace('|', "\\|"),
            crate::report::fmt_num(o.value),
            if o.reproduced() {
                "reproduced"
            } else {
                "not reproduced"
            },
            detail.replace('|', "\\|")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[Ordinal]) -> Vec<(&'static str, bool)> {
        v.iter().map(|o| (o.name, o.reproduced())).collect()
    }

    /// A hand-made table shaped as Fig. 2 describes: every statement reproduced.
    fn figure_like() -> (PSweep, Corners) {
        (
            PSweep {
                min_norm: [0.6, 3.0, 0.9, 0.42],
                dpgd: [0.55, 0.5, 0.47, 0.44],
            },
            Corners {
                centre: 0.45,
                top_left: 0.43,
                top_right: 50.0,
                bottom_left: 0.999,
                bottom_right: 1.1,
            },
        )
    }

    #[test]
    fn a_figure_like_table_reproduces_every_statement() {
        let (s, c) = figure_like();
        for (name, ok) in values(&p_sweep(&s))
            .into_iter()
            .chain(values(&heat_map(&c)))
        {
            assert!(ok, "{name}");
        }
        let t = t_star(&[(400, 200.0), (1000, 80.0), (4000, 20.0)]).unwrap();
        // The smallest fall between consecutive widths: ln(200/80) < ln(80/20).
        assert!(t.reproduced() && (t.value - (200f64 / 80.0).ln()).abs() < 1e-12);
        let v = p_sweep(&s);
        assert!((v[0].value - (3.0f64 / 0.9).ln()).abs() < 1e-12);
        assert!((v[1].value - (0.55f64 / 0.5).ln()).abs() < 1e-12);
    }

    #[test]
    fn each_statement_fails_on_a_table_that_breaks_it_alone() {
        let (s, c) = figure_like();
        let only = |v: Vec<Ordinal>, bad: &str| {
            for o in v {
                assert_eq!(o.reproduced(), o.name != bad, "{} (breaking {bad})", o.name);
            }
        };
        // No peak of theta* at n (ridge-like curve).
        let mut t = s;
        t.min_norm[1] = 0.7;
        only(p_sweep(&t), "gd_peak_at_n");
        // A DP-GD peak at n.
        let mut t = s;
        t.dpgd[1] = 0.6;
        only(p_sweep(&t), "dpgd_no_peak_at_n");
        // DP-GD worse at 20n than at n/2, still nearer theta* than 1.
        let mut t = s;
        t.dpgd[3] = 0.56;
        only(p_sweep(&t), "dpgd_improves_with_p");
        // DP-GD at 20n nearer 1 than theta*'s loss (still below its n/2 value: 0.8 < 0.85).
        let mut t = s;
        t.dpgd = [0.85, 0.82, 0.81, 0.8];
        only(p_sweep(&t), "dpgd_near_gd_at_20n");
        // Top-right no worse than the centre.
        let mut k = c;
        k.top_right = 0.44;
        only(heat_map(&k), "top_right_above_centre");
        // Bottom-left learned (0.6), or blew up far above 1 (1.5): not close to 1.
        for bl in [0.6, 1.5] {
            let mut k = c;
            k.bottom_left = bl;
            k.bottom_right = 1.6;
            only(heat_map(&k), "bottom_left_near_init");
        }
        // Bottom-right below the bottom-left corner.
        let mut k = c;
        k.bottom_right = 0.98;
        only(heat_map(&k), "bottom_right_above_bottom_left");
        // Top-left nearer 1 than the centre's loss (or far above 1).
        for tl in [0.8, 3.0] {
            let mut k = c;
            k.top_left = tl;
            only(heat_map(&k), "top_left_near_centre");
        }
        // T* not decreasing at one step.
        let t = t_star(&[(400, 200.0), (1000, 200.0), (4000, 20.0)]).unwrap();
        assert!(!t.reproduced());
        assert!(t_star(&[(400, 1.0)]).is_none());
        // NaN is never reproduced.
        let mut k = c;
        k.centre = f64::NAN;
        // Every statement that reads the centre; bottom-right vs bottom-left does not.
        assert!(heat_map(&k)
            .iter()
            .filter(|o| o.name != "bottom_right_above_bottom_left")
            .all(|o| !o.reproduced()));
        let mut k = c;
        k.bottom_left = f64::NAN;
        assert!(heat_map(&k)
            .iter()
            .filter(|o| o.name != "top_right_above_centre" && o.name != "top_left_near_centre")
            .all(|o| !o.reproduced()));
    }

    #[test]
    fn fig2_tables_are_read_at_the_registered_cells() {
        use crate::figures::fig2::{Fig2Config, Fig2Results, HeatCell, LossVsP};
        let cfg = Fig2Config::new(crate::spec::Profile::Quick, 0);
        let (s, c) = figure_like();
        let mut res = Fig2Results::default();
        for (i, p) in [100, 200, 400, 4000].into_iter().enumerate() {
            for seed in 0..cfg.seeds {
                for (method, v) in [("min-norm", s.min_norm[i]), ("dp-gd", s.dpgd[i])] {
                    res.loss_vs_p.push(LossVsP {
                        p,
                        method,
                        seed,
                        test_loss: v,
                    });
                }
            }
        }
        let cell = |c_clip: f64, c_time: f64, steps: usize, test_loss: f64| HeatCell {
            eps: 4.0,
            c_clip,
            c_time,
            steps,
            test_loss,
        };
        let (clip, time) = (&cfg.heat_clip, &cfg.heat_time);
        let (lo, hi, top) = (clip[0], *clip.last().unwrap(), *time.last().unwrap());
        res.heatmap = vec![
            // The first row has T = 0 at d = 20: the bottom row is the next one.
            cell(lo, time[0], 0, 7.0),
            cell(hi, time[0], 0, 7.0),
            cell(lo, time[1], 3, c.bottom_left),
            cell(hi, time[1], 3, c.bottom_right),
            cell(lo, top, 6324, c.top_left),
            cell(hi, top, 6324, c.top_right),
        ];
        res.heat_centre = vec![cell(1.0, 1.0, 20, c.centre)];
        let rows = on_fig2(&cfg, &res, &[(400, 60.0), (4000, 9.0)]);
        let names: Vec<&str> = rows.iter().map(|(o, _)| o.name).collect();
        assert_eq!(names.len(), 9, "{names:?}");
        assert!(rows.iter().all(|(o, _)| o.reproduced()), "{rows:?}");
        assert!(rows[0].1.contains("2/2 seeds"), "{}", rows[0].1);
        let md = markdown_section(&cfg, &res, &[(400, 60.0), (4000, 9.0)]);
        assert!(
            md.contains("\\|L - 1\\|") && !md.contains("not reproduced |"),
            "{md}"
        );
    }
}
