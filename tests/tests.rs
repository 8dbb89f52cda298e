//! One integration-test binary (keeps link time down); one module per concern.
mod core;
mod dpsgd;
mod fit;
mod privacy;
