//! One integration-test binary (keeps link time down); one module per concern.
mod audit;
mod core;
mod fit;
mod privacy;
