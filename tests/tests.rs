//! One integration-test binary (keeps link time down); one module per concern.
mod architecture;
mod audit;
mod claims;
mod core;
mod dpsgd;
mod faults;
mod figures;
mod fit;
mod hardening;
mod noise_exact;
mod perf;
mod privacy;
mod rdp_independent;
mod reduced;
mod sharding;
mod spec_errors;
mod util;
