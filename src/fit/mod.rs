//! Statistics of claims: log-log power-law fits with confidence intervals, bootstrap,
//! Clopper-Pearson bounds, and the verdict rules of the prediction kinds.
