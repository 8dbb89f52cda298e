//! Integration tests of the privacy module and its CLI commands.
