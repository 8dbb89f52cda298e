//! One integration-test binary (keeps link time down); one module per concern.
mod audit;
mod claims;
mod core;
mod dpsgd;
mod fit;
mod privacy;
mod sharding;
mod spec_errors;
mod util;
