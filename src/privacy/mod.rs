//! Privacy accounting: exact Gaussian DP, zCDP, RDP (Gaussian and Poisson-subsampled
//! Gaussian), conversion to (epsilon, delta), noise calibration, empirical auditing.
