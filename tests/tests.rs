//! One integration-test binary (keeps link time down); one module per concern.
mod fit;
mod privacy;
